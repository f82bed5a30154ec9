//! The Responses we send (SAML Core §3.2.2, Profiles §4.1.4.2): one bearer Assertion, signed,
//! with everything an SP is to check (`InResponseTo`, `Recipient`, `Audience`,
//! `NotOnOrAfter`, `SessionIndex`), the Response itself signed too unless the SP declined
//! it; and the error Responses (a status, no assertion).
//!
//! samael's own `sign_authn_response` is not used: it signs the Response only, digests with
//! SHA-1, sets no validity window and writes an empty `AttributeStatement` some SPs refuse
//! (docs/design/saml.md). Instead its types are filled in here, the Assertion signed on its
//! own (and encrypted, if the SP wants), put in the Response, then a Response signature
//! template put after the Response's `Issuer` (SAML Core §5.4.1 wants it there) and signed in
//! turn: xmlsec1 signs the first template in document order.

use super::signer::Signer;
use super::{status, SamlError};
use chrono::{DateTime, TimeZone, Utc};
use samael::attribute::{Attribute, AttributeValue};
use samael::schema::{
    Assertion, AttributeStatement, AudienceRestriction, AuthnContext, AuthnContextClassRef, AuthnStatement, Conditions, Issuer, Response, Status,
    StatusCode, StatusMessage, Subject, SubjectConfirmation, SubjectConfirmationData, SubjectNameID,
};
use samael::traits::ToXml as _;

/// SAML Profiles §4.1.4.2: bearer subject confirmation.
const BEARER: &str = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
/// How far back `NotBefore` is put: the SP's clock may be behind ours.
const CLOCK_SKEW: i64 = 60;

/// One attribute: its name (and format, friendly name) and values.
pub struct Attr {
    pub name: String,
    pub name_format: Option<String>,
    pub friendly_name: Option<String>,
    pub values: Vec<String>,
}

/// What a successful Response says.
pub struct Grant<'a> {
    pub idp_entity_id: &'a str,
    pub sp_entity_id: &'a str,
    /// The ACS URL: the Response's `Destination` and the confirmation's `Recipient`.
    pub acs_url: &'a str,
    pub in_response_to: Option<&'a str>,
    pub name_id: &'a str,
    pub name_id_format: &'a str,
    /// The login session's id: what Single Logout will name it by.
    pub session_index: &'a str,
    pub authn_instant: u64,
    pub authn_context: &'a str,
    pub attributes: Vec<Attr>,
    pub now: u64,
    /// Seconds the assertion may be used in (`NotOnOrAfter`).
    pub lifetime: u64,
    pub sign_response: bool,
    /// The SP's encryption certificate (DER), when its assertions are to be encrypted.
    pub encrypt_to: Option<&'a [u8]>,
}

fn at(epoch: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(epoch, 0).single().unwrap_or_default()
}

fn issuer(entity_id: &str) -> Issuer {
    Issuer { value: Some(text(entity_id)), ..Default::default() }
}

