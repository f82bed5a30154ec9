//! OAuth clients, described by RFC 7591 metadata. Secrets are 256-bit random values generated
//! here, shown once, and stored as SHA-256 (a slow hash would put milliseconds on every token
//! request without adding strength to a value that is not guessable).

use crate::client_auth::keys::{self as client_keys, ClientKey};
use crate::db::{Row, Sql, StoreResult};
use crate::keys::Vault;
use crate::util::{ct_eq, now, random_token, secret_hash, split_list};

pub const AUTH_BASIC: &str = "client_secret_basic";
pub const AUTH_POST: &str = "client_secret_post";
pub const AUTH_NONE: &str = "none";
/// RFC 7523 §2.2 / OIDC Core §9: a JWT signed with the client's private key.
pub const AUTH_PRIVATE_KEY_JWT: &str = "private_key_jwt";
/// OIDC Core §9: a JWT MACed with the client's secret.
pub const AUTH_SECRET_JWT: &str = "client_secret_jwt";
/// RFC 8705 §2.1: a TLS client certificate from a trusted CA, with a registered subject.
pub const AUTH_TLS: &str = "tls_client_auth";
/// RFC 8705 §2.2: a TLS client certificate whose key is one of the client's registered keys.
pub const AUTH_SELF_SIGNED_TLS: &str = "self_signed_tls_client_auth";
pub const AUTH_METHODS: &[&str] = &[AUTH_BASIC, AUTH_POST, AUTH_SECRET_JWT, AUTH_PRIVATE_KEY_JWT, AUTH_TLS, AUTH_SELF_SIGNED_TLS, AUTH_NONE];

/// Whether clients of `method` are issued a secret.
fn has_secret(method: &str) -> bool {
    matches!(method, AUTH_BASIC | AUTH_POST | AUTH_SECRET_JWT)
}

/// Scopes that speak for a user; meaningless without one (client credentials).
pub const USER_SCOPES: &[&str] = &["openid", "profile", "email", "address", "phone", "offline_access"];

/// Grants that need a client able to keep a secret.
/// (CIBA Core §4: its clients are confidential.)
pub const CONFIDENTIAL_ONLY_GRANTS: &[&str] = &[
    "client_credentials",
    "urn:ietf:params:oauth:grant-type:token-exchange",
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
    crate::grants::ciba::GRANT_TYPE,
];

pub const SUPPORTED_SCOPES: &[&str] = &["openid", "profile", "email", "address", "phone", "offline_access"];

#[derive(Debug, Clone)]
pub struct Client {
    /// The tenant it belongs to (set when loaded or saved through a tenant's registry).
    pub tenant: crate::tenant::TenantId,
    pub meta: ClientMetadata,
    secret_hash: Option<[u8; 32]>,
    /// `client_secret_jwt` only: the secret itself, sealed by the vault (`open_secret`).
    secret_sealed: Option<Vec<u8>>,
    /// Worked out once from the metadata: CORS checks run on every cross-origin request.
    cors_origins: Vec<String>,
    /// The inline `jwks`, parsed once (validated at registration).
    keys: std::sync::Arc<[ClientKey]>,
    /// Its encryption keys, parsed only for a client that registered encryption.
    enc_keys: std::sync::Arc<[crate::keys::jwe::RecipientKey]>,
    /// Registered through `/register`: the SHA-256 of its registration access token (RFC 7592).
    registration_token_hash: Option<[u8; 32]>,
    /// Loaded with `used_at` set: it has been used at `/authorize` or `/token`, so it does
    /// not expire (`registration_unused_client_ttl`).
    pub(crate) used: bool,
}

/// A new secret for a client of `method`: the secret, its hash, and (for `client_secret_jwt`)
/// its sealed copy.
type NewSecret = (Option<String>, Option<[u8; 32]>, Option<Vec<u8>>);

fn new_secret(method: &str, client_id: &str, vault: &Vault) -> NewSecret {
    if !has_secret(method) {
        return (None, None, None);
    }
    let s = random_token();
    let sealed = (method == AUTH_SECRET_JWT).then(|| vault.seal(&sealed_secret_label(client_id), s.as_bytes()));
    let hash = secret_hash(&s);
    (Some(s), Some(hash), sealed)
}

