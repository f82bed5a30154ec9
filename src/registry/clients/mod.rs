//! OAuth clients, described by RFC 7591 metadata. Secrets are 256-bit random values generated
//! here, shown once, and stored as SHA-256 (a slow hash would put milliseconds on every token
//! request without adding strength to a value that is not guessable).

use crate::client_auth::keys::{self as client_keys, ClientKey};
use crate::db::{Row, Sql, StoreResult};
use crate::keys::Vault;
use crate::util::{ct_eq, now, random_token, secret_hash, split_list};
use serde::{Deserialize, Serialize};

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

/// RFC 7591 §2 client metadata (the subset Authrim implements).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientMetadata {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub token_endpoint_auth_method: String,
    /// Scopes the client may request: the OpenID Connect ones and any API scopes of its own.
    pub scope: String,
    /// Audiences (RFC 8693 `audience`) the client may ask tokens for. Authrim extension.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_audiences: Vec<String>,
    /// Resource indicators (RFC 8707 / RFC 8693 `resource`) the client may ask tokens for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_resources: Vec<String>,
    /// RFC 8693 policy; the grant itself is enabled through `grant_types`. Authrim extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_exchange: Option<TokenExchangePolicy>,
    /// Origins (`scheme://host[:port]`) whose pages may call /token, /revoke and /userinfo for
    /// this client (CORS). Empty: the origins of its web redirect URIs. Authrim extension.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_cors_origins: Vec<String>,
    /// RP-Initiated Logout 1.0 §3.1: where the user may be sent back after logging out,
    /// matched exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_logout_redirect_uris: Vec<String>,
    /// Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    /// Whether the logout token must carry `sid` (ours always do).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backchannel_logout_session_required: bool,
    /// CIBA Core §4: `poll` or `ping` (required with the CIBA grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_token_delivery_mode: Option<String>,
    /// CIBA Core §4: where a ping client is told that a request was answered (https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_client_notification_endpoint: Option<String>,
    /// CIBA Core §4: the client sends the user's `user_code` (`ciba::user_code`) with each
    /// request; one without it is refused (`missing_user_code`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backchannel_user_code_parameter: bool,
    /// CIBA Core §4: the one algorithm the client's signed authentication requests use
    /// (§7.1.1). A client that registered it must sign every request to `/backchannel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_authentication_request_signing_alg: Option<String>,
    /// Front-Channel Logout 1.0 §2: the page the logout page loads in an iframe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontchannel_logout_uri: Option<String>,
    /// Whether the iframe URL must carry `iss` and `sid`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub frontchannel_logout_session_required: bool,
    /// RFC 7591 §2: the client's public keys, inline (`private_key_jwt`, signed request
    /// objects). Exclusive with `jwks_uri`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<serde_json::Value>,
    /// RFC 7591 §2: where the client publishes its public keys (fetched, cached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// OIDC Dynamic Registration §2: the one algorithm the client's authentication JWTs use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg: Option<String>,
    /// OIDC Dynamic Registration §2: the one algorithm the client's request objects use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_object_signing_alg: Option<String>,
    /// OIDC Dynamic Registration §2: the client's request objects are encrypted (JWE) to
    /// Authrim's own keys with this `alg` and `request_object_encryption_enc` (default
    /// A128CBC-HS256); when set, a request object that is not encrypted is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_object_encryption_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_object_encryption_enc: Option<String>,
    /// RFC 9101 §10.5: the client's authorization requests must be signed request objects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_signed_request_object: bool,
    /// OpenID Connect Dynamic Registration §2: where the client publishes request objects it
    /// passes by reference (`request_uri`, OIDC Core §6.2); only these are fetched (a fragment
    /// is the client's cache marker, ignored in the comparison).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_uris: Vec<String>,
    /// RFC 9126 §6: the client's authorization requests must come through `/par`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_pushed_authorization_requests: bool,
    /// JARM §3: what its JWT authorization responses (`response_mode=jwt` …) are signed
    /// with; unset: RS256 (the server's `token_signing_alg` under FAPI 2.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_signed_response_alg: Option<String>,
    /// JARM §3: its JWT authorization responses are signed, then encrypted to its key for
    /// this `alg` with `authorization_encrypted_response_enc` (default A128CBC-HS256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_encrypted_response_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_encrypted_response_enc: Option<String>,
    /// OIDC Dynamic Registration §2: what the client's ID tokens are signed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_signed_response_alg: Option<String>,
    /// OIDC Dynamic Registration §2: userinfo answers as a JWT signed with this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_signed_response_alg: Option<String>,
    /// OIDC Dynamic Registration §2: ID tokens are signed, then encrypted (JWE) to the
    /// client's key for this `alg` with `id_token_encrypted_response_enc` (default
    /// A128CBC-HS256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_encrypted_response_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_encrypted_response_enc: Option<String>,
    /// The same for userinfo answers (signed first only if `userinfo_signed_response_alg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_encrypted_response_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_encrypted_response_enc: Option<String>,
    /// RFC 9701 §6: what JWT introspection answers to this client are signed with (default
    /// RS256), and encrypted with if it asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_signed_response_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_encrypted_response_alg: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_encrypted_response_enc: Option<String>,
    /// What the client's access tokens are signed with (Authrim extension; default
    /// `token_signing_alg`), for resource servers that verify one algorithm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token_signing_alg: Option<String>,
    /// RFC 9449 §5.2: every token request of this client must carry a DPoP proof.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dpop_bound_access_tokens: bool,
    /// RFC 8705: the certificate a `tls_client_auth` client presents, and whether its access
    /// tokens are bound to its certificate.
    #[serde(flatten)]
    pub mtls: MtlsMetadata,
    /// OIDC Core §8: `public` (default) or `pairwise` subject identifiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_type: Option<String>,
    /// OIDC Core §8.1: names the sector (its host) of a pairwise client, and lists the
    /// redirect URIs the sector holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sector_identifier_uri: Option<String>,
    /// OpenID Connect Core §4 / Dynamic Registration §2: where a sign-in into the client can
    /// be started from elsewhere (the start page, the account page), with `iss` (and
    /// `target_link_uri`). https only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiate_login_uri: Option<String>,
    /// RFC 7591 §2 display metadata: shown to users, never acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// OIDC Dynamic Registration §2: `web` or `native`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_type: Option<String>,
    /// OIDC Dynamic Registration §2: the `acr_values` of this client's requests that name none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default_acr_values: Vec<String>,
    /// Every sign-in for this client needs a second factor (as `mfa_policy = "required"` for
    /// all). Authrim extension.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_mfa: bool,
    /// Every sign-in for this client needs a passkey (as `mfa_policy = "passkey"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_passkey: bool,
    /// Every authorization for this client is for an organization (issue 31): a request that
    /// names none gets the user's only one, a choice among several, or `access_denied` for
    /// a user of none. Authrim extension, set by an administrator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub organization_required: bool,
    /// Seconds in which a retry with this client's just-superseded refresh token gets the same
    /// successor (the deployment's `refresh_reuse_grace` when unset; 0: strict). Authrim
    /// extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_reuse_grace: Option<u64>,
    /// `fapi2`: this client is held to the FAPI 2.0 Security Profile even where the tenant's
    /// `security_profile` is `standard` (`profile`). A client can only be made stricter than
    /// its tenant. Authrim extension, through the admin API and the CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_profile: Option<String>,
    /// Authrim's own pages (the account page): no consent asked. Not settable from outside.
    #[serde(skip)]
    pub first_party: bool,
    #[serde(default)]
    pub client_id_issued_at: u64,
}

