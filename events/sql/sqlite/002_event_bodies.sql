-- SQLite, version 2: the rendered message of each send, kept only when
-- SQLOptions.KeepBodies is set (off by default), by send id; SQL.Rotate
-- deletes the bodies older than KeepBodies. Times are integers:
-- microseconds since 1970 UTC.
CREATE TABLE postroom_event_bodies (
	send_id text PRIMARY KEY,
	at integer NOT NULL,
	data blob NOT NULL
);

-- Rotate.
CREATE INDEX postroom_event_bodies_at ON postroom_event_bodies (at);
