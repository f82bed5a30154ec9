//! Single Logout's messages (SAML Core §3.7, Profiles §4.4): the LogoutRequests we send to
//! the SPs of a session that ends, and the LogoutResponse we answer an SP's LogoutRequest
//! with; by the SP's binding: HTTP-Redirect (Bindings §3.4), signed over the query with
//! RSA-SHA256 (§3.4.4.1), a URL the logout page loads in a hidden iframe (as front-channel
//! OpenID logout does) or moves on to; or HTTP-POST (§3.5), signed in the XML (enveloped),
//! a form our own page posts (`endpoints::saml::slo_out`).
//! Reading what SPs send is `xml::parse_logout_request`/`parse_logout_response`.
//!
//! The XML is written here rather than through samael's types: its `LogoutRequest` writes
//! `SessionIndex` before `NameID` (the schema's order is the reverse) and reads it as an
//! attribute. Every value put into it is escaped (`text`, `attr`).

use super::response::text;
use super::signer::Signer;
use super::SamlError;
use base64::Engine as _;
use chrono::{SecondsFormat, TimeZone, Utc};
use std::io::Write as _;

pub const SIGALG_RSA_SHA256: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
/// SAML Core §3.7.3.2: the user asked to be signed out.
const REASON_USER: &str = "urn:oasis:names:tc:SAML:2.0:logout:user";
/// How long a LogoutRequest may be acted on (`NotOnOrAfter`): the page loads it at once.
const REQUEST_LIFETIME: u64 = 300;
const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
const ASSERTION: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
/// The end of our messages' `Issuer`, their root's first child: the signature goes after it.
const ISSUER_END: &str = "</saml:Issuer>";

/// What a LogoutRequest to one SP says.
pub struct LogoutRequestOut<'a> {
    pub idp_entity_id: &'a str,
    /// The SP's SLO URL: the `Destination`, where the request goes.
    pub destination: &'a str,
    /// The NameID the SP was given for this session, and its format.
    pub name_id: &'a str,
    pub name_id_format: &'a str,
    /// The login session's id: the assertions' `SessionIndex`.
    pub session_index: &'a str,
    pub now: u64,
}

/// An attribute value, escaped (samael is not involved here, so nothing else does it).
fn attr(value: &str) -> String {
    text(value).replace('"', "&quot;")
}

fn instant(epoch: u64) -> String {
    Utc.timestamp_opt(epoch as i64, 0).single().unwrap_or_default().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The LogoutRequest's XML, unsigned (the Redirect binding signs the query, `post_value` the
/// XML), and its ID.
pub fn request_xml(r: &LogoutRequestOut<'_>) -> (String, String) {
    let id = super::new_id();
    let xml = format!(
        "<samlp:LogoutRequest xmlns:samlp=\"{PROTOCOL}\" xmlns:saml=\"{ASSERTION}\" ID=\"{id}\" Version=\"2.0\" IssueInstant=\"{}\" \
         Destination=\"{}\" NotOnOrAfter=\"{}\" Reason=\"{REASON_USER}\"><saml:Issuer>{}</saml:Issuer>\
         <saml:NameID Format=\"{}\">{}</saml:NameID><samlp:SessionIndex>{}</samlp:SessionIndex></samlp:LogoutRequest>",
        instant(r.now),
        attr(r.destination),
        instant(r.now + REQUEST_LIFETIME),
        text(r.idp_entity_id),
        attr(r.name_id_format),
        text(r.name_id),
        text(r.session_index),
    );
    (id, xml)
}

/// The LogoutResponse's XML, unsigned as `request_xml`'s, and its ID: `status` is the
/// top-level code and a second-level one (PartialLogout: Success, but not everyone was told).
pub fn response_xml(idp_entity_id: &str, destination: &str, in_response_to: &str, status: (&str, Option<&str>), now: u64) -> (String, String) {
    let id = super::new_id();
    let sub = status.1.map(|s| format!("<samlp:StatusCode Value=\"{}\"/>", attr(s))).unwrap_or_default();
    let xml = format!(
        "<samlp:LogoutResponse xmlns:samlp=\"{PROTOCOL}\" xmlns:saml=\"{ASSERTION}\" ID=\"{}\" Version=\"2.0\" IssueInstant=\"{}\" \
         Destination=\"{}\" InResponseTo=\"{}\"><saml:Issuer>{}</saml:Issuer><samlp:Status><samlp:StatusCode Value=\"{}\">{sub}</samlp:StatusCode>\
         </samlp:Status></samlp:LogoutResponse>",
        id,
        instant(now),
        attr(destination),
        attr(in_response_to),
        text(idp_entity_id),
        attr(status.0),
    );
    (id, xml)
}

/// Which parameter the message is.
#[derive(Debug, Clone, Copy)]
pub enum Message {
    Request,
    Response,
}

impl Message {
    /// Its parameter's (or form field's) name, Bindings §3.4.4.1 and §3.5.4.
    pub fn parameter(self) -> &'static str {
        match self {
            Message::Request => "SAMLRequest",
            Message::Response => "SAMLResponse",
        }
    }
}

