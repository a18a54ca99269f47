-- SQLite, version 1: the event log of events.SQL, as PostgreSQL's
-- versions 1 to 5 leave it but for the partitions and the transaction ids
-- (SQLite's writes commit one at a time, in id order: List reads by id).
-- One row per postroom.Event, append-only; Rotate deletes the rows older
-- than the retention in batches. Times are integers: microseconds since
-- 1970 UTC. AUTOINCREMENT: an id is never used again, even after the
-- newest rows were deleted, so a List cursor never skips a row.
CREATE TABLE postroom_events (
	id integer PRIMARY KEY AUTOINCREMENT,
	account_id text NOT NULL,
	event text NOT NULL,
	send_id text NOT NULL DEFAULT '',
	email text NOT NULL DEFAULT '',
	reason text NOT NULL DEFAULT '',
	status text NOT NULL DEFAULT '',
	diagnostic text NOT NULL DEFAULT '',
	at integer NOT NULL,
	list text NOT NULL DEFAULT '',
	call_id text NOT NULL DEFAULT '',
	sender text NOT NULL DEFAULT '',
	subject text NOT NULL DEFAULT '',
	html_template text NOT NULL DEFAULT '',
	text_template text NOT NULL DEFAULT ''
);

-- List: an account's events in id order.
CREATE INDEX postroom_events_account ON postroom_events (account_id, id);
-- A message's events in time order (Lookup, After, Search's timelines).
CREATE INDEX postroom_events_message ON postroom_events (send_id, at, id);
-- Search by address, in any letter case, newest first.
CREATE INDEX postroom_events_address ON postroom_events (account_id, lower(email), at DESC, id DESC);
-- Search by call.
CREATE INDEX postroom_events_call ON postroom_events (account_id, call_id, at DESC, id DESC) WHERE call_id <> '';
-- Rotate and Prune.
CREATE INDEX postroom_events_at ON postroom_events (at);
