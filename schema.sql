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

-- version 2
-- Clients, roles, groups, client scopes and protocol mappers, events, and
-- the session and consent tables that sessions and stats read.

CREATE TABLE clients (
    id                                   TEXT PRIMARY KEY,
    realm_id                             TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id                            TEXT NOT NULL,
    name                                 TEXT NOT NULL,
    description                          TEXT NOT NULL,
    client_type                          TEXT NOT NULL,  -- CONFIDENTIAL or PUBLIC
    enabled                              BOOLEAN NOT NULL,
    redirect_uris                        TEXT NOT NULL,  -- JSON array
    web_origins                          TEXT NOT NULL,  -- JSON array
    grant_types                          TEXT NOT NULL,  -- JSON array
    require_consent                      BOOLEAN NOT NULL,
    backchannel_logout_uri               TEXT NOT NULL,
    backchannel_logout_session_required  BOOLEAN NOT NULL,
    secret_hash                          BLOB,           -- SHA-256 of the secret; NULL for public clients
    created_at                           BIGINT NOT NULL
);
CREATE UNIQUE INDEX clients_realm_client_id ON clients (realm_id, client_id);

-- A client with the client_credentials grant acts as this user.
ALTER TABLE users ADD COLUMN service_account_client_id TEXT REFERENCES clients (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX users_service_account ON users (service_account_client_id) WHERE service_account_client_id IS NOT NULL;
-- User listings leave service accounts out; this index answers them (count
-- and page) without reading the table.
CREATE INDEX users_people ON users (realm_id, username) WHERE service_account_client_id IS NULL;

-- Realm roles have no client; client roles belong to one.
CREATE TABLE roles (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id    TEXT REFERENCES clients (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX roles_realm_name ON roles (realm_id, name) WHERE client_id IS NULL;
CREATE UNIQUE INDEX roles_client_name ON roles (client_id, name) WHERE client_id IS NOT NULL;

-- A composite role includes its children, and theirs in turn.
CREATE TABLE role_composites (
    parent_id  TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    child_id   TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX role_composites_child ON role_composites (child_id);

CREATE TABLE user_roles (
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id  TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
);
CREATE INDEX user_roles_role ON user_roles (role_id);

-- "groups" is an SQL keyword in some databases, hence the prefix.
CREATE TABLE realm_groups (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    parent_id    TEXT REFERENCES realm_groups (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX realm_groups_top_name ON realm_groups (realm_id, name) WHERE parent_id IS NULL;
CREATE UNIQUE INDEX realm_groups_child_name ON realm_groups (parent_id, name) WHERE parent_id IS NOT NULL;

CREATE TABLE group_members (
    group_id  TEXT NOT NULL REFERENCES realm_groups (id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members (user_id);

CREATE TABLE group_roles (
    group_id  TEXT NOT NULL REFERENCES realm_groups (id) ON DELETE CASCADE,
    role_id   TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, role_id)
);
CREATE INDEX group_roles_role ON group_roles (role_id);

CREATE TABLE client_scopes (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    protocol     TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX client_scopes_realm_name ON client_scopes (realm_id, name);

CREATE TABLE protocol_mappers (
    id           TEXT PRIMARY KEY,
    scope_id     TEXT NOT NULL REFERENCES client_scopes (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    mapper_type  TEXT NOT NULL,
    protocol     TEXT NOT NULL,
    config       TEXT NOT NULL,  -- JSON object of strings
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX protocol_mappers_scope_name ON protocol_mappers (scope_id, name);

-- kind is 'default' (always applied) or 'optional' (applied when requested).
CREATE TABLE client_scope_links (
    client_id  TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scope_id   TEXT NOT NULL REFERENCES client_scopes (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    PRIMARY KEY (client_id, scope_id)
);
CREATE INDEX client_scope_links_scope ON client_scope_links (scope_id);

CREATE TABLE admin_events (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time            BIGINT NOT NULL,  -- Unix milliseconds
    operation_type  TEXT NOT NULL,
    resource_type   TEXT NOT NULL,
    resource_path   TEXT NOT NULL,
    auth_type       TEXT NOT NULL,    -- api-key or user
    auth_user_id    TEXT NOT NULL,
    auth_username   TEXT NOT NULL,
    ip_address      TEXT NOT NULL,
    representation  TEXT NOT NULL     -- JSON, secrets redacted
);
CREATE INDEX admin_events_realm_time ON admin_events (realm_id, time, id);

CREATE TABLE login_events (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time        BIGINT NOT NULL,  -- Unix milliseconds
    type        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    ip_address  TEXT NOT NULL,
    error       TEXT NOT NULL,
    details     TEXT NOT NULL     -- JSON object
);
CREATE INDEX login_events_realm_time ON login_events (realm_id, time, id);

-- SSO sessions (kind 'sso') and the OAuth sessions of clients under them
-- (kind 'oauth'). The OpenID Connect provider writes them.
CREATE TABLE user_sessions (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    parent_id       TEXT REFERENCES user_sessions (id) ON DELETE CASCADE,
    client_id       TEXT REFERENCES clients (id) ON DELETE CASCADE,
    ip_address      TEXT NOT NULL,
    started_at      BIGINT NOT NULL,
    last_access_at  BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL
);
CREATE INDEX user_sessions_realm ON user_sessions (realm_id, expires_at);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

-- A user's standing consent to a client's scopes.
CREATE TABLE user_consents (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scopes      TEXT NOT NULL,  -- JSON array of scope names
    granted_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, client_id)
);
CREATE INDEX user_consents_client ON user_consents (client_id);

-- version 3
-- The OpenID Connect provider: signing keys, authorization requests and
-- codes, refresh-token families, revoked access tokens, device
-- authorizations, consent history and logout-token replay protection.

-- Per-realm signing keys. A key is 'next' (published, not yet signing),
-- 'active' (signing; one per realm) or 'retired' (published until every
-- token it signed has expired, then deleted).
CREATE TABLE signing_keys (
    id              TEXT PRIMARY KEY,  -- the JWK kid
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    algorithm       TEXT NOT NULL,     -- RS256, ES256 or EdDSA
    private_key     BLOB NOT NULL,     -- AES-GCM ciphertext of the PKCS #8 DER key
    public_jwk      TEXT NOT NULL,     -- JSON
    status          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    activated_at    BIGINT,
    retired_at      BIGINT,
    publish_until   BIGINT             -- retired keys: last expiry of a token they signed
);
CREATE INDEX signing_keys_realm ON signing_keys (realm_id, status);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (realm_id) WHERE status = 'active';

CREATE TABLE realm_key_settings (
    realm_id        TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    algorithm       TEXT NOT NULL,
    rotation_days   INTEGER NOT NULL   -- 0: rotate only on request
);

-- SSO sessions record how and when the user authenticated; offline
-- sessions outlive SSO logout.
ALTER TABLE user_sessions ADD COLUMN auth_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE user_sessions ADD COLUMN amr TEXT NOT NULL DEFAULT '[]';
ALTER TABLE user_sessions ADD COLUMN offline BOOLEAN NOT NULL DEFAULT false;

-- An authorization request from /auth until its code is redeemed.
CREATE TABLE auth_requests (
    id                     TEXT PRIMARY KEY,
    realm_id               TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id              TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    redirect_uri           TEXT NOT NULL,
    scopes                 TEXT NOT NULL,  -- JSON array
    state                  TEXT NOT NULL,
    nonce                  TEXT NOT NULL,
    response_type          TEXT NOT NULL,
    response_mode          TEXT NOT NULL,
    code_challenge         TEXT NOT NULL,
    code_challenge_method  TEXT NOT NULL,
    prompt                 TEXT NOT NULL,  -- JSON array
    max_age                INTEGER,        -- seconds; NULL when not asked
    login_hint             TEXT NOT NULL,
    user_id                TEXT REFERENCES users (id) ON DELETE CASCADE,
    session_id             TEXT REFERENCES user_sessions (id) ON DELETE CASCADE,
    auth_time              BIGINT NOT NULL DEFAULT 0,
    amr                    TEXT NOT NULL DEFAULT '[]',
    done                   BOOLEAN NOT NULL DEFAULT false,
    code_hash              BLOB,           -- SHA-256 of the code, once issued
    code_used_at           BIGINT,         -- a second redemption revokes what the first issued
    token_family           TEXT NOT NULL DEFAULT '',
    created_at             BIGINT NOT NULL,
    expires_at             BIGINT NOT NULL
);
CREATE UNIQUE INDEX auth_requests_code ON auth_requests (code_hash) WHERE code_hash IS NOT NULL;
CREATE INDEX auth_requests_expiry ON auth_requests (expires_at);

-- Refresh tokens are opaque; only their hash is stored. Each use rotates
-- the token; presenting a rotated one revokes its whole family.
CREATE TABLE refresh_tokens (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    token_hash  BLOB NOT NULL UNIQUE,
    family_id   TEXT NOT NULL,
    session_id  TEXT REFERENCES user_sessions (id) ON DELETE CASCADE,
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes      TEXT NOT NULL,  -- JSON array
    offline     BOOLEAN NOT NULL,
    auth_time   BIGINT NOT NULL,
    amr         TEXT NOT NULL,  -- JSON array
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    rotated_at  BIGINT,
    revoked_at  BIGINT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id, offline);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

-- Access tokens are JWTs checked by signature; revoked ones are listed
-- here until they would have expired anyway.
CREATE TABLE revoked_access_tokens (
    token_id    TEXT PRIMARY KEY,  -- jti
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX revoked_access_tokens_expiry ON revoked_access_tokens (expires_at);

-- RFC 8628 device authorizations.
CREATE TABLE device_authorizations (
    device_code_hash  BLOB PRIMARY KEY,
    user_code         TEXT NOT NULL UNIQUE,
    realm_id          TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id         TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scopes            TEXT NOT NULL,  -- JSON array
    status            TEXT NOT NULL,  -- pending, approved, denied
    user_id           TEXT REFERENCES users (id) ON DELETE CASCADE,
    auth_time         BIGINT NOT NULL DEFAULT 0,
    interval_seconds  INTEGER NOT NULL,
    last_poll_at      BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL
);
CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

-- Every consent granted or revoked, for the consent history.
CREATE TABLE consent_events (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    action      TEXT NOT NULL,  -- GRANT or REVOKE
    scopes      TEXT NOT NULL,  -- JSON array
    time        BIGINT NOT NULL
);
CREATE INDEX consent_events_user ON consent_events (user_id, time);

-- jti of back-channel logout tokens received, so none is accepted twice.
CREATE TABLE logout_token_ids (
    jti         TEXT PRIMARY KEY,
    expires_at  BIGINT NOT NULL
);

-- version 4
-- Email delivery and the single-use tokens mailed in links.

-- Mail waits here, written in the same transaction as what caused it, and a
-- worker sends it with retries: a failed send never loses the change.
CREATE TABLE email_outbox (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    recipient        TEXT NOT NULL,
    subject          TEXT NOT NULL,
    html_body        TEXT NOT NULL,
    text_body        TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    sent_at          BIGINT,
    failed_at        BIGINT         -- given up after the last retry
);
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;

-- Links for email verification and password reset: only a hash of the
-- token is kept; each is single-use and expires.
CREATE TABLE action_tokens (
    token_hash  BLOB PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,   -- verify-email or reset-password
    email       TEXT NOT NULL,   -- the address it was sent to: a changed email voids it
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);
CREATE INDEX action_tokens_user ON action_tokens (user_id, kind);
CREATE INDEX action_tokens_expiry ON action_tokens (expires_at);

-- version 5
-- Self-service registration: admin-defined fields stored as user
-- attributes, optional moderation, and the user states it needs.

CREATE TABLE user_attributes (
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name     TEXT NOT NULL,
    value    TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE registration_fields (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    field_key    TEXT NOT NULL,
    label        TEXT NOT NULL,
    field_type   TEXT NOT NULL,    -- text, email, tel, number, date, checkbox, select
    required     BOOLEAN NOT NULL,
    pattern      TEXT NOT NULL,    -- a regular expression the value must match; empty for none
    options      TEXT NOT NULL,    -- JSON array, for select fields
    enabled      BOOLEAN NOT NULL,
    position     INTEGER NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX registration_fields_key ON registration_fields (realm_id, field_key);

CREATE TABLE registration_settings (
    realm_id    TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    moderation  BOOLEAN NOT NULL   -- new users wait for approval
);

-- active, or pending (awaiting approval) or rejected: only active users sign in.
ALTER TABLE users ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
CREATE INDEX users_pending ON users (realm_id, created_at) WHERE status = 'pending';

-- version 6
-- A sign-in whose password was right but which waits for a required step
-- (a password change) before its authorization request is authenticated.
-- browser_hash is the SHA-256 of the signing-in browser's CSRF cookie, so
-- the step can only be finished from that browser.
CREATE TABLE pending_logins (
    auth_request_id  TEXT PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    action           TEXT NOT NULL,     -- the step: UPDATE_PASSWORD
    browser_hash     BLOB NOT NULL,
    remember_me      BOOLEAN NOT NULL,  -- as chosen on the login form
    created_at       BIGINT NOT NULL
);
CREATE INDEX pending_logins_user ON pending_logins (user_id);

-- version 7
-- Account self-service: deletions a user asked for, carried out by a
-- background job when the grace window ends, cancellable until then.
CREATE TABLE account_deletions (
    user_id       TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    requested_at  BIGINT NOT NULL,  -- Unix milliseconds
    delete_at     BIGINT NOT NULL
);
CREATE INDEX account_deletions_due ON account_deletions (delete_at, user_id);

-- version 8
-- Password history and brute-force protection.

-- The hashes a user's password had before, newest seq last, kept as far as
-- the realm's passwordHistoryCount needs them (the current password is the
-- one in users).
CREATE TABLE password_history (
    realm_id       TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,  -- 1, 2, 3… per user
    password_hash  TEXT NOT NULL,     -- PHC string
    replaced_at    BIGINT NOT NULL,   -- when it stopped being the password
    PRIMARY KEY (realm_id, user_id, seq)
);

-- Failed sign-ins per user, for the realm's brute-force policy. A row
-- exists from the first failure until a successful sign-in or an unlock.
CREATE TABLE login_failures (
    realm_id            TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id             TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    failures            INTEGER NOT NULL,  -- since the last reset or lockout
    last_failure_at     BIGINT NOT NULL,
    last_ip             TEXT NOT NULL,
    temporary_lockouts  INTEGER NOT NULL,  -- since the last reset
    -- End of the lockout: 0 when never locked, 9223372036854775807 (the
    -- largest BIGINT) when locked for good, so that one range over the
    -- index below finds every locked user.
    locked_until        BIGINT NOT NULL,
    PRIMARY KEY (realm_id, user_id)
);
CREATE INDEX login_failures_locked ON login_failures (realm_id, locked_until, user_id);

-- Passwords set before this version count their age from the user's creation.
UPDATE users SET password_changed_at = created_at WHERE password_hash IS NOT NULL AND password_changed_at IS NULL;

-- version 9
-- Second factors: credentials beside the password (TOTP now, WebAuthn
-- later), single-use recovery codes, and the second step of a sign-in
-- whose password was right.

-- A credential waits unconfirmed until its first code proves the
-- authenticator holds the secret; only confirmed ones sign in.
CREATE TABLE user_credentials (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type            TEXT NOT NULL,    -- totp
    label           TEXT NOT NULL,
    secret          BLOB NOT NULL,    -- AES-GCM ciphertext bound to the row
    confirmed       BOOLEAN NOT NULL,
    -- The last TOTP time step accepted: a code of that step or an earlier
    -- one is refused, so each code works once.
    last_used_step  BIGINT NOT NULL,
    created_at      BIGINT NOT NULL   -- when it was confirmed, or begun while unconfirmed
);
CREATE INDEX user_credentials_user ON user_credentials (user_id, type);
-- One TOTP authenticator per user, and one enrolment in progress.
CREATE UNIQUE INDEX user_credentials_one_totp ON user_credentials (user_id, confirmed) WHERE type = 'totp';

-- Recovery codes stand in for a second factor once each; only their
-- SHA-256 is kept.
CREATE TABLE recovery_codes (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    code_hash   BLOB NOT NULL,
    created_at  BIGINT NOT NULL,
    used_at     BIGINT,
    PRIMARY KEY (user_id, code_hash)
);

-- An authorization request whose user gave the right password but still
-- owes a second factor: no code is issued while this row exists. It is
-- bound to the browser that gave the password.
CREATE TABLE auth_request_steps (
    auth_request_id  TEXT PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    pending          TEXT NOT NULL,   -- totp, totp-setup or recovery-codes
    browser_hash     BLOB NOT NULL,   -- SHA-256 of the browser's CSRF cookie
    password_at      BIGINT NOT NULL,
    remember_me      BOOLEAN NOT NULL DEFAULT FALSE  -- as chosen on the login form
);

-- A password change required after a second factor: the sign-in it ends
-- was authenticated by both.
ALTER TABLE pending_logins ADD COLUMN second_factor BOOLEAN NOT NULL DEFAULT FALSE;

-- version 10
-- WebAuthn: security keys and passkeys. Each is a user_credentials row of
-- type webauthn, so second-factor checks, removal by an admin and the
-- keeping of factors across a realm import treat it as they treat TOTP.
-- Its secret column holds the sealed credential record (public key,
-- AAGUID, flags, transports, attestation) as JSON; last_used_step holds
-- the authenticator's signature counter, which only ever grows.

-- The authenticator's credential ID, unique in a realm: a passkey sign-in
-- finds the credential, and so the user, by it.
ALTER TABLE user_credentials ADD COLUMN credential_id BLOB;
ALTER TABLE user_credentials ADD COLUMN last_used_at BIGINT;
CREATE UNIQUE INDEX user_credentials_webauthn_id ON user_credentials (realm_id, credential_id)
    WHERE credential_id IS NOT NULL;

-- The user handle an authenticator keeps with a passkey: 64 random bytes
-- per user, made at the first registration and never changed, so a new
-- passkey of the same user replaces the old one on the authenticator.
CREATE TABLE webauthn_user_handles (
    user_id   TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id  TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    handle    BLOB NOT NULL,
    UNIQUE (realm_id, handle)
);

-- A registration or authentication ceremony between its options and its
-- response: the challenge and what the response is checked against. Used
-- once (deleted when the response comes) and only until it expires. Only
-- the SHA-256 of the ceremony's ID is kept.
CREATE TABLE webauthn_ceremonies (
    id_hash       BLOB PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id       TEXT REFERENCES users (id) ON DELETE CASCADE,  -- NULL: a passkey sign-in, user not yet known
    kind          TEXT NOT NULL,    -- register or login
    session_data  TEXT NOT NULL,    -- go-webauthn's SessionData, JSON
    expires_at    BIGINT NOT NULL
);
CREATE INDEX webauthn_ceremonies_expiry ON webauthn_ceremonies (expires_at);

-- version 11
-- Step-up: a second factor asked of a user already signed in, whose SSO
-- session counts one factor (acr 1) while the user has a second. The
-- sign-in's step then names the SSO session it raises: no password is
-- asked again, and the step ends with that session if it ends first.
ALTER TABLE auth_request_steps ADD COLUMN sso_session_id TEXT REFERENCES user_sessions (id) ON DELETE CASCADE;

-- version 12
-- How a sign-in held for a required step authenticated so far (its amr, a
-- JSON array), which the step's sign-in reports: [pwd, otp] after a TOTP
-- code, [pwd, hwk] after a security key, a passkey's own after a passkey.
-- It replaces second_factor, which only said whether a second factor
-- passed; '' on rows saved before (read as a password alone).
ALTER TABLE pending_logins ADD COLUMN amr TEXT NOT NULL DEFAULT '';

-- version 13
-- The login event types a realm records (a JSON array of names), as
-- Keycloak's enabledEventTypes: empty records Keycloak's default set,
-- every type but the per-request ones (token refresh, introspection,
-- userinfo), which would put a write behind every API call.
ALTER TABLE realms ADD COLUMN enabled_event_types TEXT NOT NULL DEFAULT '[]';

-- version 14
-- The hourly sweeps delete by expiry alone: without these indexes each
-- sweep read the whole table, holding the writer meanwhile (and each
-- back-channel logout read every remembered logout token). Deleting a
-- session or a user also finds the rows that point at it (its OAuth
-- sessions, sign-ins in progress, failure counts, old password hashes):
-- without an index, once per deleted row, in a full read of the table, so
-- every logout read every session.
CREATE INDEX user_sessions_expiry ON user_sessions (expires_at);
CREATE INDEX user_sessions_parent ON user_sessions (parent_id);
CREATE INDEX login_failures_user ON login_failures (user_id);
CREATE INDEX password_history_user ON password_history (user_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);
CREATE INDEX logout_token_ids_expiry ON logout_token_ids (expires_at);
CREATE INDEX auth_requests_session ON auth_requests (session_id);
CREATE INDEX auth_requests_user ON auth_requests (user_id);
CREATE INDEX auth_request_steps_session ON auth_request_steps (sso_session_id);
CREATE INDEX auth_request_steps_user ON auth_request_steps (user_id);

-- version 15
-- Failed admin logins, by the key the flood guard counts them under (an
-- admin username, a client address), so that a restart does not lift
-- the throttle. The key is stored as its SHA-256 (hex): a fixed length,
-- whatever was typed, and no usernames or addresses at rest. Rows older
-- than the throttle's window are deleted as new ones are written.
CREATE TABLE admin_login_failures (
    key_hash   TEXT NOT NULL,
    failed_at  BIGINT NOT NULL      -- Unix milliseconds
);
CREATE INDEX admin_login_failures_key ON admin_login_failures (key_hash, failed_at);
CREATE INDEX admin_login_failures_time ON admin_login_failures (failed_at);

-- version 16
-- The SAML identity provider. Each realm signs with an RSA key of its own
-- for SAML (whatever its OIDC keys are), published as a self-signed X.509
-- certificate in the realm's metadata. The keys move through the states of
-- the OIDC signing keys: next (in the metadata, not signing), active,
-- retired (in the metadata until publish_until).
CREATE TABLE saml_keys (
    id             TEXT PRIMARY KEY,  -- hex SHA-256 of the certificate's DER
    realm_id       TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    private_key    BLOB NOT NULL,     -- AES-GCM ciphertext of the PKCS #8 DER key
    certificate    BLOB NOT NULL,     -- DER
    status         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    activated_at   BIGINT,
    retired_at     BIGINT,
    publish_until  BIGINT
);
CREATE INDEX saml_keys_realm ON saml_keys (realm_id, status);
CREATE UNIQUE INDEX saml_keys_one_active ON saml_keys (realm_id) WHERE status = 'active';

-- The service providers a realm signs people in to.
CREATE TABLE saml_service_providers (
    id                      TEXT PRIMARY KEY,
    realm_id                TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    entity_id               TEXT NOT NULL,
    name                    TEXT NOT NULL,
    enabled                 BOOLEAN NOT NULL,
    acs_url                 TEXT NOT NULL,
    slo_url                 TEXT NOT NULL,
    certificate             TEXT NOT NULL,  -- PEM: checks the SP's signatures; '' for none
    encryption_certificate  TEXT NOT NULL,  -- PEM: encrypts assertions to the SP; '' for none
    encrypt_assertions      BOOLEAN NOT NULL,
    name_id_format          TEXT NOT NULL,
    sign_assertions         BOOLEAN NOT NULL,
    sign_responses          BOOLEAN NOT NULL,
    attribute_statements    TEXT NOT NULL,  -- JSON object: attribute name to source
    idp_initiated           BOOLEAN NOT NULL,
    created_at              BIGINT NOT NULL,
    UNIQUE (realm_id, entity_id)
);

-- AuthnRequest and LogoutRequest IDs seen, by issuer, until the request
-- could no longer be accepted anyway (its IssueInstant is too old): a
-- request sent twice is refused.
CREATE TABLE saml_request_ids (
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    issuer      TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    PRIMARY KEY (realm_id, issuer, request_id)
);
CREATE INDEX saml_request_ids_expiry ON saml_request_ids (expires_at);

-- An AuthnRequest waiting for its browser to sign in; the browser holds
-- the ID's secret half in a cookie. Only the SHA-256 of the ID is kept.
CREATE TABLE saml_auth_requests (
    id_hash         BLOB PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    sp_id           TEXT NOT NULL REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    request_id      TEXT NOT NULL,   -- the AuthnRequest's ID; '' for an unsolicited response
    acs_url         TEXT NOT NULL,
    relay_state     TEXT NOT NULL,
    name_id_format  TEXT NOT NULL,
    force_authn     BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL
);
CREATE INDEX saml_auth_requests_expiry ON saml_auth_requests (expires_at);

-- The service providers an SSO session signed in to, with the NameID and
-- SessionIndex each was given: single logout sends each its LogoutRequest.
CREATE TABLE saml_sessions (
    session_index   TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    sso_session_id  TEXT NOT NULL REFERENCES user_sessions (id) ON DELETE CASCADE,
    sp_id           TEXT NOT NULL REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    name_id         TEXT NOT NULL,
    name_id_format  TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX saml_sessions_sso ON saml_sessions (sso_session_id);

-- A single logout under way: the browser goes to each other service
-- provider of the ended SSO session in turn, then back to the one that
-- asked, with its LogoutResponse. The browser holds the handle; only its
-- SHA-256 is kept.
CREATE TABLE saml_logouts (
    id_hash     BLOB PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    state       TEXT NOT NULL,   -- JSON: the request answered last, the service providers still to visit
    expires_at  BIGINT NOT NULL
);
CREATE INDEX saml_logouts_expiry ON saml_logouts (expires_at);

-- A realm's SAML identity provider settings; a realm without a row has
-- the defaults (unsigned AuthnRequests accepted from an SP without a
-- certificate).
CREATE TABLE saml_settings (
    realm_id                    TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    want_authn_requests_signed  BOOLEAN NOT NULL
);

-- version 17
-- Identity brokering. The upstream identity providers a realm's people
-- may sign in with: the spec's fields as columns, the rest of a
-- provider's settings (a preset's tenant, the claim mapping, whether to
-- keep upstream tokens) as a JSON object. The client secret is sealed
-- with the master key.
CREATE TABLE identity_providers (
    id                 TEXT PRIMARY KEY,
    realm_id           TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    alias              TEXT NOT NULL,
    display_name       TEXT NOT NULL,
    provider_type      TEXT NOT NULL,   -- oidc, oauth2, or a preset: google, github, ...
    enabled            BOOLEAN NOT NULL,
    client_id          TEXT NOT NULL,
    client_secret      BLOB,            -- sealed
    authorization_url  TEXT NOT NULL,
    token_url          TEXT NOT NULL,
    userinfo_url       TEXT NOT NULL,
    jwks_url           TEXT NOT NULL,
    issuer             TEXT NOT NULL,
    default_scopes     TEXT NOT NULL,   -- space-separated
    trust_email        BOOLEAN NOT NULL,
    sync_user_profile  BOOLEAN NOT NULL,
    config             TEXT NOT NULL,   -- JSON object
    created_at         BIGINT NOT NULL
);
CREATE UNIQUE INDEX identity_providers_alias ON identity_providers (realm_id, alias);

-- A person's link to an account at an upstream provider: one per user and
-- provider, and one user per upstream subject. The upstream tokens are
-- kept (sealed) only when the provider says so.
CREATE TABLE federated_identities (
    provider_id  TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    subject      TEXT NOT NULL,    -- the upstream's user ID (sub)
    username     TEXT NOT NULL,    -- the upstream's username, as mapped
    email        TEXT NOT NULL,
    token        BLOB,             -- sealed upstream token response, JSON
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (provider_id, user_id)
);
CREATE UNIQUE INDEX federated_identities_subject ON federated_identities (provider_id, subject);
CREATE INDEX federated_identities_user ON federated_identities (user_id);
CREATE INDEX federated_identities_realm ON federated_identities (realm_id);

-- A sign-in on its way through an upstream provider, from the redirect to
-- its callback: found by the SHA-256 of the state sent upstream, and good
-- only in the browser whose cookie hashes to browser_hash. The PKCE
-- verifier is sealed. It continues an authorization request, or links the
-- provider to a signed-in user's account (link_user_id).
CREATE TABLE broker_logins (
    state_hash       BLOB PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id      TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    browser_hash     BLOB NOT NULL,
    nonce            TEXT NOT NULL,
    code_verifier    BLOB NOT NULL,   -- sealed
    auth_request_id  TEXT REFERENCES auth_requests (id) ON DELETE CASCADE,
    link_user_id     TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL
);
CREATE INDEX broker_logins_expiry ON broker_logins (expires_at);
-- Deleting a realm, a provider, a request or a user finds its rows here.
CREATE INDEX broker_logins_realm ON broker_logins (realm_id);
CREATE INDEX broker_logins_provider ON broker_logins (provider_id);
CREATE INDEX broker_logins_auth_request ON broker_logins (auth_request_id);
CREATE INDEX broker_logins_user ON broker_logins (link_user_id);

-- An upstream account that matched a local account by email, held while
-- the person signs in to the local account once to confirm the link: the
-- upstream identity as mapped, for the browser it came back to.
CREATE TABLE broker_pending_links (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id      TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    auth_request_id  TEXT NOT NULL REFERENCES auth_requests (id) ON DELETE CASCADE,
    browser_hash     BLOB NOT NULL,
    identity         BLOB NOT NULL,   -- sealed: the mapped upstream identity and tokens, JSON
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL
);
CREATE INDEX broker_pending_links_expiry ON broker_pending_links (expires_at);
CREATE INDEX broker_pending_links_user ON broker_pending_links (user_id);
CREATE INDEX broker_pending_links_realm ON broker_pending_links (realm_id);
CREATE INDEX broker_pending_links_provider ON broker_pending_links (provider_id);
CREATE INDEX broker_pending_links_auth_request ON broker_pending_links (auth_request_id);

-- version 18
-- User federation providers (LDAP directories): a realm's several, asked
-- in the order of their priority. The settings of the provider type are
-- one JSON object (config), as Keycloak keeps a component's; the bind
-- password is apart from them, sealed with the master key. The last
-- sync's outcome (a JSON object) and the time its changed-user query
-- started from are kept with the provider.
CREATE TABLE federation_providers (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    provider_type    TEXT NOT NULL,
    enabled          BOOLEAN NOT NULL,
    priority         INTEGER NOT NULL,
    config           TEXT NOT NULL,
    bind_credential  BLOB,
    created_at       BIGINT NOT NULL,
    last_sync        TEXT NOT NULL DEFAULT '',
    changed_since    BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX federation_providers_realm_name ON federation_providers (realm_id, name);

-- A local user linked to a directory entry: the provider, the entry's
-- stable ID (its uuidLdapAttr value) and its DN when last seen. Deleting
-- the provider deletes its users (the provider's code does, through the
-- identity core); the cascade is the backstop.
CREATE TABLE federation_links (
    user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id  TEXT NOT NULL REFERENCES federation_providers (id) ON DELETE CASCADE,
    external_id  TEXT NOT NULL,
    dn           TEXT NOT NULL
);
CREATE UNIQUE INDEX federation_links_external ON federation_links (provider_id, external_id);

-- version 19
-- SCIM provisioning tokens of a realm. The token is shown once, at its
-- creation: "<id>.<secret>"; only the SHA-256 of the secret is kept (the
-- secret is 256 random bits, so a fast hash suffices, as for the admin API
-- key). A revoked token never works again; a disabled one works once it is
-- enabled. last_used_at and use_count follow every accepted request.
CREATE TABLE scim_tokens (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    secret_hash   BLOB NOT NULL,
    enabled       BOOLEAN NOT NULL,
    revoked_at    BIGINT,            -- Unix milliseconds; NULL while not revoked
    expires_at    BIGINT,            -- Unix milliseconds; NULL for no expiry
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT,
    use_count     BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX scim_tokens_realm_name ON scim_tokens (realm_id, name);
-- What SCIM holds of a user beyond the users row (its externalId, display
-- and nick names, titles, every email and phone number, the enterprise
-- extension, ...), as the JSON of those attributes, and when SCIM last
-- changed the user. The users row stays the truth for the username, the
-- given and family names, the primary email and whether the user is
-- enabled.
CREATE TABLE scim_users (
    user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    modified_at  BIGINT NOT NULL,    -- Unix milliseconds
    data         TEXT NOT NULL       -- JSON object
);
-- The values of those attributes that filters and sorting read, one row
-- per value (an email, a title, the enterprise department), so that a
-- SCIM filter runs as SQL: attr is the attribute's lowercased path
-- ("title", "name.middlename", "emails", "urn:...:enterprise:2.0:user:department"),
-- fold the value lowercased in Go (for attributes that ignore case), type
-- a multi-valued attribute's type, lowercased.
CREATE TABLE scim_user_values (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id    TEXT NOT NULL,
    attr        TEXT NOT NULL,
    value       TEXT NOT NULL,
    fold        TEXT NOT NULL,
    type        TEXT NOT NULL,
    is_primary  BOOLEAN NOT NULL
);
-- Both cover a filter's read (the user's ID included), so that a
-- substring search reads an index alone.
CREATE INDEX scim_user_values_fold ON scim_user_values (realm_id, attr, fold, user_id);
CREATE INDEX scim_user_values_exact ON scim_user_values (realm_id, attr, value, user_id);
CREATE INDEX scim_user_values_user ON scim_user_values (user_id, attr);
-- What SCIM holds of a group beyond the realm_groups row.
CREATE TABLE scim_groups (
    group_id     TEXT PRIMARY KEY REFERENCES realm_groups (id) ON DELETE CASCADE,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    external_id  TEXT NOT NULL,
    modified_at  BIGINT NOT NULL
);
CREATE INDEX scim_groups_external ON scim_groups (realm_id, external_id);

-- version 20
-- Non-human identities (docs/nhi.md): services, workloads, devices, bots
-- and AI agents. Each is backed by a confidential client with the
-- client_credentials grant, whose clientId is the identity's name, and so
-- by that client's service-account user, which holds its roles. The
-- client itself has no secret: the identity's credentials authenticate it.
-- Deleting the client deletes the identity and its credentials.
CREATE TABLE nhi_identities (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id     TEXT NOT NULL UNIQUE REFERENCES clients (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,   -- service, workload, device, bot, ai_agent
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    owner_type    TEXT NOT NULL DEFAULT '',   -- user or group; '' for none
    owner_id      TEXT NOT NULL DEFAULT '',
    metadata      TEXT NOT NULL DEFAULT '{}', -- a JSON object of strings
    state         TEXT NOT NULL,   -- active, suspended, decommissioned
    created_at    BIGINT NOT NULL, -- Unix milliseconds, as every time below
    updated_at    BIGINT NOT NULL,
    last_used_at  BIGINT,          -- the last token obtained; NULL: never
    policy_id     TEXT NOT NULL DEFAULT '',   -- its credential policy; '' for none
    -- The admin permissions (app/authz names, a JSON array) a service
    -- account's API keys carry at the admin API of its own realm.
    admin_permissions TEXT NOT NULL DEFAULT '[]',
    UNIQUE (realm_id, name)
);
CREATE INDEX nhi_identities_realm ON nhi_identities (realm_id, kind, name);

-- An identity's credentials, several at once. A secret or an API key is
-- kept only as its SHA-256 (it is 256 random bits); an API key's prefix is
-- kept in clear to find it and to show it. A credential works from its
-- creation until expires_at and until revoked_at, whichever comes first;
-- a rotation with a grace period sets revoked_at in the future.
CREATE TABLE nhi_credentials (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    nhi_id        TEXT NOT NULL REFERENCES nhi_identities (id) ON DELETE CASCADE,
    type          TEXT NOT NULL,   -- client_secret, api_key, public_key, certificate
    name          TEXT NOT NULL DEFAULT '',
    prefix        TEXT NOT NULL DEFAULT '',
    secret_hash   BLOB,
    public_key    TEXT NOT NULL DEFAULT '',   -- a public JWK (public_key, certificate)
    key_id        TEXT NOT NULL DEFAULT '',   -- the JWK's kid
    certificate   TEXT NOT NULL DEFAULT '',   -- PEM
    scopes        TEXT NOT NULL DEFAULT '[]',
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,          -- NULL: never
    revoked_at    BIGINT,          -- NULL: not revoked
    last_used_at  BIGINT,
    replaced_by   TEXT NOT NULL DEFAULT '',   -- the credential a rotation issued in its place
    -- When the upkeep job announced that it expires soon, and that it
    -- expired (NHI_CREDENTIAL_EXPIRING, NHI_CREDENTIAL_EXPIRED): once each.
    expiring_noticed_at BIGINT,
    expired_noticed_at  BIGINT
);
CREATE INDEX nhi_credentials_identity ON nhi_credentials (nhi_id, created_at);
CREATE UNIQUE INDEX nhi_credentials_prefix ON nhi_credentials (realm_id, prefix) WHERE prefix != '';

-- The jti of every client assertion (RFC 7523) accepted, until the
-- assertion expires, so that none is accepted twice (§3 item 7). Only the
-- SHA-256 of the jti is kept: a fixed length, whatever was sent.
CREATE TABLE nhi_assertion_ids (
    client_id   TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    jti_hash    BLOB NOT NULL,
    expires_at  BIGINT NOT NULL,
    PRIMARY KEY (client_id, jti_hash)
);
CREATE INDEX nhi_assertion_ids_expiry ON nhi_assertion_ids (expires_at);

-- How much each identity was used, per UTC day (days since 1970-01-01):
-- tokens obtained, authentications refused, and introspections of its API
-- keys. Read by the stats and the service accounts' metrics.
CREATE TABLE nhi_usage (
    nhi_id          TEXT NOT NULL REFERENCES nhi_identities (id) ON DELETE CASCADE,
    day             BIGINT NOT NULL,
    tokens          BIGINT NOT NULL DEFAULT 0,
    failures        BIGINT NOT NULL DEFAULT 0,
    introspections  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (nhi_id, day)
);

-- Each realm's internal certificate authority, made when it first signs
-- an identity's certificate: its certificate (PEM) and its private key
-- (PKCS #8 DER), sealed with the master key as the signing keys are.
CREATE TABLE nhi_realm_cas (
    realm_id     TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    certificate  TEXT NOT NULL,
    private_key  BLOB NOT NULL,
    created_at   BIGINT NOT NULL
);

-- The audit log of the identities: every state change, credential issued,
-- rotated and revoked, and every use of a credential and refused
-- authentication, with who did it and from where. A record outlives its
-- identity (nhi_id is not a reference), so the log still tells what a
-- deleted identity did; it goes with its realm, or with DELETE
-- .../nhi/audit-logs.
CREATE TABLE nhi_audit_logs (
    id             TEXT PRIMARY KEY,   -- UUIDv7: ordered by time
    realm_id       TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time           BIGINT NOT NULL,
    nhi_id         TEXT NOT NULL,
    nhi_name       TEXT NOT NULL,
    credential_id  TEXT NOT NULL DEFAULT '',
    action         TEXT NOT NULL,
    actor_type     TEXT NOT NULL,      -- api-key or user (an admin), identity (itself)
    actor_id       TEXT NOT NULL DEFAULT '',
    actor_name     TEXT NOT NULL DEFAULT '',
    ip_address     TEXT NOT NULL DEFAULT '',
    details        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX nhi_audit_logs_time ON nhi_audit_logs (realm_id, time);
CREATE INDEX nhi_audit_logs_identity ON nhi_audit_logs (realm_id, nhi_id, time);

-- Credential policies (docs/nhi.md): how long an identity's credentials
-- may live and when they are due for rotation; an identity names at most
-- one (nhi_identities.policy_id). Durations in seconds; 0: no bound.
CREATE TABLE nhi_credential_policies (
    id                 TEXT PRIMARY KEY,
    realm_id           TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    max_age            BIGINT NOT NULL,
    rotation_interval  BIGINT NOT NULL,
    grace_period       BIGINT NOT NULL,
    warn_before        BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);

-- version 21
-- Organizations (Keycloak's, addressed by slug: its alias), their
-- domains, members and invitations. Deleting an organization removes
-- what hangs off it, never the users; deleting a user ends their
-- memberships. A domain may be listed by several organizations until one
-- of them verifies it: then it is that organization's alone in the realm
-- (organization_domains_verified). An invitation keeps the SHA-256 of its
-- token, never the token.
CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    slug        TEXT NOT NULL,
    name        TEXT NOT NULL,
    name_search TEXT NOT NULL,            -- name, lowercased
    description TEXT NOT NULL DEFAULT '',
    enabled     BOOLEAN NOT NULL DEFAULT TRUE,
    attributes  TEXT NOT NULL DEFAULT '{}', -- JSON object of string lists
    created_at  BIGINT NOT NULL,
    UNIQUE (realm_id, slug)
);
CREATE TABLE organization_domains (
    org_id       TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    realm_id     TEXT NOT NULL,
    name         TEXT NOT NULL,          -- lowercase
    verified     BOOLEAN NOT NULL DEFAULT FALSE,
    challenge    TEXT NOT NULL DEFAULT '', -- the TXT value to publish, while verification is pending
    challenge_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, name)
);
CREATE INDEX organization_domains_name ON organization_domains (realm_id, name);
CREATE UNIQUE INDEX organization_domains_verified ON organization_domains (realm_id, name) WHERE verified;
CREATE TABLE organization_members (
    org_id     TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL,            -- owner, admin or member
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX organization_members_user ON organization_members (user_id);
CREATE TABLE organization_invitations (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,            -- lowercase
    role       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,     -- SHA-256 of the token, hex
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT NOT NULL DEFAULT 0,
    used_by    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX organization_invitations_org ON organization_invitations (org_id, created_at);

-- version 22
-- The realm's custom attributes (Keycloak's declarative user profile,
-- reduced): each attribute's type and rules, and the values users hold
-- (a JSON array of strings per attribute). Values of an attribute no
-- longer in the schema stay stored but are never shown or put in tokens.
CREATE TABLE custom_attributes (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    display_name    TEXT NOT NULL DEFAULT '',
    type            TEXT NOT NULL,            -- string, number, boolean, date, enum
    required        BOOLEAN NOT NULL DEFAULT FALSE,
    multivalued     BOOLEAN NOT NULL DEFAULT FALSE,
    options         TEXT NOT NULL DEFAULT '[]', -- JSON array, for enum
    validation      TEXT NOT NULL DEFAULT '{}', -- JSON object: pattern, minLength, maxLength, min, max
    editable_by     TEXT NOT NULL DEFAULT 'admin', -- admin or user
    on_registration BOOLEAN NOT NULL DEFAULT FALSE,
    in_tokens       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at      BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);
CREATE TABLE user_custom_attributes (
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    vals    TEXT NOT NULL,                    -- JSON array of strings
    PRIMARY KEY (user_id, name)
);

-- version 23
-- A sign-in's second-factor step after an upstream provider vouched for
-- the user rather than a password: its sign-in reports amr fed, not pwd.
ALTER TABLE auth_request_steps ADD COLUMN federated BOOLEAN NOT NULL DEFAULT FALSE;

-- version 24
-- An organization's SSO connections: the realm's identity providers its
-- people sign in with. A provider serves one organization at most (as in
-- Keycloak, where the link is the provider's); deleting the organization
-- or the provider removes the connection. domain is one of the
-- organization's domains, or ANY for every domain it has verified.
CREATE TABLE organization_sso_connections (
    id                          TEXT PRIMARY KEY,
    org_id                      TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    provider_id                 TEXT NOT NULL UNIQUE REFERENCES identity_providers (id) ON DELETE CASCADE,
    enabled                     BOOLEAN NOT NULL DEFAULT TRUE,
    domain                      TEXT NOT NULL,
    auto_join                   BOOLEAN NOT NULL DEFAULT FALSE,
    redirect_when_email_matches BOOLEAN NOT NULL DEFAULT TRUE,
    hide_on_login               BOOLEAN NOT NULL DEFAULT FALSE,
    created_at                  BIGINT NOT NULL
);
CREATE INDEX organization_sso_connections_org ON organization_sso_connections (org_id, created_at);

-- version 25
-- The organization a sign-in settled on for the organization claim: the
-- hint the authorization request named (organization or kc_org), and the
-- choice, carried by the refresh tokens of the grant. NULL: not settled
-- (the claim holds every membership); '': settled on none.
ALTER TABLE auth_requests ADD COLUMN org_hint TEXT NOT NULL DEFAULT '';
ALTER TABLE auth_requests ADD COLUMN organization_id TEXT;
ALTER TABLE refresh_tokens ADD COLUMN organization_id TEXT;

-- version 26
-- SCIM attribute mappings: a SCIM attribute path of the realm's users
-- (path, as the admin API shows it; path_key, its canonical lowercase
-- form, unique in the realm) mapped to a user field or a custom attribute
-- (target: firstName, lastName, or attributes.<name>), where SCIM then
-- stores and reads its value.
CREATE TABLE scim_attribute_mappings (
    id         TEXT PRIMARY KEY,
    realm_id   TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    path_key   TEXT NOT NULL,
    target     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (realm_id, path_key),
    UNIQUE (realm_id, target)
);
-- The addresses of the users SCIM wrote, as filters read them: one row
-- per address (item, its place in the list), every field folded, so that
-- a filter on addresses (addresses[type eq "work" and locality eq "paris"],
-- addresses.country eq "fr") runs as SQL. Addresses SCIM wrote before
-- this table are found once SCIM writes their user again.
CREATE TABLE scim_user_addresses (
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id       TEXT NOT NULL,
    item           INTEGER NOT NULL,
    type           TEXT NOT NULL,
    is_primary     BOOLEAN NOT NULL,
    formatted      TEXT NOT NULL,
    street_address TEXT NOT NULL,
    locality       TEXT NOT NULL,
    region         TEXT NOT NULL,
    postal_code    TEXT NOT NULL,
    country        TEXT NOT NULL,
    PRIMARY KEY (user_id, item)
);
CREATE INDEX scim_user_addresses_locality ON scim_user_addresses (realm_id, locality, user_id);
CREATE INDEX scim_user_addresses_country ON scim_user_addresses (realm_id, country, user_id);
CREATE INDEX scim_user_addresses_postal_code ON scim_user_addresses (realm_id, postal_code, user_id);
CREATE INDEX scim_user_addresses_region ON scim_user_addresses (realm_id, region, user_id);

-- version 27
-- A waiting SAML AuthnRequest's RequestedAuthnContext (JSON: comparison
-- and the classes asked for), checked again when the browser is back
-- from signing in; '' for none.
ALTER TABLE saml_auth_requests ADD COLUMN authn_context TEXT NOT NULL DEFAULT '';

-- version 28
-- Sign-out at the upstream (a provider's upstreamLogout): the upstream ID
-- token of a brokered sign-in (sealed), held by its authorization request
-- until the sign-in ends in an SSO session, then by that session, as the
-- id_token_hint of the sign-out there; and a sign-out on its way through
-- the upstream's end_session_endpoint, taken once when it comes back.
CREATE TABLE broker_signins (
    auth_request_id TEXT PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    provider_id     TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token        BLOB NOT NULL    -- sealed
);
CREATE TABLE broker_sessions (
    session_id  TEXT PRIMARY KEY REFERENCES user_sessions (id) ON DELETE CASCADE,
    provider_id TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token    BLOB NOT NULL        -- sealed
);
CREATE TABLE broker_logouts (
    state_hash  BLOB PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    redirect    TEXT NOT NULL,       -- where the logout goes on to; '' for the signed-out page
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);

-- version 29
-- The users' names folded (Unicode simple case folding, written by the
-- store in Go, as SQL's lower() folds ASCII letters only), so that SCIM
-- filters on name.givenName and name.familyName compare without case and
-- read an index. NULL until the store fills the rows written before.
ALTER TABLE users ADD COLUMN first_name_fold TEXT;
ALTER TABLE users ADD COLUMN last_name_fold TEXT;
CREATE INDEX users_realm_first_name_fold ON users (realm_id, first_name_fold);
CREATE INDEX users_realm_last_name_fold ON users (realm_id, last_name_fold);
ALTER TABLE realm_groups ADD COLUMN name_fold TEXT; -- the group's name folded likewise
CREATE INDEX realm_groups_name_fold ON realm_groups (realm_id, name_fold);

-- version 30
-- Clients whose refreshes answer with the access token alone, without a
-- new ID token (OpenID Connect Core §12.2 allows either); by default a
-- refresh carries one, as in Keycloak.
ALTER TABLE clients ADD COLUMN omit_id_token_on_refresh BOOLEAN NOT NULL DEFAULT FALSE;
-- The rows whose names are not folded yet: the store looks for them at
-- every start, and without these indexes that read the whole table.
CREATE INDEX users_unfolded ON users (id) WHERE first_name_fold IS NULL OR last_name_fold IS NULL;
CREATE INDEX realm_groups_unfolded ON realm_groups (id) WHERE name_fold IS NULL;

-- version 31
-- The binding a service provider's sloUrl takes logout messages with
-- (HTTP-POST, or HTTP-Redirect as many providers list first), and whether
-- its requests must be signed, apart from holding its certificate. The
-- providers of before keep what they had: POST, and signed requests when
-- they have a certificate.
ALTER TABLE saml_service_providers ADD COLUMN slo_binding TEXT NOT NULL DEFAULT 'HTTP-POST';
ALTER TABLE saml_service_providers ADD COLUMN requests_signed BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE saml_service_providers SET requests_signed = TRUE WHERE certificate <> '';

-- version 32
-- The outbox keeps no mail in clear: its links work once, but until then
-- they sign their reader in. A pending mail's bodies are sealed with the
-- master key (sealed: JSON of both, bound to the row), and dropped once it
-- is sent or given up; the row keeps the recipient, the template, the
-- state and the times until the retention sweep deletes it. html_body and
-- text_body stay '': the store seals what rows written before held, at
-- its first start on this version, and overwrites the clear text.
ALTER TABLE email_outbox ADD COLUMN template TEXT NOT NULL DEFAULT '';
ALTER TABLE email_outbox ADD COLUMN sealed BLOB;
CREATE INDEX email_outbox_finished_sent ON email_outbox (sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX email_outbox_finished_failed ON email_outbox (failed_at) WHERE failed_at IS NOT NULL;
-- The rows still in clear: the store looks for them at every start.
CREATE INDEX email_outbox_clear ON email_outbox (id) WHERE html_body <> '' OR text_body <> '';

-- version 33
-- The second (Unix seconds) from which the tokens of a user or a client
-- without a session stand again: access tokens without a session (the
-- client credentials grant's) issued before it are dead, as Keycloak's
-- notBefore. Disabling the user or the client, an admin's password reset
-- and the suspension of an identity move it (with every session and
-- refresh token ended), so a re-enable revives nothing. 0: never moved.
ALTER TABLE users ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE clients ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;

-- version 34
-- Named admin API keys, for automation: each with its own permissions (a
-- JSON list of permission names, or ["all"]), optionally confined to one
-- realm's routes, and optionally expiring. The key is
-- ipk_<id>_<secret>; only its SHA-256 is kept, and prefix (ipk_<id>_ and
-- the secret's first characters) only shows which secret is current. A
-- rotation keeps the previous secret's hash working until
-- previous_valid_until (Unix milliseconds), so a running job can switch
-- without a restart. last_used_at is written at most once a minute.
CREATE TABLE admin_api_keys (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL UNIQUE,
    secret_hash          BLOB NOT NULL,
    prefix               TEXT NOT NULL,
    permissions          TEXT NOT NULL,
    realm_id             TEXT REFERENCES realms (id) ON DELETE CASCADE,
    expires_at           BIGINT NOT NULL DEFAULT 0,
    created_at           BIGINT NOT NULL,
    created_by           TEXT NOT NULL,
    last_used_at         BIGINT NOT NULL DEFAULT 0,
    revoked_at           BIGINT NOT NULL DEFAULT 0,
    rotated_at           BIGINT NOT NULL DEFAULT 0,
    previous_secret_hash BLOB,
    previous_valid_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX admin_api_keys_realm ON admin_api_keys (realm_id);

-- version 35
-- Administrators are people: users of the system realm (one row here names
-- it), signing in through the hosted pages with that realm's second
-- factors and lockout. admin_accounts says what each may do: permission
-- names as a JSON list, or ["all"], and optionally the one realm whose
-- routes the account acts on. A user of the system realm without a row
-- holds no admin permission. The admin users of earlier versions are moved
-- into the system realm at the first start (their password hashes kept).
CREATE TABLE system_realm (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    realm_id  TEXT NOT NULL REFERENCES realms (id)
);
CREATE TABLE admin_accounts (
    user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    permissions  TEXT NOT NULL,
    realm_id     TEXT REFERENCES realms (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    created_by   TEXT NOT NULL
);
CREATE INDEX admin_accounts_realm ON admin_accounts (realm_id);

-- version 36
-- A realm's languages, as Keycloak's defaultLocale and supportedLocales:
-- the language of its pages and mails when neither the request nor the
-- user chooses one ('' for English), and the languages it offers (a JSON
-- array of tags; empty offers every catalogue).
ALTER TABLE realms ADD COLUMN default_locale TEXT NOT NULL DEFAULT '';
ALTER TABLE realms ADD COLUMN supported_locales TEXT NOT NULL DEFAULT '[]';

-- version 37
-- Authentication flows: a realm's definitions of how its users sign in
-- (app/signin.Definition), steps as a JSON array, and which flow each
-- client's sign-ins of a usage follow. A binding names an OpenID Connect
-- client or a SAML service provider, in the column of its kind, so that
-- removing the client removes its bindings; a flow a binding names cannot
-- be removed.
CREATE TABLE auth_flows (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    alias        TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    usage        TEXT NOT NULL,
    steps        TEXT NOT NULL,
    built_in     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (realm_id, alias)
);
CREATE TABLE auth_flow_bindings (
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_kind  TEXT NOT NULL CHECK (client_kind IN ('oidc', 'saml')),
    oidc_client  TEXT REFERENCES clients (id) ON DELETE CASCADE,
    saml_sp      TEXT REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    usage        TEXT NOT NULL,
    flow_id      TEXT NOT NULL REFERENCES auth_flows (id),
    CHECK ((client_kind = 'oidc' AND oidc_client IS NOT NULL AND saml_sp IS NULL)
        OR (client_kind = 'saml' AND saml_sp IS NOT NULL AND oidc_client IS NULL)),
    UNIQUE (oidc_client, usage),
    UNIQUE (saml_sp, usage)
);
CREATE INDEX auth_flow_bindings_flow ON auth_flow_bindings (flow_id);

-- version 38
-- Impersonation (app/impersonation): a realm lets administrators holding
-- users:impersonate sign in as its users, for a lifetime in seconds. An
-- impersonation's SSO session names the administrator (their account's
-- user ID and username) and the time it ends at the latest, so that the
-- tokens issued in it say who acts (RFC 8693 act) and no use of it slides
-- past that time. The impersonations table is the record of them, kept
-- after the session is gone: the user's account pages list it.
ALTER TABLE realms ADD COLUMN impersonation_enabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE realms ADD COLUMN impersonation_lifetime INTEGER NOT NULL DEFAULT 900;
ALTER TABLE user_sessions ADD COLUMN impersonator_id TEXT;
ALTER TABLE user_sessions ADD COLUMN impersonator_username TEXT NOT NULL DEFAULT '';
ALTER TABLE user_sessions ADD COLUMN impersonation_ends_at BIGINT NOT NULL DEFAULT 0;
CREATE TABLE impersonations (
    id                    TEXT PRIMARY KEY,
    realm_id              TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id               TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    impersonator_id       TEXT NOT NULL,
    impersonator_username TEXT NOT NULL,
    impersonator_realm    TEXT NOT NULL,
    session_id            TEXT NOT NULL,
    started_at            BIGINT NOT NULL,
    ends_at               BIGINT NOT NULL,
    ended_at              BIGINT
);
CREATE INDEX impersonations_user ON impersonations (user_id, started_at, id);
CREATE INDEX impersonations_session ON impersonations (session_id);

-- version 39
-- One sign-in in progress, whatever asked for it (app/signin): the
-- requester (its kind and its own id), what it wants (JSON), the
-- authentication flow it follows, the user once known, how the user has
-- authenticated so far, the flow's steps passed, and the browser it is
-- bound to. Each change moves step_no on by one, and only from the
-- step_no its writer read: of two submits of the same step, one wins.
CREATE TABLE signin_flows (
    id             TEXT PRIMARY KEY,
    realm_id       TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    requester      TEXT NOT NULL,
    requester_id   TEXT NOT NULL,
    definition_id  TEXT NOT NULL,
    wants          TEXT NOT NULL,
    user_id        TEXT REFERENCES users (id) ON DELETE CASCADE,
    amr            TEXT NOT NULL,
    passed         TEXT NOT NULL,
    step_no        BIGINT NOT NULL,
    browser_hash   BLOB NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);
CREATE INDEX signin_flows_realm ON signin_flows (realm_id);
CREATE INDEX signin_flows_user ON signin_flows (user_id);
CREATE INDEX signin_flows_expiry ON signin_flows (expires_at);

-- version 40
-- Two steps of the sign-in's flows (app/signin). An email one-time code:
-- each code mailed for a flow is a row, kept after it is used or voided
-- (code_hash NULL) until its window for the sender's limits has passed;
-- a flow has at most one live code. The realm's terms, and each user's
-- acceptance of a version of them.
CREATE TABLE signin_email_codes (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    flow_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash   BLOB,
    attempts    INTEGER NOT NULL DEFAULT 0,
    sent_at     BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX signin_email_codes_flow ON signin_email_codes (flow_id, sent_at);
CREATE INDEX signin_email_codes_user ON signin_email_codes (user_id, sent_at);
CREATE INDEX signin_email_codes_sent ON signin_email_codes (sent_at);
ALTER TABLE realms ADD COLUMN terms_text TEXT NOT NULL DEFAULT '';
ALTER TABLE realms ADD COLUMN terms_version TEXT NOT NULL DEFAULT '';
CREATE TABLE terms_acceptances (
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    version     TEXT NOT NULL,
    accepted_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, version)
);

-- version 41
-- A sign-in that comes back from another site (an identity provider's)
-- finds its flow by requester: the lookup gets its own index, which also
-- serves every lookup by realm.
DROP INDEX signin_flows_realm;
CREATE INDEX signin_flows_requester ON signin_flows (realm_id, requester, requester_id, created_at, id);

-- version 42
-- Brokering continues a flow of the sign-in (app/signin) as it continues
-- an authorization request: the flow of a SAML service provider or of a
-- device approval may send the browser to an identity provider. A sign-in
-- through a provider and a link waiting for its confirmation name the flow
-- where they named the request, and go with it. The pending links are
-- rebuilt: their request becomes one of the two things they continue.
ALTER TABLE broker_logins ADD COLUMN signin_flow_id TEXT REFERENCES signin_flows (id) ON DELETE CASCADE;
CREATE INDEX broker_logins_signin_flow ON broker_logins (signin_flow_id);
CREATE TABLE broker_pending_links_v42 (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id      TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    auth_request_id  TEXT REFERENCES auth_requests (id) ON DELETE CASCADE,
    signin_flow_id   TEXT REFERENCES signin_flows (id) ON DELETE CASCADE,
    browser_hash     BLOB NOT NULL,
    identity         BLOB NOT NULL,   -- sealed: the mapped upstream identity and tokens, JSON
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL,
    CHECK ((auth_request_id IS NULL) <> (signin_flow_id IS NULL))
);
INSERT INTO broker_pending_links_v42 (id, realm_id, provider_id, user_id, auth_request_id, browser_hash, identity,
    created_at, expires_at)
    SELECT id, realm_id, provider_id, user_id, auth_request_id, browser_hash, identity, created_at, expires_at
    FROM broker_pending_links;
DROP TABLE broker_pending_links;
ALTER TABLE broker_pending_links_v42 RENAME TO broker_pending_links;
CREATE INDEX broker_pending_links_expiry ON broker_pending_links (expires_at);
CREATE INDEX broker_pending_links_user ON broker_pending_links (user_id);
CREATE INDEX broker_pending_links_realm ON broker_pending_links (realm_id);
CREATE INDEX broker_pending_links_provider ON broker_pending_links (provider_id);
CREATE INDEX broker_pending_links_auth_request ON broker_pending_links (auth_request_id);
CREATE INDEX broker_pending_links_signin_flow ON broker_pending_links (signin_flow_id);

-- version 43
-- The upstream ID token of a brokered sign-in that continues a sign-in
-- flow of another requester than an authorization request (a SAML
-- request's, a device approval's), held until the requester lands the SSO
-- session. The flow ends before its requester lands it, so the token is
-- keyed by the flow's ID without following the flow; the sweep removes
-- what no session took.
CREATE TABLE broker_flow_signins (
    signin_flow_id TEXT PRIMARY KEY,
    provider_id    TEXT NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token       BLOB NOT NULL,   -- sealed
    expires_at     BIGINT NOT NULL
);
CREATE INDEX broker_flow_signins_provider ON broker_flow_signins (provider_id);
CREATE INDEX broker_flow_signins_expiry ON broker_flow_signins (expires_at);

-- version 44
-- A SAML sign-in is a sign-in flow of its own (app/signin): the synthetic
-- public client saml-idp, which carried it through the authorization
-- endpoint, goes. Disabling it turned a realm's SAML sign-in off; its
-- service providers are disabled instead, so that nothing signs in that
-- could not before.
UPDATE saml_service_providers SET enabled = FALSE
    WHERE realm_id IN (SELECT realm_id FROM clients WHERE client_id = 'saml-idp' AND name = 'SAML identity provider'
        AND NOT enabled);
DELETE FROM clients WHERE client_id = 'saml-idp' AND name = 'SAML identity provider';

-- version 45
-- What replicas on one database share (docs/postgres.md): the flood
-- guard's failures, counted once for the whole fleet, kept as their keys'
-- SHA-256; and when each periodic job last began, so that it runs once a
-- period across the fleet.
CREATE TABLE throttle_failures (
    key_hash   TEXT NOT NULL,
    failed_at  BIGINT NOT NULL      -- Unix milliseconds
);
CREATE INDEX throttle_failures_key ON throttle_failures (key_hash, failed_at);
CREATE INDEX throttle_failures_time ON throttle_failures (failed_at);
CREATE TABLE job_runs (
    name       TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL      -- Unix milliseconds
);

-- version 46
-- Webhooks (app/webhooks): a realm's endpoints, each with the event types
-- it takes and its signing secret (sealed; the previous one signs beside
-- it until previous_until after a rotation); and their outbox. A message
-- is written in the transaction of the event it reports, keeps its ID
-- (the webhook-id header) across attempts, and is sent after every older
-- message of its endpoint; each attempt is kept for the deliveries list.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,          -- JSON array of types and patterns
    enabled         BOOLEAN NOT NULL,
    description     TEXT NOT NULL,
    secret          BLOB NOT NULL,          -- sealed
    previous_secret BLOB,                   -- sealed; NULL when none
    previous_until  BIGINT NOT NULL,
    disabled_reason TEXT NOT NULL,
    failing_since   BIGINT NOT NULL,        -- 0 while deliveries succeed
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhooks_realm ON webhooks (realm_id, created_at);
CREATE TABLE webhook_messages (
    id              TEXT PRIMARY KEY,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type      TEXT NOT NULL,
    payload         BLOB NOT NULL,
    created_at      BIGINT NOT NULL,
    state           TEXT NOT NULL,          -- pending, delivered, failed
    attempts        INTEGER NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    finished_at     BIGINT NOT NULL
);
CREATE INDEX webhook_messages_queue ON webhook_messages (webhook_id, state, created_at, id);
CREATE INDEX webhook_messages_due ON webhook_messages (state, next_attempt_at);
CREATE TABLE webhook_attempts (
    id              TEXT PRIMARY KEY,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id      TEXT NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
    attempted_at    BIGINT NOT NULL,
    status_code     INTEGER NOT NULL,       -- 0 when no answer came
    duration_ms     BIGINT NOT NULL,
    error           TEXT NOT NULL,
    next_attempt_at BIGINT NOT NULL         -- 0 when none follows
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, attempted_at, id);
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id);

-- version 47
-- Audit streams (app/auditstreams): a realm's destinations of its events
-- (syslog, HTTP batches, a local file), with their settings (JSON, the
-- secret out of it and sealed); one record per event per realm, numbered
-- by the realm's counter without gaps; and each stream's cursor, the last
-- sequence it has passed, with the state of its retries. Records are
-- deleted once every stream of their realm has passed them. The cursors,
-- the counter and the records change with every event: they are apart
-- from the streams, which the server caches.
CREATE TABLE audit_streams (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    type        TEXT NOT NULL,              -- syslog, http, file
    events      TEXT NOT NULL,              -- JSON array of types and patterns
    enabled     BOOLEAN NOT NULL,
    description TEXT NOT NULL,
    settings    TEXT NOT NULL,              -- JSON, without the secret
    secret      BLOB,                       -- sealed; NULL when none
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX audit_streams_realm ON audit_streams (realm_id, created_at);
CREATE TABLE audit_stream_cursors (
    stream_id       TEXT PRIMARY KEY REFERENCES audit_streams (id) ON DELETE CASCADE,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    delivered_seq   BIGINT NOT NULL,        -- the last sequence passed
    failures        INTEGER NOT NULL,       -- failed attempts since the last success
    next_attempt_at BIGINT NOT NULL,
    last_error      TEXT NOT NULL,
    last_error_at   BIGINT NOT NULL,        -- 0 when none
    delivered_at    BIGINT NOT NULL         -- of the last success; 0 when none
);
CREATE INDEX audit_stream_cursors_realm ON audit_stream_cursors (realm_id);
CREATE TABLE audit_sequences (
    realm_id    TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL             -- the realm's last record
);
CREATE TABLE audit_records (
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    event_id    TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    payload     BLOB NOT NULL,              -- the event's JSON (app/bus)
    PRIMARY KEY (realm_id, seq)
);

-- version 48
-- Plugins (app/plugins): the state an administrator or a failure gave
-- each WebAssembly plugin of --plugins-dir, by its name. A plugin without
-- a row is enabled; the modules themselves stay files the operator owns.
CREATE TABLE plugins (
    name       TEXT PRIMARY KEY,
    state      TEXT NOT NULL,           -- enabled, disabled, failed
    reason     TEXT NOT NULL,           -- why it failed; "" otherwise
    updated_at BIGINT NOT NULL
);

-- version 49
-- Risk (app/risk): a realm's settings (signal weights, level thresholds,
-- allowed and denied addresses) as one JSON object; its policies, the
-- first enabled one by priority whose conditions hold deciding a sign-in;
-- and an assessment per sign-in, with what it saw of the request (the
-- device cookie's SHA-256, the network, the place), which the user's
-- later sign-ins are compared with once it succeeded.
CREATE TABLE risk_settings (
    realm_id        TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    settings        TEXT NOT NULL,          -- JSON
    updated_at      BIGINT NOT NULL
);
CREATE TABLE risk_policies (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    enabled         BOOLEAN NOT NULL,
    priority        INTEGER NOT NULL,
    conditions      TEXT NOT NULL,          -- JSON
    action          TEXT NOT NULL,          -- allow, mfa, deny, notify
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX risk_policies_name ON risk_policies (realm_id, name);
CREATE INDEX risk_policies_priority ON risk_policies (realm_id, priority, created_at);
CREATE TABLE risk_assessments (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    flow_id         TEXT NOT NULL,          -- the sign-in flow; a password grant's own ID
    kind            TEXT NOT NULL,          -- the requester: oidc, saml, device, password-grant, …
    client_id       TEXT NOT NULL,
    ip_address      TEXT NOT NULL,
    network         TEXT NOT NULL,          -- /24 of IPv4, /48 of IPv6
    device_hash     BLOB,                   -- SHA-256 of the device cookie; NULL without one
    user_agent      TEXT NOT NULL,          -- its family: "Firefox on Linux"
    country         TEXT NOT NULL,          -- ISO code; "" unknown
    located         BOOLEAN NOT NULL,       -- latitude and longitude are known
    latitude_e6     BIGINT NOT NULL,        -- micro-degrees
    longitude_e6    BIGINT NOT NULL,
    score           INTEGER NOT NULL,
    level           TEXT NOT NULL,
    signals         TEXT NOT NULL,          -- JSON: each signal, its state, weight and contribution
    present         TEXT NOT NULL,          -- the signals present, as ",new_device,new_ip,"
    weights         TEXT NOT NULL,          -- JSON: the weights and thresholds in force
    policy_id       TEXT NOT NULL,          -- "" when no policy matched
    policy_name     TEXT NOT NULL,
    action          TEXT NOT NULL,
    outcome         TEXT NOT NULL,          -- pending, succeeded
    created_at      BIGINT NOT NULL
);
CREATE INDEX risk_assessments_user ON risk_assessments (user_id, outcome, created_at);
CREATE INDEX risk_assessments_realm ON risk_assessments (realm_id, created_at);
CREATE INDEX risk_assessments_flow ON risk_assessments (flow_id);

-- version 50
-- Session risk and continuous verification (app/risk). Policies gain a
-- scope: a sign-in's, or a session's, whose actions may end it. Each SSO
-- session keeps a risk profile: its sign-in's assessment, then what the
-- session showed since (refreshes from other addresses, the client SDK's
-- reports of device, network and behaviour), its score and the session
-- policy that decided; the row outlives the session, for the record.
-- Its events are what each observation saw. A session a policy ended
-- leaves the hashes of its live refresh tokens, so that a refresh with one
-- is told why; each user has a baseline of behaviour per metric.
ALTER TABLE risk_policies ADD COLUMN scope TEXT NOT NULL DEFAULT 'sign-in';
CREATE TABLE session_risk (
    session_id      TEXT PRIMARY KEY,       -- the SSO session, which may have ended
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    assessment_id   TEXT NOT NULL,          -- the sign-in's; "" when it was not assessed
    client_id       TEXT NOT NULL,          -- the clientId the session signed in for
    score           INTEGER NOT NULL,
    level           TEXT NOT NULL,
    signals         TEXT NOT NULL,          -- JSON: each signal's state
    present         TEXT NOT NULL,          -- ",new_ip,impossible_travel,"
    places          TEXT NOT NULL,          -- JSON: the addresses the session was seen at
    ip_address      TEXT NOT NULL,          -- the last of them
    country         TEXT NOT NULL,
    device_posture  TEXT NOT NULL,          -- JSON: the SDK's last report; "" none
    posture_at      BIGINT NOT NULL,
    network_context TEXT NOT NULL,
    network_at      BIGINT NOT NULL,
    behavior        TEXT NOT NULL,          -- JSON: the verdict of the last samples
    behavior_at     BIGINT NOT NULL,
    policy_id       TEXT NOT NULL,          -- the session policy that decided; "" none
    policy_name     TEXT NOT NULL,
    action          TEXT NOT NULL,
    ended_by        TEXT NOT NULL,          -- "", end-session or step-up: the action that ended it
    step_up_owed    BOOLEAN NOT NULL,       -- the user's next sign-in proves a second factor
    observations    INTEGER NOT NULL,       -- the row's version, for compare-and-swap
    started_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX session_risk_realm ON session_risk (realm_id, updated_at, session_id);
CREATE INDEX session_risk_user ON session_risk (user_id, step_up_owed, updated_at);
CREATE TABLE session_risk_events (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    session_id      TEXT NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,          -- sign-in, refresh, device-posture, network-context, behavioral, evaluation
    client_id       TEXT NOT NULL,
    ip_address      TEXT NOT NULL,
    detail          TEXT NOT NULL,          -- JSON: what was reported or seen
    present         TEXT NOT NULL,          -- the signals this observation found present
    score           INTEGER NOT NULL,       -- the session's, after it
    level           TEXT NOT NULL,
    action          TEXT NOT NULL,
    policy_id       TEXT NOT NULL,
    policy_name     TEXT NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX session_risk_events_realm ON session_risk_events (realm_id, created_at, id);
CREATE INDEX session_risk_events_session ON session_risk_events (session_id, created_at);
CREATE INDEX session_risk_events_user ON session_risk_events (user_id, created_at);
CREATE TABLE risk_refused_tokens (
    token_hash      BLOB PRIMARY KEY,       -- SHA-256 of a refresh token the session had when a policy ended it
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    session_id      TEXT NOT NULL,
    action          TEXT NOT NULL,          -- end-session or step-up
    expires_at      BIGINT NOT NULL         -- the token's own expiry
);
CREATE INDEX risk_refused_tokens_expiry ON risk_refused_tokens (expires_at);
CREATE TABLE risk_baselines (
    user_id         TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    metrics         TEXT NOT NULL,          -- JSON: per metric, its count, mean and sum of squared deviations
    revision        BIGINT NOT NULL,        -- for compare-and-swap
    updated_at      BIGINT NOT NULL
);

-- version 51
-- Authorization policies (app/policies): each permits or denies the
-- requests of its target (resource types and action names, JSON arrays,
-- "*" for any) whose condition, a CEL expression, holds; deny overrides
-- permit. The realm's settings (the decision when no policy applies) as
-- one JSON object.
CREATE TABLE authz_policies (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    enabled         BOOLEAN NOT NULL,
    effect          TEXT NOT NULL,          -- permit, deny
    resource_types  TEXT NOT NULL,          -- JSON array of strings
    actions         TEXT NOT NULL,          -- JSON array of strings
    expression      TEXT NOT NULL,          -- CEL; "" holds always
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX authz_policies_name ON authz_policies (realm_id, name);
CREATE TABLE authz_policy_settings (
    realm_id        TEXT PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    settings        TEXT NOT NULL,          -- JSON
    updated_at      BIGINT NOT NULL
);

-- version 52
-- Themes of the hosted pages and mails (app/themes): the draft of each as
-- one JSON object (preset, design tokens, logo, favicon, message and mail
-- overrides), its published versions, never changed once written, and
-- the images the themes show, checked and sniffed at upload. A realm's
-- loginTheme, accountTheme and emailTheme name a theme.
CREATE TABLE themes (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    draft           TEXT NOT NULL,          -- JSON
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX themes_name ON themes (realm_id, name);
CREATE TABLE theme_versions (
    theme_id        TEXT NOT NULL REFERENCES themes (id) ON DELETE CASCADE,
    version         BIGINT NOT NULL,        -- 1, 2, 3… per theme
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    content         TEXT NOT NULL,          -- JSON: the draft as it was published
    published_at    BIGINT NOT NULL,
    PRIMARY KEY (theme_id, version)
);
CREATE INDEX theme_versions_realm ON theme_versions (realm_id);
CREATE TABLE theme_assets (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    content_type    TEXT NOT NULL,          -- sniffed from the bytes: image/png, image/jpeg, image/webp, image/x-icon
    width           BIGINT NOT NULL,
    height          BIGINT NOT NULL,
    sha256          BLOB NOT NULL,          -- of data: the ETag
    data            BLOB NOT NULL,
    created_at      BIGINT NOT NULL
);
CREATE INDEX theme_assets_realm ON theme_assets (realm_id, created_at);

-- version 53
-- The first-run setup wizard (app/setup): one row, made at the first
-- start that finds no administrator. status is pending, completed or
-- skipped; token_hash is the SHA-256 of the bootstrap token printed
-- then, NULL once the wizard is over; steps is JSON, what each step
-- saved, never a secret (the SMTP password is the realm's, sealed there).
-- revision orders concurrent writes (compare-and-swap).
CREATE TABLE setup_wizard (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    status          TEXT NOT NULL,
    token_hash      BLOB,
    steps           TEXT NOT NULL,
    revision        BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    finished_at     BIGINT NOT NULL,        -- 0 while pending
    finished_by     TEXT NOT NULL           -- who completed or skipped it; "" while pending
);

-- version 54
-- Trigram indexes of the texts SCIM's co, sw and ew filters search
-- (userName, emails, the given and family names, and every value SCIM
-- keeps: displayName, externalId, ...), so that a substring search reads
-- the rows holding the substring's trigrams rather than the whole realm.
-- FTS5 tables with the trigram tokenizer, each keyed by the rowid of the
-- row it indexes; contentless (the rows hold the texts) with
-- contentless_delete, so that a delete needs the rowid alone; without
-- positions (detail column: a search asks for trigrams, never phrases),
-- a third smaller and cheaper to write. A deleted row's trigrams stay on
-- the index's pages, marked deleted, until its segment is merged: the
-- store merges them after deletions (store/text_index.go), so that a
-- deleted user's texts do not linger. The index only narrows: its
-- folding is FTS5's own, so every
-- query tests the rows it finds with the exact comparison. A value equal
-- to its fold is indexed once, as its fold: a search of the value as
-- written reads both columns. SQLite alone has them (store's schema test
-- lists them); docs/scim.md says what PostgreSQL uses.
--
-- Triggers do not write the index: FTS5 writes its pending terms out at
-- every statement's savepoint, which made a bulk import three times
-- dearer. They list the rowids whose texts changed (inserted, updated,
-- deleted, whatever wrote them: the admin API, SCIM, LDAP sync, imports,
-- restore, a realm's deletion) in a pending table, in the writer's own
-- transaction; the store moves them into the index many at a time
-- (store/text_index.go), and a search reads the pending rows beside the
-- ones the index finds, so that it never misses a change not yet moved.
-- OR IGNORE: a row listed once is enough (no statement writing these
-- tables names a conflict clause of its own, which would override it).
CREATE VIRTUAL TABLE users_trigrams USING fts5 (username, email, first_name_fold, last_name_fold,
    tokenize = 'trigram', content = '', contentless_delete = 1,
    detail = 'column');
INSERT INTO users_trigrams (rowid, username, email, first_name_fold, last_name_fold)
    SELECT rowid, username, email, first_name_fold, last_name_fold FROM users;
CREATE TABLE users_trigrams_pending (id INTEGER PRIMARY KEY);
CREATE TRIGGER users_trigrams_insert AFTER INSERT ON users BEGIN
    INSERT OR IGNORE INTO users_trigrams_pending (id) VALUES (new.rowid);
END;
CREATE TRIGGER users_trigrams_update AFTER UPDATE OF username, email, first_name_fold, last_name_fold ON users
    WHEN old.username IS NOT new.username OR old.email IS NOT new.email
        OR old.first_name_fold IS NOT new.first_name_fold OR old.last_name_fold IS NOT new.last_name_fold BEGIN
    INSERT OR IGNORE INTO users_trigrams_pending (id) VALUES (old.rowid);
END;
CREATE TRIGGER users_trigrams_delete AFTER DELETE ON users BEGIN
    INSERT OR IGNORE INTO users_trigrams_pending (id) VALUES (old.rowid);
END;
CREATE VIRTUAL TABLE scim_user_values_trigrams USING fts5 (value, fold,
    tokenize = 'trigram', content = '', contentless_delete = 1,
    detail = 'column');
INSERT INTO scim_user_values_trigrams (rowid, value, fold)
    SELECT rowid, CASE WHEN value = fold THEN '' ELSE value END, fold FROM scim_user_values;
CREATE TABLE scim_user_values_trigrams_pending (id INTEGER PRIMARY KEY);
CREATE TRIGGER scim_user_values_trigrams_insert AFTER INSERT ON scim_user_values BEGIN
    INSERT OR IGNORE INTO scim_user_values_trigrams_pending (id) VALUES (new.rowid);
END;
CREATE TRIGGER scim_user_values_trigrams_update AFTER UPDATE OF value, fold ON scim_user_values
    WHEN old.value IS NOT new.value OR old.fold IS NOT new.fold BEGIN
    INSERT OR IGNORE INTO scim_user_values_trigrams_pending (id) VALUES (old.rowid);
END;
CREATE TRIGGER scim_user_values_trigrams_delete AFTER DELETE ON scim_user_values BEGIN
    INSERT OR IGNORE INTO scim_user_values_trigrams_pending (id) VALUES (old.rowid);
END;