fn sealed_secret_label(client_id: &str) -> String {
    format!("client-secret:{client_id}")
}

impl Client {
    fn build(meta: ClientMetadata, secret_hash: Option<[u8; 32]>, secret_sealed: Option<Vec<u8>>) -> Self {
        let cors_origins = if meta.allowed_cors_origins.is_empty() {
            let mut derived: Vec<String> = meta.redirect_uris.iter().filter_map(|u| web_origin(u)).collect();
            derived.sort();
            derived.dedup();
            derived
        } else {
            meta.allowed_cors_origins.clone()
        };
        let keys = meta.jwks.as_ref().and_then(|j| client_keys::parse_jwks(j).ok()).unwrap_or_default().into();
        let encrypts = meta.id_token_encrypted_response_alg.is_some()
            || meta.userinfo_encrypted_response_alg.is_some()
            || meta.introspection_encrypted_response_alg.is_some()
            || meta.authorization_encrypted_response_alg.is_some();
        let enc_keys = match (&meta.jwks, encrypts) {
            (Some(j), true) => client_keys::parse_encryption_jwks(j, true).unwrap_or_default().into(),
            _ => Default::default(),
        };
        Self { tenant: Default::default(), meta, secret_hash, secret_sealed, cors_origins, keys, enc_keys, registration_token_hash: None, used: false }
    }

    /// Registered dynamically (RFC 7591): it has a registration access token.
    pub fn is_dynamic(&self) -> bool {
        self.registration_token_hash.is_some()
    }

    /// Give the client a registration access token (returned once; its hash is kept).
    pub fn issue_registration_token(&mut self) -> String {
        let token = random_token();
        self.registration_token_hash = Some(secret_hash(&token));
        token
    }

    /// Whether `presented` is this client's registration access token (constant time).
    pub fn check_registration_token(&self, presented: &str) -> bool {
        self.registration_token_hash.is_some_and(|h| ct_eq(&h, &secret_hash(presented)))
    }

    /// Keep the registration token and the tenant of `previous` (an update of the same client).
    pub fn keep_registration_token(mut self, previous: &Client) -> Self {
        self.registration_token_hash = previous.registration_token_hash;
        self.tenant = previous.tenant;
        self
    }

    /// The client's inline public keys (empty when it has none or uses `jwks_uri`).
    pub fn inline_keys(&self) -> &std::sync::Arc<[ClientKey]> {
        &self.keys
    }

    /// The client's inline encryption keys (empty unless it registered encryption and has
    /// inline `jwks`).
    pub fn encryption_keys(&self) -> &[crate::keys::jwe::RecipientKey] {
        &self.enc_keys
    }

    /// The secret itself, for a `client_secret_jwt` client (`None` for any other).
    pub fn open_secret(&self, vault: &Vault) -> Option<Vec<u8>> {
        let sealed = self.secret_sealed.as_ref()?;
        vault.open_sealed(&sealed_secret_label(self.id()), sealed).ok()
    }

    /// The origins whose pages may call the token, revocation and userinfo endpoints for this
    /// client: `allowed_cors_origins` if set, else the origins of its http(s) redirect URIs
    /// (a private-use scheme of a native app has no web origin).
    pub fn cors_origins(&self) -> &[String] {
        &self.cors_origins
    }

