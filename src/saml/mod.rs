//! SAML 2.0 (issue 33; docs/design/saml.md): the protocol, below its HTTP endpoints
//! (`endpoints::saml`). Authrim is a SAML identity provider for applications that speak only
//! SAML, over the same sign-in as OpenID clients. The only module that sees samael, xmlsec1
//! or OpenSSL: the rest of Authrim gets plain values.

pub mod authn_context;
pub mod encrypt;
pub mod logout;
pub mod metadata;
pub mod response;
pub mod signer;
pub mod sp;
pub mod sp_metadata;
pub mod xml;

use serde::{Deserialize, Serialize};

/// SAML Core §3.2.2.2: top-level status codes, and the second-level ones we answer with.
pub mod status {
    pub const SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";
    pub const REQUESTER: &str = "urn:oasis:names:tc:SAML:2.0:status:Requester";
    pub const RESPONDER: &str = "urn:oasis:names:tc:SAML:2.0:status:Responder";
    pub const NO_PASSIVE: &str = "urn:oasis:names:tc:SAML:2.0:status:NoPassive";
    pub const REQUEST_DENIED: &str = "urn:oasis:names:tc:SAML:2.0:status:RequestDenied";
    pub const NO_AUTHN_CONTEXT: &str = "urn:oasis:names:tc:SAML:2.0:status:NoAuthnContext";
    pub const INVALID_NAMEID_POLICY: &str = "urn:oasis:names:tc:SAML:2.0:status:InvalidNameIDPolicy";
    pub const AUTHN_FAILED: &str = "urn:oasis:names:tc:SAML:2.0:status:AuthnFailed";
    /// Under Success: the session ended, but not every party of it could be told.
    pub const PARTIAL_LOGOUT: &str = "urn:oasis:names:tc:SAML:2.0:status:PartialLogout";
}

/// Where a sign-in that came as an AuthnRequest goes back to: what the interaction carries
/// (sealed, with the rest of the request) in place of a redirect URI's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamlReply {
    /// The AuthnRequest's `ID`: the Response's `InResponseTo` (none for IdP-initiated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The SP's ACS URL (one it registered, checked before the sign-in began).
    pub acs_url: String,
    /// Bindings §3.4.3: opaque to us, sent back as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_state: Option<String>,
    /// The authentication context classes the request asked for (`authn_context`): the
    /// assertion reports one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authn_contexts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamlError {
    /// The tenant has no RSA key (a FAPI deployment without RS256): SAML cannot sign.
    NoKey,
    /// Ours, not the sender's: an error page and a log line.
    Internal(String),
}

impl std::fmt::Display for SamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SamlError::NoKey => f.write_str("no RSA signing key (SAML signs with RS256 keys: add RS256 to signing_algorithms)"),
            SamlError::Internal(e) => f.write_str(e),
        }
    }
}

/// A fresh SAML ID (an xs:ID is an NCName: it may not begin with a digit).
pub fn new_id() -> String {
    format!("_{}", crate::util::random_token())
}

/// The tenant's SAML entity ID: its metadata's URL (the convention most IdPs follow, so that
/// the ID resolves to its own description).
pub fn entity_id(issuer: &str) -> String {
    format!("{issuer}{}", METADATA_PATH)
}

pub const METADATA_PATH: &str = "/saml/metadata";
pub const SSO_PATH: &str = "/saml/sso";
/// `{IDP_INITIATED_PATH}/{client_id}`: IdP-initiated SSO into that SP (`endpoints::saml::sso::initiate`).
pub const IDP_INITIATED_PATH: &str = "/saml/start";
/// Single Logout (both bindings, both directions): `endpoints::saml::slo`.
pub const SLO_PATH: &str = "/saml/slo";
