-- postroom_events: one row per postroom.Event, append-only.
--
-- xid is the writing transaction's id: List shows only rows whose
-- transaction ended before every transaction still running began
-- (xid < pg_snapshot_xmin), in (xid, id) order, so a reader following a
-- cursor never skips a batch that committed late.
CREATE TABLE postroom_events (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
	account_id text NOT NULL,
	event text NOT NULL,
	send_id text NOT NULL DEFAULT '',
	email text NOT NULL DEFAULT '',
	reason text NOT NULL DEFAULT '',
	status text NOT NULL DEFAULT '',
	diagnostic text NOT NULL DEFAULT '',
	at timestamptz NOT NULL
);

CREATE INDEX postroom_events_account ON postroom_events (account_id, xid, id);

-- The lookup of a send by its id (package inbound proves bounces with it).
CREATE INDEX postroom_events_send ON postroom_events (send_id) WHERE event = 'send';

-- What happened to a send later (SQL.After: a queued call's status).
CREATE INDEX postroom_events_later ON postroom_events (send_id) WHERE event <> 'send';

CREATE INDEX postroom_events_at ON postroom_events (at);
