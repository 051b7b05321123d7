-- +goose Up
-- The realm's director leadership (store.Store.Lead), one row. The leader
-- holds the advisory lock lock_key on a connection of its own; lock_key is
-- random per realm, so realms sharing a database (each in its own schema)
-- never contend for one lock. term grows by one each time a director
-- begins to lead, and every write of a leader checks it (FOR SHARE) in
-- its own transaction: a deposed leader's writes fail.
CREATE TABLE leadership (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    lock_key bigint NOT NULL,
    term     bigint NOT NULL DEFAULT 0 CHECK (term >= 0),
    http     text NOT NULL DEFAULT '',
    control  text NOT NULL DEFAULT '',
    since    timestamptz
);
INSERT INTO leadership (id, lock_key) VALUES (true, (floor(random() * 9.2e18) - 4.6e18)::bigint);

-- +goose Down
DROP TABLE leadership;
