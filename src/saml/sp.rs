//! Authrim as a SAML 2.0 service provider (issue 33, slice 4): a SAML identity provider is
//! an upstream (`kind = "saml"` in `[[identity_providers]]`) beside OpenID ones. This is the
//! protocol only (the HTTP side is `endpoints::saml::acs`): the IdP's configuration read,
//! the AuthnRequest we send (Profiles §4.1.4.1) by either binding, the checks a verified
//! Response must pass (Profiles §4.1.4.3, Core §2.5.1, §3.2.2), the attributes as claims,
//! and our SP metadata.

use super::response::{insert_after_issuer, text};
use super::signer::Signer;
use super::xml::{self, AssertionIn, Limits, ResponseIn};
use super::SamlError;
use crate::config::upstreams::IdentityProvider;
use crate::registry::clients::saml::{BINDING_POST, BINDING_REDIRECT};
use base64::Engine as _;
use chrono::{TimeZone, Utc};
use samael::key_info::{KeyInfo, X509Data};
use samael::metadata::{EntityDescriptor, IndexedEndpoint, KeyDescriptor, SpSsoDescriptor};
use samael::schema::{AuthnRequest, Issuer, NameIdPolicy};
use samael::traits::ToXml as _;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write as _;

pub const ACS_PATH: &str = "/saml/acs";
pub const SP_METADATA_PATH: &str = "/saml/sp-metadata";
const RSA_SHA256: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
const SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";
const NAMEID_TRANSIENT: &str = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";
/// An IdP's metadata is the operator's configuration, not a message: a larger bound.
const METADATA_LIMITS: Limits = Limits { max_message_bytes: 1 << 20, max_depth: 32 };

/// Our entity ID as a service provider: not the IdP's (`entity_id`), so that an IdP that
/// knows us both ways tells the two apart.
pub fn sp_entity_id(issuer: &str) -> String {
    format!("{issuer}/saml/sp")
}

pub fn acs_url(issuer: &str) -> String {
    format!("{issuer}{ACS_PATH}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SsoBinding {
    Redirect,
    Post,
}

/// A SAML upstream as used: from its metadata, or its fields.
#[derive(Debug, Clone)]
pub struct IdpConfig {
    pub entity_id: String,
    pub sso_url: String,
    pub binding: SsoBinding,
    pub certs_der: Vec<Vec<u8>>,
    pub sign_requests: bool,
}

impl IdpConfig {
    pub fn of(p: &IdentityProvider) -> Result<Self, String> {
        let (entity_id, sso_url, binding, certs_der) = match &p.metadata {
            Some(md) => {
                if p.entity_id.is_some() || p.sso_url.is_some() || !p.certificates.is_empty() {
                    return Err("metadata, or entity_id with sso_url and certificates: not both".into());
                }
                let m = xml::check_safe(md, &METADATA_LIMITS).and_then(|_| xml::parse_idp_metadata(md, &METADATA_LIMITS)).map_err(|e| format!("metadata: {e}"))?;
                // Redirect preferred: the request then needs no page of ours to carry it.
                let pick = |b: &str| m.sso.iter().find(|(binding, _)| binding == b).map(|(_, l)| l.clone());
                let (binding, url) = match (pick(BINDING_REDIRECT), pick(BINDING_POST)) {
                    (Some(url), _) => (SsoBinding::Redirect, url),
                    (None, Some(url)) => (SsoBinding::Post, url),
                    _ => return Err("metadata: no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding".into()),
                };
                (m.entity_id, url, binding, m.signing_certs)
            }
            None => {
                let (Some(entity_id), Some(url)) = (&p.entity_id, &p.sso_url) else {
                    return Err("kind = \"saml\" needs metadata, or entity_id, sso_url and certificates".into());
                };
                let binding = match p.sso_binding.as_deref() {
                    None | Some("redirect") => SsoBinding::Redirect,
                    Some("post") => SsoBinding::Post,
                    Some(_) => return Err("sso_binding must be \"redirect\" or \"post\"".into()),
                };
                let certs = p.certificates.iter().map(|c| xml::certificate_der(c)).collect::<Result<Vec<_>, _>>().map_err(|e| format!("certificates: {e}"))?;
                if certs.is_empty() || entity_id.trim().is_empty() {
                    return Err("entity_id and at least one certificate are required".into());
                }
                (entity_id.trim().to_string(), url.clone(), binding, certs)
            }
        };
        let parsed = url::Url::parse(&sso_url).map_err(|e| format!("{sso_url}: {e}"))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err(format!("{sso_url} is not an http(s) URL"));
        }
        Ok(IdpConfig { entity_id, sso_url, binding, certs_der, sign_requests: p.sign_requests })
    }
}

