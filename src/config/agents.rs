//! Settings for agents and MCP clients: Client ID Metadata Documents, resource servers
//! (RFC 8707) and the issuers whose assertions (ID-JAG, or generic RFC 7523 JWT bearer
//! assertions) are trusted at the `jwt-bearer` grant. Resource servers
//! and trusted issuers are tables, so they come from the TOML file only:
//!
//! ```toml
//! [[resource_servers]]
//! uri = "https://mcp.example.com/mcp"
//! name = "Example MCP server"
//! client_id = "mcp-introspector"          # optional: the client it introspects as
//! scopes = { "mcp:tools" = "Call the server's tools" }
//!
//! [[trusted_issuers]]
//! issuer = "https://idp.example.com"
//! jwks_uri = "https://idp.example.com/jwks"   # optional: else from the issuer's metadata
//! subject = "email"                          # or "sub": how its users map to ours
//! accept = ["id-jag", "jwt-bearer"]          # optional: which assertions; default ["id-jag"];
//!                                            # "login-hint-token" for CIBA's login_hint_token
//! clients = ["reports-agent"]                # optional: who may present them; default any
//! scopes = ["reports"]                       # optional: the most they may obtain; default any
//! ```

use super::Config;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResourceServer {
    /// The resource indicator (RFC 8707 §2): an absolute URI without a fragment; tokens for it
    /// carry it as `aud`.
    pub uri: String,
    /// Shown on the consent page.
    pub name: String,
    /// Scopes this resource understands, with the words the consent page shows for each.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// The client this resource server authenticates as at `/introspect`: it is told a token
    /// is active only if the token was issued for this resource.
    #[serde(default)]
    pub client_id: Option<String>,
    /// Whether an OAuth request (no `openid`) for this resource gets a refresh token without
    /// `offline_access`; unset = `oauth_refresh_tokens`. A request naming several resources
    /// gets one only if every one of them allows it.
    #[serde(default)]
    pub refresh_tokens: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrustedIssuer {
    pub issuer: String,
    /// Where its signing keys are; by default its RFC 8414 (or OpenID) metadata's `jwks_uri`.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    #[serde(default)]
    pub subject: SubjectMapping,
    /// Which kinds of assertion it may present. The default is ID-JAGs alone: a generic
    /// assertion asserts whatever its issuer says, so an operator opts in per issuer.
    #[serde(default = "id_jag_only")]
    pub accept: Vec<AssertionKind>,
    /// The clients that may present its assertions; unset = any authenticated client with
    /// the grant (an ID-JAG still only by the client its `client_id` names).
    #[serde(default)]
    pub clients: Option<Vec<String>>,
    /// The most scope its assertions may obtain (a ceiling over what the client may have);
    /// unset = no ceiling of the issuer's own.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
}

impl Default for TrustedIssuer {
    fn default() -> Self {
        Self { issuer: String::new(), jwks_uri: None, subject: SubjectMapping::default(), accept: id_jag_only(), clients: None, scopes: None }
    }
}

fn id_jag_only() -> Vec<AssertionKind> {
    vec![AssertionKind::IdJag]
}

/// The kinds of assertion the `jwt-bearer` grant tells apart, by the JOSE header's `typ`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum AssertionKind {
    /// Identity Assertion JWT Authorization Grants (`typ` oauth-id-jag+jwt).
    #[serde(rename = "id-jag")]
    IdJag,
    /// Any other RFC 7523 §2.1 assertion (`typ` JWT or none).
    #[serde(rename = "jwt-bearer")]
    JwtBearer,
    /// CIBA's `login_hint_token` (CIBA Core §7.1): a JWT naming the user a backchannel
    /// authentication request is for (`grants::jwt_bearer::login_hint`); no grant of its own.
    #[serde(rename = "login-hint-token")]
    LoginHintToken,
}

/// How an assertion's subject names one of our users.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SubjectMapping {
    /// The assertion's `email` claim equals a user's `email` claim, verified on both sides.
    #[default]
    Email,
    /// The assertion's `sub` is our user's id or username (issuers sharing our user base).
    Sub,
}

