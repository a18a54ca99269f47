-- postroom_events, schema version 2: each event's list (postroom.Event.List),
-- the list id of the message it is about (its List-Id, lower-cased), or ''
-- for a transactional message. Rows written before read as ''.
--
-- A column with a constant default is added without rewriting the table
-- (PostgreSQL 11 and newer keep the default in the catalogue), so the
-- migration takes as long on a large log as on an empty one.
ALTER TABLE postroom_events ADD COLUMN list text NOT NULL DEFAULT '';
