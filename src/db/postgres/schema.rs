//! PostgreSQL migrations: versioned, forward-only, each applied once. The whole run is one
//! transaction under an advisory lock, so nodes starting together apply each migration
//! exactly once and none of them serves before the schema is complete.
//!
//! The tables mirror the SQLite schema, except that the stores keep their mutable state in
//! columns (a code's redemption, a family's version) so that conditional statements can
//! decide on them.

use crate::db::sql::{AppLock, Sql};
use crate::db::StoreResult;

const MIGRATIONS: &[(i64, &str)] = &[(
    1,
    r#"
    CREATE TABLE clients (
        client_id   TEXT PRIMARY KEY,
        secret_hash BYTEA,
        metadata    TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        updated_at  BIGINT NOT NULL
    );
    CREATE TABLE users (
        id            TEXT PRIMARY KEY,
        username      TEXT NOT NULL UNIQUE,
        email         TEXT UNIQUE,
        password_hash TEXT NOT NULL,
        profile       TEXT NOT NULL,
        disabled      BIGINT NOT NULL DEFAULT 0,
        created_at    BIGINT NOT NULL,
        updated_at    BIGINT NOT NULL
    );
    CREATE TABLE consents (
        user_id    TEXT NOT NULL,
        client_id  TEXT NOT NULL,
        scope      TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (user_id, client_id)
    );
    CREATE TABLE signing_keys (
        kid          TEXT PRIMARY KEY,
        alg          TEXT NOT NULL,
        state        TEXT NOT NULL,
        private_key  BYTEA NOT NULL,
        public_jwk   TEXT NOT NULL,
        created_at   BIGINT NOT NULL,
        activated_at BIGINT,
        retired_at   BIGINT
    );
    CREATE TABLE audit_events (
        id        BIGSERIAL PRIMARY KEY,
        at        BIGINT NOT NULL,
        event     TEXT NOT NULL,
        client_id TEXT,
        user_id   TEXT,
        address   TEXT,
        detail    TEXT NOT NULL
    );
    CREATE INDEX audit_events_at ON audit_events(at);

    -- Sharded stores: `hash` is SHA-256 of the secret (code, session id, challenge, jti,
    -- family id); the secret itself is never written. `shard` is the shard the value names.
    CREATE TABLE auth_codes (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, data TEXT NOT NULL,
        redeemed TEXT, code_expires_at BIGINT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE TABLE sessions (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, data TEXT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE TABLE challenges (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, data TEXT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE TABLE revoked_tokens (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE TABLE refresh_families (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, data TEXT NOT NULL,
        version BIGINT NOT NULL, last_used BIGINT NOT NULL, rotated_at BIGINT NOT NULL,
        revoked BOOLEAN NOT NULL DEFAULT false, expires_at BIGINT NOT NULL
    );
    CREATE INDEX auth_codes_expiry ON auth_codes(expires_at);
    CREATE INDEX sessions_expiry ON sessions(expires_at);
    CREATE INDEX challenges_expiry ON challenges(expires_at);
    CREATE INDEX revoked_tokens_expiry ON revoked_tokens(expires_at);
    CREATE INDEX refresh_families_expiry ON refresh_families(expires_at);
    "#,
), (
    2,
    // As SQLite's migration 3: every name a user signs in with, normalized, one owner each.
    r#"
    CREATE TABLE login_names (name TEXT PRIMARY KEY, user_id TEXT NOT NULL);
    CREATE INDEX login_names_user ON login_names(user_id);
    "#,
), (
    3,
    // As SQLite's migration 4: the back-channel logout outbox.
    r#"
    CREATE TABLE logout_outbox (
        id TEXT PRIMARY KEY, client_id TEXT NOT NULL, sub TEXT NOT NULL, sid TEXT NOT NULL,
        attempts BIGINT NOT NULL, due_at BIGINT NOT NULL, lease_until BIGINT NOT NULL, created_at BIGINT NOT NULL
    );
    CREATE INDEX logout_outbox_due ON logout_outbox(due_at);
    "#,
), (
    4,
    // As SQLite's migration 5: the sealed secret of a `client_secret_jwt` client.
    "ALTER TABLE clients ADD COLUMN secret_sealed BYTEA;",
), (
    5,
    // As SQLite's migration 6: dynamic registration.
    r#"
    ALTER TABLE clients ADD COLUMN registration_token_hash BYTEA;
    CREATE TABLE initial_access_tokens (
        hash BYTEA PRIMARY KEY, uses_left BIGINT NOT NULL, expires_at BIGINT NOT NULL, created_at BIGINT NOT NULL
    );
    "#,
), (
    6,
    // As SQLite's migration 7: second factors and recovery codes.
    r#"
    CREATE TABLE user_factors (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
        secret_sealed BYTEA, last_step BIGINT NOT NULL, created_at BIGINT NOT NULL, last_used_at BIGINT NOT NULL
    );
    CREATE INDEX user_factors_user ON user_factors(user_id);
    CREATE TABLE recovery_codes (
        user_id TEXT NOT NULL, code_hash BYTEA NOT NULL, used_at BIGINT, PRIMARY KEY (user_id, code_hash)
    );
    "#,
), (
    7,
    // As SQLite's migration 8: passkeys' credential ids.
    r#"
    ALTER TABLE user_factors ADD COLUMN credential_id TEXT;
    ALTER TABLE user_factors ADD COLUMN attestation BYTEA;
    CREATE UNIQUE INDEX user_factors_credential ON user_factors(credential_id);
    "#,
), (
    8,
    // As SQLite's migration 9: users' console roles.
    r#"
    ALTER TABLE users ADD COLUMN roles TEXT NOT NULL DEFAULT '';
    CREATE INDEX audit_events_user ON audit_events(user_id);
    CREATE INDEX audit_events_client ON audit_events(client_id);
    "#,
), (
    9,
    // As SQLite's migration 10: linked upstream identities.
    r#"
    CREATE TABLE linked_identities (
        provider TEXT NOT NULL, subject TEXT NOT NULL, user_id TEXT NOT NULL, email TEXT,
        created_at BIGINT NOT NULL, last_used_at BIGINT NOT NULL, PRIMARY KEY (provider, subject)
    );
    CREATE INDEX linked_identities_user ON linked_identities(user_id);
    "#,
), (
    10,
    // As SQLite's migration 11: the mail outbox and password resets.
    r#"
    CREATE TABLE mail_outbox (
        id BIGSERIAL PRIMARY KEY, recipient TEXT NOT NULL, subject TEXT NOT NULL, body BYTEA NOT NULL,
        created_at BIGINT NOT NULL, due_at BIGINT NOT NULL, lease_until BIGINT NOT NULL DEFAULT 0,
        attempts BIGINT NOT NULL DEFAULT 0, sent_at BIGINT, last_error TEXT
    );
    CREATE INDEX mail_outbox_due ON mail_outbox(due_at);
    CREATE TABLE password_resets (
        token_hash BYTEA PRIMARY KEY, user_id TEXT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT
    );
    CREATE INDEX password_resets_user ON password_resets(user_id);
    "#,
), (
    11,
    // As SQLite's migration 12: pending sign-ups.
    r#"
    CREATE TABLE pending_signups (
        token_hash BYTEA PRIMARY KEY, username TEXT NOT NULL, email TEXT NOT NULL, password_hash TEXT NOT NULL,
        claims TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE INDEX pending_signups_expiry ON pending_signups(expires_at);
    "#,
), (
    12,
    // As SQLite's migration 13: e-mail addresses waiting for their link.
    r#"
    CREATE TABLE email_verifications (
        token_hash BYTEA PRIMARY KEY, user_id TEXT NOT NULL, email TEXT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE INDEX email_verifications_user ON email_verifications(user_id);
    "#,
), (
    13,
    // As SQLite's migration 14: the request a sign-up resumes.
    r#"
    ALTER TABLE pending_signups ADD COLUMN resume TEXT;
    "#,
), (
    14,
    // As SQLite's migration 15: the user's token cutoff.
    r#"
    ALTER TABLE users ADD COLUMN tokens_cutoff BIGINT NOT NULL DEFAULT 0;
    "#,
), (
    15,
    // As SQLite's migration 16: a dynamically registered client's first use.
    r#"
    ALTER TABLE clients ADD COLUMN used_at BIGINT;
    UPDATE clients SET used_at = updated_at;
    "#,
), (
    16,
    // As SQLite's migration 17: the request a password reset resumes.
    r#"
    ALTER TABLE password_resets ADD COLUMN resume TEXT;
    "#,
), (
    17,
    // As SQLite's migration 18: device authorization requests. The columns the embedded
    // store keeps in its record are columns here, so that each decision is one conditional
    // statement: `pending_until` is the request's expiry while it waits for its user and 0
    // once answered (what the bounds count), `decision` the answer.
    r#"
    CREATE TABLE device_requests (
        hash BYTEA PRIMARY KEY, shard INT NOT NULL, client_key BYTEA NOT NULL, device_hash BYTEA NOT NULL,
        data TEXT NOT NULL, decision TEXT, poll_interval BIGINT NOT NULL, last_poll BIGINT NOT NULL,
        pending_until BIGINT NOT NULL, expires_at BIGINT NOT NULL
    );
    CREATE INDEX device_requests_expiry ON device_requests(expires_at);
    CREATE INDEX device_requests_pending ON device_requests(pending_until);
    CREATE INDEX device_requests_client ON device_requests(client_key, pending_until);
    "#,
), (
    18,
    // As SQLite's migration 19: `tenant_id` in every table, every existing row in the default
    // tenant, and first in the primary key and every unique index of the tables keyed by
    // names people choose or by hashes of our tokens. PostgreSQL swaps the constraints in
    // place (the default names: `{table}_pkey`, `{table}_{column}_key`).
    r#"
    ALTER TABLE clients ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE clients DROP CONSTRAINT clients_pkey, ADD PRIMARY KEY (tenant_id, client_id);
    ALTER TABLE users ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE users DROP CONSTRAINT users_pkey, ADD PRIMARY KEY (tenant_id, id);
    ALTER TABLE users DROP CONSTRAINT users_username_key, ADD CONSTRAINT users_username_key UNIQUE (tenant_id, username);
    ALTER TABLE users DROP CONSTRAINT users_email_key, ADD CONSTRAINT users_email_key UNIQUE (tenant_id, email);
    ALTER TABLE consents ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE consents DROP CONSTRAINT consents_pkey, ADD PRIMARY KEY (tenant_id, user_id, client_id);
    ALTER TABLE signing_keys ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE signing_keys DROP CONSTRAINT signing_keys_pkey, ADD PRIMARY KEY (tenant_id, kid);
    ALTER TABLE login_names ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE login_names DROP CONSTRAINT login_names_pkey, ADD PRIMARY KEY (tenant_id, name);
    DROP INDEX login_names_user;
    CREATE INDEX login_names_user ON login_names(tenant_id, user_id);
    ALTER TABLE initial_access_tokens ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE initial_access_tokens DROP CONSTRAINT initial_access_tokens_pkey, ADD PRIMARY KEY (tenant_id, hash);
    ALTER TABLE user_factors ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE user_factors DROP CONSTRAINT user_factors_pkey, ADD PRIMARY KEY (tenant_id, id);
    DROP INDEX user_factors_user;
    CREATE INDEX user_factors_user ON user_factors(tenant_id, user_id);
    DROP INDEX user_factors_credential;
    CREATE UNIQUE INDEX user_factors_credential ON user_factors(tenant_id, credential_id);
    ALTER TABLE recovery_codes ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE recovery_codes DROP CONSTRAINT recovery_codes_pkey, ADD PRIMARY KEY (tenant_id, user_id, code_hash);
    ALTER TABLE linked_identities ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE linked_identities DROP CONSTRAINT linked_identities_pkey, ADD PRIMARY KEY (tenant_id, provider, subject);
    DROP INDEX linked_identities_user;
    CREATE INDEX linked_identities_user ON linked_identities(tenant_id, user_id);
    ALTER TABLE password_resets ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE password_resets DROP CONSTRAINT password_resets_pkey, ADD PRIMARY KEY (tenant_id, token_hash);
    DROP INDEX password_resets_user;
    CREATE INDEX password_resets_user ON password_resets(tenant_id, user_id);
    ALTER TABLE pending_signups ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE pending_signups DROP CONSTRAINT pending_signups_pkey, ADD PRIMARY KEY (tenant_id, token_hash);
    ALTER TABLE email_verifications ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE email_verifications DROP CONSTRAINT email_verifications_pkey, ADD PRIMARY KEY (tenant_id, token_hash);
    DROP INDEX email_verifications_user;
    CREATE INDEX email_verifications_user ON email_verifications(tenant_id, user_id);
    ALTER TABLE audit_events ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    CREATE INDEX audit_events_tenant ON audit_events(tenant_id, at);
    ALTER TABLE logout_outbox ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE mail_outbox ADD COLUMN tenant_id BIGINT NOT NULL DEFAULT 0;
    "#,
), (
    19,
    // As SQLite's migration 20: CIBA requests, and pings in the back-channel outbox.
    r#"
    CREATE TABLE ciba_requests (
        hash BYTEA PRIMARY KEY, tenant_id BIGINT NOT NULL, client_id TEXT NOT NULL, user_id TEXT NOT NULL,
        data TEXT NOT NULL, decision TEXT, poll_interval BIGINT NOT NULL, last_poll BIGINT NOT NULL,
        pending_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, ping BYTEA
    );
    CREATE INDEX ciba_requests_expiry ON ciba_requests(expires_at);
    CREATE INDEX ciba_requests_user ON ciba_requests(tenant_id, user_id, pending_until);
    CREATE INDEX ciba_requests_client ON ciba_requests(tenant_id, client_id, pending_until);
    ALTER TABLE logout_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'logout';
    ALTER TABLE logout_outbox ADD COLUMN payload BYTEA;
    "#,
), (
    20,
    // As SQLite's migration 21: the tenants besides the default, and their hosts.
    r#"
    CREATE TABLE tenants (
        tenant_id BIGINT PRIMARY KEY, slug TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL
    );
    CREATE TABLE tenant_hosts (host TEXT PRIMARY KEY, tenant_id BIGINT NOT NULL);
    -- `signup_max_pending` is counted per tenant.
    CREATE INDEX pending_signups_tenant ON pending_signups(tenant_id, expires_at);
    "#,
), (
    21,
    // As SQLite's migration 22: admin API credentials scoped to a tenant.
    r#"
    CREATE TABLE admin_credentials (
        tenant_id BIGINT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, token_hash BYTEA NOT NULL,
        scopes TEXT NOT NULL DEFAULT 'admin', created_at BIGINT NOT NULL, expires_at BIGINT, revoked_at BIGINT,
        PRIMARY KEY (tenant_id, id)
    );
    "#,
), (
    22,
    // As SQLite's migration 23. Issue 31: organizations inside a tenant (B2B): their members (users of the tenant, with
    // organization roles) and their e-mail domains. A domain names one organization of a
    // tenant; a user may belong to many.
    r#"
    CREATE TABLE organizations (
        tenant_id BIGINT NOT NULL, id TEXT NOT NULL, slug TEXT NOT NULL, data TEXT NOT NULL,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, slug)
    );
    CREATE TABLE organization_domains (
        tenant_id BIGINT NOT NULL, domain TEXT NOT NULL, org_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, domain)
    );
    CREATE INDEX organization_domains_org ON organization_domains(tenant_id, org_id);
    CREATE TABLE organization_members (
        tenant_id BIGINT NOT NULL, org_id TEXT NOT NULL, user_id TEXT NOT NULL,
        roles TEXT NOT NULL DEFAULT '', joined_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, org_id, user_id)
    );
    CREATE INDEX organization_members_user ON organization_members(tenant_id, user_id);
    "#,
), (
    23,
    // As SQLite's migration 24. Issue 31: invitations to an organization by e-mail. The link's token is kept as its
    // SHA-256 only (found by it, within the tenant); an invitation answered or revoked keeps
    // its row (`accepted_at`, `revoked_at`) until it is pruned after its expiry.
    r#"
    CREATE TABLE organization_invitations (
        tenant_id BIGINT NOT NULL, id TEXT NOT NULL, org_id TEXT NOT NULL, email TEXT NOT NULL,
        roles TEXT NOT NULL DEFAULT '', token_hash BYTEA NOT NULL, created_by TEXT,
        created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
        accepted_at BIGINT, accepted_by TEXT, revoked_at BIGINT,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, token_hash)
    );
    CREATE INDEX organization_invitations_org ON organization_invitations(tenant_id, org_id, expires_at);
    "#,
), (
    24,
    // As SQLite's migration 25: CIBA user codes, Argon2id.
    r#"
    CREATE TABLE ciba_user_codes (
        tenant_id BIGINT NOT NULL, user_id TEXT NOT NULL, code_hash TEXT NOT NULL, updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, user_id)
    );
    "#,), (
    25,
    // As SQLite's migration 26: groups, their members, client roles and role assignments.
    r#"
    CREATE TABLE user_groups (
        tenant_id BIGINT NOT NULL, id TEXT NOT NULL, display_name TEXT NOT NULL, name_key TEXT NOT NULL,
        external_id TEXT, created_at BIGINT NOT NULL, version BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX user_groups_name ON user_groups(tenant_id, name_key);
    CREATE TABLE group_members (
        tenant_id BIGINT NOT NULL, group_id TEXT NOT NULL, member_kind TEXT NOT NULL, member_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, group_id, member_kind, member_id)
    );
    CREATE INDEX group_members_member ON group_members(tenant_id, member_kind, member_id);
    CREATE TABLE app_roles (
        tenant_id BIGINT NOT NULL, client_id TEXT NOT NULL, role TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, client_id, role)
    );
    CREATE TABLE role_assignments (
        tenant_id BIGINT NOT NULL, client_id TEXT NOT NULL, role TEXT NOT NULL, principal_kind TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, client_id, role, principal_kind, principal_id)
    );
    CREATE INDEX role_assignments_principal ON role_assignments(tenant_id, principal_kind, principal_id);
    "#,
), (
    26,
    // As SQLite's migration 27: a user's SCIM external id and attributes, and its source.
    r#"
    ALTER TABLE users ADD COLUMN external_id TEXT;
    ALTER TABLE users ADD COLUMN scim TEXT;
    ALTER TABLE users ADD COLUMN source TEXT NOT NULL DEFAULT 'local';
    UPDATE users SET source = (SELECT MIN(l.provider) FROM linked_identities l
                                WHERE l.tenant_id = users.tenant_id AND l.user_id = users.id AND l.provider LIKE 'ldap:%')
     WHERE password_hash = '' AND EXISTS (SELECT 1 FROM linked_identities l
                                WHERE l.tenant_id = users.tenant_id AND l.user_id = users.id AND l.provider LIKE 'ldap:%');
    "#,
), (
    27,
    // As SQLite's migration 28: who made a group membership (`local` or `ldap:<directory>`).
    r#"
    ALTER TABLE group_members ADD COLUMN source TEXT NOT NULL DEFAULT 'local';
    "#,
), (
    28,
    // As SQLite's migration 29: outbound provisioning's targets and remote ids.
    r#"
    CREATE TABLE scim_targets (
        tenant_id BIGINT NOT NULL, client_id TEXT NOT NULL, endpoint TEXT NOT NULL, token BYTEA NOT NULL,
        users TEXT NOT NULL DEFAULT 'assigned', enabled BIGINT NOT NULL DEFAULT 1,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
        last_delivered_at BIGINT, last_error TEXT, last_error_at BIGINT,
        PRIMARY KEY (tenant_id, client_id)
    );
    CREATE TABLE scim_remote (
        tenant_id BIGINT NOT NULL, client_id TEXT NOT NULL, kind TEXT NOT NULL, local_id TEXT NOT NULL, remote_id TEXT NOT NULL,
        sent_hash BYTEA,
        PRIMARY KEY (tenant_id, client_id, kind, local_id)
    );
    CREATE INDEX logout_outbox_scim ON logout_outbox(tenant_id, kind, client_id, sub);
    "#,
)];

