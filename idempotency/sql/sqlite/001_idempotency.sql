-- postroom idempotency records, schema version 1, SQLite: the tables of
-- ../postgres/001_idempotency.sql in SQLite's types. Times are integers of
-- microseconds since 1970 UTC; ids are never reused (AUTOINCREMENT), so
-- that a claim's id and epoch name one record only.

-- One row per idempotent call: its key, scoped by account, and the hash of
-- its payload. epoch guards a call's writes: each claim bumps it, and a
-- holder's writes name the epoch they were claimed with.
CREATE TABLE postroom_idempotency_calls (
    id              integer PRIMARY KEY AUTOINCREMENT,
    account_id      text    NOT NULL,
    idempotency_key text    NOT NULL,
    request_hash    blob    NOT NULL,
    started_at      integer NOT NULL,
    epoch           integer NOT NULL DEFAULT 1,
    UNIQUE (account_id, idempotency_key)
);

-- DeleteExpired deletes by age.
CREATE INDEX postroom_idempotency_calls_started_at
    ON postroom_idempotency_calls (started_at);

-- One row per recipient that was handed to the transport (status NULL,
-- send_id set) or has a final result (status set). idx is the recipient's
-- index in the call.
CREATE TABLE postroom_idempotency_recipients (
    call_id integer NOT NULL REFERENCES postroom_idempotency_calls (id) ON DELETE CASCADE,
    idx     integer NOT NULL,
    send_id text    NOT NULL DEFAULT '',
    status  text,
    code    text    NOT NULL DEFAULT '',
    reason  text    NOT NULL DEFAULT '',
    PRIMARY KEY (call_id, idx)
) WITHOUT ROWID;
