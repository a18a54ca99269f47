-- SQLite, version 1: the suppression list of suppression.SQL, as
-- PostgreSQL's versions 1 and 2 leave it (sql/001_suppressions.sql,
-- sql/002_scopes.sql). One row per account, address, scope and list; the
-- address is lower-cased printable ASCII (the package's rule, checked
-- again here) and compared bytewise (SQLite's BINARY collation), so that
-- the primary key serves the batched lookup, the prefix ranges and the
-- order of the pages alike. Times are integers: microseconds since 1970
-- UTC.
CREATE TABLE postroom_suppressions (
    account_id text NOT NULL CHECK (length(CAST(account_id AS blob)) BETWEEN 1 AND 255),
    address text NOT NULL
        CHECK (address = lower(address) AND address NOT GLOB '*[^!-~]*' AND address GLOB '?*@?*'
            AND length(CAST(address AS blob)) <= 254),
    reason text NOT NULL
        CHECK (reason IN ('hard-bounce', 'soft-bounce', 'spam', 'unsub', 'manual')),
    detail text NOT NULL DEFAULT '',
    send_id text NOT NULL DEFAULT '',
    created_at integer NOT NULL,
    expires_at integer CHECK (expires_at > created_at),
    scope text NOT NULL DEFAULT 'all' CHECK (scope IN ('all', 'lists', 'list')),
    list_id text NOT NULL DEFAULT ''
        CHECK (list_id = lower(list_id) AND length(CAST(list_id AS blob)) <= 255
            AND (list_id = '' OR (list_id NOT GLOB '*[^!-~]*' AND list_id GLOB '?*.?*'))),
    CONSTRAINT postroom_suppressions_list_scope CHECK ((scope = 'list') = (list_id <> '')),
    PRIMARY KEY (account_id, address, scope, list_id)
) WITHOUT ROWID;

-- The soft bounces counted towards the policy, per address: the latest
-- ones within the window, at most the policy's count, as a JSON array of
-- their times (PostgreSQL's timestamptz[]).
CREATE TABLE postroom_suppression_soft_bounces (
    account_id text NOT NULL,
    address text NOT NULL,
    bounces text NOT NULL CHECK (json_valid(bounces) AND json_type(bounces) = 'array'),
    PRIMARY KEY (account_id, address)
) WITHOUT ROWID;
