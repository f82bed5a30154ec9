//! A SAML 2.0 service provider (issue 33) is a client whose metadata carries `saml`: as in
//! Keycloak, one registry, so the name, logo, assignments, `require_mfa`/`require_passkey`,
//! organizations, consent and the start page apply to it as to an OpenID client. Such a
//! client has no grant types, no redirect URIs and no secret: nothing of it works at
//! `/authorize` or `/token`; it signs users in through `/saml/sso` only (`crate::saml`).
//!
//! Set by an operator only (the admin API, the CLI, the console), never by dynamic
//! registration.

use serde::{Deserialize, Serialize};

/// SAML Bindings §3.5: the only binding a Response goes back by (the Artifact binding is not
/// supported).
pub const BINDING_POST: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
pub const BINDING_REDIRECT: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
/// Bindings §3.2: Single Logout's back channel.
pub const BINDING_SOAP: &str = "urn:oasis:names:tc:SAML:2.0:bindings:SOAP";

/// SAML Core §8.3: the NameID formats we issue.
pub const NAMEID_PERSISTENT: &str = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
pub const NAMEID_TRANSIENT: &str = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";
pub const NAMEID_EMAIL: &str = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
pub const NAMEID_UNSPECIFIED: &str = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified";
pub const NAMEID_FORMATS: &[&str] = &[NAMEID_PERSISTENT, NAMEID_TRANSIENT, NAMEID_EMAIL, NAMEID_UNSPECIFIED];

/// SAML Core §2.7.3.1: attribute name formats.
pub const ATTRNAME_BASIC: &str = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic";
pub const ATTRNAME_URI: &str = "urn:oasis:names:tc:SAML:2.0:attrname-format:uri";
pub const ATTRNAME_UNSPECIFIED: &str = "urn:oasis:names:tc:SAML:2.0:attrname-format:unspecified";

/// Bounds on what one service provider holds.
const MAX_ACS: usize = 16;
const MAX_CERTS: usize = 4;
const MAX_ATTRIBUTES: usize = 64;
const MAX_TEXT: usize = 1024;
/// A certificate as registered (PEM or base64 DER): RSA-4096 certificates are about 2 KB.
const MAX_CERT_CHARS: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SamlServiceProvider {
    /// SAML Metadata §2.3.2: the SP's `entityID`, the `Issuer` of its requests and the
    /// `Audience` of our assertions. Unique in the tenant.
    pub entity_id: String,
    /// Where Responses go (HTTP-POST only): an AuthnRequest's `AssertionConsumerServiceURL`
    /// must be one of these exactly, or its index name one.
    pub acs: Vec<AssertionConsumerService>,
    /// SAML Metadata §2.4.2: the SP's SingleLogoutService, where our LogoutRequests and
    /// LogoutResponses go (`endpoints::saml::slo`), by `slo_binding`. None: it cannot be told
    /// of a logout, and cannot ask for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_url: Option<String>,
    /// The binding `slo_url` takes our messages by: `redirect` (default) or `post`, for an SP
    /// whose SingleLogoutService is HTTP-POST only.
    #[serde(default, skip_serializing_if = "SloBinding::is_redirect")]
    pub slo_binding: SloBinding,
    /// The SP's SingleLogoutService by the SOAP binding (Bindings §3.2), if it has one: then
    /// every end of a session it took part in, with a browser or without (an operator, a
    /// password change, the account page), is sent there from the server, through the
    /// durable outbox (`logout::saml_soap`), instead of through the logout page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_soap_url: Option<String>,
    /// The SP's signing certificates (PEM or base64 DER): a signed AuthnRequest must verify
    /// with one of them. None: its requests cannot be signed, and are accepted unsigned
    /// unless `require_signed_requests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signing_certificates: Vec<String>,
    /// Refuse AuthnRequests that are not signed (SAML Metadata §2.4.4 `AuthnRequestsSigned`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_signed_requests: bool,
    /// The `NameID` format: `persistent` (default: opaque, the same for this SP whenever
    /// asked, another for every other SP), `transient` (opaque, another each login session),
    /// `emailAddress`, or `unspecified` (the username).
    #[serde(default = "default_name_id_format")]
    pub name_id_format: String,
    /// The attributes of our assertions, from the user's claims; empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<SamlAttribute>,
    /// Sign the Response as well as the Assertion (the Assertion is always signed).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub sign_response: bool,
    /// The SP's encryption certificates (PEM or base64 DER; the first is used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub encryption_certificates: Vec<String>,
    /// Encrypt assertions to it (AES-256-GCM, the key by RSA-OAEP), signed inside.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub encrypt_assertions: bool,
    /// IdP-initiated SSO (Profiles §4.1.5): listed on the start and account pages, signed into
    /// from there with an unsolicited Response. Off unless set: such a Response answers no
    /// request, so the SP must accept unsolicited ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idp_initiated: bool,
    /// The RelayState an IdP-initiated Response carries (where in the SP to land), set by the
    /// operator: never taken from the browser's request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_relay_state: Option<String>,
    /// Ask the user's consent before the attributes are first released to it (the consent
    /// page names them by the scopes their claims belong to; the answer is remembered as an
    /// OpenID client's is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub consent: bool,
}