    /// `origin` as the browser sent it in the `Origin` header: compared exactly, since both
    /// sides are in the RFC 6454 serialised form.
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.cors_origins.iter().any(|o| o == origin)
    }

    pub fn id(&self) -> &str {
        &self.meta.client_id
    }

    pub fn is_public(&self) -> bool {
        self.meta.token_endpoint_auth_method == AUTH_NONE
    }

    pub fn auth_method(&self) -> &str {
        &self.meta.token_endpoint_auth_method
    }

    pub fn check_secret(&self, presented: &str) -> bool {
        match &self.secret_hash {
            Some(h) => ct_eq(h, &secret_hash(presented)),
            None => false,
        }
    }

    pub fn allows_grant(&self, grant_type: &str) -> bool {
        self.meta.grant_types.iter().any(|g| g == grant_type)
    }

    pub fn allows_scope(&self, scope: &str) -> bool {
        split_list(&self.meta.scope).any(|s| s == scope)
    }

    /// The signing algorithms this client asked for that `available` (the server's) lacks.
    pub fn unavailable_algs<'a>(&'a self, available: &[&str]) -> Vec<&'a str> {
        [
            &self.meta.id_token_signed_response_alg,
            &self.meta.userinfo_signed_response_alg,
            &self.meta.access_token_signing_alg,
            &self.meta.authorization_signed_response_alg,
            &self.meta.introspection_signed_response_alg,
        ]
            .into_iter()
            .filter_map(|a| a.as_deref())
            .filter(|a| !available.contains(a))
            .collect()
    }

    /// Exact string comparison, as for redirect URIs (RP-Initiated Logout 1.0 §3.1).
    pub fn has_post_logout_redirect_uri(&self, uri: &str) -> bool {
        self.meta.post_logout_redirect_uris.iter().any(|r| r == uri)
    }

    /// Exact string comparison (RFC 6749 §3.1.2.3, OAuth 2.0 Security BCP §4.1.3), except
    /// that a native app's loopback IP redirect URI matches on any port (RFC 8252 §7.3: the
    /// app listens on whatever port the system gives it).
    pub fn has_redirect_uri(&self, uri: &str) -> bool {
        self.meta.redirect_uris.iter().any(|r| r == uri || same_loopback_ignoring_port(r, uri))
    }
}

/// Both `http://127.0.0.1` or `http://[::1]` URIs that differ at most in their port, compared
/// as strings around the port: nothing is normalised (no case folding, no dot segments, no
/// leading zeros, no trimming), so that the match is the exact comparison RFC 9700 §4.1.3
/// asks for with only RFC 8252 §7.3's freedom of port. (`localhost` is not included: RFC 8252
/// §8.3 advises against it, since the name may resolve elsewhere.)
fn same_loopback_ignoring_port(registered: &str, presented: &str) -> bool {
    matches!((loopback_without_port(registered), loopback_without_port(presented)), (Some(a), Some(b)) if a == b)
}

/// A loopback IP redirect URI as (its scheme and host, what follows its port), if it is one:
/// `http://127.0.0.1` or `http://[::1]`, then an optional port written as a browser or app
/// writes it (1-65535, no leading zero), then a path, a query or nothing.
fn loopback_without_port(uri: &str) -> Option<(&'static str, &str)> {
    for prefix in ["http://127.0.0.1", "http://[::1]"] {
        let Some(after) = uri.strip_prefix(prefix) else { continue };
        let rest = match after.strip_prefix(':') {
            Some(port_on) => {
                let digits = port_on.bytes().take_while(u8::is_ascii_digit).count();
                let port = &port_on[..digits];
                if port.is_empty() || port.starts_with('0') || port.parse::<u16>().is_err() {
                    return None;
                }
                &port_on[digits..]
            }
            None => after,
        };
        return (rest.is_empty() || rest.starts_with('/') || rest.starts_with('?')).then_some((prefix, rest));
    }
    None
}

