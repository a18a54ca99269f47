-- postroom outbox, schema version 2: cheaper writes of the recipients'
-- rows, which a job writes twice each (reserved, then its result).
--
-- No foreign key from a recipient's row to its call: PostgreSQL checked
-- it with a lookup and a row lock on the call for every row written.
-- Every write of a job's run names its chunk, locked FOR SHARE, so no row
-- is written for a call being deleted; DeleteBefore deletes the rows of
-- the calls it deletes itself.
ALTER TABLE postroom_outbox_recipients
    DROP CONSTRAINT IF EXISTS postroom_outbox_recipients_call_id_fkey;

-- Room on each page for a row's second version: a reserved row's result
-- is then written on the same page, without a new index entry (a HOT
-- update: the columns it changes are in no index). Pages written before
-- keep their fill.
ALTER TABLE postroom_outbox_recipients SET (fillfactor = 60);
