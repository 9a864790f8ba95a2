-- Idenplane's schema on PostgreSQL: the same versions, tables, columns,
-- indexes and constraints as schema.sql's on SQLite (store's
-- TestPostgresSchemaMatchesSQLite holds them equal), in PostgreSQL's
-- types: BLOB is BYTEA, INTEGER is BIGINT, and text compares and sorts
-- bytewise (COLLATE "C"), as SQLite's BINARY collation does.
--
-- No PostgreSQL database predates version 44, so its first section is a
-- baseline: the whole schema as of that version. Every later version is
-- added here and to schema.sql at once, as "-- version N" sections, each
-- applied in one transaction. Never edit a released migration.
--
-- Two tables carry a rowid column that SQLite gives every table: the
-- order of rows made within one millisecond.

-- version 44 (baseline)
CREATE TABLE schema_version (
    version BIGINT NOT NULL
);

CREATE TABLE realms (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL UNIQUE,
    display_name TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    access_token_lifespan BIGINT NOT NULL,
    refresh_token_lifespan BIGINT NOT NULL,
    offline_token_lifespan BIGINT NOT NULL,
    smtp_host TEXT COLLATE "C" NOT NULL,
    smtp_port BIGINT NOT NULL,
    smtp_user TEXT COLLATE "C" NOT NULL,
    smtp_password BYTEA,
    smtp_from TEXT COLLATE "C" NOT NULL,
    smtp_secure BOOLEAN NOT NULL,
    email_provider TEXT COLLATE "C" NOT NULL,
    email_provider_config BYTEA,
    password_min_length BIGINT NOT NULL,
    password_require_uppercase BOOLEAN NOT NULL,
    password_require_lowercase BOOLEAN NOT NULL,
    password_require_digits BOOLEAN NOT NULL,
    password_require_special BOOLEAN NOT NULL,
    password_history_count BIGINT NOT NULL,
    password_max_age_days BIGINT NOT NULL,
    brute_force_enabled BOOLEAN NOT NULL,
    max_login_failures BIGINT NOT NULL,
    lockout_duration BIGINT NOT NULL,
    failure_reset_time BIGINT NOT NULL,
    permanent_lockout_after BIGINT NOT NULL,
    registration_allowed BOOLEAN NOT NULL,
    require_email_verification BOOLEAN NOT NULL,
    mfa_required BOOLEAN NOT NULL,
    events_enabled BOOLEAN NOT NULL,
    events_expiration BIGINT NOT NULL,
    admin_events_enabled BOOLEAN NOT NULL,
    theme_name TEXT COLLATE "C" NOT NULL,
    theme TEXT COLLATE "C",
    login_theme TEXT COLLATE "C" NOT NULL,
    account_theme TEXT COLLATE "C" NOT NULL,
    email_theme TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    position BIGINT NOT NULL,
    enabled_event_types TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    default_locale TEXT COLLATE "C" NOT NULL DEFAULT '',
    supported_locales TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    impersonation_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    impersonation_lifetime BIGINT NOT NULL DEFAULT 900,
    terms_text TEXT COLLATE "C" NOT NULL DEFAULT '',
    terms_version TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX realms_position ON realms (position);

CREATE TABLE master_key_check (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    sealed BYTEA NOT NULL
);

CREATE TABLE admin_api_key (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    key_hash BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE admin_users (
    id TEXT COLLATE "C" PRIMARY KEY,
    username TEXT COLLATE "C" NOT NULL UNIQUE,
    password_hash TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE admin_token_revocations (
    token_id TEXT COLLATE "C" PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

CREATE INDEX admin_token_revocations_expiry ON admin_token_revocations (expires_at);

CREATE TABLE clients (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    client_type TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    redirect_uris TEXT COLLATE "C" NOT NULL,
    web_origins TEXT COLLATE "C" NOT NULL,
    grant_types TEXT COLLATE "C" NOT NULL,
    require_consent BOOLEAN NOT NULL,
    backchannel_logout_uri TEXT COLLATE "C" NOT NULL,
    backchannel_logout_session_required BOOLEAN NOT NULL,
    secret_hash BYTEA,
    created_at BIGINT NOT NULL,
    omit_id_token_on_refresh BOOLEAN NOT NULL DEFAULT FALSE,
    not_before BIGINT NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX clients_realm_client_id ON clients (realm_id, client_id);

CREATE TABLE roles (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" REFERENCES clients (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX roles_realm_name ON roles (realm_id, name) WHERE client_id IS NULL;

CREATE UNIQUE INDEX roles_client_name ON roles (client_id, name) WHERE client_id IS NOT NULL;

CREATE TABLE role_composites (
    parent_id TEXT COLLATE "C" NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    child_id TEXT COLLATE "C" NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (parent_id, child_id)
);

CREATE INDEX role_composites_child ON role_composites (child_id);

CREATE TABLE realm_groups (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    parent_id TEXT COLLATE "C" REFERENCES realm_groups (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    name_fold TEXT COLLATE "C"
);

CREATE UNIQUE INDEX realm_groups_top_name ON realm_groups (realm_id, name) WHERE parent_id IS NULL;

CREATE UNIQUE INDEX realm_groups_child_name ON realm_groups (parent_id, name) WHERE parent_id IS NOT NULL;

CREATE INDEX realm_groups_name_fold ON realm_groups (realm_id, name_fold);

CREATE INDEX realm_groups_unfolded ON realm_groups (id) WHERE name_fold IS NULL;

CREATE TABLE group_roles (
    group_id TEXT COLLATE "C" NOT NULL REFERENCES realm_groups (id) ON DELETE CASCADE,
    role_id TEXT COLLATE "C" NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, role_id)
);

CREATE INDEX group_roles_role ON group_roles (role_id);

CREATE TABLE client_scopes (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    protocol TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX client_scopes_realm_name ON client_scopes (realm_id, name);

CREATE TABLE protocol_mappers (
    id TEXT COLLATE "C" PRIMARY KEY,
    scope_id TEXT COLLATE "C" NOT NULL REFERENCES client_scopes (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    mapper_type TEXT COLLATE "C" NOT NULL,
    protocol TEXT COLLATE "C" NOT NULL,
    config TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX protocol_mappers_scope_name ON protocol_mappers (scope_id, name);

CREATE TABLE client_scope_links (
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scope_id TEXT COLLATE "C" NOT NULL REFERENCES client_scopes (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (client_id, scope_id)
);

CREATE INDEX client_scope_links_scope ON client_scope_links (scope_id);

CREATE TABLE admin_events (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time BIGINT NOT NULL,
    operation_type TEXT COLLATE "C" NOT NULL,
    resource_type TEXT COLLATE "C" NOT NULL,
    resource_path TEXT COLLATE "C" NOT NULL,
    auth_type TEXT COLLATE "C" NOT NULL,
    auth_user_id TEXT COLLATE "C" NOT NULL,
    auth_username TEXT COLLATE "C" NOT NULL,
    ip_address TEXT COLLATE "C" NOT NULL,
    representation TEXT COLLATE "C" NOT NULL
);

CREATE INDEX admin_events_realm_time ON admin_events (realm_id, time, id);

CREATE TABLE login_events (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time BIGINT NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    client_id TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL,
    ip_address TEXT COLLATE "C" NOT NULL,
    error TEXT COLLATE "C" NOT NULL,
    details TEXT COLLATE "C" NOT NULL
);

CREATE INDEX login_events_realm_time ON login_events (realm_id, time, id);

CREATE TABLE signing_keys (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    algorithm TEXT COLLATE "C" NOT NULL,
    private_key BYTEA NOT NULL,
    public_jwk TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    activated_at BIGINT,
    retired_at BIGINT,
    publish_until BIGINT
);

CREATE INDEX signing_keys_realm ON signing_keys (realm_id, status);

CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (realm_id) WHERE status = 'active';

CREATE TABLE realm_key_settings (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    algorithm TEXT COLLATE "C" NOT NULL,
    rotation_days BIGINT NOT NULL
);

CREATE TABLE revoked_access_tokens (
    token_id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL
);

CREATE INDEX revoked_access_tokens_expiry ON revoked_access_tokens (expires_at);

CREATE TABLE logout_token_ids (
    jti TEXT COLLATE "C" PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

CREATE INDEX logout_token_ids_expiry ON logout_token_ids (expires_at);

CREATE TABLE email_outbox (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    recipient TEXT COLLATE "C" NOT NULL,
    subject TEXT COLLATE "C" NOT NULL,
    html_body TEXT COLLATE "C" NOT NULL,
    text_body TEXT COLLATE "C" NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    sent_at BIGINT,
    failed_at BIGINT,
    template TEXT COLLATE "C" NOT NULL DEFAULT '',
    sealed BYTEA
);

CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL;

CREATE INDEX email_outbox_finished_sent ON email_outbox (sent_at) WHERE sent_at IS NOT NULL;

CREATE INDEX email_outbox_finished_failed ON email_outbox (failed_at) WHERE failed_at IS NOT NULL;

CREATE INDEX email_outbox_clear ON email_outbox (id) WHERE html_body <> '' OR text_body <> '';

CREATE TABLE registration_fields (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    field_key TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    field_type TEXT COLLATE "C" NOT NULL,
    required BOOLEAN NOT NULL,
    pattern TEXT COLLATE "C" NOT NULL,
    options TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    position BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX registration_fields_key ON registration_fields (realm_id, field_key);

CREATE TABLE registration_settings (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    moderation BOOLEAN NOT NULL
);

CREATE TABLE admin_login_failures (
    key_hash TEXT COLLATE "C" NOT NULL,
    failed_at BIGINT NOT NULL
);

CREATE INDEX admin_login_failures_key ON admin_login_failures (key_hash, failed_at);

CREATE INDEX admin_login_failures_time ON admin_login_failures (failed_at);

CREATE TABLE saml_keys (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    private_key BYTEA NOT NULL,
    certificate BYTEA NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    activated_at BIGINT,
    retired_at BIGINT,
    publish_until BIGINT
);

CREATE INDEX saml_keys_realm ON saml_keys (realm_id, status);

CREATE UNIQUE INDEX saml_keys_one_active ON saml_keys (realm_id) WHERE status = 'active';

CREATE TABLE saml_service_providers (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    entity_id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    acs_url TEXT COLLATE "C" NOT NULL,
    slo_url TEXT COLLATE "C" NOT NULL,
    certificate TEXT COLLATE "C" NOT NULL,
    encryption_certificate TEXT COLLATE "C" NOT NULL,
    encrypt_assertions BOOLEAN NOT NULL,
    name_id_format TEXT COLLATE "C" NOT NULL,
    sign_assertions BOOLEAN NOT NULL,
    sign_responses BOOLEAN NOT NULL,
    attribute_statements TEXT COLLATE "C" NOT NULL,
    idp_initiated BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    slo_binding TEXT COLLATE "C" NOT NULL DEFAULT 'HTTP-POST',
    requests_signed BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (realm_id, entity_id)
);

CREATE TABLE saml_request_ids (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    issuer TEXT COLLATE "C" NOT NULL,
    request_id TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (realm_id, issuer, request_id)
);

CREATE INDEX saml_request_ids_expiry ON saml_request_ids (expires_at);

CREATE TABLE saml_auth_requests (
    id_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    sp_id TEXT COLLATE "C" NOT NULL REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    request_id TEXT COLLATE "C" NOT NULL,
    acs_url TEXT COLLATE "C" NOT NULL,
    relay_state TEXT COLLATE "C" NOT NULL,
    name_id_format TEXT COLLATE "C" NOT NULL,
    force_authn BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    authn_context TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX saml_auth_requests_expiry ON saml_auth_requests (expires_at);

CREATE TABLE saml_logouts (
    id_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    state TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX saml_logouts_expiry ON saml_logouts (expires_at);

CREATE TABLE saml_settings (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    want_authn_requests_signed BOOLEAN NOT NULL
);

CREATE TABLE identity_providers (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    alias TEXT COLLATE "C" NOT NULL,
    display_name TEXT COLLATE "C" NOT NULL,
    provider_type TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    client_id TEXT COLLATE "C" NOT NULL,
    client_secret BYTEA,
    authorization_url TEXT COLLATE "C" NOT NULL,
    token_url TEXT COLLATE "C" NOT NULL,
    userinfo_url TEXT COLLATE "C" NOT NULL,
    jwks_url TEXT COLLATE "C" NOT NULL,
    issuer TEXT COLLATE "C" NOT NULL,
    default_scopes TEXT COLLATE "C" NOT NULL,
    trust_email BOOLEAN NOT NULL,
    sync_user_profile BOOLEAN NOT NULL,
    config TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX identity_providers_alias ON identity_providers (realm_id, alias);

CREATE TABLE federation_providers (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    provider_type TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    priority BIGINT NOT NULL,
    config TEXT COLLATE "C" NOT NULL,
    bind_credential BYTEA,
    created_at BIGINT NOT NULL,
    last_sync TEXT COLLATE "C" NOT NULL DEFAULT '',
    changed_since BIGINT NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX federation_providers_realm_name ON federation_providers (realm_id, name);

CREATE TABLE scim_tokens (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    secret_hash BYTEA NOT NULL,
    enabled BOOLEAN NOT NULL,
    revoked_at BIGINT,
    expires_at BIGINT,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT,
    use_count BIGINT NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX scim_tokens_realm_name ON scim_tokens (realm_id, name);

CREATE TABLE scim_groups (
    group_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realm_groups (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    external_id TEXT COLLATE "C" NOT NULL,
    modified_at BIGINT NOT NULL
);

CREATE INDEX scim_groups_external ON scim_groups (realm_id, external_id);

CREATE TABLE nhi_identities (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES clients (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    owner_type TEXT COLLATE "C" NOT NULL DEFAULT '',
    owner_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    metadata TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    state TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_used_at BIGINT,
    policy_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    admin_permissions TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    UNIQUE (realm_id, name)
);

CREATE INDEX nhi_identities_realm ON nhi_identities (realm_id, kind, name);

CREATE TABLE nhi_credentials (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    nhi_id TEXT COLLATE "C" NOT NULL REFERENCES nhi_identities (id) ON DELETE CASCADE,
    type TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL DEFAULT '',
    prefix TEXT COLLATE "C" NOT NULL DEFAULT '',
    secret_hash BYTEA,
    public_key TEXT COLLATE "C" NOT NULL DEFAULT '',
    key_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    certificate TEXT COLLATE "C" NOT NULL DEFAULT '',
    scopes TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    last_used_at BIGINT,
    replaced_by TEXT COLLATE "C" NOT NULL DEFAULT '',
    expiring_noticed_at BIGINT,
    expired_noticed_at BIGINT
);

CREATE INDEX nhi_credentials_identity ON nhi_credentials (nhi_id, created_at);

CREATE UNIQUE INDEX nhi_credentials_prefix ON nhi_credentials (realm_id, prefix) WHERE prefix != '';

CREATE TABLE nhi_assertion_ids (
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    jti_hash BYTEA NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (client_id, jti_hash)
);

CREATE INDEX nhi_assertion_ids_expiry ON nhi_assertion_ids (expires_at);

CREATE TABLE nhi_usage (
    nhi_id TEXT COLLATE "C" NOT NULL REFERENCES nhi_identities (id) ON DELETE CASCADE,
    day BIGINT NOT NULL,
    tokens BIGINT NOT NULL DEFAULT 0,
    failures BIGINT NOT NULL DEFAULT 0,
    introspections BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (nhi_id, day)
);

CREATE TABLE nhi_realm_cas (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    certificate TEXT COLLATE "C" NOT NULL,
    private_key BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE nhi_audit_logs (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    time BIGINT NOT NULL,
    nhi_id TEXT COLLATE "C" NOT NULL,
    nhi_name TEXT COLLATE "C" NOT NULL,
    credential_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    action TEXT COLLATE "C" NOT NULL,
    actor_type TEXT COLLATE "C" NOT NULL,
    actor_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    actor_name TEXT COLLATE "C" NOT NULL DEFAULT '',
    ip_address TEXT COLLATE "C" NOT NULL DEFAULT '',
    details TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX nhi_audit_logs_time ON nhi_audit_logs (realm_id, time);

CREATE INDEX nhi_audit_logs_identity ON nhi_audit_logs (realm_id, nhi_id, time);

CREATE TABLE nhi_credential_policies (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    max_age BIGINT NOT NULL,
    rotation_interval BIGINT NOT NULL,
    grace_period BIGINT NOT NULL,
    warn_before BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);

CREATE TABLE organizations (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    slug TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    name_search TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    attributes TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    UNIQUE (realm_id, slug)
);

CREATE TABLE organization_domains (
    org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    verified BOOLEAN NOT NULL DEFAULT FALSE,
    challenge TEXT COLLATE "C" NOT NULL DEFAULT '',
    challenge_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, name)
);

CREATE INDEX organization_domains_name ON organization_domains (realm_id, name);

CREATE UNIQUE INDEX organization_domains_verified ON organization_domains (realm_id, name) WHERE verified;

CREATE TABLE organization_invitations (
    id TEXT COLLATE "C" PRIMARY KEY,
    org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email TEXT COLLATE "C" NOT NULL,
    role TEXT COLLATE "C" NOT NULL,
    token_hash TEXT COLLATE "C" NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT NOT NULL DEFAULT 0,
    used_by TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX organization_invitations_org ON organization_invitations (org_id, created_at);

CREATE TABLE custom_attributes (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    display_name TEXT COLLATE "C" NOT NULL DEFAULT '',
    type TEXT COLLATE "C" NOT NULL,
    required BOOLEAN NOT NULL DEFAULT FALSE,
    multivalued BOOLEAN NOT NULL DEFAULT FALSE,
    options TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    validation TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    editable_by TEXT COLLATE "C" NOT NULL DEFAULT 'admin',
    on_registration BOOLEAN NOT NULL DEFAULT FALSE,
    in_tokens BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);

CREATE TABLE organization_sso_connections (
    id TEXT COLLATE "C" PRIMARY KEY,
    org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES identity_providers (id) ON DELETE CASCADE,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    domain TEXT COLLATE "C" NOT NULL,
    auto_join BOOLEAN NOT NULL DEFAULT FALSE,
    redirect_when_email_matches BOOLEAN NOT NULL DEFAULT TRUE,
    hide_on_login BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    rowid BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE INDEX organization_sso_connections_org ON organization_sso_connections (org_id, created_at);

CREATE TABLE scim_attribute_mappings (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    path TEXT COLLATE "C" NOT NULL,
    path_key TEXT COLLATE "C" NOT NULL,
    target TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (realm_id, path_key),
    UNIQUE (realm_id, target),
    rowid BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE TABLE broker_logouts (
    state_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    redirect TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE TABLE admin_api_keys (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_hash BYTEA NOT NULL,
    prefix TEXT COLLATE "C" NOT NULL,
    permissions TEXT COLLATE "C" NOT NULL,
    realm_id TEXT COLLATE "C" REFERENCES realms (id) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    created_by TEXT COLLATE "C" NOT NULL,
    last_used_at BIGINT NOT NULL DEFAULT 0,
    revoked_at BIGINT NOT NULL DEFAULT 0,
    rotated_at BIGINT NOT NULL DEFAULT 0,
    previous_secret_hash BYTEA,
    previous_valid_until BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX admin_api_keys_realm ON admin_api_keys (realm_id);

CREATE TABLE system_realm (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id)
);

CREATE TABLE auth_flows (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    alias TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    usage TEXT COLLATE "C" NOT NULL,
    steps TEXT COLLATE "C" NOT NULL,
    built_in BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (realm_id, alias)
);

CREATE TABLE auth_flow_bindings (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_kind TEXT COLLATE "C" NOT NULL CHECK (client_kind IN ('oidc', 'saml')),
    oidc_client TEXT COLLATE "C" REFERENCES clients (id) ON DELETE CASCADE,
    saml_sp TEXT COLLATE "C" REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    usage TEXT COLLATE "C" NOT NULL,
    flow_id TEXT COLLATE "C" NOT NULL REFERENCES auth_flows (id),
    CHECK ((client_kind = 'oidc' AND oidc_client IS NOT NULL AND saml_sp IS NULL) OR (client_kind = 'saml' AND saml_sp IS NOT NULL AND oidc_client IS NULL)),
    UNIQUE (oidc_client, usage),
    UNIQUE (saml_sp, usage)
);

CREATE INDEX auth_flow_bindings_flow ON auth_flow_bindings (flow_id);

CREATE TABLE broker_flow_signins (
    signin_flow_id TEXT COLLATE "C" PRIMARY KEY,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token BYTEA NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX broker_flow_signins_provider ON broker_flow_signins (provider_id);

CREATE INDEX broker_flow_signins_expiry ON broker_flow_signins (expires_at);

CREATE TABLE users (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    username TEXT COLLATE "C" NOT NULL,
    email TEXT COLLATE "C" NOT NULL,
    first_name TEXT COLLATE "C" NOT NULL,
    last_name TEXT COLLATE "C" NOT NULL,
    name_search TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    email_verified BOOLEAN NOT NULL,
    require_password_reset BOOLEAN NOT NULL,
    password_hash TEXT COLLATE "C",
    password_changed_at BIGINT,
    created_at BIGINT NOT NULL,
    service_account_client_id TEXT COLLATE "C" REFERENCES clients (id) ON DELETE CASCADE,
    status TEXT COLLATE "C" NOT NULL DEFAULT 'active',
    first_name_fold TEXT COLLATE "C",
    last_name_fold TEXT COLLATE "C",
    not_before BIGINT NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX users_realm_username ON users (realm_id, username);

CREATE UNIQUE INDEX users_realm_email ON users (realm_id, email) WHERE email <> '';

CREATE UNIQUE INDEX users_service_account ON users (service_account_client_id) WHERE service_account_client_id IS NOT NULL;

CREATE INDEX users_people ON users (realm_id, username) WHERE service_account_client_id IS NULL;

CREATE INDEX users_pending ON users (realm_id, created_at) WHERE status = 'pending';

CREATE INDEX users_realm_first_name_fold ON users (realm_id, first_name_fold);

CREATE INDEX users_realm_last_name_fold ON users (realm_id, last_name_fold);

CREATE INDEX users_unfolded ON users (id) WHERE first_name_fold IS NULL OR last_name_fold IS NULL;

CREATE TABLE user_roles (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id TEXT COLLATE "C" NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
);

CREATE INDEX user_roles_role ON user_roles (role_id);

CREATE TABLE group_members (
    group_id TEXT COLLATE "C" NOT NULL REFERENCES realm_groups (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);

CREATE INDEX group_members_user ON group_members (user_id);

CREATE TABLE user_sessions (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    parent_id TEXT COLLATE "C" REFERENCES user_sessions (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" REFERENCES clients (id) ON DELETE CASCADE,
    ip_address TEXT COLLATE "C" NOT NULL,
    started_at BIGINT NOT NULL,
    last_access_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    auth_time BIGINT NOT NULL DEFAULT 0,
    amr TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    offline BOOLEAN NOT NULL DEFAULT false,
    impersonator_id TEXT COLLATE "C",
    impersonator_username TEXT COLLATE "C" NOT NULL DEFAULT '',
    impersonation_ends_at BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX user_sessions_realm ON user_sessions (realm_id, expires_at);

CREATE INDEX user_sessions_user ON user_sessions (user_id);

CREATE INDEX user_sessions_expiry ON user_sessions (expires_at);

CREATE INDEX user_sessions_parent ON user_sessions (parent_id);

CREATE TABLE user_consents (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scopes TEXT COLLATE "C" NOT NULL,
    granted_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, client_id)
);

CREATE INDEX user_consents_client ON user_consents (client_id);

CREATE TABLE auth_requests (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    redirect_uri TEXT COLLATE "C" NOT NULL,
    scopes TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    nonce TEXT COLLATE "C" NOT NULL,
    response_type TEXT COLLATE "C" NOT NULL,
    response_mode TEXT COLLATE "C" NOT NULL,
    code_challenge TEXT COLLATE "C" NOT NULL,
    code_challenge_method TEXT COLLATE "C" NOT NULL,
    prompt TEXT COLLATE "C" NOT NULL,
    max_age BIGINT,
    login_hint TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    session_id TEXT COLLATE "C" REFERENCES user_sessions (id) ON DELETE CASCADE,
    auth_time BIGINT NOT NULL DEFAULT 0,
    amr TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    done BOOLEAN NOT NULL DEFAULT false,
    code_hash BYTEA,
    code_used_at BIGINT,
    token_family TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    org_hint TEXT COLLATE "C" NOT NULL DEFAULT '',
    organization_id TEXT COLLATE "C"
);

CREATE UNIQUE INDEX auth_requests_code ON auth_requests (code_hash) WHERE code_hash IS NOT NULL;

CREATE INDEX auth_requests_expiry ON auth_requests (expires_at);

CREATE INDEX auth_requests_session ON auth_requests (session_id);

CREATE INDEX auth_requests_user ON auth_requests (user_id);

CREATE TABLE refresh_tokens (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    token_hash BYTEA NOT NULL UNIQUE,
    family_id TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" REFERENCES user_sessions (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes TEXT COLLATE "C" NOT NULL,
    offline BOOLEAN NOT NULL,
    auth_time BIGINT NOT NULL,
    amr TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    rotated_at BIGINT,
    revoked_at BIGINT,
    organization_id TEXT COLLATE "C"
);

CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id, offline);

CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);

CREATE TABLE device_authorizations (
    device_code_hash BYTEA PRIMARY KEY,
    user_code TEXT COLLATE "C" NOT NULL UNIQUE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    scopes TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    auth_time BIGINT NOT NULL DEFAULT 0,
    interval_seconds BIGINT NOT NULL,
    last_poll_at BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at);

CREATE TABLE consent_events (
    id TEXT COLLATE "C" PRIMARY KEY,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id TEXT COLLATE "C" NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    action TEXT COLLATE "C" NOT NULL,
    scopes TEXT COLLATE "C" NOT NULL,
    time BIGINT NOT NULL
);

CREATE INDEX consent_events_user ON consent_events (user_id, time);

CREATE TABLE action_tokens (
    token_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    email TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

CREATE INDEX action_tokens_user ON action_tokens (user_id, kind);

CREATE INDEX action_tokens_expiry ON action_tokens (expires_at);

CREATE TABLE user_attributes (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE pending_logins (
    auth_request_id TEXT COLLATE "C" PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    action TEXT COLLATE "C" NOT NULL,
    browser_hash BYTEA NOT NULL,
    remember_me BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    second_factor BOOLEAN NOT NULL DEFAULT FALSE,
    amr TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX pending_logins_user ON pending_logins (user_id);

CREATE TABLE account_deletions (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    requested_at BIGINT NOT NULL,
    delete_at BIGINT NOT NULL
);

CREATE INDEX account_deletions_due ON account_deletions (delete_at, user_id);

CREATE TABLE password_history (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    password_hash TEXT COLLATE "C" NOT NULL,
    replaced_at BIGINT NOT NULL,
    PRIMARY KEY (realm_id, user_id, seq)
);

CREATE INDEX password_history_user ON password_history (user_id);

CREATE TABLE login_failures (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    failures BIGINT NOT NULL,
    last_failure_at BIGINT NOT NULL,
    last_ip TEXT COLLATE "C" NOT NULL,
    temporary_lockouts BIGINT NOT NULL,
    locked_until BIGINT NOT NULL,
    PRIMARY KEY (realm_id, user_id)
);

CREATE INDEX login_failures_locked ON login_failures (realm_id, locked_until, user_id);

CREATE INDEX login_failures_user ON login_failures (user_id);

CREATE TABLE user_credentials (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    secret BYTEA NOT NULL,
    confirmed BOOLEAN NOT NULL,
    last_used_step BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    credential_id BYTEA,
    last_used_at BIGINT
);

CREATE INDEX user_credentials_user ON user_credentials (user_id, type);

CREATE UNIQUE INDEX user_credentials_one_totp ON user_credentials (user_id, confirmed) WHERE type = 'totp';

CREATE UNIQUE INDEX user_credentials_webauthn_id ON user_credentials (realm_id, credential_id) WHERE credential_id IS NOT NULL;

CREATE TABLE recovery_codes (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    code_hash BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    used_at BIGINT,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE auth_request_steps (
    auth_request_id TEXT COLLATE "C" PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    pending TEXT COLLATE "C" NOT NULL,
    browser_hash BYTEA NOT NULL,
    password_at BIGINT NOT NULL,
    remember_me BOOLEAN NOT NULL DEFAULT FALSE,
    sso_session_id TEXT COLLATE "C" REFERENCES user_sessions (id) ON DELETE CASCADE,
    federated BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE INDEX auth_request_steps_session ON auth_request_steps (sso_session_id);

CREATE INDEX auth_request_steps_user ON auth_request_steps (user_id);

CREATE TABLE webauthn_user_handles (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    handle BYTEA NOT NULL,
    UNIQUE (realm_id, handle)
);

CREATE TABLE webauthn_ceremonies (
    id_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    session_data TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX webauthn_ceremonies_expiry ON webauthn_ceremonies (expires_at);

CREATE TABLE saml_sessions (
    session_index TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    sso_session_id TEXT COLLATE "C" NOT NULL REFERENCES user_sessions (id) ON DELETE CASCADE,
    sp_id TEXT COLLATE "C" NOT NULL REFERENCES saml_service_providers (id) ON DELETE CASCADE,
    name_id TEXT COLLATE "C" NOT NULL,
    name_id_format TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX saml_sessions_sso ON saml_sessions (sso_session_id);

CREATE TABLE federated_identities (
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    subject TEXT COLLATE "C" NOT NULL,
    username TEXT COLLATE "C" NOT NULL,
    email TEXT COLLATE "C" NOT NULL,
    token BYTEA,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (provider_id, user_id)
);

CREATE UNIQUE INDEX federated_identities_subject ON federated_identities (provider_id, subject);

CREATE INDEX federated_identities_user ON federated_identities (user_id);

CREATE INDEX federated_identities_realm ON federated_identities (realm_id);

CREATE TABLE federation_links (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES federation_providers (id) ON DELETE CASCADE,
    external_id TEXT COLLATE "C" NOT NULL,
    dn TEXT COLLATE "C" NOT NULL
);

CREATE UNIQUE INDEX federation_links_external ON federation_links (provider_id, external_id);

CREATE TABLE scim_users (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    modified_at BIGINT NOT NULL,
    data TEXT COLLATE "C" NOT NULL
);

CREATE TABLE scim_user_values (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL,
    attr TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    fold TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    is_primary BOOLEAN NOT NULL
);

CREATE INDEX scim_user_values_fold ON scim_user_values (realm_id, attr, fold, user_id);

CREATE INDEX scim_user_values_exact ON scim_user_values (realm_id, attr, value, user_id);

CREATE INDEX scim_user_values_user ON scim_user_values (user_id, attr);

CREATE TABLE organization_members (
    org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);

CREATE INDEX organization_members_user ON organization_members (user_id);

CREATE TABLE user_custom_attributes (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    vals TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, name)
);

CREATE TABLE scim_user_addresses (
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL,
    item BIGINT NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    is_primary BOOLEAN NOT NULL,
    formatted TEXT COLLATE "C" NOT NULL,
    street_address TEXT COLLATE "C" NOT NULL,
    locality TEXT COLLATE "C" NOT NULL,
    region TEXT COLLATE "C" NOT NULL,
    postal_code TEXT COLLATE "C" NOT NULL,
    country TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, item)
);

CREATE INDEX scim_user_addresses_locality ON scim_user_addresses (realm_id, locality, user_id);

CREATE INDEX scim_user_addresses_country ON scim_user_addresses (realm_id, country, user_id);

CREATE INDEX scim_user_addresses_postal_code ON scim_user_addresses (realm_id, postal_code, user_id);

CREATE INDEX scim_user_addresses_region ON scim_user_addresses (realm_id, region, user_id);

CREATE TABLE broker_signins (
    auth_request_id TEXT COLLATE "C" PRIMARY KEY REFERENCES auth_requests (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token BYTEA NOT NULL
);

CREATE TABLE broker_sessions (
    session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES user_sessions (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    id_token BYTEA NOT NULL
);

CREATE TABLE admin_accounts (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    permissions TEXT COLLATE "C" NOT NULL,
    realm_id TEXT COLLATE "C" REFERENCES realms (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    created_by TEXT COLLATE "C" NOT NULL
);

CREATE INDEX admin_accounts_realm ON admin_accounts (realm_id);

CREATE TABLE impersonations (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    impersonator_id TEXT COLLATE "C" NOT NULL,
    impersonator_username TEXT COLLATE "C" NOT NULL,
    impersonator_realm TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL,
    started_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL,
    ended_at BIGINT
);

CREATE INDEX impersonations_user ON impersonations (user_id, started_at, id);

CREATE INDEX impersonations_session ON impersonations (session_id);

CREATE TABLE signin_flows (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    requester TEXT COLLATE "C" NOT NULL,
    requester_id TEXT COLLATE "C" NOT NULL,
    definition_id TEXT COLLATE "C" NOT NULL,
    wants TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    amr TEXT COLLATE "C" NOT NULL,
    passed TEXT COLLATE "C" NOT NULL,
    step_no BIGINT NOT NULL,
    browser_hash BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX signin_flows_user ON signin_flows (user_id);

CREATE INDEX signin_flows_expiry ON signin_flows (expires_at);

CREATE INDEX signin_flows_requester ON signin_flows (realm_id, requester, requester_id, created_at, id);

CREATE TABLE signin_email_codes (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    flow_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash BYTEA,
    attempts BIGINT NOT NULL DEFAULT 0,
    sent_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX signin_email_codes_flow ON signin_email_codes (flow_id, sent_at);

CREATE INDEX signin_email_codes_user ON signin_email_codes (user_id, sent_at);

CREATE INDEX signin_email_codes_sent ON signin_email_codes (sent_at);

CREATE TABLE terms_acceptances (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    version TEXT COLLATE "C" NOT NULL,
    accepted_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, version)
);

CREATE TABLE broker_pending_links (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    auth_request_id TEXT COLLATE "C" REFERENCES auth_requests (id) ON DELETE CASCADE,
    signin_flow_id TEXT COLLATE "C" REFERENCES signin_flows (id) ON DELETE CASCADE,
    browser_hash BYTEA NOT NULL,
    identity BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    CHECK ((auth_request_id IS NULL) <> (signin_flow_id IS NULL))
);

CREATE INDEX broker_pending_links_expiry ON broker_pending_links (expires_at);

CREATE INDEX broker_pending_links_user ON broker_pending_links (user_id);

CREATE INDEX broker_pending_links_realm ON broker_pending_links (realm_id);

CREATE INDEX broker_pending_links_provider ON broker_pending_links (provider_id);

CREATE INDEX broker_pending_links_auth_request ON broker_pending_links (auth_request_id);

CREATE INDEX broker_pending_links_signin_flow ON broker_pending_links (signin_flow_id);

CREATE TABLE broker_logins (
    state_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id TEXT COLLATE "C" NOT NULL REFERENCES identity_providers (id) ON DELETE CASCADE,
    browser_hash BYTEA NOT NULL,
    nonce TEXT COLLATE "C" NOT NULL,
    code_verifier BYTEA NOT NULL,
    auth_request_id TEXT COLLATE "C" REFERENCES auth_requests (id) ON DELETE CASCADE,
    link_user_id TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    signin_flow_id TEXT COLLATE "C" REFERENCES signin_flows (id) ON DELETE CASCADE
);

CREATE INDEX broker_logins_expiry ON broker_logins (expires_at);

CREATE INDEX broker_logins_realm ON broker_logins (realm_id);

CREATE INDEX broker_logins_provider ON broker_logins (provider_id);

CREATE INDEX broker_logins_auth_request ON broker_logins (auth_request_id);

CREATE INDEX broker_logins_user ON broker_logins (link_user_id);

CREATE INDEX broker_logins_signin_flow ON broker_logins (signin_flow_id);

-- version 45
CREATE TABLE throttle_failures (
    key_hash TEXT COLLATE "C" NOT NULL,
    failed_at BIGINT NOT NULL
);

CREATE INDEX throttle_failures_key ON throttle_failures (key_hash, failed_at);

CREATE INDEX throttle_failures_time ON throttle_failures (failed_at);

CREATE TABLE job_runs (
    name TEXT COLLATE "C" PRIMARY KEY,
    started_at BIGINT NOT NULL
);

-- version 46
CREATE TABLE webhooks (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    url TEXT COLLATE "C" NOT NULL,
    events TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    secret BYTEA NOT NULL,
    previous_secret BYTEA,
    previous_until BIGINT NOT NULL,
    disabled_reason TEXT COLLATE "C" NOT NULL,
    failing_since BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX webhooks_realm ON webhooks (realm_id, created_at);

CREATE TABLE webhook_messages (
    id TEXT COLLATE "C" PRIMARY KEY,
    webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type TEXT COLLATE "C" NOT NULL,
    payload BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL
);

CREATE INDEX webhook_messages_queue ON webhook_messages (webhook_id, state, created_at, id);

CREATE INDEX webhook_messages_due ON webhook_messages (state, next_attempt_at);

CREATE TABLE webhook_attempts (
    id TEXT COLLATE "C" PRIMARY KEY,
    webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id TEXT COLLATE "C" NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
    attempted_at BIGINT NOT NULL,
    status_code BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    error TEXT COLLATE "C" NOT NULL,
    next_attempt_at BIGINT NOT NULL
);

CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, attempted_at, id);

CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id);

-- version 47
CREATE TABLE audit_streams (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    type TEXT COLLATE "C" NOT NULL,
    events TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    settings TEXT COLLATE "C" NOT NULL,
    secret BYTEA,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX audit_streams_realm ON audit_streams (realm_id, created_at);

CREATE TABLE audit_stream_cursors (
    stream_id TEXT COLLATE "C" PRIMARY KEY REFERENCES audit_streams (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    delivered_seq BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    last_error TEXT COLLATE "C" NOT NULL,
    last_error_at BIGINT NOT NULL,
    delivered_at BIGINT NOT NULL
);

CREATE INDEX audit_stream_cursors_realm ON audit_stream_cursors (realm_id);

CREATE TABLE audit_sequences (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL
);

CREATE TABLE audit_records (
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    event_id TEXT COLLATE "C" NOT NULL,
    event_type TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    payload BYTEA NOT NULL,
    PRIMARY KEY (realm_id, seq)
);

-- version 48
CREATE TABLE plugins (
    name TEXT COLLATE "C" PRIMARY KEY,
    state TEXT COLLATE "C" NOT NULL,
    reason TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL
);

-- version 49
CREATE TABLE risk_settings (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    settings TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE risk_policies (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    priority BIGINT NOT NULL,
    conditions TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX risk_policies_name ON risk_policies (realm_id, name);

CREATE INDEX risk_policies_priority ON risk_policies (realm_id, priority, created_at);

CREATE TABLE risk_assessments (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    flow_id TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    client_id TEXT COLLATE "C" NOT NULL,
    ip_address TEXT COLLATE "C" NOT NULL,
    network TEXT COLLATE "C" NOT NULL,
    device_hash BYTEA,
    user_agent TEXT COLLATE "C" NOT NULL,
    country TEXT COLLATE "C" NOT NULL,
    located BOOLEAN NOT NULL,
    latitude_e6 BIGINT NOT NULL,
    longitude_e6 BIGINT NOT NULL,
    score BIGINT NOT NULL,
    level TEXT COLLATE "C" NOT NULL,
    signals TEXT COLLATE "C" NOT NULL,
    present TEXT COLLATE "C" NOT NULL,
    weights TEXT COLLATE "C" NOT NULL,
    policy_id TEXT COLLATE "C" NOT NULL,
    policy_name TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    outcome TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX risk_assessments_user ON risk_assessments (user_id, outcome, created_at);

CREATE INDEX risk_assessments_realm ON risk_assessments (realm_id, created_at);

CREATE INDEX risk_assessments_flow ON risk_assessments (flow_id);

-- version 50
ALTER TABLE risk_policies ADD COLUMN scope TEXT COLLATE "C" NOT NULL DEFAULT 'sign-in';

CREATE TABLE session_risk (
    session_id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    assessment_id TEXT COLLATE "C" NOT NULL,
    client_id TEXT COLLATE "C" NOT NULL,
    score BIGINT NOT NULL,
    level TEXT COLLATE "C" NOT NULL,
    signals TEXT COLLATE "C" NOT NULL,
    present TEXT COLLATE "C" NOT NULL,
    places TEXT COLLATE "C" NOT NULL,
    ip_address TEXT COLLATE "C" NOT NULL,
    country TEXT COLLATE "C" NOT NULL,
    device_posture TEXT COLLATE "C" NOT NULL,
    posture_at BIGINT NOT NULL,
    network_context TEXT COLLATE "C" NOT NULL,
    network_at BIGINT NOT NULL,
    behavior TEXT COLLATE "C" NOT NULL,
    behavior_at BIGINT NOT NULL,
    policy_id TEXT COLLATE "C" NOT NULL,
    policy_name TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    ended_by TEXT COLLATE "C" NOT NULL,
    step_up_owed BOOLEAN NOT NULL,
    observations BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX session_risk_realm ON session_risk (realm_id, updated_at, session_id);

CREATE INDEX session_risk_user ON session_risk (user_id, step_up_owed, updated_at);

CREATE TABLE session_risk_events (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    session_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL,
    client_id TEXT COLLATE "C" NOT NULL,
    ip_address TEXT COLLATE "C" NOT NULL,
    detail TEXT COLLATE "C" NOT NULL,
    present TEXT COLLATE "C" NOT NULL,
    score BIGINT NOT NULL,
    level TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    policy_id TEXT COLLATE "C" NOT NULL,
    policy_name TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX session_risk_events_realm ON session_risk_events (realm_id, created_at, id);

CREATE INDEX session_risk_events_session ON session_risk_events (session_id, created_at);

CREATE INDEX session_risk_events_user ON session_risk_events (user_id, created_at);

CREATE TABLE risk_refused_tokens (
    token_hash BYTEA PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    session_id TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX risk_refused_tokens_expiry ON risk_refused_tokens (expires_at);

CREATE TABLE risk_baselines (
    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    metrics TEXT COLLATE "C" NOT NULL,
    revision BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- version 51
CREATE TABLE authz_policies (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    enabled BOOLEAN NOT NULL,
    effect TEXT COLLATE "C" NOT NULL,
    resource_types TEXT COLLATE "C" NOT NULL,
    actions TEXT COLLATE "C" NOT NULL,
    expression TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX authz_policies_name ON authz_policies (realm_id, name);

CREATE TABLE authz_policy_settings (
    realm_id TEXT COLLATE "C" PRIMARY KEY REFERENCES realms (id) ON DELETE CASCADE,
    settings TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL
);

-- version 52
CREATE TABLE themes (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL,
    draft TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE UNIQUE INDEX themes_name ON themes (realm_id, name);

CREATE TABLE theme_versions (
    theme_id TEXT COLLATE "C" NOT NULL REFERENCES themes (id) ON DELETE CASCADE,
    version BIGINT NOT NULL,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    content TEXT COLLATE "C" NOT NULL,
    published_at BIGINT NOT NULL,
    PRIMARY KEY (theme_id, version)
);

CREATE INDEX theme_versions_realm ON theme_versions (realm_id);

CREATE TABLE theme_assets (
    id TEXT COLLATE "C" PRIMARY KEY,
    realm_id TEXT COLLATE "C" NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    content_type TEXT COLLATE "C" NOT NULL,
    width BIGINT NOT NULL,
    height BIGINT NOT NULL,
    sha256 BYTEA NOT NULL,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX theme_assets_realm ON theme_assets (realm_id, created_at);

-- version 53
CREATE TABLE setup_wizard (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    status TEXT COLLATE "C" NOT NULL,
    token_hash BYTEA,
    steps TEXT COLLATE "C" NOT NULL,
    revision BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    finished_by TEXT COLLATE "C" NOT NULL
);

-- version 54
-- SCIM's substring filters (co, sw, ew): schema.sql's trigram tables are
-- SQLite's (FTS5). Here the same columns get pg_trgm's GIN indexes, which
-- the planner uses for their LIKE comparisons, where the extension can be
-- had: it ships with PostgreSQL's contrib modules, and a database owner
-- may create it (it is trusted). Without it, or without the right to
-- create it, the version changes nothing and those filters read the
-- realm, as before (docs/postgres.md); the store's schema test lists the
-- indexes as PostgreSQL's own.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm unavailable (%): SCIM substring filters read the whole realm', SQLERRM;
END $$;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_trgm') THEN
        CREATE INDEX users_username_trigrams ON users USING gin (username gin_trgm_ops);
        CREATE INDEX users_email_trigrams ON users USING gin (email gin_trgm_ops);
        CREATE INDEX users_first_name_fold_trigrams ON users USING gin (first_name_fold gin_trgm_ops);
        CREATE INDEX users_last_name_fold_trigrams ON users USING gin (last_name_fold gin_trgm_ops);
        CREATE INDEX scim_user_values_fold_trigrams ON scim_user_values USING gin (fold gin_trgm_ops);
        CREATE INDEX scim_user_values_value_trigrams ON scim_user_values USING gin (value gin_trgm_ops);
    END IF;
EXCEPTION WHEN OTHERS THEN
    -- pg_trgm in a schema off the search path: its operator class is not found.
    RAISE NOTICE 'no trigram indexes (%): SCIM substring filters read the whole realm', SQLERRM;
END $$;