/// Bindings §3.5.4: the message of ID `id` signed in its XML (an enveloped signature after
/// its `Issuer`, Core §5.4.1: RSA-SHA256, SHA-256 digest, exclusive C14N), base64'd for the
/// form's field.
pub fn post_value(signer: &Signer, id: &str, xml: &str) -> Result<String, SamlError> {
    Ok(base64::engine::general_purpose::STANDARD.encode(signed(signer, id, xml)?))
}

/// The message of ID `id` signed in its XML (as `post_value`), without an XML declaration.
fn signed(signer: &Signer, id: &str, xml: &str) -> Result<String, SamlError> {
    let mut xml = xml.to_string();
    super::response::insert_after(&mut xml, ISSUER_END, &signer.template(id)?)?;
    let signed = signer.sign(&xml)?;
    Ok(super::response::strip_declaration(&signed).to_string())
}

/// SOAP 1.1's namespace (Bindings §3.2.1).
const SOAP_ENVELOPE: &str = "http://schemas.xmlsoap.org/soap/envelope/";
/// Bindings §3.2.2.1: the `SOAPAction` a SAML request over SOAP is sent with.
pub const SOAP_ACTION: &str = "http://www.oasis-open.org/committees/security";

/// Bindings §3.2: the message of ID `id`, signed in its XML, as the one child of a SOAP 1.1
/// envelope's body (the back channel: server to server, no browser).
pub fn soap_envelope(signer: &Signer, id: &str, xml: &str) -> Result<String, SamlError> {
    Ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><SOAP-ENV:Envelope xmlns:SOAP-ENV=\"{SOAP_ENVELOPE}\"><SOAP-ENV:Body>{}</SOAP-ENV:Body></SOAP-ENV:Envelope>",
        signed(signer, id, xml)?
    ))
}

