-- postroom_event_bodies, schema version 6: the rendered message of each
-- send, kept only when SQLOptions.KeepBodies is set (off by default), by
-- send id; SQL.Rotate deletes the bodies older than KeepBodies. The
-- message's account is its events' (SQL.Body joins them).
CREATE TABLE postroom_event_bodies (
	send_id text PRIMARY KEY,
	at timestamptz NOT NULL,
	data bytea NOT NULL
);

-- Rotate.
CREATE INDEX postroom_event_bodies_at ON postroom_event_bodies (at);
