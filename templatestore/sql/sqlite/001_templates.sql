-- SQLite, version 1: the templates of templatestore.SQL, as PostgreSQL's
-- versions 1 and 2 leave them (sql/001_templates.sql,
-- sql/002_template_versions.sql). A template's row in postroom_templates
-- keeps its draft; each published version is a row of
-- postroom_template_versions, and the newest is the live one. The checks
-- repeat the package's id rules, so a row written by hand is as safe to
-- look up as one written by the store. Times are integers: microseconds
-- since 1970 UTC.
CREATE TABLE postroom_templates (
    account_id text NOT NULL
        CHECK (length(CAST(account_id AS blob)) BETWEEN 1 AND 255 AND account_id NOT GLOB '*[^A-Za-z0-9._-]*'
            AND instr(CAST(account_id AS blob), x'00') = 0 AND account_id NOT IN ('.', '..')),
    id text NOT NULL
        CHECK (length(CAST(id AS blob)) BETWEEN 1 AND 255 AND id NOT GLOB '*[^A-Za-z0-9._-]*'
            AND instr(CAST(id AS blob), x'00') = 0 AND id NOT IN ('.', '..')),
    draft text NOT NULL,
    created_at integer NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS integer)),
    updated_at integer NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS integer)),
    PRIMARY KEY (account_id, id)
);

CREATE TABLE postroom_template_versions (
    account_id text NOT NULL,
    id text NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    source text NOT NULL,
    published_at integer NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS integer)),
    -- from_version is the version this one published again (a rollback),
    -- NULL when it published the draft.
    from_version integer CHECK (from_version > 0),
    PRIMARY KEY (account_id, id, version),
    FOREIGN KEY (account_id, id) REFERENCES postroom_templates (account_id, id) ON DELETE CASCADE
);
