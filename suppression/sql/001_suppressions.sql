-- Version 1: the suppression list of suppression.SQL. One row per account
-- and address; the address is lower-cased ASCII (the package's rule,
-- checked again here) and compared bytewise (COLLATE "C"), so that the
-- primary key serves the batched lookup (address = ANY(...)), the prefix
-- ranges and the order of the pages alike.
CREATE TABLE postroom_suppressions (
    account_id text NOT NULL CHECK (octet_length(account_id) BETWEEN 1 AND 255),
    address text COLLATE "C" NOT NULL
        CHECK (address = lower(address) AND address ~ '^[!-~]+@[!-~]+$' AND octet_length(address) <= 254),
    reason text NOT NULL
        CHECK (reason IN ('hard-bounce', 'soft-bounce', 'spam', 'unsub', 'manual')),
    detail text NOT NULL DEFAULT '',
    send_id text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz CHECK (expires_at > created_at),
    PRIMARY KEY (account_id, address)
);

-- The soft bounces counted towards the policy, per address: the latest
-- ones within the window, at most the policy's count.
CREATE TABLE postroom_suppression_soft_bounces (
    account_id text NOT NULL,
    address text COLLATE "C" NOT NULL,
    bounces timestamptz[] NOT NULL,
    PRIMARY KEY (account_id, address)
);
