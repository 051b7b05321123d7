-- +goose Up
-- Each Area's current incarnation records the hash of the placement
-- credential the director gave the host it placed it on: a host that
-- registers again must show the credential to have the Area adopted back
-- (an Area is trusted only to the host it was placed on).
ALTER TABLE areas ADD COLUMN placement bytea NOT NULL DEFAULT ''::bytea;
-- The area hosts a director spawned, by the hash of their credential:
-- they outlive their director and register again with the next one,
-- which finds them here.
CREATE TABLE hosts (
    credential bytea PRIMARY KEY CHECK (length(credential) = 32),
    name       text NOT NULL,
    pid        integer NOT NULL,
    machine    text NOT NULL,
    ws_url     text NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL
);
-- A home's owner names builders: members who may build there.
ALTER TABLE area_members DROP CONSTRAINT area_members_role_check;
ALTER TABLE area_members ADD CONSTRAINT area_members_role_check CHECK (role IN ('owner', 'member', 'builder'));

-- +goose Down
ALTER TABLE area_members DROP CONSTRAINT area_members_role_check;
UPDATE area_members SET role = 'member' WHERE role = 'builder';
ALTER TABLE area_members ADD CONSTRAINT area_members_role_check CHECK (role IN ('owner', 'member'));
DROP TABLE hosts;
ALTER TABLE areas DROP COLUMN placement;
