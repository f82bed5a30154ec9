//! Where the settings come from: the optional TOML file (`--config` or `AUTHRIM_CONFIG`), then
//! the `AUTHRIM_*` environment variables on top, each named once in `ENV_VARS` with the
//! setting it sets (docs/configuration.md lists the same; a test checks the example file).

use super::{default_issuer, Config};
use std::path::PathBuf;

/// (environment variable, config key) for every knob.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("AUTHRIM_ISSUER", "issuer"),
    ("AUTHRIM_LISTEN", "listen"),
    ("AUTHRIM_DATA_DIR", "data_dir"),
    ("AUTHRIM_TLS_CERT", "tls_cert"),
    ("AUTHRIM_TLS_KEY", "tls_key"),
    ("AUTHRIM_MTLS", "mtls"),
    ("AUTHRIM_MTLS_TRUST_ANCHORS", "mtls_trust_anchors"),
    ("AUTHRIM_MTLS_CLIENT_CERT_HEADER", "mtls_client_cert_header"),
    ("AUTHRIM_MTLS_TRUSTED_PROXIES", "mtls_trusted_proxies"),
    ("AUTHRIM_ADMIN_TOKEN", "admin_token"),
    ("AUTHRIM_METRICS_TOKEN", "metrics_token"),
    ("AUTHRIM_DEMO", "demo"),
    ("AUTHRIM_LOG_FORMAT", "log_format"),
    ("AUTHRIM_CODE_EXPIRY", "code_expiry"),
    ("AUTHRIM_ACCESS_TOKEN_TTL", "access_token_ttl"),
    ("AUTHRIM_ID_TOKEN_TTL", "id_token_ttl"),
    ("AUTHRIM_SESSION_TTL", "session_ttl"),
    ("AUTHRIM_CHALLENGE_TTL", "challenge_ttl"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_TIMEOUT", "backchannel_logout_timeout"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_MAX_ATTEMPTS", "backchannel_logout_max_attempts"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_RETRY_INITIAL", "backchannel_logout_retry_initial"),
    ("AUTHRIM_BACKCHANNEL_LOGOUT_CONCURRENCY", "backchannel_logout_concurrency"),
    ("AUTHRIM_CLIENT_ASSERTION_MAX_LIFETIME", "client_assertion_max_lifetime"),
    ("AUTHRIM_CLIENT_JWKS_CACHE_TTL", "client_jwks_cache_ttl"),
    ("AUTHRIM_CLIENT_JWKS_MIN_REFETCH", "client_jwks_min_refetch"),
    ("AUTHRIM_CLIENT_JWKS_CACHE_MAX_ENTRIES", "client_jwks_cache_max_entries"),
    ("AUTHRIM_FETCH_TIMEOUT", "fetch_timeout"),
    ("AUTHRIM_FETCH_MAX_BYTES", "fetch_max_bytes"),
    ("AUTHRIM_PUSHED_REQUEST_TTL", "pushed_request_ttl"),
    ("AUTHRIM_REQUIRE_PUSHED_AUTHORIZATION_REQUESTS", "require_pushed_authorization_requests"),
    ("AUTHRIM_JARM_RESPONSE_TTL", "jarm_response_ttl"),
    ("AUTHRIM_SECURITY_PROFILE", "security_profile"),
    ("AUTHRIM_MAX_PUSHED_REQUESTS", "max_pushed_requests"),
    ("AUTHRIM_SIGNING_ALGORITHMS", "signing_algorithms"),
    ("AUTHRIM_TOKEN_SIGNING_ALG", "token_signing_alg"),
    ("AUTHRIM_DPOP_PROOF_MAX_AGE", "dpop_proof_max_age"),
    ("AUTHRIM_DPOP_NONCE", "dpop_nonce"),
    ("AUTHRIM_DPOP_NONCE_LIFETIME", "dpop_nonce_lifetime"),
    ("AUTHRIM_DPOP_REPLAY_MAX_ENTRIES", "dpop_replay_max_entries"),
    ("AUTHRIM_DPOP_SIGNING_ALG_VALUES_SUPPORTED", "dpop_signing_alg_values_supported"),
    ("AUTHRIM_OPEN_REGISTRATION", "open_registration"),
    ("AUTHRIM_REGISTRATION_MAX_CLIENTS", "registration_max_clients"),
    ("AUTHRIM_REGISTRATION_MAX_PER_ADDRESS", "registration_max_per_address"),
    ("AUTHRIM_REGISTRATION_UNUSED_CLIENT_TTL", "registration_unused_client_ttl"),
    ("AUTHRIM_REGISTRATION_GRANT_TYPES", "registration_grant_types"),
    ("AUTHRIM_REGISTRATION_SCOPES", "registration_scopes"),
    ("AUTHRIM_REGISTRATION_AUTH_METHODS", "registration_auth_methods"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS", "client_id_metadata_documents"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_HOSTS", "client_id_metadata_document_hosts"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_TTL", "client_id_metadata_document_ttl"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_MAX_TTL", "client_id_metadata_document_max_ttl"),
    ("AUTHRIM_CLIENT_ID_METADATA_DOCUMENT_MAX_ENTRIES", "client_id_metadata_document_max_entries"),
    ("AUTHRIM_MAX_CONCURRENT_FETCHES", "max_concurrent_fetches"),
    ("AUTHRIM_REQUEST_URI_CACHE_TTL", "request_uri_cache_ttl"),
    ("AUTHRIM_REQUEST_URI_CACHE_MAX_ENTRIES", "request_uri_cache_max_entries"),
    ("AUTHRIM_REQUEST_URI_MAX_FETCHES_PER_CLIENT", "request_uri_max_fetches_per_client"),
    ("AUTHRIM_FETCH_ALLOW_PRIVATE_ADDRESSES", "fetch_allow_private_addresses"),
    ("AUTHRIM_ID_JAG_LIFETIME", "id_jag_lifetime"),
    ("AUTHRIM_MAX_DELEGATION_DEPTH", "max_delegation_depth"),
    ("AUTHRIM_TENANT_MAX_IDENTITY_PROVIDERS", "tenant_max_identity_providers"),
    ("AUTHRIM_TENANT_MAX_LDAP_DIRECTORIES", "tenant_max_ldap_directories"),
    ("AUTHRIM_TENANT_MAX_RESOURCE_SERVERS", "tenant_max_resource_servers"),
    ("AUTHRIM_TENANT_THEME_MAX_BYTES", "tenant_theme_max_bytes"),
    ("AUTHRIM_OAUTH_REFRESH_TOKENS", "oauth_refresh_tokens"),
    ("AUTHRIM_CODE_SHARDS", "code_shards"),
    ("AUTHRIM_SESSION_SHARDS", "session_shards"),
    ("AUTHRIM_CHALLENGE_SHARDS", "challenge_shards"),
    ("AUTHRIM_REVOCATION_SHARDS", "revocation_shards"),
    ("AUTHRIM_REFRESH_SHARDS", "refresh_shards"),
    ("AUTHRIM_REFRESH_TOKEN_ROTATION", "refresh_token_rotation"),
    ("AUTHRIM_REFRESH_REUSE_GRACE", "refresh_reuse_grace"),
    ("AUTHRIM_REFRESH_TOKEN_TTL", "refresh_token_ttl"),
    ("AUTHRIM_REFRESH_TOKEN_IDLE_TTL", "refresh_token_idle_ttl"),
    ("AUTHRIM_KEY_ENCRYPTION_KEY", "key_encryption_key"),
    ("AUTHRIM_KEY_CACHE_TTL", "key_cache_ttl"),
    ("AUTHRIM_KEY_PUBLISH_DELAY", "key_publish_delay"),
    ("AUTHRIM_DATABASE_URL", "database_url"),
    ("AUTHRIM_DATABASE_POOL_SIZE", "database_pool_size"),
    ("AUTHRIM_DATABASE_TIMEOUT_MS", "database_timeout_ms"),
    ("AUTHRIM_DATABASE_STARTUP_WAIT", "database_startup_wait"),
    ("AUTHRIM_REVOCATION_MAX_STALENESS_MS", "revocation_max_staleness_ms"),
    ("AUTHRIM_SQLITE_SYNCHRONOUS", "sqlite_synchronous"),
    ("AUTHRIM_MAX_BODY_BYTES", "max_body_bytes"),
    ("AUTHRIM_HEADER_READ_TIMEOUT", "header_read_timeout"),
    ("AUTHRIM_BODY_READ_TIMEOUT", "body_read_timeout"),
    ("AUTHRIM_IDLE_TIMEOUT", "idle_timeout"),
    ("AUTHRIM_TLS_HANDSHAKE_TIMEOUT", "tls_handshake_timeout"),
    ("AUTHRIM_MAX_CONNECTIONS", "max_connections"),
    ("AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS", "max_connections_per_address"),
    ("AUTHRIM_TRUST_PROXY", "trust_proxy"),
    ("AUTHRIM_LOGIN_MAX_FAILURES_PER_ACCOUNT", "login_max_failures_per_account"),
    ("AUTHRIM_LOGIN_MAX_FAILURES_PER_ADDRESS", "login_max_failures_per_address"),
    ("AUTHRIM_LOGIN_WINDOW", "login_window"),
    ("AUTHRIM_SECOND_FACTOR_MAX_FAILURES", "second_factor_max_failures"),
    ("AUTHRIM_LOGIN_THROTTLE_MAX_KEYS", "login_throttle_max_keys"),
    ("AUTHRIM_MFA_POLICY", "mfa_policy"),
    ("AUTHRIM_PASSKEYS", "passkeys"),
    ("AUTHRIM_WEBAUTHN_RP_ID", "webauthn_rp_id"),
    ("AUTHRIM_WEBAUTHN_RP_NAME", "webauthn_rp_name"),
    ("AUTHRIM_WEBAUTHN_ORIGINS", "webauthn_origins"),
    ("AUTHRIM_ACCOUNT_REAUTH_MAX_AGE", "account_reauth_max_age"),
    ("AUTHRIM_CONSOLE", "console"),
    ("AUTHRIM_CONSOLE_MFA", "console_mfa"),
    ("AUTHRIM_CONSOLE_MAX_AGE", "console_max_age"),
    ("AUTHRIM_BOOTSTRAP_ADMIN", "bootstrap_admin"),
    ("AUTHRIM_BOOTSTRAP_ADMIN_PASSWORD", "bootstrap_admin_password"),
    ("AUTHRIM_SMTP_URL", "smtp_url"),
    ("AUTHRIM_MAIL_FROM", "mail_from"),
    ("AUTHRIM_MAIL_MAX_ATTEMPTS", "mail_max_attempts"),
    ("AUTHRIM_MAIL_RETENTION", "mail_retention"),
    ("AUTHRIM_MAIL_RETRY_DELAY", "mail_retry_delay"),
    ("AUTHRIM_MAIL_RETRY_MAX_DELAY", "mail_retry_max_delay"),
    ("AUTHRIM_PASSWORD_RESET_TTL", "password_reset_ttl"),
    ("AUTHRIM_PASSWORD_RESET_MAX_REQUESTS", "password_reset_max_requests"),
    ("AUTHRIM_SIGNUP", "signup"),
    ("AUTHRIM_SIGNUP_REQUIRED", "signup_required"),
    ("AUTHRIM_SIGNUP_VERIFY_EMAIL", "signup_verify_email"),
    ("AUTHRIM_SIGNUP_MAX_PER_ADDRESS", "signup_max_per_address"),
    ("AUTHRIM_ORGANIZATION_INVITATION_TTL", "organization_invitation_ttl"),
    ("AUTHRIM_ORGANIZATION_MAX_PENDING_INVITATIONS", "organization_max_pending_invitations"),
    ("AUTHRIM_DEVICE_CODE_TTL", "device_code_ttl"),
    ("AUTHRIM_DEVICE_POLL_INTERVAL", "device_poll_interval"),
    ("AUTHRIM_DEVICE_MAX_PENDING_PER_CLIENT", "device_max_pending_per_client"),
    ("AUTHRIM_DEVICE_MAX_PENDING", "device_max_pending"),
    ("AUTHRIM_DEVICE_USER_CODE_MAX_FAILURES", "device_user_code_max_failures"),
    ("AUTHRIM_CIBA_REQUEST_TTL", "ciba_request_ttl"),
    ("AUTHRIM_CIBA_MAX_REQUEST_TTL", "ciba_max_request_ttl"),
    ("AUTHRIM_CIBA_POLL_INTERVAL", "ciba_poll_interval"),
    ("AUTHRIM_CIBA_MAX_PENDING_PER_CLIENT", "ciba_max_pending_per_client"),
    ("AUTHRIM_CIBA_MAX_PENDING", "ciba_max_pending"),
    ("AUTHRIM_CIBA_BINDING_MESSAGE_MAX_LENGTH", "ciba_binding_message_max_length"),
    ("AUTHRIM_CIBA_NOTIFY_MAIL", "ciba_notify_mail"),
    ("AUTHRIM_DIRECTORY_MAX_GROUPS", "directory_max_groups"),
    ("AUTHRIM_DIRECTORY_MAX_MEMBERS", "directory_max_members"),
    ("AUTHRIM_DIRECTORY_MAX_DEPTH", "directory_max_depth"),
    ("AUTHRIM_DIRECTORY_MAX_GROUPS_PER_USER", "directory_max_groups_per_user"),
    ("AUTHRIM_DIRECTORY_MAX_ROLES_PER_CLIENT", "directory_max_roles_per_client"),
    ("AUTHRIM_TOKEN_MAX_GROUPS", "token_max_groups"),
    ("AUTHRIM_CIBA_NOTIFY_HOOK_URL", "ciba_notify_hook_url"),
    ("AUTHRIM_SIGNUP_MAX_PENDING", "signup_max_pending"),
    ("AUTHRIM_MAIL_MAX_PER_RECIPIENT", "mail_max_per_recipient"),
    ("AUTHRIM_MAIL_RECIPIENT_WINDOW", "mail_recipient_window"),
    ("AUTHRIM_EMAIL_VERIFICATION_TTL", "email_verification_ttl"),
    ("AUTHRIM_PASSWORD_MIN_LENGTH", "password_min_length"),
    ("AUTHRIM_BREACHED_PASSWORDS_FILE", "breached_passwords_file"),
    ("AUTHRIM_THEME_DIR", "theme_dir"),
    ("AUTHRIM_THEME_CSS", "theme_css"),
    ("AUTHRIM_DEFAULT_LOCALE", "default_locale"),
    ("AUTHRIM_PRODUCT_NAME", "product_name"),
    ("AUTHRIM_PASSWORD_HASH_CONCURRENCY", "password_hash_concurrency"),
    ("AUTHRIM_PASSWORD_HASH_MAX_WAITING", "password_hash_max_waiting"),
    ("AUTHRIM_MAX_AUTHORIZATION_REQUEST_BYTES", "max_authorization_request_bytes"),
    ("AUTHRIM_SAML_MAX_MESSAGE_BYTES", "saml_max_message_bytes"),
    ("AUTHRIM_SAML_CLOCK_SKEW", "saml_clock_skew"),
    ("AUTHRIM_SAML_ASSERTION_LIFETIME", "saml_assertion_lifetime"),
    ("AUTHRIM_ENABLE_TEST_ENDPOINTS", "enable_test_endpoints"),
    ("AUTHRIM_FORCE_TEST_ENDPOINTS", "force_test_endpoints"),
];

