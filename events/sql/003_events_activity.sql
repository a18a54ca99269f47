-- postroom_events, schema version 3: the indexes of message activity
-- (SQL.Search, SQL.Info).
--
-- A message's events are found by its send id in time order: one index on
-- (send_id, at, id) replaces the two partial indexes on send_id (the send
-- event, the events after it), which Send and After read as well.
--
-- A search by address reads an account's events of one address, newest
-- first, whatever the case the address was written in: the expression
-- index on (account_id, lower(email), at DESC, id DESC) answers it by
-- reading only that address's rows.
--
-- Building the indexes reads the whole table once, under a lock that
-- holds writes back; on a large log, build them beforehand with CREATE
-- INDEX CONCURRENTLY under these names and this migration only drops the
-- old ones.
CREATE INDEX IF NOT EXISTS postroom_events_message ON postroom_events (send_id, at, id);
CREATE INDEX IF NOT EXISTS postroom_events_address ON postroom_events (account_id, lower(email), at DESC, id DESC);
DROP INDEX IF EXISTS postroom_events_send;
DROP INDEX IF EXISTS postroom_events_later;
