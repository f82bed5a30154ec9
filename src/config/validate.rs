//! The checks a configuration must pass before a server starts with it, and those a tenant's
//! settings must pass on top of the deployment's (`validate_overridable`).

use super::{Config, MAX_REFRESH_REUSE_GRACE};

impl Config {
    pub fn validate(&self) -> anyhow::Result<()> {
        let url = url::Url::parse(&self.issuer).map_err(|e| anyhow::anyhow!("issuer {:?}: {e}", self.issuer))?;
        let loopback = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
        if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
            anyhow::bail!("issuer must use https (http is allowed only for localhost): {}", self.issuer);
        }
        if url.query().is_some() || url.fragment().is_some() {
            anyhow::bail!("issuer must not have a query or fragment (OpenID Connect Discovery §3)");
        }
        for (name, n) in [
            ("code_shards", self.code_shards),
            ("session_shards", self.session_shards),
            ("challenge_shards", self.challenge_shards),
            ("revocation_shards", self.revocation_shards),
            ("refresh_shards", self.refresh_shards),
        ] {
            if !(1..=4096).contains(&n) {
                anyhow::bail!("{name} must be between 1 and 4096, got {n}");
            }
        }
        if self.code_expiry == 0 || self.access_token_ttl == 0 || self.id_token_ttl == 0 {
            anyhow::bail!("token and code lifetimes must be positive");
        }
        if self.enable_test_endpoints {
            if self.admin_token.as_deref().is_none_or(str::is_empty) {
                anyhow::bail!("AUTHRIM_ENABLE_TEST_ENDPOINTS needs AUTHRIM_ADMIN_TOKEN");
            }
            if !loopback && !self.force_test_endpoints {
                anyhow::bail!(
                    "refusing to enable the test-only endpoints with the non-localhost issuer {}: they mint tokens \
                     without a login. Set AUTHRIM_FORCE_TEST_ENDPOINTS=true only for a dedicated load-test deployment",
                    self.issuer
                );
            }
        }
        if self.refresh_reuse_grace > MAX_REFRESH_REUSE_GRACE {
            anyhow::bail!("refresh_reuse_grace is at most {MAX_REFRESH_REUSE_GRACE} seconds, got {}", self.refresh_reuse_grace);
        }
        if !matches!(self.theme_css.as_str(), "add" | "replace") {
            anyhow::bail!("theme_css must be add or replace, got {:?}", self.theme_css);
        }
        if self.mail_max_per_recipient == 0 || self.mail_recipient_window == 0 {
            anyhow::bail!("mail_max_per_recipient and mail_recipient_window must be positive");
        }
        if self.second_factor_max_failures == 0 {
            anyhow::bail!("second_factor_max_failures must be positive");
        }
        if !(4_096..=1 << 20).contains(&self.saml_max_message_bytes) || !(30..=3_600).contains(&self.saml_assertion_lifetime) {
            anyhow::bail!("saml_max_message_bytes must be 4096 to 1048576, and saml_assertion_lifetime 30 to 3600 seconds");
        }
        if self.saml_clock_skew > 600 {
            anyhow::bail!("saml_clock_skew must be at most 600 seconds");
        }
        if self.login_throttle_max_keys < 1_000 || self.max_authorization_request_bytes < 1_024 {
            anyhow::bail!("login_throttle_max_keys must be at least 1000 and max_authorization_request_bytes at least 1024");
        }
        if self.backchannel_logout_timeout == 0
            || self.backchannel_logout_max_attempts == 0
            || self.backchannel_logout_retry_initial == 0
            || self.backchannel_logout_concurrency == 0
        {
            anyhow::bail!("the backchannel_logout_* settings must be positive");
        }
        for g in crate::util::split_list(&self.registration_grant_types) {
            if !crate::registry::clients::supported_grant_types().contains(&g) {
                anyhow::bail!("registration_grant_types: {g:?} is not a grant type Authrim supports");
            }
        }
        for m in crate::util::split_list(&self.registration_auth_methods) {
            if !crate::registry::clients::AUTH_METHODS.contains(&m) {
                anyhow::bail!("registration_auth_methods: {m:?} is not a client authentication method Authrim supports");
            }
        }
        let algs = self.signing_algs()?;
        if !algs.contains(&"RS256") {
            anyhow::bail!("signing_algorithms must include RS256 (OpenID Connect Discovery §3 requires it)");
        }
        if !algs.contains(&self.token_signing_alg.as_str()) {
            anyhow::bail!("token_signing_alg {} is not among signing_algorithms ({})", self.token_signing_alg, self.signing_algorithms);
        }
        let profile = crate::profile::Profile::parse(&self.security_profile)
            .ok_or_else(|| anyhow::anyhow!("security_profile must be standard, fapi2 or fapi-ciba, got {:?}", self.security_profile))?;
        if !profile.allows_alg(&self.token_signing_alg) {
            anyhow::bail!(
                "security_profile = {} signs with {} only ({}): set token_signing_alg to one of them (and add it to signing_algorithms)",
                self.security_profile,
                profile.algs().join(", "),
                profile.alg_rule("§")
            );
        }
        // FAPI 1.0 Part 2 §5.2.2 items 5-6: every token bound to a client certificate, which
        // only reaches us with mutual TLS on (Authrim's own TLS, or a proxy's header).
        if profile.is_fapi_ciba() && !self.mtls {
            anyhow::bail!("security_profile = fapi-ciba issues only certificate-bound access tokens (RFC 8705): set mtls = true");
        }
        // JARM §2.1 recommends ten minutes at most; under ten seconds a slow browser or a
        // client's clock a little behind would see it expired.
        if !(10..=600).contains(&self.jarm_response_ttl) {
            anyhow::bail!("jarm_response_ttl must be between 10 and 600 seconds, got {}", self.jarm_response_ttl);
        }
        if profile.is_fapi() && self.pushed_request_ttl >= 600 {
            anyhow::bail!("security_profile = {} needs pushed_request_ttl under 600 seconds (FAPI 2.0 §5.3.2.2), got {}", self.security_profile, self.pushed_request_ttl);
        }
        self.dpop_algs()?;
        if self.dpop_proof_max_age == 0 || self.dpop_nonce_lifetime == 0 || self.dpop_replay_max_entries < 1_000 {
            anyhow::bail!("dpop_proof_max_age and dpop_nonce_lifetime must be positive, dpop_replay_max_entries at least 1000");
        }
        if self.client_assertion_max_lifetime == 0 || self.fetch_timeout == 0 || self.fetch_max_bytes < 1024 || self.pushed_request_ttl == 0 {
            anyhow::bail!("client_assertion_max_lifetime, fetch_timeout and pushed_request_ttl must be positive, fetch_max_bytes at least 1024");
        }
        if self.device_code_ttl == 0 || self.device_poll_interval == 0 || self.device_user_code_max_failures == 0 {
            anyhow::bail!("device_code_ttl, device_poll_interval and device_user_code_max_failures must be positive");
        }
        if self.ciba_request_ttl == 0 || self.ciba_max_request_ttl < self.ciba_request_ttl || self.ciba_poll_interval == 0 || self.ciba_binding_message_max_length == 0 {
            anyhow::bail!("ciba_request_ttl, ciba_poll_interval and ciba_binding_message_max_length must be positive, ciba_max_request_ttl at least ciba_request_ttl");
        }
        if self.directory_max_groups == 0 || self.directory_max_members == 0 || self.directory_max_depth == 0 || self.directory_max_groups_per_user == 0 || self.directory_max_roles_per_client == 0 {
            anyhow::bail!("directory_max_groups, directory_max_members, directory_max_depth, directory_max_groups_per_user and directory_max_roles_per_client must be positive");
        }
        if let Some(hook) = self.ciba_notify_hook_url.as_deref().filter(|u| !u.is_empty()) {
            if !url::Url::parse(hook).is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host_str().is_some()) {
                anyhow::bail!("ciba_notify_hook_url {hook:?} must be an http(s) URL");
            }
        }
        if self.registration_max_per_address == 0 {
            anyhow::bail!("registration_max_per_address must be at least 1 (registration is closed by open_registration = false)");
        }
        self.validate_agents()?;
        self.validate_overridable()?;
        if !matches!(self.console_mfa.as_str(), "required" | "if_enrolled") {
            anyhow::bail!("console_mfa must be required or if_enrolled");
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            anyhow::bail!("tls_cert and tls_key must be given together");
        }
        if let Some(bad) = crate::util::split_list(&self.mtls_trusted_proxies).find(|p| crate::http::client_cert::ProxyNet::parse(p).is_none()) {
            anyhow::bail!("mtls_trusted_proxies: {bad:?} is not an IP address or CIDR block");
        }
        if self.mtls_client_cert_header.as_deref().is_some_and(|h| axum::http::HeaderName::from_bytes(h.as_bytes()).is_err()) {
            anyhow::bail!("mtls_client_cert_header is not a header name");
        }
        if let Some(url) = &self.database_url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                anyhow::bail!("AUTHRIM_DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite database)");
            }
            if self.key_encryption_key.is_none() {
                anyhow::bail!(
                    "with PostgreSQL every node must hold the same key-encryption key: set AUTHRIM_KEY_ENCRYPTION_KEY \
                     (32 random bytes, base64url); it must not live in the database it protects"
                );
            }
            if self.database_pool_size == 0 || self.database_timeout_ms == 0 || self.revocation_max_staleness_ms < 100 {
                anyhow::bail!("database_pool_size and database_timeout_ms must be positive, revocation_max_staleness_ms at least 100");
            }
        }
        if self.key_publish_delay <= self.key_cache_ttl {
            anyhow::bail!(
                "key_publish_delay ({}) must exceed key_cache_ttl ({}): a new key must be published by every node before it signs",
                self.key_publish_delay, self.key_cache_ttl
            );
        }
        if !matches!(self.sqlite_synchronous.to_ascii_uppercase().as_str(), "FULL" | "NORMAL" | "EXTRA") {
            anyhow::bail!("sqlite_synchronous must be FULL, NORMAL or EXTRA");
        }
        self.validate_connection_limits()
    }

    /// The checks of the settings a tenant may set (`tenant::overrides`), run on the
    /// deployment's settings and on each tenant's (the deployment's with the tenant's on top).
    pub fn validate_overridable(&self) -> anyhow::Result<()> {
        self.validate_resource_servers()?;
        for (i, p) in self.identity_providers.iter().enumerate() {
            p.validate(i)?;
            if self.identity_providers[..i].iter().any(|q| q.id == p.id) {
                anyhow::bail!("identity_providers: the id {} is used twice", p.id);
            }
        }
        for (i, d) in self.ldap_directories.iter().enumerate() {
            d.validate(i)?;
            if self.ldap_directories[..i].iter().any(|q| q.id == d.id) {
                anyhow::bail!("ldap_directories: the id {} is used twice", d.id);
            }
        }
        if !matches!(self.mfa_policy.as_str(), "optional" | "required" | "passkey") {
            anyhow::bail!("mfa_policy must be optional, required or passkey");
        }
        if let Some(f) = self.signup_required.split_whitespace().find(|f| !matches!(*f, "email" | "name" | "given_name" | "family_name")) {
            anyhow::bail!("signup_required: {f:?} is not one of email, name, given_name, family_name");
        }
        if self.signup && self.signup_verify_email && self.smtp_url.as_deref().is_none_or(str::is_empty) {
            anyhow::bail!("signup_verify_email needs smtp_url (or signup_verify_email = false)");
        }
        if self.password_min_length < 8 || self.password_min_length > 1024 {
            anyhow::bail!("password_min_length must be 8-1024");
        }
        if self.mfa_policy == "passkey" && !self.passkeys {
            anyhow::bail!("mfa_policy = passkey needs passkeys = true");
        }
        Ok(())
    }

    fn validate_connection_limits(&self) -> anyhow::Result<()> {
        for (name, secs) in [
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("tls_handshake_timeout", self.tls_handshake_timeout),
        ] {
            // Zero would close every connection at once; the upper bound keeps deadlines
            // (now + timeout) far from overflow and still allows "practically off".
            if !(1..=86_400).contains(&secs) {
                anyhow::bail!("{name} must be between 1 and 86400 seconds, got {secs}");
            }
        }
        if self.max_connections == Some(0) || self.max_connections_per_address == 0 {
            anyhow::bail!("max_connections and max_connections_per_address must be positive");
        }
        // A per-address cap above the global one is allowed: it simply never binds.
        Ok(())
    }
}