/// A value for a text node of samael's types, escaped here: samael writes text content as it
/// is given (quick-xml's `from_escaped`), so a user's name holding `</saml2:AttributeValue>`
/// would otherwise add elements to a signed assertion. Its XML attributes it does escape.
pub(super) fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// A signed Response carrying the user's Assertion.
pub fn success(signer: &Signer, g: &Grant<'_>) -> Result<String, SamlError> {
    let (now, until) = (g.now as i64, (g.now + g.lifetime) as i64);
    let assertion_id = super::new_id();
    let attributes = g
        .attributes
        .iter()
        .map(|a| Attribute {
            friendly_name: a.friendly_name.clone(),
            name: Some(a.name.clone()),
            name_format: a.name_format.clone(),
            values: a.values.iter().map(|v| AttributeValue { attribute_type: Some("xs:string".into()), value: Some(text(v)) }).collect(),
        })
        .collect::<Vec<_>>();
    let assertion = Assertion {
        id: assertion_id.clone(),
        issue_instant: at(now),
        version: "2.0".into(),
        issuer: issuer(g.idp_entity_id),
        signature: None,
        subject: Some(Subject {
            name_id: Some(SubjectNameID { format: Some(g.name_id_format.to_string()), value: text(g.name_id) }),
            subject_confirmations: Some(vec![SubjectConfirmation {
                method: Some(BEARER.into()),
                name_id: None,
                subject_confirmation_data: Some(SubjectConfirmationData {
                    not_before: None,
                    not_on_or_after: Some(at(until)),
                    recipient: Some(g.acs_url.to_string()),
                    in_response_to: g.in_response_to.map(str::to_string),
                    address: None,
                    content: None,
                }),
            }]),
        }),
        conditions: Some(Conditions {
            not_before: Some(at(now - CLOCK_SKEW)),
            not_on_or_after: Some(at(until)),
            audience_restrictions: Some(vec![AudienceRestriction { audience: vec![text(g.sp_entity_id)] }]),
            one_time_use: None,
            proxy_restriction: None,
        }),
        authn_statements: Some(vec![AuthnStatement {
            authn_instant: Some(at(g.authn_instant as i64)),
            session_index: Some(g.session_index.to_string()),
            session_not_on_or_after: None,
            subject_locality: None,
            authn_context: Some(AuthnContext { value: Some(AuthnContextClassRef { value: Some(text(g.authn_context)) }) }),
        }]),
        // An empty AttributeStatement is invalid (SAML Core §2.7.3 wants one Attribute at least).
        attribute_statements: (!attributes.is_empty()).then(|| vec![AttributeStatement { attributes }]),
    };
    let mut assertion_xml = assertion.to_string().map_err(|e| SamlError::Internal(format!("assertion: {e}")))?;
    insert_after_issuer(&mut assertion_xml, &signer.template(&assertion_id)?)?;
    // Signed on its own (exclusive C14N makes its signature the same inside the Response),
    // so that it can be encrypted signed.
    let signed_assertion = signer.sign(&assertion_xml)?;
    let assertion_xml = match g.encrypt_to {
        Some(cert) => super::encrypt::encrypted_assertion(strip_declaration(&signed_assertion), cert)?,
        None => strip_declaration(&signed_assertion).to_string(),
    };
    let response = Response {
        id: super::new_id(),
        in_response_to: g.in_response_to.map(str::to_string),
        version: "2.0".into(),
        issue_instant: at(now),
        destination: Some(g.acs_url.to_string()),
        consent: None,
        issuer: Some(issuer(g.idp_entity_id)),
        signature: None,
        status: Some(Status { status_code: StatusCode { value: Some(status::SUCCESS.into()) }, status_message: None, status_detail: None }),
        encrypted_assertion: None,
        assertion: None,
    };
    let mut xml = response.to_string().map_err(|e| SamlError::Internal(format!("response: {e}")))?;
    // The assertion goes in as serialised (signed, perhaps encrypted), after the Status.
    let end = xml.rfind("</saml2p:Response>").ok_or_else(|| SamlError::Internal("response without its end tag".into()))?;
    xml.insert_str(end, &assertion_xml);
    finish(signer, xml, &response.id, g.sign_response)
}

/// A Response saying why there is no assertion (`top`, and `second` if any: SAML Core
/// §3.2.2.2), signed when the SP wants Responses signed.
pub fn failure(
    signer: &Signer,
    idp_entity_id: &str,
    acs_url: &str,
    in_response_to: Option<&str>,
    (top, second): (&str, Option<&str>),
    message: Option<&str>,
    sign: bool,
    now: u64,
) -> Result<String, SamlError> {
    let response = Response {
        id: super::new_id(),
        in_response_to: in_response_to.map(str::to_string),
        version: "2.0".into(),
        issue_instant: at(now as i64),
        destination: Some(acs_url.to_string()),
        consent: None,
        issuer: Some(issuer(idp_entity_id)),
        signature: None,
        status: Some(Status {
            status_code: StatusCode { value: Some(top.to_string()) },
            status_message: message.map(|m| StatusMessage { value: Some(text(m)) }),
            status_detail: None,
        }),
        encrypted_assertion: None,
        assertion: None,
    };
    let mut xml = response.to_string().map_err(|e| SamlError::Internal(format!("response: {e}")))?;
    if let Some(second) = second {
        // samael's StatusCode has no nested code: the second level is put inside the first
        // (both are our constants, nothing to escape).
        let first = format!("<saml2p:StatusCode Value=\"{top}\"/>");
        let nested = format!("<saml2p:StatusCode Value=\"{top}\"><saml2p:StatusCode Value=\"{second}\"/></saml2p:StatusCode>");
        if !xml.contains(&first) {
            return Err(SamlError::Internal("status code not where expected".into()));
        }
        xml = xml.replacen(&first, &nested, 1);
    }
    finish(signer, xml, &response.id, sign)
}

/// The Response's own signature, if wanted: its template after its `Issuer`, then signed
/// (the first unsigned template in document order is now this one: xmlsec1 takes the first
/// `ds:Signature` it finds, so the assertion's, already signed, must not come first).
fn finish(signer: &Signer, mut xml: String, response_id: &str, sign: bool) -> Result<String, SamlError> {
    if !sign {
        return Ok(xml);
    }
    insert_after_issuer(&mut xml, &signer.template(response_id)?)?;
    signer.sign(&xml)
}

/// `what` right after the document's first `</saml2:Issuer>` (the root's: it is the root's
/// first child in both a Response and an Assertion).
pub(super) fn insert_after_issuer(xml: &mut String, what: &str) -> Result<(), SamlError> {
    insert_after(xml, "</saml2:Issuer>", what)
}