pub const TOKEN_TYPE_ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
pub const TOKEN_TYPE_JWT: &str = "urn:ietf:params:oauth:token-type:jwt";
pub const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
pub const TOKEN_TYPE_REFRESH_TOKEN: &str = "urn:ietf:params:oauth:token-type:refresh_token";

/// What a client may do with token exchange.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TokenExchangePolicy {
    /// May present an `actor_token` (delegation, RFC 8693 §1.1).
    pub delegation: bool,
    /// May exchange without an actor token (impersonation).
    pub impersonation: bool,
    /// Accepted `subject_token_type`s (access_token, jwt, id_token; never refresh_token).
    pub subject_token_types: Vec<String>,
    /// May an issued token live longer than the subject token has left.
    pub may_outlive_subject: bool,
    /// Who may act through this client (delegation): the actor token's `client_id` (or, for
    /// a client's own token, `sub`) must be one of these. Empty: any actor.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_actors: Vec<String>,
    /// Whose tokens this client may exchange: the subject token's `client_id` must be one of
    /// these. Empty: any client's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_subject_clients: Vec<String>,
    /// Nested `act` claims allowed at most; lower than `max_delegation_depth` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_delegation_depth: Option<usize>,
    /// Identity assertions (ID-JAG) this client may obtain: for each audience authorization
    /// server's issuer, the client id this client has there (its ID-JAGs' `client_id`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub id_jag_audiences: std::collections::BTreeMap<String, String>,
}