fn at(epoch: i64) -> chrono::DateTime<Utc> {
    Utc.timestamp_opt(epoch, 0).single().unwrap_or_default()
}

/// Our AuthnRequest (Profiles §4.1.4.1): answer by HTTP-POST to our ACS; `force_authn` when
/// the application asked for a fresh sign-in (`prompt=login`, `max_age=0`).
pub fn authn_request(idp: &IdpConfig, issuer: &str, id: &str, now: i64, force_authn: bool) -> Result<String, SamlError> {
    let r = AuthnRequest {
        id: id.to_string(),
        version: "2.0".into(),
        issue_instant: at(now),
        destination: Some(idp.sso_url.clone()),
        issuer: Some(Issuer { value: Some(text(&sp_entity_id(issuer))), ..Default::default() }),
        assertion_consumer_service_url: Some(acs_url(issuer)),
        protocol_binding: Some(BINDING_POST.into()),
        name_id_policy: Some(NameIdPolicy { format: None, sp_name_qualifier: None, allow_create: Some(true) }),
        force_authn: force_authn.then_some(true),
        ..Default::default()
    };
    r.to_string().map_err(|e| SamlError::Internal(format!("AuthnRequest: {e}")))
}

/// The HTTP-POST binding's request: signed enveloped (the signature after the `Issuer`).
pub fn signed_enveloped(signer: &Signer, xml: &str, id: &str) -> Result<String, SamlError> {
    let mut xml = xml.to_string();
    insert_after_issuer(&mut xml, &signer.template(id)?)?;
    signer.sign(&xml)
}

/// The HTTP-Redirect binding's URL (Bindings §3.4.4): the request DEFLATEd, base64, and when
/// `signer` is given, signed over `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as sent.
pub fn redirect_url(sso_url: &str, xml: &str, relay_state: &str, signer: Option<&Signer>) -> Result<String, SamlError> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    let deflated = e.write_all(xml.as_bytes()).and_then(|_| e.finish()).map_err(|e| SamlError::Internal(format!("deflate: {e}")))?;
    let enc = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut query = format!("SAMLRequest={}&RelayState={}", enc(&b64.encode(deflated)), enc(relay_state));
    if let Some(s) = signer {
        query.push_str("&SigAlg=");
        query.push_str(&enc(RSA_SHA256));
        let signature = s.sign_bytes(query.as_bytes())?;
        query.push_str("&Signature=");
        query.push_str(&enc(&b64.encode(signature)));
    }
    let sep = if sso_url.contains('?') { '&' } else { '?' };
    Ok(format!("{sso_url}{sep}{query}"))
}

/// What a Response must match: ours, for the request the RelayState carried.
pub struct Expect<'a> {
    pub idp: &'a IdpConfig,
    pub sp_entity_id: &'a str,
    pub acs_url: &'a str,
    pub request_id: &'a str,
    pub now: i64,
    pub skew: i64,
}

/// The checks of Profiles §4.1.4.3 on a Response whose signature `xml::verified_response`
/// has checked: its one assertion, or why it signs nobody in.
pub fn check<'a>(r: &'a ResponseIn, e: &Expect<'_>) -> Result<&'a AssertionIn, String> {
    if r.status != SUCCESS {
        return Err(format!("the identity provider answered {}{}", r.status, r.sub_status.as_deref().map(|s| format!(" ({s})")).unwrap_or_default()));
    }
    let a = r.assertion.as_ref().ok_or("no assertion")?;
    if r.issuer.as_deref().is_some_and(|i| i != e.idp.entity_id) || a.issuer != e.idp.entity_id {
        return Err("Issuer is not the configured identity provider".into());
    }
    if r.destination.as_deref().is_some_and(|d| d != e.acs_url) {
        return Err("Destination is not our ACS".into());
    }
    if a.recipient.as_deref() != Some(e.acs_url) {
        return Err("the bearer confirmation's Recipient is not our ACS".into());
    }
    // Unsolicited Responses (IdP-initiated) are not accepted: each answers a request of ours.
    if r.in_response_to.as_deref().is_some_and(|i| i != e.request_id) || a.in_response_to.as_deref() != Some(e.request_id) {
        return Err("InResponseTo is not the request this browser sent".into());
    }
    if !a.audiences.iter().any(|x| x == e.sp_entity_id) {
        return Err("Audience is not our entity ID".into());
    }
    if a.not_before.is_some_and(|t| e.now + e.skew < t) {
        return Err("the assertion is not valid yet (NotBefore)".into());
    }
    if a.not_on_or_after.is_some_and(|t| e.now - e.skew >= t) {
        return Err("the assertion has expired (Conditions NotOnOrAfter)".into());
    }
    match a.confirmation_not_on_or_after {
        Some(t) if e.now - e.skew < t => {}
        Some(_) => return Err("the assertion has expired (SubjectConfirmationData NotOnOrAfter)".into()),
        None => return Err("the bearer confirmation has no NotOnOrAfter".into()),
    }
    if a.name_id.trim().is_empty() {
        return Err("an empty NameID".into());
    }
    // The NameID is the link key: a transient one would make a new user at every sign-in.
    if a.name_id_format.as_deref() == Some(NAMEID_TRANSIENT) {
        return Err("a transient NameID cannot identify a user across sign-ins".into());
    }
    Ok(a)
}

