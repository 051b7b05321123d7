-- +goose Up
-- Display names are unique by their case-folded form (store.NameKey), so
-- that no account shows as another's name. Accounts made before keep
-- their names; the oldest of each group of equal names (by lower(), the
-- nearest SQL has to the fold) gets the key, the others none: their
-- names stay, and no new account can take one of the keyed ones.
ALTER TABLE accounts ADD COLUMN name_key text;
UPDATE accounts SET name_key = lower(name)
    WHERE id IN (SELECT min(id) FROM accounts GROUP BY lower(name));
CREATE UNIQUE INDEX accounts_name_key ON accounts (name_key);

-- +goose Down
DROP INDEX accounts_name_key;
ALTER TABLE accounts DROP COLUMN name_key;