impl Default for TokenExchangePolicy {
    fn default() -> Self {
        Self {
            delegation: true,
            impersonation: true,
            subject_token_types: vec![TOKEN_TYPE_ACCESS_TOKEN.into()],
            may_outlive_subject: false,
            allowed_actors: Vec::new(),
            allowed_subject_clients: Vec::new(),
            max_delegation_depth: None,
            id_jag_audiences: Default::default(),
        }
    }
}

/// What an admin may set when creating or updating a client; absent fields keep their value
/// (update) or take the default (create).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientInput {
    pub client_id: Option<String>,
    pub client_name: Option<String>,
    pub redirect_uris: Option<Vec<String>>,
    pub grant_types: Option<Vec<String>>,
    /// `code` (the default), and the hybrid and implicit types the client may use (`code
    /// id_token`, `code token`, `code id_token token`, `id_token`, `id_token token`), which
    /// need the `implicit` grant type (and `authorization_code` for those with `code`).
    pub response_types: Option<Vec<String>>,
    pub token_endpoint_auth_method: Option<String>,
    pub scope: Option<String>,
    pub allowed_audiences: Option<Vec<String>>,
    pub allowed_resources: Option<Vec<String>>,
    pub token_exchange: Option<TokenExchangePolicy>,
    pub allowed_cors_origins: Option<Vec<String>>,
    pub post_logout_redirect_uris: Option<Vec<String>>,
    /// `Some("")` clears it.
    pub backchannel_logout_uri: Option<String>,
    pub backchannel_logout_session_required: Option<bool>,
    /// `poll` or `ping`; `Some("")` clears it.
    pub backchannel_token_delivery_mode: Option<String>,
    /// `Some("")` clears it.
    pub backchannel_client_notification_endpoint: Option<String>,
    pub backchannel_user_code_parameter: Option<bool>,
    /// `Some("")` clears it.
    pub backchannel_authentication_request_signing_alg: Option<String>,
    /// `Some("")` clears it.
    pub frontchannel_logout_uri: Option<String>,
    pub frontchannel_logout_session_required: Option<bool>,
    /// `{"keys": []}` clears it.
    pub jwks: Option<serde_json::Value>,
    /// `Some("")` clears it.
    pub jwks_uri: Option<String>,
    /// `Some("")` clears it.
    pub token_endpoint_auth_signing_alg: Option<String>,
    pub require_pushed_authorization_requests: Option<bool>,
    /// JARM: what the client's JWT authorization responses are signed with; `Some("")`
    /// clears it (RS256 again).
    pub authorization_signed_response_alg: Option<String>,
    /// JARM encryption; `Some("")` clears one. An `alg` without its `enc` gets A128CBC-HS256.
    pub authorization_encrypted_response_alg: Option<String>,
    pub authorization_encrypted_response_enc: Option<String>,
    /// `Some("")` clears it.
    pub request_object_signing_alg: Option<String>,
    /// Request objects encrypted to Authrim's keys; `Some("")` clears one.
    pub request_object_encryption_alg: Option<String>,
    pub request_object_encryption_enc: Option<String>,
    pub require_signed_request_object: Option<bool>,
    pub request_uris: Option<Vec<String>>,
    pub dpop_bound_access_tokens: Option<bool>,
    /// RFC 8705 §2.1.2: the one subject field a `tls_client_auth` certificate must carry;
    /// `Some("")` clears one.
    pub tls_client_auth_subject_dn: Option<String>,
    pub tls_client_auth_san_dns: Option<String>,
    pub tls_client_auth_san_uri: Option<String>,
    pub tls_client_auth_san_ip: Option<String>,
    pub tls_client_auth_san_email: Option<String>,
    /// RFC 8705 §3.4: bind the client's access tokens to its certificate.
    pub tls_client_certificate_bound_access_tokens: Option<bool>,
    /// `Some("")` clears one.
    pub subject_type: Option<String>,
    pub sector_identifier_uri: Option<String>,
    /// `Some("")` clears one.
    pub id_token_signed_response_alg: Option<String>,
    pub userinfo_signed_response_alg: Option<String>,
    /// `Some("")` clears one. An `alg` without its `enc` gets A128CBC-HS256.
    pub id_token_encrypted_response_alg: Option<String>,
    pub id_token_encrypted_response_enc: Option<String>,
    pub userinfo_encrypted_response_alg: Option<String>,
    pub userinfo_encrypted_response_enc: Option<String>,
    /// RFC 9701 §6; `Some("")` clears one.
    pub introspection_signed_response_alg: Option<String>,
    pub introspection_encrypted_response_alg: Option<String>,
    pub introspection_encrypted_response_enc: Option<String>,
    pub access_token_signing_alg: Option<String>,
    /// `Some("")` clears it.
    pub initiate_login_uri: Option<String>,
    /// Display metadata; `Some("")` clears one.
    pub client_uri: Option<String>,
    pub logo_uri: Option<String>,
    pub tos_uri: Option<String>,
    pub policy_uri: Option<String>,
    pub contacts: Option<Vec<String>>,
    pub application_type: Option<String>,
    pub default_acr_values: Option<Vec<String>>,
    pub require_mfa: Option<bool>,
    pub require_passkey: Option<bool>,
    /// Every authorization needs an organization (the user's only one, or their choice).
    pub organization_required: Option<bool>,
    /// A negative number clears it (the deployment's grace again).
    pub refresh_reuse_grace: Option<i64>,
    /// `fapi2`, or `""` to clear (the tenant's profile again).
    pub security_profile: Option<String>,
}

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