/// How a Single Logout message reaches an SP (SAML Bindings §3.4, §3.5). Written short, read
/// short or as the binding's URN (what metadata says).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum SloBinding {
    /// A URL the browser is sent to, the message signed over the query.
    #[default]
    #[serde(rename = "redirect", alias = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect")]
    Redirect,
    /// A form our page posts, the message signed in its XML (enveloped).
    #[serde(rename = "post", alias = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")]
    Post,
}

impl SloBinding {
    fn is_redirect(&self) -> bool {
        *self == SloBinding::Redirect
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionConsumerService {
    pub index: u32,
    pub url: String,
    /// The one used when a request names neither an URL nor an index.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_default: bool,
}

/// One `saml:Attribute` of our assertions: `name` (with `name_format`) carrying the values of
/// the user's claim `claim` (`groups` and `roles`: the user's, as the client's tokens would
/// carry them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SamlAttribute {
    pub name: String,
    pub claim: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friendly_name: Option<String>,
}

fn default_name_id_format() -> String {
    NAMEID_PERSISTENT.into()
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl SamlServiceProvider {
    pub fn validate(&self) -> Result<(), String> {
        let text = |what: &str, v: &str| match v.is_empty() || v.len() > MAX_TEXT || v.chars().any(char::is_control) {
            true => Err(format!("saml.{what}: 1-{MAX_TEXT} characters, no control characters")),
            false => Ok(()),
        };
        text("entity_id", &self.entity_id)?;
        if self.acs.is_empty() || self.acs.len() > MAX_ACS {
            return Err(format!("saml.acs: 1-{MAX_ACS} assertion consumer services"));
        }
        for (i, a) in self.acs.iter().enumerate() {
            super::validation::validate_web_uri(&a.url).map_err(|e| format!("saml.acs: {e}"))?;
            if self.acs[..i].iter().any(|b| b.index == a.index) {
                return Err(format!("saml.acs: index {} is given twice", a.index));
            }
        }
        if self.acs.iter().filter(|a| a.is_default).count() > 1 {
            return Err("saml.acs: at most one is_default".into());
        }
        if let Some(u) = &self.slo_url {
            super::validation::validate_web_uri(u).map_err(|e| format!("saml.slo_url: {e}"))?;
        }
        if let Some(u) = &self.slo_soap_url {
            super::validation::validate_web_uri(u).map_err(|e| format!("saml.slo_soap_url: {e}"))?;
        }
        if self.signing_certificates.len() > MAX_CERTS {
            return Err(format!("saml.signing_certificates: at most {MAX_CERTS}"));
        }
        for c in &self.signing_certificates {
            certificate_der(c).map_err(|e| format!("saml.signing_certificates: {e}"))?;
        }
        if self.encryption_certificates.len() > MAX_CERTS {
            return Err(format!("saml.encryption_certificates: at most {MAX_CERTS}"));
        }
        for c in &self.encryption_certificates {
            let der = certificate_der(c).map_err(|e| format!("saml.encryption_certificates: {e}"))?;
            let rsa = x509_parser::parse_x509_certificate(&der).is_ok_and(|(_, cert)| {
                aws_lc_rs::rsa::PublicEncryptingKey::from_der(cert.public_key().raw).is_ok()
            });
            if !rsa {
                return Err("saml.encryption_certificates: an RSA key is needed (RSA-OAEP)".into());
            }
        }
        if self.encrypt_assertions && self.encryption_certificates.is_empty() {
            return Err("saml.encrypt_assertions needs encryption_certificates".into());
        }
        if let Some(r) = &self.default_relay_state {
            text("default_relay_state", r)?;
        }
        if self.require_signed_requests && self.signing_certificates.is_empty() {
            return Err("saml.require_signed_requests needs signing_certificates".into());
        }
        if !NAMEID_FORMATS.contains(&self.name_id_format.as_str()) {
            return Err(format!("saml.name_id_format: one of {}", NAMEID_FORMATS.join(", ")));
        }
        if self.attributes.len() > MAX_ATTRIBUTES {
            return Err(format!("saml.attributes: at most {MAX_ATTRIBUTES}"));
        }
        for (i, a) in self.attributes.iter().enumerate() {
            text("attributes.name", &a.name)?;
            if let Some(f) = &a.friendly_name {
                text("attributes.friendly_name", f)?;
            }
            if !attribute_claims().contains(&a.claim.as_str()) {
                return Err(format!("saml.attributes: {:?} is not a claim; one of {}", a.claim, attribute_claims().join(", ")));
            }
            if a.name_format.as_deref().is_some_and(|f| ![ATTRNAME_BASIC, ATTRNAME_URI, ATTRNAME_UNSPECIFIED].contains(&f)) {
                return Err("saml.attributes.name_format: basic, uri or unspecified (their URNs)".into());
            }
            if self.attributes[..i].iter().any(|b| b.name == a.name) {
                return Err(format!("saml.attributes: {:?} is given twice", a.name));
            }
        }
        Ok(())
    }

    /// The certificate assertions are encrypted to, as DER, if they are to be.
    pub fn encryption_cert_der(&self) -> Option<Vec<u8>> {
        self.encrypt_assertions.then(|| self.encryption_certificates.first().and_then(|c| certificate_der(c).ok())).flatten()
    }

    /// What a sign-in asks consent for: the scopes of the claims its attributes carry
    /// (`openid` for the sign-in itself, `profile`, `email`...), or nothing without `consent`.
    pub fn consent_scope(&self) -> String {
        if !self.consent {
            return String::new();
        }
        let mut scopes = vec!["openid"];
        for (scope, claims) in crate::registry::users::SCOPE_CLAIMS {
            if self.attributes.iter().any(|a| claims.contains(&a.claim.as_str())) {
                scopes.push(scope);
            }
        }
        scopes.join(" ")
    }

    /// The signing certificates as DER (validated at registration).
    pub fn signing_certs_der(&self) -> Vec<Vec<u8>> {
        self.signing_certificates.iter().filter_map(|c| certificate_der(c).ok()).collect()
    }

    /// SAML Core §3.4.1: the ACS a request names, by URL (exactly) or index; neither: the
    /// default (or the first). `None`: it names one that is not registered.
    pub fn acs_for(&self, url: Option<&str>, index: Option<u32>) -> Option<&AssertionConsumerService> {
        match (url, index) {
            (Some(u), _) => self.acs.iter().find(|a| a.url == u),
            (None, Some(i)) => self.acs.iter().find(|a| a.index == i),
            (None, None) => self.acs.iter().find(|a| a.is_default).or(self.acs.first()),
        }
    }
}

/// The claims an attribute can carry: the user's standard claims (`sub` among them), the
/// username, and the directory's; each once (the console lists them).
pub fn attribute_claims() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = crate::registry::users::supported_claims().to_vec();
    for extra in ["sub", "username", "groups", "roles"] {
        if !all.contains(&extra) {
            all.push(extra);
        }
    }
    all
}

/// A certificate given as PEM or as base64 DER (what metadata's `X509Certificate` holds),
/// checked to be X.509.
pub fn certificate_der(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    if text.len() > MAX_CERT_CHARS {
        return Err("a certificate is longer than 16 KB".into());
    }
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body.as_bytes()).map_err(|_| "not PEM or base64 DER".to_string())?;
    x509_parser::parse_x509_certificate(&der).map_err(|_| "not an X.509 certificate".to_string())?;
    Ok(der)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_attribute_claims_are_each_listed_once_and_include_sub_username_and_the_directory_s() {
        let all = super::attribute_claims();
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "{all:?}");
        for c in ["sub", "username", "groups", "roles", "email", "name"] {
            assert!(all.contains(&c), "{c} missing from {all:?}");
        }
    }
}
