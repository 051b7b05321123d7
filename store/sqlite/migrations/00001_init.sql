-- +goose Up
CREATE TABLE accounts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    email      text NOT NULL UNIQUE,
    name       text NOT NULL,
    is_admin   integer NOT NULL DEFAULT 0,
    created_at integer NOT NULL
);

CREATE TABLE auth_identities (
    account_id   bigint NOT NULL UNIQUE REFERENCES accounts (id) ON DELETE CASCADE,
    provider     text NOT NULL,
    subject      text NOT NULL,
    password_phc text NOT NULL DEFAULT '',
    UNIQUE (provider, subject)
);

CREATE TABLE sessions (
    token_hash  blob PRIMARY KEY CHECK (length(token_hash) = 32),
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at  integer NOT NULL,
    last_seen   integer NOT NULL,
    idle_ms     bigint NOT NULL CHECK (idle_ms > 0),
    idle_expires_at integer NOT NULL,
    expires_at  integer NOT NULL,
    revoked     integer NOT NULL DEFAULT 0
);
CREATE INDEX sessions_account ON sessions (account_id);

CREATE TABLE areas (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id       bigint NOT NULL REFERENCES accounts (id),
    kind           text NOT NULL,
    name           text NOT NULL,
    w              integer NOT NULL CHECK (w > 0),
    h              integer NOT NULL CHECK (h > 0),
    seed           bigint NOT NULL,
    rules          blob NOT NULL DEFAULT x'',
    state          blob NOT NULL DEFAULT x'',
    seq            bigint NOT NULL DEFAULT 0 CHECK (seq >= 0),
    epoch          bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    last_played_at integer,
    created_at     integer NOT NULL
);

CREATE TABLE area_members (
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'member')),
    added_at   integer NOT NULL,
    PRIMARY KEY (area_id, account_id)
);
CREATE INDEX area_members_account ON area_members (account_id);

CREATE TABLE invite_codes (
    code       text PRIMARY KEY,
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    created_by bigint NOT NULL REFERENCES accounts (id),
    uses_left  integer NOT NULL CHECK (uses_left >= 0),
    expires_at integer NOT NULL,
    created_at integer NOT NULL
);

CREATE TABLE characters (
    account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    area_id    integer NOT NULL REFERENCES areas (id),
    home_id    integer NOT NULL REFERENCES areas (id),
    x          integer NOT NULL DEFAULT 0,
    y          integer NOT NULL DEFAULT 0,
    state      blob NOT NULL DEFAULT x'',
    placed     integer NOT NULL DEFAULT 0,
    version    bigint NOT NULL DEFAULT 1,
    updated_at integer NOT NULL
);
CREATE INDEX characters_area ON characters (area_id);

CREATE TABLE transfers (
    transfer_id text PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    from_area   integer NOT NULL REFERENCES areas (id),
    to_area     integer NOT NULL REFERENCES areas (id),
    to_x        integer NOT NULL,
    to_y        integer NOT NULL,
    state       blob NOT NULL DEFAULT x'',
    status      text NOT NULL CHECK (status IN ('pending', 'done', 'rejected')),
    result      text NOT NULL DEFAULT '',
    created_at  integer NOT NULL,
    expires_at  integer NOT NULL
);
CREATE INDEX transfers_pending ON transfers (expires_at) WHERE status = 'pending';
CREATE INDEX transfers_created ON transfers (created_at);

CREATE TABLE realm_settings (
    id                  integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    open                integer NOT NULL DEFAULT 1,
    player_cap          integer NOT NULL DEFAULT 40 CHECK (player_cap >= 0),
    new_players_welcome integer NOT NULL DEFAULT 1,
    message             text NOT NULL DEFAULT ''
);
INSERT INTO realm_settings (id) VALUES (1);

CREATE TABLE director_samples (
    at              integer NOT NULL,
    players         integer NOT NULL,
    live_areas      integer NOT NULL,
    frozen_areas    integer NOT NULL,
    hosts           integer NOT NULL,
    rss_bytes       bigint NOT NULL,
    cpu             real NOT NULL,
    worst_tick_p99_us bigint NOT NULL
);
CREATE INDEX director_samples_at ON director_samples (at);

-- +goose Down
DROP TABLE director_samples;
DROP TABLE realm_settings;
DROP TABLE transfers;
DROP TABLE characters;
DROP TABLE invite_codes;
DROP TABLE area_members;
DROP TABLE areas;
DROP TABLE sessions;
DROP TABLE auth_identities;
DROP TABLE accounts;
