//! From samael's types to ours: parsing only, after the checks of `safe` (and, for what is
//! signed, after `verify` has reduced the document to what the signature covers).

use super::safe::{scan, NS_METADATA, NS_PROTOCOL, NS_SOAP_ENVELOPE};
use super::{AssertionIn, AuthnRequestIn, IdpMetadataIn, Limits, LogoutRequestIn, LogoutResponseIn, SpMetadataIn, XmlError};
use super::safe::{Doc, NS_ASSERTION};
use base64::Engine;
use samael::schema::{Assertion, AuthnRequest, Response};

fn bad(m: &str) -> XmlError {
    XmlError::Malformed(m.into())
}

/// samael's parsers sit on serde; a panic in one is refused like any other bad input.
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, XmlError>) -> Result<T, XmlError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(bad("unreadable message")))
}

pub(super) fn parse_authn_request(xml: &str, limits: &Limits) -> Result<AuthnRequestIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_PROTOCOL, "AuthnRequest") || doc.attr(0, "Version") != Some("2.0") {
        return Err(bad("not a SAML 2.0 AuthnRequest"));
    }
    let r: AuthnRequest = guarded(|| xml.parse().map_err(|_| bad("unreadable AuthnRequest")))?;
    let ctx = r.requested_authn_context.as_ref();
    Ok(AuthnRequestIn {
        id: r.id.clone(),
        issuer: r.issuer.as_ref().and_then(|i| i.value.as_ref()).map(|v| v.trim().to_string()),
        destination: r.destination.clone(),
        issue_instant: r.issue_instant.timestamp(),
        acs_url: r.assertion_consumer_service_url.clone(),
        acs_index: match r.assertion_consumer_service_index {
            Some(i) => Some(u32::try_from(i).map_err(|_| bad("bad AssertionConsumerServiceIndex"))?),
            None => None,
        },
        protocol_binding: r.protocol_binding.clone(),
        force_authn: r.force_authn.unwrap_or(false),
        is_passive: r.is_passive.unwrap_or(false),
        name_id_format: r.name_id_policy.as_ref().and_then(|p| p.format.clone()),
        authn_context_class_refs: ctx
            .and_then(|c| c.authn_context_class_refs.as_ref())
            .map(|v| v.iter().filter_map(|c| c.value.as_ref().map(|s| s.trim().to_string())).collect())
            .unwrap_or_default(),
        authn_context_comparison: ctx.and_then(|c| c.comparison.as_ref()).map(|c| c.value().to_string()),
        has_signature: doc.has_signature_child(0),
    })
}

pub(super) fn cert_der(b64: &str) -> Result<Vec<u8>, XmlError> {
    let compact: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(compact).map_err(|_| bad("certificate not base64"))?;
    use x509_parser::prelude::FromDer;
    x509_parser::certificate::X509Certificate::from_der(&der).map_err(|_| bad("certificate not X.509"))?;
    Ok(der)
}

pub(super) fn parse_sp_metadata(xml: &str, limits: &Limits) -> Result<SpMetadataIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_METADATA, "EntityDescriptor") {
        return Err(bad("not an EntityDescriptor"));
    }
    if doc.children(0).filter(|&c| doc.is(c, NS_METADATA, "SPSSODescriptor")).count() != 1 {
        return Err(bad("not exactly one SPSSODescriptor"));
    }
    let md: samael::metadata::EntityDescriptor = guarded(|| xml.parse().map_err(|_| bad("unreadable metadata")))?;
    let entity_id = md.entity_id.clone().filter(|e| !e.trim().is_empty()).ok_or_else(|| bad("no entityID"))?;
    let sp = match md.sp_sso_descriptors.as_deref() {
        Some([sp]) => sp,
        _ => return Err(bad("not exactly one SPSSODescriptor")),
    };
    let mut out = SpMetadataIn {
        entity_id,
        authn_requests_signed: sp.authn_requests_signed.unwrap_or(false),
        want_assertions_signed: sp.want_assertions_signed.unwrap_or(false),
        name_id_formats: sp.name_id_formats.iter().flatten().map(|f| f.trim().to_string()).collect(),
        ..Default::default()
    };
    for a in &sp.assertion_consumer_services {
        let index = u32::try_from(a.index).map_err(|_| bad("bad ACS index"))?;
        out.acs.push((index, a.binding.clone(), a.location.clone(), a.is_default.unwrap_or(false)));
    }
    for s in sp.single_logout_services.iter().flatten() {
        out.slo.push((s.binding.clone(), s.location.clone()));
    }
    for kd in sp.key_descriptors.iter().flatten() {
        let usage = kd.key_use.as_deref().map(str::trim);
        for c in kd.key_info.x509_data.iter().flat_map(|d| d.certificates.iter()) {
            let der = cert_der(c)?;
            match usage {
                None => {
                    out.signing_certs.push(der.clone());
                    out.encryption_certs.push(der);
                }
                Some("signing") => out.signing_certs.push(der),
                Some("encryption") => out.encryption_certs.push(der),
                Some(_) => return Err(bad("unknown KeyDescriptor use")),
            }
        }
    }
    Ok(out)
}