/// Who may use a URL as a `client_id` (Client ID Metadata Documents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentPolicy {
    Off,
    Any,
    Listed(Vec<String>),
}

impl DocumentPolicy {
    pub fn allows_host(&self, host: &str) -> bool {
        match self {
            DocumentPolicy::Off => false,
            DocumentPolicy::Any => true,
            DocumentPolicy::Listed(hosts) => hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
        }
    }
}

impl Config {
    pub fn document_policy(&self) -> DocumentPolicy {
        match self.client_id_metadata_documents.as_str() {
            "any" => DocumentPolicy::Any,
            "listed" => DocumentPolicy::Listed(crate::util::split_list(&self.client_id_metadata_document_hosts).map(str::to_string).collect()),
            _ => DocumentPolicy::Off,
        }
    }

    pub fn resource_server(&self, uri: &str) -> Option<&ResourceServer> {
        self.resource_servers.iter().find(|r| r.uri == uri)
    }

    pub fn trusted_issuer(&self, issuer: &str) -> Option<&TrustedIssuer> {
        self.trusted_issuers.iter().find(|t| t.issuer == issuer)
    }

    /// `resource_servers`: a tenant's too (`validate_overridable`).
    pub(super) fn validate_resource_servers(&self) -> anyhow::Result<()> {
        for (i, r) in self.resource_servers.iter().enumerate() {
            crate::registry::clients::validate_resource(&r.uri).map_err(|e| anyhow::anyhow!("resource_servers[{i}]: {e}"))?;
            if self.resource_servers[..i].iter().any(|o| o.uri == r.uri) {
                anyhow::bail!("resource_servers: {} is listed twice", r.uri);
            }
            for s in r.scopes.keys() {
                if s.is_empty() || s.contains(' ') || s == "openid" {
                    anyhow::bail!("resource_servers[{i}]: scope {s:?} is not a resource scope");
                }
            }
        }
        Ok(())
    }

    pub(super) fn validate_agents(&self) -> anyhow::Result<()> {
        if !matches!(self.client_id_metadata_documents.as_str(), "off" | "any" | "listed") {
            anyhow::bail!("client_id_metadata_documents must be off, any or listed");
        }
        if self.client_id_metadata_document_max_entries == 0
            || self.client_jwks_cache_max_entries == 0
            || self.max_concurrent_fetches == 0
            || self.id_jag_lifetime == 0
        {
            anyhow::bail!(
                "client_id_metadata_document_max_entries, client_jwks_cache_max_entries, max_concurrent_fetches and id_jag_lifetime must be positive"
            );
        }
        for (i, t) in self.trusted_issuers.iter().enumerate() {
            let u = url::Url::parse(&t.issuer).map_err(|e| anyhow::anyhow!("trusted_issuers[{i}].issuer: {e}"))?;
            if !matches!(u.scheme(), "https" | "http") || u.query().is_some() || u.fragment().is_some() {
                anyhow::bail!("trusted_issuers[{i}].issuer must be an https URL without query or fragment");
            }
            if t.issuer == self.issuer {
                anyhow::bail!("trusted_issuers[{i}]: Authrim does not trust itself as an assertion issuer");
            }
            if self.trusted_issuers[..i].iter().any(|o| o.issuer == t.issuer) {
                anyhow::bail!("trusted_issuers: {} is listed twice", t.issuer);
            }
            if t.accept.is_empty() {
                anyhow::bail!("trusted_issuers[{i}].accept: name id-jag, jwt-bearer, login-hint-token or several (leave it out for id-jag alone)");
            }
            let blank = |l: &Option<Vec<String>>| l.as_ref().is_some_and(|l| l.iter().any(|s| s.is_empty() || s.contains(' ')));
            if blank(&t.clients) || blank(&t.scopes) {
                anyhow::bail!("trusted_issuers[{i}]: clients and scopes are lists of single non-empty words");
            }
        }
        Ok(())
    }
}
