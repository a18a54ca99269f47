-- postroom outbox, schema version 1 (PostgreSQL 13 or later).
--
-- Migrate applies it, with River's own migrations, in one transaction
-- under an advisory lock. A call is stored once; its jobs (River's) carry
-- only the call's id and a range of recipient indices.

-- One row per call: its body without the recipients, as the spec's JSON.
-- idempotency_key is NULL for a call enqueued without one.
CREATE TABLE postroom_outbox_calls (
    id              text        PRIMARY KEY,
    account_id      text        NOT NULL,
    idempotency_key text,
    request_hash    bytea       NOT NULL,
    operation       smallint    NOT NULL,
    body            bytea       NOT NULL,
    recipients      integer     NOT NULL,
    started_at      timestamptz NOT NULL,
    UNIQUE (account_id, idempotency_key)
);

-- One row per job: the recipients of indices first .. first+count-1, as a
-- JSON array. epoch is the job's fence: each run of the job bumps it, and
-- the run's writes name the epoch it got, so that a run that outlived its
-- turn (a stalled process whose job River rescued) writes nothing more.
CREATE TABLE postroom_outbox_chunks (
    call_id    text    NOT NULL REFERENCES postroom_outbox_calls (id) ON DELETE CASCADE,
    first      integer NOT NULL,
    count      integer NOT NULL,
    recipients bytea   NOT NULL,
    epoch      bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (call_id, first)
);

-- One row per recipient that has a record: reserved (about to be handed
-- to the transport, outcome not yet written), deferred (to be retried) or
-- final (any other status: sent, queued, invalid, rejected, unknown). A
-- recipient with no row has not been tried yet. idx is its index in the
-- call; epoch the chunk epoch of the run that wrote the row.
CREATE TABLE postroom_outbox_recipients (
    call_id text    NOT NULL REFERENCES postroom_outbox_calls (id) ON DELETE CASCADE,
    idx     integer NOT NULL,
    email   text    NOT NULL,
    status  text    NOT NULL,
    code    text    NOT NULL DEFAULT '',
    reason  text    NOT NULL DEFAULT '',
    send_id text    NOT NULL DEFAULT '',
    epoch   bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (call_id, idx)
);

-- DeleteBefore deletes calls by age.
CREATE INDEX postroom_outbox_calls_started_at ON postroom_outbox_calls (started_at);
