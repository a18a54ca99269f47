-- Version 2: scopes. An entry silences all mail ('all'), every list
-- message ('lists') or the messages of one list ('list', list_id its
-- RFC 2919 list id, lower-cased); an address has one entry per scope and
-- list, so the primary key becomes (account_id, address, scope, list_id),
-- with list_id '' unless the scope is 'list'. Both columns are compared
-- bytewise (COLLATE "C"), as the address is, for the order of the pages.
--
-- Existing rows keep everything they had and get a scope: an 'unsub' row
-- came from a one-click link whose list was not recorded, so it becomes
-- 'lists' (no more newsletters, and still the receipts and password
-- resets the recipient expects); every other row ('hard-bounce',
-- 'soft-bounce', 'spam', 'manual') becomes 'all', as it was.
ALTER TABLE postroom_suppressions
    ADD COLUMN scope text COLLATE "C" NOT NULL DEFAULT 'all'
        CHECK (scope IN ('all', 'lists', 'list')),
    ADD COLUMN list_id text COLLATE "C" NOT NULL DEFAULT ''
        CHECK (list_id = lower(list_id) AND octet_length(list_id) <= 255
            AND (list_id = '' OR list_id ~ '^[!-~]+\.[!-~]+$')),
    ADD CONSTRAINT postroom_suppressions_list_scope CHECK ((scope = 'list') = (list_id <> ''));

UPDATE postroom_suppressions SET scope = 'lists' WHERE reason = 'unsub';

ALTER TABLE postroom_suppressions
    DROP CONSTRAINT postroom_suppressions_pkey,
    ADD PRIMARY KEY (account_id, address, scope, list_id);
