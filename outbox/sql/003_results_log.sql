-- postroom outbox, schema version 3: a job's writes are rows of arrays,
-- one row per write, not a row per recipient.
--
-- A job's run wrote each recipient twice (reserved, then its result),
-- and a row write costs PostgreSQL far more than the recipient's share of
-- the run. Now each write of a run (the results known since the last,
-- and the recipients reserved next) is one row of postroom_outbox_results
-- holding arrays, in the order of seq; a recipient's state is folded from
-- the rows of its chunk (see the view below, and fold.go).
--
-- Stop every instance of the older version before migrating: it writes
-- the table this migration drops.

-- The writes outside a run (Enqueue's, Cancel's, a migration's) are
-- numbered by this sequence, negative.
CREATE SEQUENCE postroom_outbox_results_outside;

CREATE TABLE postroom_outbox_results (
    call_id text      NOT NULL,
    first   integer   NOT NULL, -- the job's chunk
    epoch   bigint    NOT NULL, -- the chunk epoch of the run that wrote it
    wseq    bigint    NOT NULL DEFAULT -nextval('postroom_outbox_results_outside'),
                                -- the run's write number from 1: a write tried again after its answer was lost is not made twice
    seq     bigint    GENERATED ALWAYS AS IDENTITY, -- the order of the chunk's writes
    idx     integer[] NOT NULL, -- the recipients' indices in the call
    status  text[]    NOT NULL, -- '' (not tried), reserved, deferred, or a final status
    code    text[],             -- NULL: all empty (as a reservation's are)
    reason  text[],             -- likewise
    send_id text[],             -- likewise
    PRIMARY KEY (call_id, first, epoch, wseq)
);
-- A write of a hundred results is about 5 kB: kept in its row, not
-- compressed and moved out to TOAST (PostgreSQL's default above 2 kB).
ALTER TABLE postroom_outbox_results SET (toast_tuple_target = 8160);

-- A chunk's recipients (tens of kB of JSON) are compressed with lz4
-- where the server has it (PostgreSQL 14 or later, built with lz4): it
-- took about half the CPU of the default pglz to store them. Elsewhere
-- they keep the default.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE postroom_outbox_chunks ALTER COLUMN recipients SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;

-- Cancel marks a call's chunks: no run reserves a recipient of a marked
-- chunk any more, nor writes the final result of one it did not reserve
-- without reading its state under the chunk's lock.
ALTER TABLE postroom_outbox_chunks ADD COLUMN canceled boolean NOT NULL DEFAULT false;

-- The rows of version 2, one write per chunk and epoch.
INSERT INTO postroom_outbox_results (call_id, first, epoch, idx, status, code, reason, send_id)
SELECT r.call_id, ch.first, r.epoch,
       array_agg(r.idx ORDER BY r.idx), array_agg(r.status ORDER BY r.idx), array_agg(r.code ORDER BY r.idx),
       array_agg(r.reason ORDER BY r.idx), array_agg(r.send_id ORDER BY r.idx)
FROM postroom_outbox_recipients r
JOIN postroom_outbox_chunks ch ON ch.call_id = r.call_id AND r.idx >= ch.first AND r.idx < ch.first + ch.count
GROUP BY r.call_id, ch.first, r.epoch;

DROP TABLE postroom_outbox_recipients;

-- Each recipient's state, one row per recipient that has one (a
-- recipient without a row has not been tried): its first final result
-- when it has one (a final result is never replaced), else what the
-- latest write said (reserved or deferred). For people and scripts
-- looking at the queue, and for the counts of Status, Calls and Stats;
-- a job's run folds its chunk's writes itself.
CREATE VIEW postroom_outbox_recipients AS
SELECT call_id, first, idx, status, code, reason, send_id, epoch
FROM (
    SELECT DISTINCT ON (l.call_id, l.first, u.idx)
           l.call_id, l.first, u.idx, u.status,
           coalesce(u.code, '') AS code, coalesce(u.reason, '') AS reason, coalesce(u.send_id, '') AS send_id, l.epoch
    FROM postroom_outbox_results l,
         unnest(l.idx, l.status, l.code, l.reason, l.send_id) AS u(idx, status, code, reason, send_id)
    ORDER BY l.call_id, l.first, u.idx,
             u.status NOT IN ('', 'reserved', 'deferred') DESC,
             CASE WHEN u.status NOT IN ('', 'reserved', 'deferred') THEN l.seq ELSE -l.seq END
) s
WHERE status <> '';
