-- postroom outbox on SQLite, schema version 1: PostgreSQL's version 4
-- (sql/*.sql) in SQLite's types. River's own tables come from its
-- riversqlite driver's migrations.
--
-- Times are integers of microseconds since 1970 UTC; what PostgreSQL
-- keeps in arrays is JSON text here (json_each reads it).

-- One row per call: its body without the recipients, as the spec's JSON.
-- idempotency_key is NULL for a call enqueued without one; list is the
-- list id of its messages ('' for a transactional call).
CREATE TABLE postroom_outbox_calls (
    id              text    PRIMARY KEY,
    account_id      text    NOT NULL,
    idempotency_key text,
    request_hash    blob    NOT NULL,
    operation       integer NOT NULL,
    body            blob    NOT NULL,
    recipients      integer NOT NULL,
    started_at      integer NOT NULL,
    list            text    NOT NULL DEFAULT '',
    UNIQUE (account_id, idempotency_key)
);

-- DeleteBefore deletes calls by age.
CREATE INDEX postroom_outbox_calls_started_at ON postroom_outbox_calls (started_at);

-- One row per job: the recipients of indices first .. first+count-1, as a
-- JSON array. epoch is the job's fence (each run bumps it), canceled
-- Cancel's mark.
CREATE TABLE postroom_outbox_chunks (
    call_id    text    NOT NULL REFERENCES postroom_outbox_calls (id) ON DELETE CASCADE,
    first      integer NOT NULL,
    count      integer NOT NULL,
    recipients blob    NOT NULL,
    epoch      integer NOT NULL DEFAULT 0,
    canceled   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (call_id, first)
);

-- One row per write of a job's run (or outside one: epoch 0, wseq
-- negative), in the order of seq: idx is a JSON array of the recipients'
-- indices, status one of their statuses ('' not tried, reserved,
-- deferred, or final), code, reason and send_id likewise ([] when all
-- are empty).
CREATE TABLE postroom_outbox_results (
    seq     integer PRIMARY KEY,
    call_id text    NOT NULL,
    first   integer NOT NULL,
    epoch   integer NOT NULL,
    wseq    integer NOT NULL,
    idx     text    NOT NULL,
    status  text    NOT NULL,
    code    text,
    reason  text,
    send_id text,
    UNIQUE (call_id, first, epoch, wseq)
);

-- Each recipient's state, one row per recipient that has one: its first
-- final result when it has one (a final result is never replaced), else
-- what the latest write said (reserved or deferred).
CREATE VIEW postroom_outbox_recipients AS
SELECT call_id, first, idx, status, code, reason, send_id, epoch
FROM (
    SELECT l.call_id, l.first, CAST(i.value AS integer) AS idx,
           l.status ->> i.key AS status,
           coalesce(l.code ->> i.key, '') AS code,
           coalesce(l.reason ->> i.key, '') AS reason,
           coalesce(l.send_id ->> i.key, '') AS send_id,
           l.epoch,
           row_number() OVER (
               PARTITION BY l.call_id, l.first, i.value
               ORDER BY (l.status ->> i.key) NOT IN ('', 'reserved', 'deferred') DESC,
                        CASE WHEN (l.status ->> i.key) NOT IN ('', 'reserved', 'deferred') THEN l.seq ELSE -l.seq END
           ) AS rn
    FROM postroom_outbox_results l, json_each(l.idx) AS i
) s
WHERE rn = 1 AND status <> '';