/// Grant types a client may be registered for. Grows as grant modules land.
/// The token endpoint's grant types, and `implicit` (RFC 7591 §2.1), which a client registers
/// with the response types that return tokens from the authorization endpoint.
pub fn supported_grant_types() -> &'static [&'static str] {
    static ALL: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        crate::grants::GRANT_TYPES.iter().copied().chain([crate::endpoints::authorize::response_type::IMPLICIT_GRANT]).collect()
    });
    &ALL
}

/// Build a new client from `input`; returns it with its plain secret (confidential clients).
pub fn new_client(input: ClientInput, vault: &Vault) -> Result<(Client, Option<String>), String> {
    let meta = metadata_of(input);
    validate_id(&meta.client_id)?;
    validate(&meta)?;
    let (secret, hash, sealed) = new_secret(&meta.token_endpoint_auth_method, &meta.client_id, vault);
    Ok((Client::build(meta, hash, sealed), secret))
}

/// One of Authrim's own pages as a client of itself (the account page signs its users in
/// through `/authorize` like any application): public, PKCE, one redirect URI, no consent.
pub fn internal_client(client_id: &str, name: &str, redirect_uri: String) -> Client {
    let mut meta = metadata_of(ClientInput {
        client_id: Some(client_id.into()),
        client_name: Some(name.into()),
        redirect_uris: Some(vec![redirect_uri]),
        token_endpoint_auth_method: Some("none".into()),
        scope: Some("openid".into()),
        ..Default::default()
    });
    meta.first_party = true;
    Client::build(meta, None, None)
}

/// A client described by a Client ID Metadata Document at `url` (`registry::documents`): its
/// id is the URL, and it has no secret.
pub fn document_client(mut input: ClientInput, url: &str) -> Result<Client, String> {
    input.client_id = Some(url.to_string());
    let meta = metadata_of(input);
    if has_secret(&meta.token_endpoint_auth_method) {
        return Err("a document client has no secret".into());
    }
    validate(&meta)?;
    Ok(Client::build(meta, None, None))
}

