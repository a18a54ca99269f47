-- postroom idempotency records, schema version 1 (PostgreSQL 12 or later).
--
-- Migrate applies it once per database, recording the version in
-- postroom_idempotency_schema. It is the schema earlier releases applied
-- at every start (their Schema variable, through SQL.Migrate), and every
-- statement is idempotent, so a database that already has these tables is
-- left as it is and only gets its version recorded.

-- One row per idempotent call: its key, scoped by account, and the hash of
-- its payload. A call holds the key's advisory lock while it runs; epoch
-- guards its writes: each claim bumps it, and a holder's writes name the
-- epoch they were claimed with, so that a holder taken over writes nothing.
CREATE TABLE IF NOT EXISTS postroom_idempotency_calls (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      text        NOT NULL,
    idempotency_key text        NOT NULL,
    request_hash    bytea       NOT NULL,
    started_at      timestamptz NOT NULL,
    epoch           bigint      NOT NULL DEFAULT 1,
    UNIQUE (account_id, idempotency_key)
);

-- DeleteExpired deletes by age.
CREATE INDEX IF NOT EXISTS postroom_idempotency_calls_started_at
    ON postroom_idempotency_calls (started_at);

-- One row per recipient that was handed to the transport (status NULL,
-- send_id set) or has a final result (status set). idx is the recipient's
-- index in the call.
CREATE TABLE IF NOT EXISTS postroom_idempotency_recipients (
    call_id bigint  NOT NULL REFERENCES postroom_idempotency_calls (id) ON DELETE CASCADE,
    idx     integer NOT NULL,
    send_id text    NOT NULL DEFAULT '',
    status  text,
    code    text    NOT NULL DEFAULT '',
    reason  text    NOT NULL DEFAULT '',
    PRIMARY KEY (call_id, idx)
);