/// An IdP's `EntityDescriptor` with exactly one `IDPSSODescriptor` (SAML Metadata §2.4.3): a
/// metadata aggregate (`EntitiesDescriptor`) is refused, since which entity is meant would be
/// a guess. Its own signature, if any, is not looked at: the operator gave it, as they would
/// give a certificate.
pub(super) fn parse_idp_metadata(xml: &str, limits: &Limits) -> Result<IdpMetadataIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_METADATA, "EntityDescriptor") {
        return Err(bad("not an EntityDescriptor"));
    }
    if doc.children(0).filter(|&c| doc.is(c, NS_METADATA, "IDPSSODescriptor")).count() != 1 {
        return Err(bad("not exactly one IDPSSODescriptor"));
    }
    let md: samael::metadata::EntityDescriptor = guarded(|| xml.parse().map_err(|_| bad("unreadable metadata")))?;
    let entity_id = md.entity_id.clone().map(|e| e.trim().to_string()).filter(|e| !e.is_empty()).ok_or_else(|| bad("no entityID"))?;
    let idp = match md.idp_sso_descriptors.as_deref() {
        Some([idp]) => idp,
        _ => return Err(bad("not exactly one IDPSSODescriptor")),
    };
    let mut out = IdpMetadataIn { entity_id, ..Default::default() };
    for e in &idp.single_sign_on_services {
        out.sso.push((e.binding.trim().to_string(), e.location.trim().to_string()));
    }
    for kd in &idp.key_descriptors {
        // Encryption-only keys do not sign: never trusted to.
        if kd.key_use.as_deref().map(str::trim).is_some_and(|u| u != "signing") {
            continue;
        }
        for c in kd.key_info.x509_data.iter().flat_map(|d| d.certificates.iter()) {
            out.signing_certs.push(cert_der(c)?);
        }
    }
    if out.signing_certs.is_empty() {
        return Err(bad("no signing certificate"));
    }
    Ok(out)
}

pub(super) fn response(xml: &str) -> Result<Response, XmlError> {
    guarded(|| xml.parse().map_err(|_| bad("unreadable Response")))
}

pub(super) fn assertion(xml: &str) -> Result<Assertion, XmlError> {
    guarded(|| xml.parse().map_err(|_| bad("unreadable Assertion")))
}

const BEARER: &str = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

pub(super) fn assertion_in(a: &Assertion) -> Result<AssertionIn, XmlError> {
    let subject = a.subject.as_ref().ok_or_else(|| bad("assertion without Subject"))?;
    let name_id = subject.name_id.as_ref().ok_or_else(|| bad("assertion without NameID"))?;
    let bearer = subject
        .subject_confirmations
        .iter()
        .flatten()
        .find(|c| c.method.as_deref() == Some(BEARER))
        .and_then(|c| c.subject_confirmation_data.as_ref());
    let cond = a.conditions.as_ref();
    let authn = a.authn_statements.as_ref().and_then(|s| s.first());
    Ok(AssertionIn {
        id: a.id.clone(),
        issuer: a.issuer.value.as_deref().unwrap_or_default().trim().to_string(),
        name_id: name_id.value.clone(),
        name_id_format: name_id.format.clone(),
        in_response_to: bearer.and_then(|d| d.in_response_to.clone()),
        recipient: bearer.and_then(|d| d.recipient.clone()),
        confirmation_not_on_or_after: bearer.and_then(|d| d.not_on_or_after).map(|t| t.timestamp()),
        not_before: cond.and_then(|c| c.not_before).map(|t| t.timestamp()),
        not_on_or_after: cond.and_then(|c| c.not_on_or_after).map(|t| t.timestamp()),
        audiences: cond
            .and_then(|c| c.audience_restrictions.as_ref())
            .map(|rs| rs.iter().flat_map(|r| r.audience.iter().map(|s| s.trim().to_string())).collect())
            .unwrap_or_default(),
        session_index: authn.and_then(|s| s.session_index.clone()),
        authn_instant: authn.and_then(|s| s.authn_instant).map(|t| t.timestamp()),
        authn_context_class_ref: authn
            .and_then(|s| s.authn_context.as_ref())
            .and_then(|c| c.value.as_ref())
            .and_then(|r| r.value.clone()),
        attributes: a
            .attribute_statements
            .iter()
            .flatten()
            .flat_map(|s| s.attributes.iter())
            .map(|at| (at.name.clone().unwrap_or_default(), at.values.iter().filter_map(|v| v.value.clone()).collect()))
            .collect(),
    })
}

fn instant(v: Option<&str>) -> Result<Option<i64>, XmlError> {
    match v {
        None => Ok(None),
        Some(t) => chrono::DateTime::parse_from_rfc3339(t.trim()).map(|t| Some(t.timestamp())).map_err(|_| bad("bad instant")),
    }
}