fn metadata_of(input: ClientInput) -> ClientMetadata {
    let mut meta = metadata_fields(input);
    default_encryption(&mut meta);
    meta
}

fn metadata_fields(input: ClientInput) -> ClientMetadata {
    let method = input.token_endpoint_auth_method.clone().unwrap_or_else(|| AUTH_BASIC.into());
    ClientMetadata {
        client_id: input.client_id.clone().unwrap_or_else(|| format!("client_{}", &random_token()[..22])),
        client_name: input.client_name.clone().filter(|n| !n.is_empty()),
        redirect_uris: input.redirect_uris.clone().unwrap_or_default(),
        grant_types: input.grant_types.clone().unwrap_or_else(|| vec!["authorization_code".into()]),
        response_types: input.response_types.clone().unwrap_or_else(|| vec!["code".into()]),
        token_endpoint_auth_method: method,
        scope: input.scope.clone().unwrap_or_else(|| SUPPORTED_SCOPES.join(" ")),
        allowed_audiences: input.allowed_audiences.clone().unwrap_or_default(),
        allowed_resources: input.allowed_resources.clone().unwrap_or_default(),
        token_exchange: input.token_exchange.clone(),
        allowed_cors_origins: input.allowed_cors_origins.clone().unwrap_or_default(),
        post_logout_redirect_uris: input.post_logout_redirect_uris.clone().unwrap_or_default(),
        backchannel_logout_uri: input.backchannel_logout_uri.clone().filter(|u| !u.is_empty()),
        backchannel_logout_session_required: input.backchannel_logout_session_required.unwrap_or(false),
        backchannel_token_delivery_mode: input.backchannel_token_delivery_mode.clone().filter(|u| !u.is_empty()),
        backchannel_client_notification_endpoint: input.backchannel_client_notification_endpoint.clone().filter(|u| !u.is_empty()),
        backchannel_user_code_parameter: input.backchannel_user_code_parameter.unwrap_or(false),
        backchannel_authentication_request_signing_alg: input.backchannel_authentication_request_signing_alg.clone().filter(|a| !a.is_empty()),
        frontchannel_logout_uri: input.frontchannel_logout_uri.clone().filter(|u| !u.is_empty()),
        frontchannel_logout_session_required: input.frontchannel_logout_session_required.unwrap_or(false),
        jwks: input.jwks.clone().filter(|j| !client_keys::is_empty_set(j)),
        jwks_uri: input.jwks_uri.clone().filter(|u| !u.is_empty()),
        token_endpoint_auth_signing_alg: input.token_endpoint_auth_signing_alg.clone().filter(|a| !a.is_empty()),
        require_pushed_authorization_requests: input.require_pushed_authorization_requests.unwrap_or(false),
        authorization_signed_response_alg: input.authorization_signed_response_alg.clone().filter(|a| !a.is_empty()),
        authorization_encrypted_response_alg: input.authorization_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        authorization_encrypted_response_enc: input.authorization_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        request_object_encryption_alg: input.request_object_encryption_alg.clone().filter(|a| !a.is_empty()),
        request_object_encryption_enc: input.request_object_encryption_enc.clone().filter(|a| !a.is_empty()),
        request_object_signing_alg: input.request_object_signing_alg.clone().filter(|a| !a.is_empty()),
        require_signed_request_object: input.require_signed_request_object.unwrap_or(false),
        request_uris: input.request_uris.clone().unwrap_or_default(),
        dpop_bound_access_tokens: input.dpop_bound_access_tokens.unwrap_or(false),
        mtls: MtlsMetadata::from_input(&input),
        subject_type: input.subject_type.clone().filter(|a| !a.is_empty()),
        sector_identifier_uri: input.sector_identifier_uri.clone().filter(|a| !a.is_empty()),
        id_token_signed_response_alg: input.id_token_signed_response_alg.clone().filter(|a| !a.is_empty()),
        userinfo_signed_response_alg: input.userinfo_signed_response_alg.clone().filter(|a| !a.is_empty()),
        id_token_encrypted_response_alg: input.id_token_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        id_token_encrypted_response_enc: input.id_token_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        userinfo_encrypted_response_alg: input.userinfo_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        userinfo_encrypted_response_enc: input.userinfo_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        introspection_signed_response_alg: input.introspection_signed_response_alg.clone().filter(|a| !a.is_empty()),
        introspection_encrypted_response_alg: input.introspection_encrypted_response_alg.clone().filter(|a| !a.is_empty()),
        introspection_encrypted_response_enc: input.introspection_encrypted_response_enc.clone().filter(|a| !a.is_empty()),
        access_token_signing_alg: input.access_token_signing_alg.clone().filter(|a| !a.is_empty()),
        initiate_login_uri: input.initiate_login_uri.clone().filter(|u| !u.is_empty()),
        client_uri: input.client_uri.clone().filter(|u| !u.is_empty()),
        logo_uri: input.logo_uri.clone().filter(|u| !u.is_empty()),
        tos_uri: input.tos_uri.clone().filter(|u| !u.is_empty()),
        policy_uri: input.policy_uri.clone().filter(|u| !u.is_empty()),
        contacts: input.contacts.clone().unwrap_or_default(),
        application_type: input.application_type.clone().filter(|u| !u.is_empty()),
        default_acr_values: input.default_acr_values.clone().unwrap_or_default(),
        require_mfa: input.require_mfa.unwrap_or(false),
        require_passkey: input.require_passkey.unwrap_or(false),
        organization_required: input.organization_required.unwrap_or(false),
        refresh_reuse_grace: input.refresh_reuse_grace.and_then(|g| u64::try_from(g).ok()),
        security_profile: input.security_profile.clone().filter(|p| !p.is_empty()),
        first_party: false,
        client_id_issued_at: now(),
    }
}

