-- postroom_events, schema version 4: the call each event of the sending
-- path came from (postroom.Event's CallID, From, Subject, HTMLTemplateID,
-- TextTemplateID), and the queued events of package outbox. Rows written
-- before read as '' (columns with a constant default are added without
-- rewriting the table).
--
-- A search by call id reads the account's events of that call newest
-- first; building the index reads the table once (see version 3 for
-- building it beforehand with CREATE INDEX CONCURRENTLY under this name).
ALTER TABLE postroom_events
	ADD COLUMN call_id text NOT NULL DEFAULT '',
	ADD COLUMN sender text NOT NULL DEFAULT '',
	ADD COLUMN subject text NOT NULL DEFAULT '',
	ADD COLUMN html_template text NOT NULL DEFAULT '',
	ADD COLUMN text_template text NOT NULL DEFAULT '';

CREATE INDEX IF NOT EXISTS postroom_events_call ON postroom_events (account_id, call_id, at DESC, id DESC) WHERE call_id <> '';
