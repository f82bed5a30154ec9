//! The Responses we send (SAML Core §3.2.2, Profiles §4.1.4.2): one bearer Assertion, signed,
//! with everything an SP is to check (`InResponseTo`, `Recipient`, `Audience`,
//! `NotOnOrAfter`, `SessionIndex`), the Response itself signed too unless the SP declined
//! it; and the error Responses (a status, no assertion).
//!
//! samael's own `sign_authn_response` is not used: it signs the Response only, digests with
//! SHA-1, sets no validity window and writes an empty `AttributeStatement` some SPs refuse
//! (docs/design/saml.md). Instead its types are filled in here, the Assertion signed first,
//! then a Response signature template put after the Response's `Issuer` (SAML Core §5.4.1
//! wants it there) and signed in turn: xmlsec1 signs the first template in document order.

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
}

fn at(epoch: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(epoch, 0).single().unwrap_or_default()
}

fn issuer(entity_id: &str) -> Issuer {
    Issuer { value: Some(entity_id.to_string()), ..Default::default() }
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
            values: a.values.iter().map(|v| AttributeValue { attribute_type: Some("xs:string".into()), value: Some(v.clone()) }).collect(),
        })
        .collect::<Vec<_>>();
    let assertion = Assertion {
        id: assertion_id.clone(),
        issue_instant: at(now),
        version: "2.0".into(),
        issuer: issuer(g.idp_entity_id),
        signature: None,
        subject: Some(Subject {
            name_id: Some(SubjectNameID { format: Some(g.name_id_format.to_string()), value: g.name_id.to_string() }),
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
            audience_restrictions: Some(vec![AudienceRestriction { audience: vec![g.sp_entity_id.to_string()] }]),
            one_time_use: None,
            proxy_restriction: None,
        }),
        authn_statements: Some(vec![AuthnStatement {
            authn_instant: Some(at(g.authn_instant as i64)),
            session_index: Some(g.session_index.to_string()),
            session_not_on_or_after: None,
            subject_locality: None,
            authn_context: Some(AuthnContext { value: Some(AuthnContextClassRef { value: Some(g.authn_context.to_string()) }) }),
        }]),
        // An empty AttributeStatement is invalid (SAML Core §2.7.3 wants one Attribute at least).
        attribute_statements: (!attributes.is_empty()).then(|| vec![AttributeStatement { attributes }]),
    };
    let mut assertion_xml = assertion.to_string().map_err(|e| SamlError::Internal(format!("assertion: {e}")))?;
    insert_after_issuer(&mut assertion_xml, &signer.template(&assertion_id)?)?;
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
    // The assertion goes in as serialised (with its template), after the Status.
    let end = xml.rfind("</saml2p:Response>").ok_or_else(|| SamlError::Internal("response without its end tag".into()))?;
    xml.insert_str(end, strip_declaration(&assertion_xml));
    let signed = signer.sign(&xml)?;
    finish(signer, signed, &response.id, g.sign_response)
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
            status_message: message.map(|m| StatusMessage { value: Some(m.to_string()) }),
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
fn insert_after_issuer(xml: &mut String, what: &str) -> Result<(), SamlError> {
    const END: &str = "</saml2:Issuer>";
    let at = xml.find(END).ok_or_else(|| SamlError::Internal("no Issuer to put the signature after".into()))? + END.len();
    xml.insert_str(at, strip_declaration(what));
    Ok(())
}

fn strip_declaration(xml: &str) -> &str {
    match xml.strip_prefix("<?xml") {
        Some(rest) => rest.find("?>").map_or(xml, |i| rest[i + 2..].trim_start()),
        None => xml,
    }
}