/// Apply `input` to an existing client. A change of authentication method that needs a secret
/// the client does not have (a public client made confidential, or `client_secret_jwt`, whose
/// secret must be kept sealed rather than hashed) issues one (returned); a method without a
/// secret drops it.
pub fn update_client(existing: &Client, input: ClientInput, vault: &Vault) -> Result<(Client, Option<String>), String> {
    if input.client_id.as_deref().is_some_and(|id| id != existing.id()) {
        return Err("client_id cannot be changed".into());
    }
    let mut meta = existing.meta.clone();
    meta.mtls.apply(&input);
    if let Some(v) = input.client_name { meta.client_name = Some(v).filter(|n| !n.is_empty()) }
    if let Some(v) = input.redirect_uris { meta.redirect_uris = v }
    if let Some(v) = input.grant_types { meta.grant_types = v }
    if let Some(v) = input.response_types { meta.response_types = v }
    if let Some(v) = input.token_endpoint_auth_method { meta.token_endpoint_auth_method = v }
    if let Some(v) = input.scope { meta.scope = v }
    if let Some(v) = input.allowed_audiences { meta.allowed_audiences = v }
    if let Some(v) = input.allowed_resources { meta.allowed_resources = v }
    if let Some(v) = input.token_exchange { meta.token_exchange = Some(v) }
    if let Some(v) = input.allowed_cors_origins { meta.allowed_cors_origins = v }
    if let Some(v) = input.post_logout_redirect_uris { meta.post_logout_redirect_uris = v }
    if let Some(v) = input.backchannel_logout_uri { meta.backchannel_logout_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_logout_session_required { meta.backchannel_logout_session_required = v }
    if let Some(v) = input.backchannel_token_delivery_mode { meta.backchannel_token_delivery_mode = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_client_notification_endpoint { meta.backchannel_client_notification_endpoint = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.backchannel_user_code_parameter { meta.backchannel_user_code_parameter = v }
    if let Some(v) = input.backchannel_authentication_request_signing_alg { meta.backchannel_authentication_request_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.frontchannel_logout_uri { meta.frontchannel_logout_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.frontchannel_logout_session_required { meta.frontchannel_logout_session_required = v }
    if let Some(v) = input.jwks { meta.jwks = Some(v).filter(|j| !client_keys::is_empty_set(j)) }
    if let Some(v) = input.jwks_uri { meta.jwks_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.token_endpoint_auth_signing_alg { meta.token_endpoint_auth_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.require_pushed_authorization_requests { meta.require_pushed_authorization_requests = v }
    if let Some(v) = input.authorization_signed_response_alg { meta.authorization_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.authorization_encrypted_response_alg { meta.authorization_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.authorization_encrypted_response_enc { meta.authorization_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_encryption_alg { meta.request_object_encryption_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_encryption_enc { meta.request_object_encryption_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.request_object_signing_alg { meta.request_object_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.require_signed_request_object { meta.require_signed_request_object = v }
    if let Some(v) = input.request_uris { meta.request_uris = v }
    if let Some(v) = input.dpop_bound_access_tokens { meta.dpop_bound_access_tokens = v }
    if let Some(v) = input.subject_type { meta.subject_type = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.sector_identifier_uri { meta.sector_identifier_uri = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_signed_response_alg { meta.id_token_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_signed_response_alg { meta.userinfo_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_encrypted_response_alg { meta.id_token_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.id_token_encrypted_response_enc { meta.id_token_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_encrypted_response_alg { meta.userinfo_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.userinfo_encrypted_response_enc { meta.userinfo_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_signed_response_alg { meta.introspection_signed_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_encrypted_response_alg { meta.introspection_encrypted_response_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.introspection_encrypted_response_enc { meta.introspection_encrypted_response_enc = Some(v).filter(|a| !a.is_empty()) }
    default_encryption(&mut meta);
    if let Some(v) = input.access_token_signing_alg { meta.access_token_signing_alg = Some(v).filter(|a| !a.is_empty()) }
    if let Some(v) = input.initiate_login_uri { meta.initiate_login_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.client_uri { meta.client_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.logo_uri { meta.logo_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.tos_uri { meta.tos_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.policy_uri { meta.policy_uri = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.contacts { meta.contacts = v }
    if let Some(v) = input.application_type { meta.application_type = Some(v).filter(|u| !u.is_empty()) }
    if let Some(v) = input.default_acr_values { meta.default_acr_values = v }
    if let Some(v) = input.require_mfa { meta.require_mfa = v }
    if let Some(v) = input.require_passkey { meta.require_passkey = v }
    if let Some(v) = input.organization_required { meta.organization_required = v }
    if let Some(v) = input.refresh_reuse_grace { meta.refresh_reuse_grace = u64::try_from(v).ok() }
    if let Some(v) = input.security_profile { meta.security_profile = Some(v).filter(|p| !p.is_empty()) }
    validate(&meta)?;
    let method = meta.token_endpoint_auth_method.as_str();
    let keeps = match method {
        _ if !has_secret(method) => false,
        AUTH_SECRET_JWT => existing.secret_sealed.is_some(),
        _ => existing.secret_hash.is_some(),
    };
    if keeps {
        // A client moving from client_secret_jwt to a hashed method keeps its secret, sealed
        // copy dropped (nothing needs it any more).
        let sealed = (method == AUTH_SECRET_JWT).then(|| existing.secret_sealed.clone()).flatten();
        return Ok((Client::build(meta, existing.secret_hash, sealed).keep_registration_token(existing), None));
    }
    let (secret, hash, sealed) = new_secret(method, &meta.client_id, vault);
    Ok((Client::build(meta, hash, sealed).keep_registration_token(existing), secret))
}

/// A fresh secret for a client that has one (the old one stops working).
pub fn rotate_secret(existing: &Client, vault: &Vault) -> Result<(Client, String), String> {
    let (secret, hash, sealed) = new_secret(existing.auth_method(), existing.id(), vault);
    let secret = secret.ok_or_else(|| format!("a client using {} has no secret", existing.auth_method()))?;
    Ok((Client::build(existing.meta.clone(), hash, sealed).keep_registration_token(existing), secret))
}

/// `existing` with `secret` as its secret (kept hashed like any other): for a client whose
/// secret the server can work out again (the demo client, `http::demo`). Not for
/// `client_secret_jwt`, whose secret is kept sealed rather than hashed.
pub fn with_secret(existing: &Client, secret: &str) -> Result<Client, String> {
    if !has_secret(existing.auth_method()) || existing.auth_method() == AUTH_SECRET_JWT {
        return Err(format!("a client using {} cannot be given a secret this way", existing.auth_method()));
    }
    Ok(Client::build(existing.meta.clone(), Some(secret_hash(secret)), None).keep_registration_token(existing))
}

mod mtls;
mod store;
mod validation;
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