const NUMERIC_KEYS: &[&str] = &[
    "code_expiry", "access_token_ttl", "id_token_ttl", "session_ttl", "challenge_ttl",
    "backchannel_logout_timeout", "backchannel_logout_max_attempts", "backchannel_logout_retry_initial",
    "backchannel_logout_concurrency", "client_assertion_max_lifetime", "client_jwks_cache_ttl", "client_jwks_min_refetch", "client_jwks_cache_max_entries",
    "fetch_timeout", "fetch_max_bytes", "pushed_request_ttl", "jarm_response_ttl", "max_pushed_requests", "registration_max_clients",
    "registration_max_per_address", "registration_unused_client_ttl",
    "dpop_proof_max_age", "dpop_nonce_lifetime", "dpop_replay_max_entries",
    "client_id_metadata_document_ttl", "client_id_metadata_document_max_ttl", "client_id_metadata_document_max_entries",
    "request_uri_cache_ttl", "request_uri_cache_max_entries", "request_uri_max_fetches_per_client", "max_concurrent_fetches", "id_jag_lifetime", "max_delegation_depth",
    "tenant_max_identity_providers", "tenant_max_ldap_directories", "tenant_max_resource_servers", "tenant_theme_max_bytes",
    "code_shards", "session_shards", "challenge_shards", "revocation_shards", "refresh_shards", "key_cache_ttl", "key_publish_delay",
    "refresh_reuse_grace", "refresh_token_ttl", "refresh_token_idle_ttl",
    "max_body_bytes", "login_max_failures_per_account", "login_max_failures_per_address",
    "login_window", "second_factor_max_failures", "login_throttle_max_keys", "password_hash_concurrency", "password_hash_max_waiting",
    "max_authorization_request_bytes", "saml_max_message_bytes", "saml_assertion_lifetime", "saml_clock_skew", "database_pool_size", "database_timeout_ms", "database_startup_wait", "revocation_max_staleness_ms",
    "header_read_timeout", "body_read_timeout", "idle_timeout", "tls_handshake_timeout", "max_connections",
    "max_connections_per_address", "account_reauth_max_age", "console_max_age", "mail_max_attempts", "mail_retention", "mail_retry_delay", "mail_retry_max_delay", "password_reset_ttl",
    "password_reset_max_requests", "signup_max_per_address", "signup_max_pending", "email_verification_ttl", "password_min_length",
    "mail_max_per_recipient", "mail_recipient_window",
    "organization_invitation_ttl", "organization_max_pending_invitations",
    "device_code_ttl", "device_poll_interval", "device_max_pending_per_client", "device_max_pending", "device_user_code_max_failures",
    "ciba_request_ttl", "ciba_max_request_ttl", "ciba_poll_interval", "ciba_max_pending_per_client", "ciba_max_pending", "ciba_binding_message_max_length",
    "directory_max_groups", "directory_max_members", "directory_max_depth", "directory_max_groups_per_user", "directory_max_roles_per_client", "token_max_groups",
];
const BOOL_KEYS: &[&str] =
    &["demo", "trust_proxy", "mtls", "refresh_token_rotation", "enable_test_endpoints", "force_test_endpoints", "require_pushed_authorization_requests", "open_registration", "dpop_nonce", "fetch_allow_private_addresses", "passkeys", "console", "signup", "signup_verify_email", "oauth_refresh_tokens", "ciba_notify_mail"];

