//! What a client is registered with: RFC 7591 metadata as stored (`ClientMetadata`), its
//! token-exchange policy, and what an administrator or a registration may set (`ClientInput`).

use super::*;
use serde::{Deserialize, Serialize};

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
    /// What this client's tokens say of the user's groups and roles (issue 32; Authrim
    /// extension, set by the operator only).
    #[serde(flatten)]
    pub directory: DirectoryClaimsMetadata,
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
    /// `fapi2` or `fapi-ciba`: this client is held to the FAPI 2.0 Security Profile, or to
    /// FAPI-CIBA, as well as to the tenant's `security_profile` (`profile`: the stricter of
    /// the two, both where one is `fapi2` and the other `fapi-ciba`). A client can only be made
    /// stricter than its tenant. Authrim extension, through the admin API and the CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_profile: Option<String>,
    /// A SAML 2.0 service provider (issue 33, `saml`): this client signs users in by SAML
    /// only. Set by an operator only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saml: Option<super::saml::SamlServiceProvider>,
    /// Authrim's own pages (the account page): no consent asked. Not settable from outside.
    #[serde(skip)]
    pub first_party: bool,
    #[serde(default)]
    pub client_id_issued_at: u64,
}

/// Which of a user's groups a client's tokens carry, and under what names
/// (`tokens::directory`). Roles are always the client's own: a client that defines roles gets
/// the user's in `roles`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectoryClaimsMetadata {
    /// `names` or `ids`: the user's groups (direct and through nesting) in tokens and userinfo;
    /// absent: no groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups_claim: Option<String>,
    /// Only the groups that hold one of this client's roles.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub groups_assigned_only: bool,
    /// Only the groups whose name begins with one of these (without case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups_prefixes: Vec<String>,
    /// The claims' names in ID tokens and userinfo (`groups` and `roles` by default; access
    /// tokens keep RFC 9068's `groups` and `roles`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups_claim_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles_claim_name: Option<String>,
}

/// Claims a renamed `groups` or `roles` claim must not take: what tokens and userinfo say
/// already (JWT, OpenID Connect Core §2 and §5.1, RFC 9068, ours).
const TAKEN_CLAIMS: &[&str] = &[
    "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "azp", "nonce", "auth_time", "acr", "amr", "sid", "at_hash", "c_hash", "s_hash",
    "cnf", "scope", "client_id", "act", "may_act", "uid", "org_id", "org_name", "org_roles", "groups_overage", "name", "given_name",
    "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website", "email", "email_verified", "gender",
    "birthdate", "zoneinfo", "locale", "phone_number", "phone_number_verified", "address", "updated_at", "_claim_names", "_claim_sources",
];

impl DirectoryClaimsMetadata {
    pub fn validate(&self) -> Result<(), String> {
        if self.groups_claim.as_deref().is_some_and(|g| g != "names" && g != "ids") {
            return Err("groups_claim: names or ids (or empty for none)".into());
        }
        if self.groups_prefixes.len() > 20 || self.groups_prefixes.iter().any(|p| p.is_empty() || p.chars().count() > 256) {
            return Err("groups_prefixes: at most 20, each 1-256 characters".into());
        }
        let names = [("groups_claim_name", &self.groups_claim_name), ("roles_claim_name", &self.roles_claim_name)];
        for (field, name) in names {
            if let Some(n) = name {
                let ok = (1..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:/".contains(&b));
                if !ok || TAKEN_CLAIMS.contains(&n.as_str()) {
                    return Err(format!("{field}: 1-64 characters of letters, digits and _-.:/, not a claim tokens carry already"));
                }
            }
        }
        if self.groups_name() == self.roles_name() {
            return Err("groups_claim_name and roles_claim_name must differ".into());
        }
        Ok(())
    }

    pub fn groups_name(&self) -> &str {
        self.groups_claim_name.as_deref().unwrap_or("groups")
    }

    pub fn roles_name(&self) -> &str {
        self.roles_claim_name.as_deref().unwrap_or("roles")
    }
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
    /// `names` or `ids` (`Some("")`: no groups claim).
    pub groups_claim: Option<String>,
    pub groups_assigned_only: Option<bool>,
    pub groups_prefixes: Option<Vec<String>>,
    /// `Some("")` clears one (the default name again).
    pub groups_claim_name: Option<String>,
    pub roles_claim_name: Option<String>,
    pub require_mfa: Option<bool>,
    pub require_passkey: Option<bool>,
    /// Every authorization needs an organization (the user's only one, or their choice).
    pub organization_required: Option<bool>,
    /// A negative number clears it (the deployment's grace again).
    pub refresh_reuse_grace: Option<i64>,
    /// `fapi2` or `fapi-ciba`, or `""` to clear (the tenant's profile again).
    pub security_profile: Option<String>,
    /// A SAML 2.0 service provider: made with it, a client is one for good (its grant types,
    /// redirect URIs and secret are none); given on an update, it replaces the one it has.
    pub saml: Option<super::saml::SamlServiceProvider>,
}
