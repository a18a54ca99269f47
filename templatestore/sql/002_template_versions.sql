-- Version 2: drafts and published versions (templatestore.Manager). A
-- template's row in postroom_templates keeps its draft; each published
-- version is a row of postroom_template_versions, and the newest is the
-- live one, which message.send_template uses. Each template of version 1
-- keeps its source as its draft and as its published version 1, so calls
-- go on using it.
ALTER TABLE postroom_templates RENAME COLUMN source TO draft;
ALTER TABLE postroom_templates ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
UPDATE postroom_templates SET created_at = updated_at;

CREATE TABLE postroom_template_versions (
    account_id text NOT NULL,
    id text NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    source text NOT NULL,
    published_at timestamptz NOT NULL DEFAULT now(),
    -- from_version is the version this one published again (a rollback),
    -- NULL when it published the draft.
    from_version integer CHECK (from_version > 0),
    PRIMARY KEY (account_id, id, version),
    FOREIGN KEY (account_id, id) REFERENCES postroom_templates (account_id, id) ON DELETE CASCADE
);

INSERT INTO postroom_template_versions (account_id, id, version, source, published_at)
SELECT account_id, id, 1, draft, updated_at FROM postroom_templates;
