-- +goose Up
-- Each Area's current incarnation records the hash of the placement
-- credential the director gave the host it placed it on: a host that
-- registers again must show the credential to have the Area adopted back
-- (an Area is trusted only to the host it was placed on).
ALTER TABLE areas ADD COLUMN placement blob NOT NULL DEFAULT x'';
-- The area hosts a director spawned, by the hash of their credential:
-- they outlive their director and register again with the next one,
-- which finds them here.
CREATE TABLE hosts (
    credential blob PRIMARY KEY CHECK (length(credential) = 32),
    name       text NOT NULL,
    pid        integer NOT NULL,
    machine    text NOT NULL,
    ws_url     text NOT NULL,
    started_at integer NOT NULL,
    seen_at    integer NOT NULL
);
-- A home's owner names builders: members who may build there. SQLite
-- cannot change a CHECK constraint: the table is made again.
CREATE TABLE area_members_new (
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'member', 'builder')),
    added_at   integer NOT NULL,
    PRIMARY KEY (area_id, account_id)
);
INSERT INTO area_members_new SELECT area_id, account_id, role, added_at FROM area_members;
DROP TABLE area_members;
ALTER TABLE area_members_new RENAME TO area_members;
CREATE INDEX area_members_account ON area_members (account_id);

-- +goose Down
CREATE TABLE area_members_old (
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'member')),
    added_at   integer NOT NULL,
    PRIMARY KEY (area_id, account_id)
);
INSERT INTO area_members_old SELECT area_id, account_id, CASE role WHEN 'builder' THEN 'member' ELSE role END, added_at FROM area_members;
DROP TABLE area_members;
ALTER TABLE area_members_old RENAME TO area_members;
CREATE INDEX area_members_account ON area_members (account_id);
DROP TABLE hosts;
ALTER TABLE areas DROP COLUMN placement;
