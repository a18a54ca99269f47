-- postroom outbox, schema version 4: each call's list.
--
-- list is the list id of the call's messages (their List-Id, RFC 2919,
-- lower-cased, as postroom.Prepared.List gives it), or '' for a
-- transactional call. Enqueue writes it, so that a call's status and a
-- listing of calls show it without reading the calls' bodies (a body
-- holds the call's files: megabytes, where the list is a few bytes).
--
-- Adding a column with a constant default rewrites no row (PostgreSQL 11
-- and newer), and an instance of version 3 keeps working beside it: it
-- names its columns, so the calls it enqueues get ''.
ALTER TABLE postroom_outbox_calls ADD COLUMN list text NOT NULL DEFAULT '';

-- The calls stored before: their list from their body's message.headers
-- (the id between the last angle brackets of a List-Id, lower-cased), one
-- call at a time, among those with headers (Enqueue writes its JSON
-- without spaces, and "headers":null when there are none). A body that
-- does not read as that JSON, in this database's encoding, keeps '';
-- only a call with a List-Id is written.
DO $$
DECLARE
    c record;
    list_id text;
BEGIN
    FOR c IN SELECT id, body FROM postroom_outbox_calls
             WHERE position('"headers":['::bytea IN body) > 0 LOOP
        BEGIN
            SELECT lower(substring(btrim(h ->> 'value') FROM '<([^<>]*)>$')) INTO list_id
            FROM json_array_elements(
                CASE WHEN json_typeof(convert_from(c.body, 'UTF8')::json -> 'message' -> 'headers') = 'array'
                     THEN convert_from(c.body, 'UTF8')::json -> 'message' -> 'headers' END) AS h
            WHERE lower(h ->> 'name') = 'list-id'
            LIMIT 1;
            IF list_id IS NOT NULL AND list_id <> '' THEN
                UPDATE postroom_outbox_calls SET list = list_id WHERE id = c.id;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
    END LOOP;
END
$$;