/// The root's `ID`, `Version="2.0"`, `IssueInstant` and `Issuer` (SAML Core §3.2.1, §3.2.2):
/// what every request and response has.
pub(super) fn common(doc: &Doc) -> Result<(String, i64, Option<String>), XmlError> {
    common_at(doc, 0)
}

/// `common` of the message at element `m` (the root, or a SOAP Body's child).
fn common_at(doc: &Doc, m: usize) -> Result<(String, i64, Option<String>), XmlError> {
    if doc.attr(m, "Version") != Some("2.0") {
        return Err(bad("not SAML 2.0"));
    }
    let id = doc.attr(m, "ID").filter(|i| !i.is_empty()).ok_or_else(|| bad("no ID"))?.to_string();
    let at = instant(doc.attr(m, "IssueInstant"))?.ok_or_else(|| bad("no IssueInstant"))?;
    let issuer = doc.only_child(m, NS_ASSERTION, "Issuer")?.map(|i| doc.els[i].text.trim().to_string());
    Ok((id, at, issuer))
}

/// A LogoutRequest (SAML Core §3.7.1), read from our scan of it (samael's type reads
/// `SessionIndex` as an attribute, which it is not). Its signature is not looked at here.
pub(super) fn parse_logout_request(xml: &str, limits: &Limits) -> Result<LogoutRequestIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_PROTOCOL, "LogoutRequest") {
        return Err(bad("not a LogoutRequest"));
    }
    let (id, issue_instant, issuer) = common(&doc)?;
    if doc.children(0).any(|c| doc.is(c, NS_ASSERTION, "EncryptedID") || doc.is(c, NS_ASSERTION, "BaseID")) {
        return Err(bad("only a plain NameID is supported"));
    }
    let n = doc.only_child(0, NS_ASSERTION, "NameID")?.ok_or_else(|| bad("no NameID"))?;
    // Comments are not signed: text around one is not what the SP wrote.
    if doc.els[n].comment || doc.children(n).next().is_some() {
        return Err(bad("a comment or an element inside NameID"));
    }
    Ok(LogoutRequestIn {
        id,
        issuer,
        destination: doc.attr(0, "Destination").map(str::to_string),
        issue_instant,
        not_on_or_after: instant(doc.attr(0, "NotOnOrAfter"))?,
        name_id: doc.els[n].text.trim().to_string(),
        name_id_format: doc.attr(n, "Format").map(str::to_string),
        session_indexes: doc.children(0).filter(|&c| doc.is(c, NS_PROTOCOL, "SessionIndex")).map(|c| doc.els[c].text.trim().to_string()).collect(),
        has_signature: doc.has_signature_child(0),
    })
}

/// A LogoutResponse (SAML Core §3.7.2, a StatusResponseType).
pub(super) fn parse_logout_response(xml: &str, limits: &Limits) -> Result<LogoutResponseIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_PROTOCOL, "LogoutResponse") {
        return Err(bad("not a LogoutResponse"));
    }
    logout_response_at(&doc, 0)
}

/// SAML Bindings §3.2 (SOAP): the LogoutResponse an SP answers our SOAP LogoutRequest with,
/// the one child of the envelope's `Body`.
pub(super) fn parse_soap_logout_response(xml: &str, limits: &Limits) -> Result<LogoutResponseIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_SOAP_ENVELOPE, "Envelope") {
        return Err(bad("not a SOAP envelope"));
    }
    let body = doc.only_child(0, NS_SOAP_ENVELOPE, "Body")?.ok_or_else(|| bad("no SOAP Body"))?;
    let m = doc.only_child(body, NS_PROTOCOL, "LogoutResponse")?.ok_or_else(|| bad("no LogoutResponse in the SOAP Body"))?;
    logout_response_at(&doc, m)
}

fn logout_response_at(doc: &Doc, m: usize) -> Result<LogoutResponseIn, XmlError> {
    let (id, issue_instant, issuer) = common_at(doc, m)?;
    let st = doc.only_child(m, NS_PROTOCOL, "Status")?.ok_or_else(|| bad("no Status"))?;
    let code = doc.only_child(st, NS_PROTOCOL, "StatusCode")?.ok_or_else(|| bad("no StatusCode"))?;
    let status = doc.attr(code, "Value").ok_or_else(|| bad("no StatusCode Value"))?.to_string();
    let sub_status = doc.only_child(code, NS_PROTOCOL, "StatusCode")?.and_then(|c| doc.attr(c, "Value")).map(str::to_string);
    Ok(LogoutResponseIn {
        id,
        in_response_to: doc.attr(m, "InResponseTo").map(str::to_string),
        issuer,
        destination: doc.attr(m, "Destination").map(str::to_string),
        issue_instant,
        status,
        sub_status,
        has_signature: doc.has_signature_child(m),
    })
}