/// The version the migrations bring a database to.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |(v, _)| *v)
}

/// Every migration's version, in order.
#[doc(hidden)]
pub fn versions() -> Vec<i64> {
    MIGRATIONS.iter().map(|(v, _)| *v).collect()
}

/// Bring the schema up to date; returns the version reached. Call inside a write transaction.
pub fn migrate(sql: &mut dyn Sql) -> StoreResult<i64> {
    migrate_to(sql, i64::MAX)
}

/// `migrate`, up to version `upto` only (the upgrade test builds each earlier schema with it).
#[doc(hidden)]
pub fn migrate_to(sql: &mut dyn Sql, upto: i64) -> StoreResult<i64> {
    sql.lock_exclusive(AppLock::Migrations)?;
    sql.batch("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)")?;
    for (version, ddl) in MIGRATIONS.iter().take_while(|(v, _)| *v <= upto) {
        if sql.query_opt("SELECT 1 FROM schema_migrations WHERE version = ?1", crate::params![*version])?.is_none() {
            sql.batch(ddl)?;
            sql.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                crate::params![*version, crate::util::now() as i64],
            )?;
            tracing::info!(version, "applied PostgreSQL migration");
        }
    }
    current_version(sql)
}

pub fn current_version(sql: &mut dyn Sql) -> StoreResult<i64> {
    sql.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", &[])?[0].i64(0)
}