/// `what` right after the first `end` of `xml` (an `Issuer`'s end tag, by its prefix).
pub(super) fn insert_after(xml: &mut String, end: &str, what: &str) -> Result<(), SamlError> {
    let at = xml.find(end).ok_or_else(|| SamlError::Internal("no Issuer to put the signature after".into()))? + end.len();
    xml.insert_str(at, strip_declaration(what));
    Ok(())
}

pub(super) fn strip_declaration(xml: &str) -> &str {
    match xml.strip_prefix("<?xml") {
        Some(rest) => rest.find("?>").map_or(xml, |i| rest[i + 2..].trim_start()),
        None => xml,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SigningKey;
    use samael::crypto::{CryptoProvider as _, ReduceMode};

    fn grant<'a>(name_id: &'a str, attributes: Vec<Attr>) -> Grant<'a> {
        Grant {
            idp_entity_id: "https://idp.example/saml/metadata",
            sp_entity_id: "https://sp.example/metadata",
            acs_url: "https://sp.example/acs",
            in_response_to: Some("_req1"),
            name_id,
            name_id_format: crate::registry::clients::saml::NAMEID_PERSISTENT,
            session_index: "sid-1",
            authn_instant: 1_800_000_000,
            authn_context: "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport",
            attributes,
            now: 1_800_000_100,
            lifetime: 300,
            sign_response: true,
            encrypt_to: None,
        }
    }

    /// Both signatures verify with the key's certificate (and not with another's), and what a
    /// verifier reduces the document to still says what was put in, markup in values escaped.
    #[test]
    fn a_response_and_its_assertion_are_signed_and_say_what_was_given() {
        let (key, _) = SigningKey::generate().unwrap();
        let signer = crate::saml::signer::of(&key).unwrap();
        let attrs = vec![Attr { name: "mail".into(), name_format: None, friendly_name: None, values: vec!["a<b>&c@example.com".into(), "</saml2:AttributeValue></saml2:Attribute><saml2:Attribute Name=\"role\"><saml2:AttributeValue>admin".into()] }];
        let xml = success(&signer, &grant("<alice>&", attrs)).unwrap();
        let cert: samael::crypto::CertificateDer = signer.cert_der.clone().into();
        samael::crypto::Crypto::verify_signed_xml(&xml, &cert, Some("ID")).unwrap();
        let reduced = samael::crypto::Crypto::reduce_xml_to_signed(&xml, &[cert], ReduceMode::ValidateAndMarkNoAncestors).unwrap();
        let response: samael::schema::Response = reduced.parse().unwrap();
        assert_eq!(response.in_response_to.as_deref(), Some("_req1"));
        assert_eq!(response.destination.as_deref(), Some("https://sp.example/acs"));
        let a = response.assertion.expect("the assertion");
        assert!(a.signature.is_some(), "the assertion is signed itself");
        assert_eq!(a.subject.unwrap().name_id.unwrap().value, "<alice>&");
        let values: Vec<_> = a.attribute_statements.as_ref().unwrap()[0].attributes[0].values.iter().map(|v| v.value.clone().unwrap()).collect();
        assert_eq!(values, ["a<b>&c@example.com", "</saml2:AttributeValue></saml2:Attribute><saml2:Attribute Name=\"role\"><saml2:AttributeValue>admin"]);
        assert_eq!(a.attribute_statements.as_ref().map(|s| s[0].attributes.len()), Some(1), "no attribute added by a value");
        let c = a.conditions.unwrap();
        assert_eq!(c.not_on_or_after.unwrap().timestamp(), 1_800_000_400);
        assert_eq!(c.audience_restrictions.unwrap()[0].audience, ["https://sp.example/metadata"]);
        assert_eq!(a.authn_statements.unwrap()[0].session_index.as_deref(), Some("sid-1"));

        let (other, _) = SigningKey::generate().unwrap();
        let other: samael::crypto::CertificateDer = crate::saml::signer::of(&other).unwrap().cert_der.clone().into();
        assert!(samael::crypto::Crypto::verify_signed_xml(&xml, &other, Some("ID")).is_err());
    }

    #[test]
    fn a_failure_carries_both_status_levels_and_no_assertion() {
        let (key, _) = SigningKey::generate().unwrap();
        let signer = crate::saml::signer::of(&key).unwrap();
        let xml = failure(&signer, "https://idp.example/saml/metadata", "https://sp.example/acs", Some("_r"), (status::RESPONDER, Some(status::NO_PASSIVE)), Some("not signed in"), true, 1_800_000_000).unwrap();
        let cert: samael::crypto::CertificateDer = signer.cert_der.clone().into();
        samael::crypto::Crypto::verify_signed_xml(&xml, &cert, Some("ID")).unwrap();
        assert!(xml.contains(&format!("<saml2p:StatusCode Value=\"{}\"><saml2p:StatusCode Value=\"{}\"/>", status::RESPONDER, status::NO_PASSIVE)), "{xml}");
        assert!(!xml.contains("Assertion"));
    }
}
