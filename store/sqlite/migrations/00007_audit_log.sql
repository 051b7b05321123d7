-- +goose Up
-- The audit log: every change an admin makes to the realm (its door,
-- cap, words; later accounts and memberships), written in the same
-- transaction as the change. The actor is kept as a number, not a
-- reference: the log outlives what it names.
CREATE TABLE audit_log (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     integer NOT NULL,
    actor  bigint NOT NULL,
    action text NOT NULL,
    target text NOT NULL,
    detail text NOT NULL
);

-- +goose Down
DROP TABLE audit_log;
