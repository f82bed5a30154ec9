//! Versioned, forward-only migrations. Each entry runs once, in its own transaction, and
//! records its number in `schema_migrations`; `BEGIN IMMEDIATE` makes two processes starting
//! at once apply each migration exactly once.

use rusqlite::Connection;

const MIGRATIONS: &[(i64, &str)] = &[(
    1,
    r#"
    CREATE TABLE clients (
        client_id   TEXT PRIMARY KEY,
        secret_hash BLOB,
        metadata    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    );
    CREATE TABLE users (
        id            TEXT PRIMARY KEY,
        username      TEXT NOT NULL UNIQUE,
        email         TEXT UNIQUE,
        password_hash TEXT NOT NULL,
        profile       TEXT NOT NULL,
        disabled      INTEGER NOT NULL DEFAULT 0,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL
    );
    CREATE TABLE consents (
        user_id    TEXT NOT NULL,
        client_id  TEXT NOT NULL,
        scope      TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, client_id)
    );
    -- Every change to clients, users or consents appends a row here, so that the in-memory
    -- registries of a running server (and of other nodes) can pick up CLI edits.
    CREATE TABLE registry_changes (
        seq  INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        id   TEXT NOT NULL
    );
    CREATE TABLE signing_keys (
        kid          TEXT PRIMARY KEY,
        alg          TEXT NOT NULL,
        state        TEXT NOT NULL,
        private_key  BLOB NOT NULL,
        public_jwk   TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        activated_at INTEGER,
        retired_at   INTEGER
    );
    -- Sharded stores: `hash` is SHA-256 of the secret value (code, session id, challenge);
    -- the value itself is never written.
    CREATE TABLE auth_codes (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE TABLE sessions (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE TABLE challenges (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE TABLE revoked_tokens (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE INDEX auth_codes_expiry ON auth_codes(expires_at);
    CREATE INDEX sessions_expiry ON sessions(expires_at);
    CREATE INDEX challenges_expiry ON challenges(expires_at);
    CREATE INDEX revoked_tokens_expiry ON revoked_tokens(expires_at);
    "#,
), (
    2,
    r#"
    CREATE TABLE refresh_families (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE INDEX refresh_families_expiry ON refresh_families(expires_at);
    CREATE TABLE audit_events (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        at        INTEGER NOT NULL,
        event     TEXT NOT NULL,
        client_id TEXT,
        user_id   TEXT,
        address   TEXT,
        detail    TEXT NOT NULL
    );
    CREATE INDEX audit_events_at ON audit_events(at);
    "#,
), (
    3,
    // Every name a user signs in with (username, e-mail), in its normalized form
    // (`users::login_key`): one owner per name, across both kinds, whatever the case.
    r#"
    CREATE TABLE login_names (name TEXT PRIMARY KEY, user_id TEXT NOT NULL);
    CREATE INDEX login_names_user ON login_names(user_id);
    "#,
), (
    4,
    // Back-channel logout tokens to deliver (`logout::backchannel`): written in the commit that
    // ends a session, deleted once delivered or given up. `id` is the token's `jti`.
    r#"
    CREATE TABLE logout_outbox (
        id TEXT PRIMARY KEY, client_id TEXT NOT NULL, sub TEXT NOT NULL, sid TEXT NOT NULL,
        attempts BIGINT NOT NULL, due_at BIGINT NOT NULL, lease_until BIGINT NOT NULL, created_at BIGINT NOT NULL
    );
    CREATE INDEX logout_outbox_due ON logout_outbox(due_at);
    "#,
), (
    5,
    // The secret of a `client_secret_jwt` client, AES-GCM-sealed under the KEK: that method
    // needs the secret itself (an HMAC key), which a hash cannot give back.
    "ALTER TABLE clients ADD COLUMN secret_sealed BLOB;",
), (
    6,
    // Dynamic registration (RFC 7591/7592): the hash of a registered client's registration
    // access token, and the operator's initial access tokens (hashed, with uses left).
    r#"
    ALTER TABLE clients ADD COLUMN registration_token_hash BLOB;
    CREATE TABLE initial_access_tokens (
        hash BLOB PRIMARY KEY, uses_left INTEGER NOT NULL, expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL
    );
    "#,
), (
    7,
    // Second factors (`factors`): TOTP secrets sealed under the KEK with the last time step
    // accepted (a code is good once), and recovery codes as SHA-256, each spent once.
    r#"
    CREATE TABLE user_factors (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
        secret_sealed BLOB, last_step BIGINT NOT NULL, created_at BIGINT NOT NULL, last_used_at BIGINT NOT NULL
    );
    CREATE INDEX user_factors_user ON user_factors(user_id);
    CREATE TABLE recovery_codes (
        user_id TEXT NOT NULL, code_hash BLOB NOT NULL, used_at BIGINT, PRIMARY KEY (user_id, code_hash)
    );
    "#,
), (
    8,
    // Passkeys are factors too (kind 'passkey'); the credential id finds the user of a
    // discoverable sign-in, and is unique across users (WebAuthn §7.1 step 22). The
    // attestation object the authenticator sent at registration is kept as it came.
    r#"
    ALTER TABLE user_factors ADD COLUMN credential_id TEXT;
    ALTER TABLE user_factors ADD COLUMN attestation BLOB;
    CREATE UNIQUE INDEX user_factors_credential ON user_factors(credential_id);
    "#,
), (
    9,
    // What a user may do in the admin console (`endpoints::console`): role names,
    // space-separated ('' for none: an ordinary user); the console's audit filters.
    r#"
    ALTER TABLE users ADD COLUMN roles TEXT NOT NULL DEFAULT '';
    CREATE INDEX audit_events_user ON audit_events(user_id);
    CREATE INDEX audit_events_client ON audit_events(client_id);
    "#,
), (
    10,
    // Identities at upstream providers (`identity`): (provider, their subject) -> our user.
    r#"
    CREATE TABLE linked_identities (
        provider TEXT NOT NULL, subject TEXT NOT NULL, user_id TEXT NOT NULL, email TEXT,
        created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, PRIMARY KEY (provider, subject)
    );
    CREATE INDEX linked_identities_user ON linked_identities(user_id);
    "#,
), (
    11,
    // E-mail (`mail`): the outbox (bodies sealed, blanked once sent) and password resets
    // (tokens stored hashed).
    r#"
    CREATE TABLE mail_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT, recipient TEXT NOT NULL, subject TEXT NOT NULL, body BLOB NOT NULL,
        created_at INTEGER NOT NULL, due_at INTEGER NOT NULL, lease_until INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0, sent_at INTEGER, last_error TEXT
    );
    CREATE INDEX mail_outbox_due ON mail_outbox(due_at);
    CREATE TABLE password_resets (
        token_hash BLOB PRIMARY KEY, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER
    );
    CREATE INDEX password_resets_user ON password_resets(user_id);
    "#,
), (
    12,
    // Self-registration (`endpoints::signup`): sign-ups waiting for their e-mail to be
    // verified (the token stored hashed; the password already an Argon2 hash).
    r#"
    CREATE TABLE pending_signups (
        token_hash BLOB PRIMARY KEY, username TEXT NOT NULL, email TEXT NOT NULL, password_hash TEXT NOT NULL,
        claims TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE INDEX pending_signups_expiry ON pending_signups(expires_at);
    "#,
), (
    13,
    // An e-mail address changed on the account page, waiting for its link (the token stored
    // hashed; one link per user, the latest).
    r#"
    CREATE TABLE email_verifications (
        token_hash BLOB PRIMARY KEY, user_id TEXT NOT NULL, email TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE INDEX email_verifications_user ON email_verifications(user_id);
    "#,
), (
    14,
    // The authorization request a sign-up came from (sealed to the browser), resumed when
    // its link is confirmed in that browser.
    r#"
    ALTER TABLE pending_signups ADD COLUMN resume TEXT;
    "#,
), (
    15,
    // A user's tokens issued at or before this second are refused (`User::tokens_cutoff`):
    // set by a new password and by the end of all sessions.
    r#"
    ALTER TABLE users ADD COLUMN tokens_cutoff INTEGER NOT NULL DEFAULT 0;
    "#,
), (
    16,
    // When a dynamically registered client was first used (`/token`): one never
    // used is deleted after `registration_unused_client_ttl`. Clients registered before this
    // count as used, so that an upgrade deletes none of them.
    r#"
    ALTER TABLE clients ADD COLUMN used_at INTEGER;
    UPDATE clients SET used_at = updated_at;
    "#,
), (
    17,
    // The authorization request a password reset came from (sealed to the browser), resumed
    // when the new password is set in that browser, as a sign-up's is.
    r#"
    ALTER TABLE password_resets ADD COLUMN resume TEXT;
    "#,
), (
    18,
    // Device authorization requests (RFC 8628, `stores::device`): keyed by the hash of the
    // user code; the record holds the device code's hash, never the code.
    r#"
    CREATE TABLE device_requests (
        hash BLOB PRIMARY KEY, shard INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL
    );
    CREATE INDEX device_requests_expiry ON device_requests(expires_at);
    "#,
), (
    19,
    // Tenants (issue 31, docs/design/tenants.md): `tenant_id` in every table, every existing
    // row in the default tenant (0). Tables keyed by names people choose (client ids, user
    // ids, login names, providers' subjects, credential ids) and by hashes of our own tokens
    // are rebuilt with `tenant_id` first in the primary key and every unique index, so that
    // two tenants may hold the same name; SQLite cannot change a primary key in place, so
    // each is created anew, filled, and renamed over the old. The logs and outboxes are keyed
    // by numbers or random ids: they gain the column, for what must find a tenant's rows.
    // The sharded stores' keys already include the tenant (`stores::shard::key`), and their
    // sessions and families name it in their data: they are unchanged.
    r#"
    CREATE TABLE clients_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, client_id TEXT NOT NULL, secret_hash BLOB, metadata TEXT NOT NULL,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, secret_sealed BLOB, registration_token_hash BLOB,
        used_at INTEGER, PRIMARY KEY (tenant_id, client_id)
    );
    INSERT INTO clients_t (client_id, secret_hash, metadata, created_at, updated_at, secret_sealed, registration_token_hash, used_at)
        SELECT client_id, secret_hash, metadata, created_at, updated_at, secret_sealed, registration_token_hash, used_at FROM clients;
    DROP TABLE clients;
    ALTER TABLE clients_t RENAME TO clients;

    CREATE TABLE users_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, id TEXT NOT NULL, username TEXT NOT NULL, email TEXT,
        password_hash TEXT NOT NULL, profile TEXT NOT NULL, disabled INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, roles TEXT NOT NULL DEFAULT '',
        tokens_cutoff INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, username), UNIQUE (tenant_id, email)
    );
    INSERT INTO users_t (id, username, email, password_hash, profile, disabled, created_at, updated_at, roles, tokens_cutoff)
        SELECT id, username, email, password_hash, profile, disabled, created_at, updated_at, roles, tokens_cutoff FROM users;
    DROP TABLE users;
    ALTER TABLE users_t RENAME TO users;

    CREATE TABLE consents_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, user_id TEXT NOT NULL, client_id TEXT NOT NULL, scope TEXT NOT NULL,
        updated_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, user_id, client_id)
    );
    INSERT INTO consents_t (user_id, client_id, scope, updated_at) SELECT user_id, client_id, scope, updated_at FROM consents;
    DROP TABLE consents;
    ALTER TABLE consents_t RENAME TO consents;

    CREATE TABLE signing_keys_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, kid TEXT NOT NULL, alg TEXT NOT NULL, state TEXT NOT NULL,
        private_key BLOB NOT NULL, public_jwk TEXT NOT NULL, created_at INTEGER NOT NULL, activated_at INTEGER,
        retired_at INTEGER, PRIMARY KEY (tenant_id, kid)
    );
    INSERT INTO signing_keys_t (kid, alg, state, private_key, public_jwk, created_at, activated_at, retired_at)
        SELECT kid, alg, state, private_key, public_jwk, created_at, activated_at, retired_at FROM signing_keys;
    DROP TABLE signing_keys;
    ALTER TABLE signing_keys_t RENAME TO signing_keys;

    CREATE TABLE login_names_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, name TEXT NOT NULL, user_id TEXT NOT NULL, PRIMARY KEY (tenant_id, name)
    );
    INSERT INTO login_names_t (name, user_id) SELECT name, user_id FROM login_names;
    DROP TABLE login_names;
    ALTER TABLE login_names_t RENAME TO login_names;
    CREATE INDEX login_names_user ON login_names(tenant_id, user_id);

    CREATE TABLE initial_access_tokens_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, hash BLOB NOT NULL, uses_left INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, hash)
    );
    INSERT INTO initial_access_tokens_t (hash, uses_left, expires_at, created_at) SELECT hash, uses_left, expires_at, created_at FROM initial_access_tokens;
    DROP TABLE initial_access_tokens;
    ALTER TABLE initial_access_tokens_t RENAME TO initial_access_tokens;

    CREATE TABLE user_factors_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
        secret_sealed BLOB, last_step INTEGER NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL,
        credential_id TEXT, attestation BLOB, PRIMARY KEY (tenant_id, id)
    );
    INSERT INTO user_factors_t (id, user_id, kind, name, secret_sealed, last_step, created_at, last_used_at, credential_id, attestation)
        SELECT id, user_id, kind, name, secret_sealed, last_step, created_at, last_used_at, credential_id, attestation FROM user_factors;
    DROP TABLE user_factors;
    ALTER TABLE user_factors_t RENAME TO user_factors;
    CREATE INDEX user_factors_user ON user_factors(tenant_id, user_id);
    CREATE UNIQUE INDEX user_factors_credential ON user_factors(tenant_id, credential_id);

    CREATE TABLE recovery_codes_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, user_id TEXT NOT NULL, code_hash BLOB NOT NULL, used_at INTEGER,
        PRIMARY KEY (tenant_id, user_id, code_hash)
    );
    INSERT INTO recovery_codes_t (user_id, code_hash, used_at) SELECT user_id, code_hash, used_at FROM recovery_codes;
    DROP TABLE recovery_codes;
    ALTER TABLE recovery_codes_t RENAME TO recovery_codes;

    CREATE TABLE linked_identities_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, provider TEXT NOT NULL, subject TEXT NOT NULL, user_id TEXT NOT NULL,
        email TEXT, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, provider, subject)
    );
    INSERT INTO linked_identities_t (provider, subject, user_id, email, created_at, last_used_at)
        SELECT provider, subject, user_id, email, created_at, last_used_at FROM linked_identities;
    DROP TABLE linked_identities;
    ALTER TABLE linked_identities_t RENAME TO linked_identities;
    CREATE INDEX linked_identities_user ON linked_identities(tenant_id, user_id);

    CREATE TABLE password_resets_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, token_hash BLOB NOT NULL, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
        used_at INTEGER, resume TEXT, PRIMARY KEY (tenant_id, token_hash)
    );
    INSERT INTO password_resets_t (token_hash, user_id, expires_at, used_at, resume) SELECT token_hash, user_id, expires_at, used_at, resume FROM password_resets;
    DROP TABLE password_resets;
    ALTER TABLE password_resets_t RENAME TO password_resets;
    CREATE INDEX password_resets_user ON password_resets(tenant_id, user_id);

    CREATE TABLE pending_signups_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, token_hash BLOB NOT NULL, username TEXT NOT NULL, email TEXT NOT NULL,
        password_hash TEXT NOT NULL, claims TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        resume TEXT, PRIMARY KEY (tenant_id, token_hash)
    );
    INSERT INTO pending_signups_t (token_hash, username, email, password_hash, claims, created_at, expires_at, resume)
        SELECT token_hash, username, email, password_hash, claims, created_at, expires_at, resume FROM pending_signups;
    DROP TABLE pending_signups;
    ALTER TABLE pending_signups_t RENAME TO pending_signups;
    CREATE INDEX pending_signups_expiry ON pending_signups(expires_at);

    CREATE TABLE email_verifications_t (
        tenant_id INTEGER NOT NULL DEFAULT 0, token_hash BLOB NOT NULL, user_id TEXT NOT NULL, email TEXT NOT NULL,
        expires_at INTEGER NOT NULL, PRIMARY KEY (tenant_id, token_hash)
    );
    INSERT INTO email_verifications_t (token_hash, user_id, email, expires_at) SELECT token_hash, user_id, email, expires_at FROM email_verifications;
    DROP TABLE email_verifications;
    ALTER TABLE email_verifications_t RENAME TO email_verifications;
    CREATE INDEX email_verifications_user ON email_verifications(tenant_id, user_id);

    ALTER TABLE registry_changes ADD COLUMN tenant_id INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE audit_events ADD COLUMN tenant_id INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX audit_events_tenant ON audit_events(tenant_id, at);
    ALTER TABLE logout_outbox ADD COLUMN tenant_id INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE mail_outbox ADD COLUMN tenant_id INTEGER NOT NULL DEFAULT 0;
    "#,
), (
    20,
    // CIBA requests (`stores::ciba`): keyed by the hash of the `auth_req_id`, never the id
    // itself; the answer, pacing and waiting state are columns, so that each decision is one
    // conditional statement (as on PostgreSQL). `ping` is the sealed notification for a ping
    // client. The back-channel outbox also carries those pings (`kind`, `payload` sealed).
    r#"
    CREATE TABLE ciba_requests (
        hash BLOB PRIMARY KEY, tenant_id INTEGER NOT NULL, client_id TEXT NOT NULL, user_id TEXT NOT NULL,
        data TEXT NOT NULL, decision TEXT, poll_interval INTEGER NOT NULL, last_poll INTEGER NOT NULL,
        pending_until INTEGER NOT NULL, expires_at INTEGER NOT NULL, ping BLOB
    );
    CREATE INDEX ciba_requests_expiry ON ciba_requests(expires_at);
    CREATE INDEX ciba_requests_user ON ciba_requests(tenant_id, user_id, pending_until);
    CREATE INDEX ciba_requests_client ON ciba_requests(tenant_id, client_id, pending_until);
    ALTER TABLE logout_outbox ADD COLUMN kind TEXT NOT NULL DEFAULT 'logout';
    ALTER TABLE logout_outbox ADD COLUMN payload BLOB;
    "#,
), (
    21,
    // Issue 31: the tenants a deployment serves besides the default (id 0, from the
    // settings, never a row). A deleted tenant's row stays, in state `deleted`, so that its
    // id and slug are never given again (`tenant::rows`). Hosts are rows of their own so that
    // the database refuses one host for two tenants.
    r#"
    CREATE TABLE tenants (
        tenant_id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
    );
    CREATE TABLE tenant_hosts (host TEXT PRIMARY KEY, tenant_id INTEGER NOT NULL);
    -- `signup_max_pending` is counted per tenant.
    CREATE INDEX pending_signups_tenant ON pending_signups(tenant_id, expires_at);
    "#,
), (
    22,
    // Admin API credentials scoped to a tenant (`registry::admin_credentials`): found by
    // (tenant, id), the secret kept as its SHA-256 only. `scopes` is space-separated, today
    // only `admin`; a revoked credential keeps its row (`revoked_at`) to be listed.
    r#"
    CREATE TABLE admin_credentials (
        tenant_id INTEGER NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, token_hash BLOB NOT NULL,
        scopes TEXT NOT NULL DEFAULT 'admin', created_at INTEGER NOT NULL, expires_at INTEGER, revoked_at INTEGER,
        PRIMARY KEY (tenant_id, id)
    );
    "#,
), (
    23,
    // Issue 31: organizations inside a tenant (B2B): their members (users of the tenant, with
    // organization roles) and their e-mail domains. A domain names one organization of a
    // tenant; a user may belong to many.
    r#"
    CREATE TABLE organizations (
        tenant_id INTEGER NOT NULL, id TEXT NOT NULL, slug TEXT NOT NULL, data TEXT NOT NULL,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, slug)
    );
    CREATE TABLE organization_domains (
        tenant_id INTEGER NOT NULL, domain TEXT NOT NULL, org_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, domain)
    );
    CREATE INDEX organization_domains_org ON organization_domains(tenant_id, org_id);
    CREATE TABLE organization_members (
        tenant_id INTEGER NOT NULL, org_id TEXT NOT NULL, user_id TEXT NOT NULL,
        roles TEXT NOT NULL DEFAULT '', joined_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, org_id, user_id)
    );
    CREATE INDEX organization_members_user ON organization_members(tenant_id, user_id);
    "#,
), (
    24,
    // Issue 31: invitations to an organization by e-mail. The link's token is kept as its
    // SHA-256 only (found by it, within the tenant); an invitation answered or revoked keeps
    // its row (`accepted_at`, `revoked_at`) until it is pruned after its expiry.
    r#"
    CREATE TABLE organization_invitations (
        tenant_id INTEGER NOT NULL, id TEXT NOT NULL, org_id TEXT NOT NULL, email TEXT NOT NULL,
        roles TEXT NOT NULL DEFAULT '', token_hash BLOB NOT NULL, created_by TEXT,
        created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        accepted_at INTEGER, accepted_by TEXT, revoked_at INTEGER,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, token_hash)
    );
    CREATE INDEX organization_invitations_org ON organization_invitations(tenant_id, org_id, expires_at);
    "#,
), (
    25,
    // CIBA Core §7.1: the user's own code that a client registered for `user_code` must send
    // with each request for them. Argon2id, as a password (`ciba::user_code`).
    r#"
    CREATE TABLE ciba_user_codes (
        tenant_id INTEGER NOT NULL, user_id TEXT NOT NULL, code_hash TEXT NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, user_id)
    );
    "#,), (
    26,
    // Issue 32, the directory: groups (nestable: a member is a user or a group), the roles each
    // client defines, and their assignments to users or groups (`registry::directory`). A
    // group's name is unique in its tenant case-insensitively (`name_key`, its lower case);
    // `version` is its SCIM ETag; `external_id` is SCIM's.
    r#"
    CREATE TABLE user_groups (
        tenant_id INTEGER NOT NULL, id TEXT NOT NULL, display_name TEXT NOT NULL, name_key TEXT NOT NULL,
        external_id TEXT, created_at INTEGER NOT NULL, version INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE UNIQUE INDEX user_groups_name ON user_groups(tenant_id, name_key);
    CREATE TABLE group_members (
        tenant_id INTEGER NOT NULL, group_id TEXT NOT NULL, member_kind TEXT NOT NULL, member_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, group_id, member_kind, member_id)
    );
    CREATE INDEX group_members_member ON group_members(tenant_id, member_kind, member_id);
    CREATE TABLE app_roles (
        tenant_id INTEGER NOT NULL, client_id TEXT NOT NULL, role TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, client_id, role)
    );
    CREATE TABLE role_assignments (
        tenant_id INTEGER NOT NULL, client_id TEXT NOT NULL, role TEXT NOT NULL, principal_kind TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, client_id, role, principal_kind, principal_id)
    );
    CREATE INDEX role_assignments_principal ON role_assignments(tenant_id, principal_kind, principal_id);
    "#,
), (
    27,
    // Issue 32, SCIM Users: a user's SCIM `externalId`, the SCIM attributes that are no
    // OpenID claim (the enterprise extension, `title`, further e-mail addresses…) as one JSON
    // object, and where the user comes from (`local`, `scim`, `ldap:<directory>`), which an
    // empty password hash told until now (a directory user's; a SCIM user without a password
    // has one too). Users linked to a directory are marked as its.
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
    28,
    // Issue 32, LDAP group mapping: who made a membership. `local` (an operator, the CLI, a
    // SCIM client) or `ldap:<directory>`, whose mapping removes only its own when the user
    // leaves a directory group (`registry::directory::mapped`).
    r#"
    ALTER TABLE group_members ADD COLUMN source TEXT NOT NULL DEFAULT 'local';
    "#,
), (
    29,
    // Issue 32, outbound provisioning (`provisioning`): a client's SCIM service to keep in step
    // (its bearer credential sealed by the vault), and the id each user and group has there
    // (with a digest of what was last sent, so that a change that alters nothing sends
    // nothing). The outbox's rows of kinds `scim_user` and `scim_group` are looked up by
    // target and id, to coalesce.
    r#"
    CREATE TABLE scim_targets (
        tenant_id INTEGER NOT NULL, client_id TEXT NOT NULL, endpoint TEXT NOT NULL, token BLOB NOT NULL,
        users TEXT NOT NULL DEFAULT 'assigned', enabled INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        last_delivered_at INTEGER, last_error TEXT, last_error_at INTEGER,
        PRIMARY KEY (tenant_id, client_id)
    );
    CREATE TABLE scim_remote (
        tenant_id INTEGER NOT NULL, client_id TEXT NOT NULL, kind TEXT NOT NULL, local_id TEXT NOT NULL, remote_id TEXT NOT NULL,
        sent_hash BLOB,
        PRIMARY KEY (tenant_id, client_id, kind, local_id)
    );
    CREATE INDEX logout_outbox_scim ON logout_outbox(tenant_id, kind, client_id, sub);
    "#,
)];

pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    migrate_to(conn, i64::MAX)
}

/// Apply the migrations up to version `upto` (the tests build each earlier schema with it).
fn migrate_to(conn: &Connection, upto: i64) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
    )?;
    for (version, sql) in MIGRATIONS.iter().take_while(|(v, _)| *v <= upto) {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let applied: bool = conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE version = ?1)",
            [version],
            |r| r.get(0),
        )?;
        let result = if applied {
            Ok(())
        } else {
            conn.execute_batch(sql).and_then(|_| {
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    (version, crate::util::now() as i64),
                )
                .map(|_| ())
            })
        };
        match result {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    Ok(())
}

pub fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", [], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    #[test]
    fn migrating_twice_is_a_no_op() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        migrate(&conn).unwrap();
        assert_eq!(current_version(&conn).unwrap(), MIGRATIONS.last().unwrap().0);
    }

    /// The tables of the schema as it stands (not SQLite's own, not the migrations' record).
    fn tables(conn: &Connection) -> Vec<String> {
        let mut q = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name").unwrap();
        q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        let mut q = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
        q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    /// Tables whose keys need no `tenant_id` column: the sharded stores, keyed by a hash that
    /// already frames the tenant (`stores::shard::key`).
    const KEYED_BY_TENANT_HASH: &[&str] =
        &["auth_codes", "sessions", "challenges", "revoked_tokens", "refresh_families", "device_requests", "ciba_requests"];

    /// Issue 31: every other table has `tenant_id`, and it leads every primary key and unique
    /// index not made of a random id alone, so that two tenants can hold the same name (a
    /// client id, a username, a provider's subject, a passkey's credential id).
    #[test]
    fn the_tenant_leads_every_key_people_or_tokens_choose() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        // Keyed by a number or a random id of ours that names no tenant's data by itself.
        // The tenants table itself: a slug and a host name one tenant across the deployment.
        let random_keys = ["logout_outbox", "tenants", "tenant_hosts"];
        for table in tables(&conn) {
            if KEYED_BY_TENANT_HASH.contains(&table.as_str()) {
                continue;
            }
            assert!(columns(&conn, &table).contains(&"tenant_id".to_string()), "{table} has no tenant_id");
            if random_keys.contains(&table.as_str()) {
                continue;
            }
            let mut q = conn.prepare(&format!("SELECT name FROM pragma_index_list('{table}') WHERE \"unique\" = 1")).unwrap();
            let unique: Vec<String> = q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
            for index in unique {
                let first: String = conn
                    .query_row(&format!("SELECT name FROM pragma_index_info('{index}') WHERE seqno = 0"), [], |r| r.get(0))
                    .unwrap();
                assert_eq!(first, "tenant_id", "{table}: unique index {index} does not begin with tenant_id");
            }
        }
    }

    /// Deleting a tenant (`tenant::rows::purge_batch`) removes its rows from every table that
    /// holds them by `tenant_id`: a new table with the column is added to the list, or this
    /// test names it.
    #[test]
    fn a_deleted_tenants_rows_are_looked_for_in_every_table_that_has_them() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn).unwrap();
        let mut with_tenant: Vec<String> = tables(&conn)
            .into_iter()
            .filter(|t| !["tenants", "tenant_hosts"].contains(&t.as_str()) && columns(&conn, t).iter().any(|c| c == "tenant_id"))
            .collect();
        with_tenant.sort();
        let mut listed: Vec<String> = crate::tenant::rows::TENANT_TABLES.iter().map(|t| t.to_string()).collect();
        listed.sort();
        assert_eq!(listed, with_tenant);
    }

    /// A row for `table` with a value of its declared type in every column, unlike any other
    /// row's (`n`), so that primary keys and unique indexes take it.
    fn sample_row(conn: &Connection, table: &str, n: i64) -> Vec<(String, Value)> {
        let mut q = conn.prepare(&format!("SELECT name, type FROM pragma_table_info('{table}')")).unwrap();
        q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .map(|(name, ty)| {
                let v = match ty.to_ascii_uppercase().as_str() {
                    "INTEGER" => Value::Integer(n),
                    "BLOB" => Value::Blob(format!("{table}.{name}.{n}").into_bytes()),
                    "REAL" => Value::Real(n as f64),
                    _ => Value::Text(format!("{table}.{name}.{n}")),
                };
                (name, v)
            })
            .collect()
    }

    /// Upgrades keep data: at every version each table is given rows, and once every later
    /// migration has run, each row is still there with every value it was written with. What
    /// issue 31's migration (the tenant in every key, tables rebuilt) must pass, as every
    /// migration before it does. (A migration that means to change stored values names them
    /// here.)
    #[test]
    fn every_row_written_at_any_version_survives_every_later_migration() {
        let conn = Connection::open_in_memory().unwrap();
        let mut written: Vec<(i64, String, Vec<(String, Value)>)> = Vec::new();
        let mut n = 0;
        for (version, _) in MIGRATIONS {
            migrate_to(&conn, *version).unwrap();
            assert_eq!(current_version(&conn).unwrap(), *version);
            for table in tables(&conn) {
                for _ in 0..2 {
                    n += 1;
                    let row = sample_row(&conn, &table, n);
                    let names: Vec<&str> = row.iter().map(|(c, _)| c.as_str()).collect();
                    let marks: Vec<String> = (1..=row.len()).map(|i| format!("?{i}")).collect();
                    conn.execute(
                        &format!("INSERT INTO {table} ({}) VALUES ({})", names.join(", "), marks.join(", ")),
                        rusqlite::params_from_iter(row.iter().map(|(_, v)| v)),
                    )
                    .unwrap_or_else(|e| panic!("version {version}: {table}: {e}"));
                    written.push((*version, table.clone(), row));
                }
            }
        }
        migrate(&conn).unwrap();
        assert!(written.len() > 2 * MIGRATIONS.len(), "rows in every version's tables");
        for (version, table, row) in &written {
            assert!(tables(&conn).contains(table), "table {table} (written at version {version}) is gone");
            let mut cond: Vec<String> = row.iter().enumerate().map(|(i, (c, _))| format!("{c} IS ?{}", i + 1)).collect();
            // A row written before tenants is the default tenant's.
            if !row.iter().any(|(c, _)| c == "tenant_id") && columns(&conn, table).iter().any(|c| c == "tenant_id") {
                cond.push("tenant_id = 0".into());
            }
            let found: i64 = conn
                .query_row(&format!("SELECT COUNT(*) FROM {table} WHERE {}", cond.join(" AND ")), rusqlite::params_from_iter(row.iter().map(|(_, v)| v)), |r| r.get(0))
                .unwrap_or_else(|e| panic!("{table}: {e}"));
            assert_eq!(found, 1, "a row of {table} written at version {version} did not survive: {row:?}");
        }
    }
}
