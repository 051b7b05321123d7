-- +goose Up
CREATE TABLE accounts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text NOT NULL UNIQUE,
    name       text NOT NULL,
    is_admin   boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);

CREATE TABLE auth_identities (
    account_id   bigint NOT NULL UNIQUE REFERENCES accounts (id) ON DELETE CASCADE,
    provider     text NOT NULL,
    subject      text NOT NULL,
    password_phc text NOT NULL DEFAULT '',
    UNIQUE (provider, subject)
);

CREATE TABLE sessions (
    token_hash  bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL,
    idle_ms     bigint NOT NULL CHECK (idle_ms > 0),
    idle_expires_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    revoked     boolean NOT NULL DEFAULT false
);
CREATE INDEX sessions_account ON sessions (account_id);

CREATE TABLE areas (
    id             integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id       bigint NOT NULL REFERENCES accounts (id),
    kind           text NOT NULL,
    name           text NOT NULL,
    w              integer NOT NULL CHECK (w > 0),
    h              integer NOT NULL CHECK (h > 0),
    seed           bigint NOT NULL,
    rules          bytea NOT NULL DEFAULT '',
    state          bytea NOT NULL DEFAULT '',
    seq            bigint NOT NULL DEFAULT 0 CHECK (seq >= 0),
    epoch          bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    last_played_at timestamptz,
    created_at     timestamptz NOT NULL
);

CREATE TABLE area_members (
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'member')),
    added_at   timestamptz NOT NULL,
    PRIMARY KEY (area_id, account_id)
);
CREATE INDEX area_members_account ON area_members (account_id);

CREATE TABLE invite_codes (
    code       text PRIMARY KEY,
    area_id    integer NOT NULL REFERENCES areas (id) ON DELETE CASCADE,
    created_by bigint NOT NULL REFERENCES accounts (id),
    uses_left  integer NOT NULL CHECK (uses_left >= 0),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE characters (
    account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    area_id    integer NOT NULL REFERENCES areas (id),
    home_id    integer NOT NULL REFERENCES areas (id),
    x          integer NOT NULL DEFAULT 0,
    y          integer NOT NULL DEFAULT 0,
    state      bytea NOT NULL DEFAULT '',
    placed     boolean NOT NULL DEFAULT false,
    version    bigint NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL
);
CREATE INDEX characters_area ON characters (area_id);

CREATE TABLE transfers (
    transfer_id text PRIMARY KEY,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    from_area   integer NOT NULL REFERENCES areas (id),
    to_area     integer NOT NULL REFERENCES areas (id),
    to_x        integer NOT NULL,
    to_y        integer NOT NULL,
    state       bytea NOT NULL DEFAULT '',
    status      text NOT NULL CHECK (status IN ('pending', 'done', 'rejected')),
    result      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX transfers_pending ON transfers (expires_at) WHERE status = 'pending';
CREATE INDEX transfers_created ON transfers (created_at);

CREATE TABLE realm_settings (
    id                  boolean PRIMARY KEY DEFAULT true CHECK (id),
    open                boolean NOT NULL DEFAULT true,
    player_cap          integer NOT NULL DEFAULT 40 CHECK (player_cap >= 0),
    new_players_welcome boolean NOT NULL DEFAULT true,
    message             text NOT NULL DEFAULT ''
);
INSERT INTO realm_settings (id) VALUES (true);

CREATE TABLE director_samples (
    at              timestamptz NOT NULL,
    players         integer NOT NULL,
    live_areas      integer NOT NULL,
    frozen_areas    integer NOT NULL,
    hosts           integer NOT NULL,
    rss_bytes       bigint NOT NULL,
    cpu             double precision NOT NULL,
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