impl Config {
    /// Load from an optional file and the process environment.
    pub fn load(file: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Self::from_sources(file, &env)
    }

    pub fn from_sources(file: Option<&std::path::Path>, env: &[(String, String)]) -> anyhow::Result<Self> {
        let file = file
            .map(PathBuf::from)
            .or_else(|| env.iter().find(|(k, _)| k == "AUTHRIM_CONFIG").map(|(_, v)| PathBuf::from(v)));
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| anyhow::anyhow!("cannot read config file {}: {e}", path.display()))?;
                text.parse::<toml::Table>()
                    .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?
            }
            None => toml::Table::new(),
        };
        for (var, key) in ENV_VARS {
            if let Some((_, raw)) = env.iter().find(|(k, _)| k == var) {
                table.insert((*key).into(), env_value(var, key, raw)?);
            }
        }
        let issuer_set = table.contains_key("issuer");
        let mut config: Config = toml::Value::Table(table)
            .try_into()
            .map_err(|e| anyhow::anyhow!("configuration: {e}"))?;
        if !issuer_set {
            // Whoever only moves the port (`AUTHRIM_LISTEN=127.0.0.1:9000`) gets an issuer
            // that names it, rather than one pointing at a port nothing listens on.
            config.issuer = default_issuer(&config.listen);
        }
        config.validate()?;
        Ok(config)
    }
}

fn env_value(var: &str, key: &str, raw: &str) -> anyhow::Result<toml::Value> {
    if NUMERIC_KEYS.contains(&key) {
        let n: i64 = raw.trim().parse().map_err(|_| anyhow::anyhow!("{var} must be a number, got {raw:?}"))?;
        return Ok(toml::Value::Integer(n));
    }
    if BOOL_KEYS.contains(&key) {
        return match raw.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(toml::Value::Boolean(true)),
            "0" | "false" | "no" | "off" | "" => Ok(toml::Value::Boolean(false)),
            _ => anyhow::bail!("{var} must be true or false, got {raw:?}"),
        };
    }
    Ok(toml::Value::String(raw.to_string()))
}