/// Until when the assertion's ID is kept as used: as long as it could be accepted.
pub fn usable_until(a: &AssertionIn, skew: i64) -> i64 {
    a.confirmation_not_on_or_after.into_iter().chain(a.not_on_or_after).max().unwrap_or(0) + skew
}

/// Our claims and the attribute names (or OIDs, SAML's `urn:oasis:names:tc:SAML:2.0:attrname-format:uri`
/// names of the eduPerson/inetOrgPerson schemas, and AD FS's claim URIs) they come from by default.
const DEFAULTS: &[(&str, &[&str])] = &[
    ("email", &["mail", "email", "emailAddress", "urn:oid:0.9.2342.19200300.100.1.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"]),
    ("name", &["displayName", "urn:oid:2.16.840.1.113730.3.1.241", "cn", "urn:oid:2.5.4.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"]),
    ("given_name", &["givenName", "urn:oid:2.5.4.42", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"]),
    ("family_name", &["sn", "surname", "urn:oid:2.5.4.4", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"]),
    ("preferred_username", &["uid", "urn:oid:0.9.2342.19200300.100.1.1"]),
];

/// The assertion's attributes as our claims: `mapping` (ours = their attribute's Name) first,
/// else the defaults; the first value of each. `email_verified` only if mapped (SAML has no
/// such attribute): "true" or "1".
pub fn claims(a: &AssertionIn, mapping: &BTreeMap<String, String>) -> Map<String, Value> {
    let first = |name: &str| a.attributes.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.iter().map(|s| s.trim()).find(|s| !s.is_empty())).map(str::to_string);
    let mut out = Map::new();
    for (claim, names) in DEFAULTS {
        let found = match mapping.get(*claim) {
            Some(theirs) => first(theirs),
            None => names.iter().find_map(|n| first(n)),
        };
        if let Some(v) = found {
            out.insert(claim.to_string(), Value::String(v));
        }
    }
    for (ours, theirs) in mapping.iter().filter(|(k, _)| !DEFAULTS.iter().any(|(d, _)| d == k)) {
        if let Some(v) = first(theirs) {
            let v = if ours == "email_verified" { Value::Bool(matches!(v.as_str(), "true" | "1")) } else { Value::String(v) };
            out.insert(ours.clone(), v);
        }
    }
    out
}

/// Our SP metadata (SAML Metadata §2.4.4), for an IdP's registration of us: the ACS (HTTP-POST),
/// the certificate of each RSA key that signs or is about to (rollover), of each RSA
/// encryption key an IdP may encrypt assertions to (active and next: rollover too), signed
/// assertions wanted.
pub fn metadata(certs_base64: Vec<String>, encryption_certs_base64: Vec<String>, issuer: &str, requests_signed: bool) -> Result<String, SamlError> {
    let sp = SpSsoDescriptor {
        protocol_support_enumeration: Some(PROTOCOL.into()),
        key_descriptors: Some(
            certs_base64
                .into_iter()
                .map(|c| KeyDescriptor { key_use: Some("signing".into()), key_info: KeyInfo { id: None, x509_data: Some(X509Data { certificates: vec![c] }) }, encryption_methods: None })
                .chain(encryption_certs_base64.into_iter().map(super::metadata::encryption_descriptor))
                .collect(),
        ),
        authn_requests_signed: Some(requests_signed),
        want_assertions_signed: Some(true),
        assertion_consumer_services: vec![IndexedEndpoint { binding: BINDING_POST.into(), location: acs_url(issuer), response_location: None, index: 0, is_default: Some(true) }],
        ..Default::default()
    };
    let entity = EntityDescriptor { entity_id: Some(sp_entity_id(issuer)), sp_sso_descriptors: Some(vec![sp]), ..Default::default() };
    entity.to_string().map_err(|e| SamlError::Internal(format!("SP metadata: {e}")))
}

#[cfg(test)]
#[path = "sp_tests.rs"]
mod tests;
