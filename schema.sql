-- Idenplane database schema.
--
-- Each "-- version N" line starts migration N; the store applies, in one
-- transaction each, every migration above the version the database records.
-- Never edit a released migration: append a new version instead.
-- SQL stays plain (no SQLite-only syntax) so a PostgreSQL backend can run it.

-- version 1
CREATE TABLE schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE realms (
    id                           TEXT PRIMARY KEY,
    name                         TEXT NOT NULL UNIQUE,
    display_name                 TEXT NOT NULL,
    enabled                      BOOLEAN NOT NULL,
    access_token_lifespan        INTEGER NOT NULL,
    refresh_token_lifespan       INTEGER NOT NULL,
    offline_token_lifespan       INTEGER NOT NULL,
    smtp_host                    TEXT NOT NULL,
    smtp_port                    INTEGER NOT NULL,
    smtp_user                    TEXT NOT NULL,
    smtp_password                BLOB,           -- AES-GCM ciphertext
    smtp_from                    TEXT NOT NULL,
    smtp_secure                  BOOLEAN NOT NULL,
    email_provider               TEXT NOT NULL,
    email_provider_config        BLOB,           -- AES-GCM ciphertext of a JSON object
    password_min_length          INTEGER NOT NULL,
    password_require_uppercase   BOOLEAN NOT NULL,
    password_require_lowercase   BOOLEAN NOT NULL,
    password_require_digits      BOOLEAN NOT NULL,
    password_require_special     BOOLEAN NOT NULL,
    password_history_count       INTEGER NOT NULL,
    password_max_age_days        INTEGER NOT NULL,
    brute_force_enabled          BOOLEAN NOT NULL,
    max_login_failures           INTEGER NOT NULL,
    lockout_duration             INTEGER NOT NULL,
    failure_reset_time           INTEGER NOT NULL,
    permanent_lockout_after      INTEGER NOT NULL,
    registration_allowed         BOOLEAN NOT NULL,
    require_email_verification   BOOLEAN NOT NULL,
    mfa_required                 BOOLEAN NOT NULL,
    events_enabled               BOOLEAN NOT NULL,
    events_expiration            INTEGER NOT NULL,
    admin_events_enabled         BOOLEAN NOT NULL,
    theme_name                   TEXT NOT NULL,
    theme                        TEXT,           -- JSON object
    login_theme                  TEXT NOT NULL,
    account_theme                TEXT NOT NULL,
    email_theme                  TEXT NOT NULL,
    created_at                   BIGINT NOT NULL, -- Unix milliseconds
    position                     BIGINT NOT NULL  -- creation order, unique even within a millisecond
);
CREATE UNIQUE INDEX realms_position ON realms (position);

-- Usernames and emails are stored lowercased, as Keycloak does, so plain
-- unique indexes give case-insensitive uniqueness on every backend.
CREATE TABLE users (
    id                      TEXT PRIMARY KEY,
    realm_id                TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    username                TEXT NOT NULL,
    email                   TEXT NOT NULL,
    first_name              TEXT NOT NULL,
    last_name               TEXT NOT NULL,
    -- lowercase "first last", folded in Go with full Unicode rules: SQL
    -- lower() folds only ASCII in SQLite.
    name_search             TEXT NOT NULL,
    enabled                 BOOLEAN NOT NULL,
    email_verified          BOOLEAN NOT NULL,
    require_password_reset  BOOLEAN NOT NULL,
    password_hash           TEXT,            -- PHC string
    password_changed_at     BIGINT,
    created_at              BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_realm_username ON users (realm_id, username);
CREATE UNIQUE INDEX users_realm_email ON users (realm_id, email) WHERE email <> '';

-- One row: a known value sealed with the master key, so a wrong or lost key
-- is refused at start instead of failing later on every secret.
CREATE TABLE master_key_check (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    sealed  BLOB NOT NULL
);

-- One row: the SHA-256 of the admin API key. The key is random, so a fast
-- hash is enough and keeps every admin request cheap.
CREATE TABLE admin_api_key (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    key_hash    BLOB NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE admin_users (
    id             TEXT PRIMARY KEY,
    username       TEXT NOT NULL UNIQUE,
    password_hash  TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);

-- Admin tokens revoked by logout, kept until they would have expired anyway.
CREATE TABLE admin_token_revocations (
    token_id    TEXT PRIMARY KEY,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX admin_token_revocations_expiry ON admin_token_revocations (expires_at);
