-- +goose Up
-- Each Area records the template it is made from (its map and creatures,
-- named in the realm's content), or "empty" (an open floor of w x h).
-- Areas stored before templates existed get their kind's name: the kind's
-- default template. areas_template serves the oldest Area of a template,
-- which a map's portal to that template leads to. (SQLite cannot drop a
-- column's default: the store always writes the column.)
ALTER TABLE areas ADD COLUMN template text NOT NULL DEFAULT '';
UPDATE areas SET template = kind;
CREATE INDEX areas_template ON areas (template, id);
-- Listing the still-redeemable invites an account made.
CREATE INDEX invite_codes_created_by ON invite_codes (created_by, created_at);

-- +goose Down
DROP INDEX invite_codes_created_by;
DROP INDEX areas_template;
ALTER TABLE areas DROP COLUMN template;