mod changes;
mod metadata;
mod mtls;
pub mod saml;
mod store;
mod validation;
pub use changes::*;
pub use metadata::*;
pub use mtls::MtlsMetadata;
pub use store::*;
pub use validation::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> Vault {
        Vault::from_key([7; 32])
    }

    fn input(uris: &[&str]) -> ClientInput {
        ClientInput { redirect_uris: Some(uris.iter().map(|s| s.to_string()).collect()), ..Default::default() }
    }

    #[test]
    fn logout_uris_are_web_urls_and_can_be_cleared() {
        let with = |field: &str, v: &str| {
            let mut i = input(&["https://rp.example/cb"]);
            match field {
                "back" => i.backchannel_logout_uri = Some(v.into()),
                "front" => i.frontchannel_logout_uri = Some(v.into()),
                _ => i.post_logout_redirect_uris = Some(vec![v.into()]),
            }
            new_client(i, &vault())
        };
        for field in ["back", "front", "post"] {
            assert!(with(field, "https://rp.example/logout?x=1").is_ok(), "{field}");
            assert!(with(field, "http://127.0.0.1:9/logout").is_ok(), "{field}: loopback http");
            for bad in ["http://rp.example/logout", "https://rp.example/logout#frag", "javascript:alert(1)", "not a url"] {
                assert!(with(field, bad).is_err(), "{field}: {bad} accepted");
            }
        }
        let (c, _) = with("back", "https://rp.example/bc").unwrap();
        let cleared = ClientInput { backchannel_logout_uri: Some(String::new()), ..Default::default() };
        assert_eq!(update_client(&c, cleared, &vault()).unwrap().0.meta.backchannel_logout_uri, None);
        assert!(c.has_post_logout_redirect_uri("https://rp.example/cb") == false);
    }

    #[test]
    fn confidential_client_gets_a_secret_checked_in_constant_time() {
        let (c, secret) = new_client(input(&["https://rp.example/cb"]), &vault()).unwrap();
        let secret = secret.unwrap();
        assert!(c.check_secret(&secret));
        assert!(!c.check_secret("wrong"));
        assert!(!c.check_secret(""));
    }

    #[test]
    fn public_client_has_no_secret() {
        let mut i = input(&["com.example.app:/cb"]);
        i.token_endpoint_auth_method = Some("none".into());
        let (c, secret) = new_client(i, &vault()).unwrap();
        assert!(secret.is_none() && c.is_public() && !c.check_secret(""));
    }

    #[test]
    fn redirect_uri_rules() {
        for bad in ["http://rp.example/cb", "https://rp.example/cb#frag", "relative/path", "javascript:alert(1)", "myapp:/cb"] {
            assert!(new_client(input(&[bad]), &vault()).is_err(), "{bad} accepted");
        }
        for good in ["https://rp.example/cb?x=1", "http://127.0.0.1:9000/cb", "http://localhost/cb", "com.example.app:/oauth"] {
            assert!(new_client(input(&[good]), &vault()).is_ok(), "{good} refused");
        }
    }

    #[test]
    fn redirect_uri_match_is_exact() {
        let (c, _) = new_client(input(&["https://rp.example/cb"]), &vault()).unwrap();
        assert!(c.has_redirect_uri("https://rp.example/cb"));
        for near in ["https://rp.example/cb/", "https://RP.example/cb", "https://rp.example/cb?x", "https://rp.example/c", "https://rp.example:8443/cb"] {
            assert!(!c.has_redirect_uri(near), "{near} matched");
        }
    }

    #[test]
    fn loopback_ip_redirect_uris_match_on_any_port_and_nothing_else() {
        let (c, _) = new_client(input(&["http://127.0.0.1:43210/cb", "http://[::1]/cb", "http://localhost:5000/cb"]), &vault()).unwrap();
        for ok in ["http://127.0.0.1:43210/cb", "http://127.0.0.1:50000/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "http://localhost:5000/cb"] {
            assert!(c.has_redirect_uri(ok), "{ok} refused");
        }
        for bad in ["http://127.0.0.1:50000/other", "http://127.0.0.1:1/cb?x=1", "https://127.0.0.1:43210/cb", "http://127.0.0.2:43210/cb", "http://localhost:5001/cb", "http://[::1]:1/cb/"] {
            assert!(!c.has_redirect_uri(bad), "{bad} matched");
        }
        // Only the port is free: what a URL parser would normalise is a different string.
        for bad in [
            "HTTP://127.0.0.1:43210/cb", "http://127.0.0.1:043210/cb", "http://127.0.0.1:43210/./cb", "http://127.0.0.1:43210/x/../cb",
            " http://127.0.0.1:43210/cb", "http://127.0.0.1:43210/cb\0", "http://127.0.0.1:43210/cb\t", "http://127.0.0.1:99999/cb",
            "http://127.0.0.1:/cb", "http://127.0.0.1.:43210/cb", "http://127.0.0.1.evil.example/cb", "http://[0::1]:8080/cb",
        ] {
            assert!(!c.has_redirect_uri(bad), "{bad:?} matched");
        }
    }

    #[test]
    fn unknown_grant_scope_or_method_refused() {
        let mut i = input(&["https://rp.example/cb"]);
        i.grant_types = Some(vec!["password".into()]);
        assert!(new_client(i, &vault()).is_err());
        let mut i = input(&["https://rp.example/cb"]);
        i.scope = Some("openid ad\"min".into());
        assert!(new_client(i, &vault()).is_err());
        let mut i = input(&["https://rp.example/cb"]);
        i.allowed_resources = Some(vec!["https://api.example/x#frag".into()]);
        assert!(new_client(i, &vault()).is_err());
        let mut i = input(&["https://rp.example/cb"]);
        i.token_endpoint_auth_method = Some("private_key_jwt".into());
        assert!(new_client(i, &vault()).is_err());
    }

    #[test]
    fn cors_origins_come_from_web_redirect_uris_unless_listed() {
        let (c, _) = new_client(input(&[
            "https://spa.example/cb",
            "https://spa.example/other?x=1",
            "http://127.0.0.1:9000/cb",
            "https://SPA2.example:443/cb",
            "com.example.app:/oauth",
        ]), &vault())
        .unwrap();
        assert_eq!(c.cors_origins(), ["http://127.0.0.1:9000", "https://spa.example", "https://spa2.example"]);
        assert!(c.allows_origin("https://spa.example"));
        for foreign in ["https://spa.example:8443", "http://spa.example", "https://evil.example", "null", "com.example.app:"] {
            assert!(!c.allows_origin(foreign), "{foreign}");
        }
        let mut i = input(&["https://spa.example/cb"]);
        i.allowed_cors_origins = Some(vec!["https://app.example".into(), "http://localhost:3000".into()]);
        let (c, _) = new_client(i, &vault()).unwrap();
        assert_eq!(c.cors_origins(), ["https://app.example", "http://localhost:3000"]);
        assert!(!c.allows_origin("https://spa.example"), "an explicit list replaces the derived origins");
        // An update back to an empty list returns to the derived origins.
        let (c, _) = update_client(&c, ClientInput { allowed_cors_origins: Some(vec![]), ..Default::default() }, &vault()).unwrap();
        assert_eq!(c.cors_origins(), ["https://spa.example"]);
    }

    #[test]
    fn cors_origins_must_be_origins_as_browsers_send_them() {
        for bad in [
            "https://app.example/",
            "https://app.example/path",
            "https://App.example",
            "https://app.example:443",
            "https://user@app.example",
            "https://app.example?x",
            "http://app.example",
            "null",
            "*",
            "app.example",
            "com.example.app://x",
        ] {
            let mut i = input(&["https://spa.example/cb"]);
            i.allowed_cors_origins = Some(vec![bad.into()]);
            assert!(new_client(i, &vault()).is_err(), "{bad} accepted");
        }
        for good in ["https://app.example", "https://app.example:8443", "http://localhost:3000", "http://127.0.0.1", "https://xn--bcher-kva.example"] {
            let mut i = input(&["https://spa.example/cb"]);
            i.allowed_cors_origins = Some(vec![good.into()]);
            assert!(new_client(i, &vault()).is_ok(), "{good} refused");
        }
    }

    #[test]
    fn saved_clients_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let conn = &mut crate::db::SqliteSql(&conn);
        let (c, secret) = new_client(input(&["https://rp.example/cb"]), &vault()).unwrap();
        save(conn, &c).unwrap();
        let default = crate::tenant::TenantId::DEFAULT;
        let loaded = load_one(conn, default, c.id()).unwrap().unwrap();
        assert_eq!(loaded.meta, c.meta);
        assert!(loaded.check_secret(&secret.unwrap()));
        assert!(load_one(conn, crate::tenant::TenantId(1), c.id()).unwrap().is_none(), "another tenant's");
        assert!(delete(conn, default, c.id()).unwrap());
        assert!(load_one(conn, default, c.id()).unwrap().is_none());
    }
}
