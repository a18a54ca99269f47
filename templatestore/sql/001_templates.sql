-- Version 1: the templates of templatestore.SQL, one row per account and
-- template id. The checks repeat the package's id rules, so a row written
-- by hand is as safe to look up as one written by SQL.Put.
CREATE TABLE postroom_templates (
    account_id text NOT NULL
        CHECK (account_id ~ '^[A-Za-z0-9._-]{1,255}$' AND account_id NOT IN ('.', '..')),
    id text NOT NULL
        CHECK (id ~ '^[A-Za-z0-9._-]{1,255}$' AND id NOT IN ('.', '..')),
    source text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id)
);
