//! Upstream identity providers (`identity::upstream`): other OpenID providers, or plain OAuth
//! 2.0 servers with a user-info endpoint, whose users may sign in here. A table, so TOML only:
//!
//! ```toml
//! [[identity_providers]]
//! id = "corp"                                  # in URLs and `idp_hint=corp`
//! name = "Example Corp"                        # "Sign in with Example Corp"
//! issuer = "https://login.example.com"         # OpenID: discovery from here
//! client_id = "authrim"
//! client_secret = "…"                          # client_secret_basic
//! scopes = "openid email profile"
//! allowed_domains = ["example.com"]            # optional: e-mail domains let in
//! link_by_email = false                        # link to a user with the same verified e-mail
//! provision = true                             # create users on first sign-in
//! claims = { preferred_username = "upn" }      # ours = theirs, beside the standard ones
//!
//! [[identity_providers]]
//! id = "partner"
//! name = "Partner"
//! issuer = "https://idp.partner.example"
//! client_id = "authrim"
//! token_endpoint_auth_method = "private_key_jwt"  # no shared secret: a signed assertion
//! private_key_file = "/etc/authrim/partner.pem"   # PKCS#8 PEM: RSA, P-256 or Ed25519
//! # its public key: GET /login/upstream/partner/jwks (register it, or that URL, there)
//!
//! [[identity_providers]]
//! id = "github"
//! name = "GitHub"
//! kind = "oauth2"                              # no ID token: the user-info URL says who
//! authorization_endpoint = "https://github.com/login/oauth/authorize"
//! token_endpoint = "https://github.com/login/oauth/access_token"
//! userinfo_endpoint = "https://api.github.com/user"
//! scopes = "read:user user:email"
//! subject_claim = "id"
//! claims = { preferred_username = "login", name = "name", email = "email" }
//!
//! [[identity_providers]]
//! id = "adfs"
//! name = "Corp AD FS"
//! kind = "saml"                                # SAML 2.0: Authrim is the service provider
//! metadata = """<EntityDescriptor …>…</EntityDescriptor>"""  # the IdP's, inline
//! # or: entity_id = "…", sso_url = "…", certificates = ["MIIC…"] (base64 DER or PEM)
//! sign_requests = true                         # AuthnRequests signed (default)
//! want_assertions_encrypted = false            # true: an assertion in the clear is refused
//! claims = { email = "upn" }                   # ours = their attribute's Name
//! # our metadata, for its registration: GET /saml/sp-metadata
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamKind {
    #[default]
    Oidc,
    Oauth2,
    /// A SAML 2.0 identity provider (`saml::sp`): Web Browser SSO, Authrim the SP.
    Saml,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdentityProvider {
    /// Letters, digits, `-` and `_`: in the callback's state, `idp_hint` and linked identities.
    pub id: String,
    /// What the sign-in page's button says.
    pub name: String,
    #[serde(default)]
    pub kind: UpstreamKind,
    /// OpenID: the issuer (its discovery document is read from it, and its ID tokens must
    /// name it). OAuth 2.0: optional, the `iss` its authorization responses carry.
    #[serde(default)]
    pub issuer: Option<String>,
    /// OpenID and OAuth 2.0 (none for SAML).
    #[serde(default)]
    pub client_id: String,
    /// Sent with HTTP Basic (`client_secret_basic`), or in the body with
    /// `token_endpoint_auth_method = "client_secret_post"`.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// `client_secret_basic` (default), `client_secret_post`, `private_key_jwt` (RFC 7523,
    /// OpenID Connect Core §9: an assertion signed with `private_key_file`) or `none`.
    #[serde(default = "basic")]
    pub token_endpoint_auth_method: String,
    /// `private_key_jwt`: our private key for this provider, PKCS#8 PEM (RSA, P-256 or
    /// Ed25519). Its public half is served at `/login/upstream/<id>/jwks`.
    #[serde(default)]
    pub private_key_file: Option<std::path::PathBuf>,
    /// `private_key_jwt`: the assertion's algorithm; by default RS256, ES256 or EdDSA after
    /// the key (PS256 must be asked for).
    #[serde(default)]
    pub client_assertion_alg: Option<String>,
    #[serde(default = "default_scopes")]
    pub scopes: String,
    /// Endpoints, when not discovered (always for `oauth2`).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    #[serde(default)]
    pub token_endpoint: Option<String>,
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// `oauth2`: the user-info member that identifies the user there (stable, never reused).
    #[serde(default = "sub")]
    pub subject_claim: String,
    /// Our claim = theirs, for claims whose names differ; standard claims of the same name
    /// (`email`, `email_verified`, `name`, `given_name`, `family_name`, `preferred_username`,
    /// `picture`, `locale`) are taken as they are.
    #[serde(default)]
    pub claims: BTreeMap<String, String>,
    /// Only users whose e-mail (verified upstream) is in one of these domains.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Link a first sign-in to the local user with the same e-mail, if both sides have it
    /// verified. Off: such a user links from their account page after signing in.
    #[serde(default)]
    pub link_by_email: bool,
    /// Create a local user on a first sign-in that links to none.
    #[serde(default = "yes")]
    pub provision: bool,
    /// SAML: the identity provider's metadata (its `EntityDescriptor`), inline; or else
    /// `entity_id`, `sso_url` and `certificates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<String>,
    /// SAML: where AuthnRequests go (by HTTP-Redirect; `sso_binding = "post"` for HTTP-POST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sso_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sso_binding: Option<String>,
    /// SAML: the certificates its signatures are verified with (base64 DER or PEM), and only
    /// those (never one a message carries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<String>,
    /// SAML: sign our AuthnRequests (Redirect: the query; POST: enveloped).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub sign_requests: bool,
    /// SAML: refuse an assertion that comes in the clear (for an IdP known to encrypt to our
    /// SP metadata's certificate: an unencrypted one is then not its usual answer, and its
    /// attributes would have crossed the browser readable). Default: either is accepted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub want_assertions_encrypted: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn basic() -> String {
    "client_secret_basic".into()
}
fn default_scopes() -> String {
    "openid email profile".into()
}
fn sub() -> String {
    "sub".into()
}
fn yes() -> bool {
    true
}
/// Settings shown as they were given: the default left out.
fn is_true(b: &bool) -> bool {
    *b
}

/// An id a setting is named by in URLs, links and logs: 1-64 letters, digits, `-` or `_`.
pub fn is_setting_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl IdentityProvider {
    pub fn validate(&self, i: usize) -> anyhow::Result<()> {
        let at = format!("identity_providers[{i}] ({})", self.id);
        if !is_setting_id(&self.id) {
            anyhow::bail!("{at}: id must be 1-64 letters, digits, '-' or '_'");
        }
        if self.kind == UpstreamKind::Saml {
            // Read as it will be at each sign-in: an error is the operator's to see now.
            return crate::saml::sp::IdpConfig::of(self).map(|_| ()).map_err(|e| anyhow::anyhow!("{at}: {e}"));
        }
        if self.metadata.is_some() || self.entity_id.is_some() || self.sso_url.is_some() || !self.certificates.is_empty() || self.want_assertions_encrypted {
            anyhow::bail!("{at}: metadata, entity_id, sso_url, certificates and want_assertions_encrypted are for kind = \"saml\"");
        }
        if self.client_id.is_empty() {
            anyhow::bail!("{at}: client_id is required");
        }
        match self.token_endpoint_auth_method.as_str() {
            "client_secret_basic" | "client_secret_post" if self.client_secret.as_deref().is_none_or(str::is_empty) => {
                anyhow::bail!("{at}: client_secret is required (or token_endpoint_auth_method = \"private_key_jwt\" or \"none\")")
            }
            "private_key_jwt" if self.private_key_file.is_none() => anyhow::bail!("{at}: private_key_jwt needs private_key_file"),
            "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none" => {}
            _ => anyhow::bail!("{at}: token_endpoint_auth_method must be client_secret_basic, client_secret_post, private_key_jwt or none"),
        }
        if self.token_endpoint_auth_method != "private_key_jwt" && (self.private_key_file.is_some() || self.client_assertion_alg.is_some()) {
            anyhow::bail!("{at}: private_key_file and client_assertion_alg are for token_endpoint_auth_method = \"private_key_jwt\"");
        }
        let urls = [&self.issuer, &self.authorization_endpoint, &self.token_endpoint, &self.userinfo_endpoint, &self.jwks_uri];
        for u in urls.into_iter().flatten() {
            let parsed = url::Url::parse(u).map_err(|e| anyhow::anyhow!("{at}: {u}: {e}"))?;
            if !matches!(parsed.scheme(), "https" | "http") {
                anyhow::bail!("{at}: {u} is not an http(s) URL");
            }
        }
        match self.kind {
            UpstreamKind::Oidc if self.issuer.is_none() => anyhow::bail!("{at}: an OpenID provider needs its issuer"),
            UpstreamKind::Oauth2 if self.authorization_endpoint.is_none() || self.token_endpoint.is_none() || self.userinfo_endpoint.is_none() => {
                anyhow::bail!("{at}: kind = \"oauth2\" needs authorization_endpoint, token_endpoint and userinfo_endpoint")
            }
            _ => Ok(()),
        }
    }
}