/// `application/x-www-form-urlencoded` as Python's `quote_plus` writes it (RFC 3986's
/// unreserved characters as they are, a space as `+`, every other octet `%XX`): SPs rebuild
/// the signed string from decoded values (pysaml2 does), so ours must be what they rebuild.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3 / 2);
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Bindings §3.4.4.1: `endpoint` with the message DEFLATEd and base64'd, `RelayState`, and
/// `SigAlg` and `Signature` over the preceding parameters' octets as they are in the URL.
pub fn redirect_url(signer: &Signer, endpoint: &str, message: Message, xml: &str, relay_state: Option<&str>) -> Result<String, SamlError> {
    let mut deflate = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    let deflated = deflate.write_all(xml.as_bytes()).and_then(|_| deflate.finish()).map_err(|e| SamlError::Internal(format!("deflate: {e}")))?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut query = format!("{}={}", message.parameter(), encode(&b64.encode(deflated)));
    if let Some(r) = relay_state {
        query.push_str(&format!("&RelayState={}", encode(r)));
    }
    query.push_str(&format!("&SigAlg={}", encode(SIGALG_RSA_SHA256)));
    let signature = signer.sign_bytes(query.as_bytes())?;
    query.push_str(&format!("&Signature={}", encode(&b64.encode(signature))));
    // An SLO URL may have a query of its own (validated as a web URI when registered).
    let sep = if endpoint.contains('?') { '&' } else { '?' };
    Ok(format!("{endpoint}{sep}{query}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SigningKey;
    use crate::saml::xml::{self, Limits};

    fn signer() -> std::sync::Arc<Signer> {
        let (key, _) = SigningKey::generate().unwrap();
        crate::saml::signer::of(&key).unwrap()
    }

    fn query_value(url: &str, name: &str) -> String {
        let q = url.split_once('?').unwrap().1;
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned()).unwrap()
    }

    #[test]
    fn a_logout_request_reads_back_as_written_escaped_and_its_redirect_signature_verifies() {
        let s = signer();
        let r = LogoutRequestOut {
            idp_entity_id: "https://idp.test/saml/metadata",
            destination: "https://sp.test/slo?a=1&b=\"2\"",
            name_id: "a<b>&c",
            name_id_format: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
            session_index: "sid-1",
            now: 1_800_000_000,
        };
        let (id, xml) = request_xml(&r);
        let url = redirect_url(&s, "https://sp.test/slo?x=y", Message::Request, &xml, Some("rs 1/é")).unwrap();
        assert!(url.starts_with("https://sp.test/slo?x=y&SAMLRequest="), "{url}");
        let query = url.split_once('?').unwrap().1;
        xml::verify_redirect_signature(query, std::slice::from_ref(&s.cert_der)).unwrap();
        // Another key's certificate: refused.
        assert!(xml::verify_redirect_signature(query, &[signer().cert_der.clone()]).is_err());
        assert_eq!(query_value(&url, "RelayState"), "rs 1/é");
        let back = xml::decode_redirect(&query_value(&url, "SAMLRequest"), &Limits::default()).unwrap();
        let read = xml::parse_logout_request(&back, &Limits::default()).unwrap();
        assert_eq!(read.id, id);
        assert_eq!(read.name_id, "a<b>&c");
        assert_eq!(read.issuer.as_deref(), Some("https://idp.test/saml/metadata"));
        assert_eq!(read.destination.as_deref(), Some("https://sp.test/slo?a=1&b=\"2\""));
        assert_eq!(read.session_indexes, ["sid-1"]);
        assert_eq!(read.not_on_or_after, Some(1_800_000_000 + REQUEST_LIFETIME as i64));
        assert!(!read.has_signature);
    }

    #[test]
    fn a_logout_response_reads_back_with_both_status_levels() {
        let (_, xml) = response_xml("https://idp.test/saml/metadata", "https://sp.test/slo", "_req\"1", (crate::saml::status::SUCCESS, Some(crate::saml::status::PARTIAL_LOGOUT)), 1_800_000_000);
        let read = xml::parse_logout_response(&xml, &Limits::default()).unwrap();
        assert_eq!(read.in_response_to.as_deref(), Some("_req\"1"));
        assert_eq!(read.status, crate::saml::status::SUCCESS);
        assert_eq!(read.sub_status.as_deref(), Some(crate::saml::status::PARTIAL_LOGOUT));
        assert_eq!(read.issue_instant, 1_800_000_000);
    }

    #[test]
    fn by_post_both_messages_are_signed_in_their_xml_after_the_issuer_and_nothing_else_verifies() {
        let s = signer();
        let r = LogoutRequestOut {
            idp_entity_id: "https://idp.test/saml/metadata",
            destination: "https://sp.test/slo",
            name_id: "n<1>",
            name_id_format: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
            session_index: "sid-1",
            now: 1_800_000_000,
        };
        let (id, xml) = request_xml(&r);
        let b64 = base64::engine::general_purpose::STANDARD;
        let signed = String::from_utf8(b64.decode(post_value(&s, &id, &xml).unwrap()).unwrap()).unwrap();
        // Core §5.4.1: the signature is the Issuer's next sibling.
        assert!(signed.contains("</saml:Issuer><ds:Signature"), "{signed}");
        let covered = xml::verified_root(&signed, std::slice::from_ref(&s.cert_der)).unwrap();
        let read = xml::parse_logout_request(&covered, &Limits::default()).unwrap();
        assert_eq!((read.id.as_str(), read.name_id.as_str()), (id.as_str(), "n<1>"));
        assert!(xml::parse_logout_request(&signed, &Limits::default()).unwrap().has_signature);
        assert_eq!(read.session_indexes, ["sid-1"]);
        // Another key's certificate, or the NameID changed after signing: refused.
        assert!(xml::verified_root(&signed, &[signer().cert_der.clone()]).is_err());
        let tampered = signed.replace("n&lt;1&gt;", "n&lt;2&gt;");
        assert_ne!(tampered, signed);
        assert!(xml::verified_root(&tampered, std::slice::from_ref(&s.cert_der)).is_err());

        let (id, xml) = response_xml("https://idp.test/saml/metadata", "https://sp.test/slo", "_req1", (crate::saml::status::SUCCESS, None), 1_800_000_000);
        let signed = String::from_utf8(b64.decode(post_value(&s, &id, &xml).unwrap()).unwrap()).unwrap();
        let covered = xml::verified_root(&signed, std::slice::from_ref(&s.cert_der)).unwrap();
        let read = xml::parse_logout_response(&covered, &Limits::default()).unwrap();
        assert_eq!((read.in_response_to.as_deref(), read.status.as_str()), (Some("_req1"), crate::saml::status::SUCCESS));
        assert!(xml::parse_logout_response(&signed, &Limits::default()).unwrap().has_signature);
    }

    #[test]
    fn the_encoding_is_python_s_quote_plus() {
        assert_eq!(encode("a b+c/=~*"), "a+b%2Bc%2F%3D~%2A");
    }
}
