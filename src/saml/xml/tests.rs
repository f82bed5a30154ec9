use super::*;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use std::io::Write;

const REQ: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="id-req-1" Version="2.0" IssueInstant="2026-01-02T03:04:05Z" Destination="https://idp.test/saml/sso" AssertionConsumerServiceURL="https://sp.test/acs" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" ForceAuthn="true">
  <saml:Issuer>https://sp.test/metadata</saml:Issuer>
  <samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" AllowCreate="true"/>
  <samlp:RequestedAuthnContext Comparison="minimum">
    <saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>
  </samlp:RequestedAuthnContext>
</samlp:AuthnRequest>"#;

fn limits() -> Limits {
    Limits::default()
}

fn deflate(data: &[u8]) -> String {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    STANDARD.encode(e.finish().unwrap())
}

/// A fresh RSA-2048 key and a self-signed certificate of it (`decrypt_tests` uses it too).
pub(in crate::saml) fn key_and_cert(cn: &str) -> (PKey<Private>, Vec<u8>) {
    use openssl::x509::{X509NameBuilder, X509};
    let key = PKey::from_rsa(openssl::rsa::Rsa::generate(2048).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).unwrap()).unwrap();
    b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(30).unwrap()).unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    (key, b.build().to_der().unwrap())
}

#[test]
fn decoders_read_what_sps_send() {
    let wrapped: String = STANDARD.encode(REQ).as_bytes().chunks(76).map(|c| format!("{}\r\n", std::str::from_utf8(c).unwrap())).collect();
    assert_eq!(decode_post(&wrapped, &limits()).unwrap(), REQ);
    assert_eq!(decode_redirect(&deflate(REQ.as_bytes()), &limits()).unwrap(), REQ);
}

#[test]
fn decoders_refuse_bad_encodings() {
    let l = limits();
    assert!(matches!(decode_post("not*base64!", &l), Err(XmlError::Encoding(_))));
    assert!(matches!(decode_post(&STANDARD.encode(b"<a>\xff\xfe</a>"), &l), Err(XmlError::Encoding(_))));
    assert!(matches!(decode_redirect(&STANDARD.encode(b"not deflate at all"), &l), Err(XmlError::Encoding(_))));
    assert!(matches!(decode_redirect(&deflate(b"<a>\xff</a>"), &l), Err(XmlError::Encoding(_))));
    assert!(matches!(decode_redirect("%%%", &l), Err(XmlError::Encoding(_))));
}

#[test]
fn decoders_refuse_oversize_before_decoding() {
    let l = Limits { max_message_bytes: 1000, max_depth: 32 };
    let big = format!("<a>{}</a>", "x".repeat(1200));
    assert_eq!(decode_post(&STANDARD.encode(&big), &l), Err(XmlError::TooLarge));
    // Whitespace padding does not get past the bound either.
    assert_eq!(decode_post(&" ".repeat(1 << 20), &l), Err(XmlError::TooLarge));
    assert_eq!(check_safe(&big, &l), Err(XmlError::TooLarge));
}

#[test]
fn deflate_bomb_is_too_large() {
    // 10 MB of zeros deflates to ~10 kB; inflating stops at the bound.
    let bomb = deflate(&vec![b'<'; 10 * 1024 * 1024]);
    assert!(bomb.len() < 64 * 1024);
    assert_eq!(decode_redirect(&bomb, &limits()), Err(XmlError::TooLarge));
}

#[test]
fn doctypes_and_entities_refused() {
    let l = limits();
    let xxe = r#"<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>"#;
    let laughs = r#"<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>"#;
    for doc in [xxe, laughs, "<!doctype html><r/>", "<r><!ENTITY x 'y'></r>", "<r/><!DoCtYpE r>"] {
        assert_eq!(check_safe(doc, &l), Err(XmlError::Doctype), "{doc}");
    }
    assert_eq!(decode_post(&STANDARD.encode(xxe), &l), Err(XmlError::Doctype));
    assert_eq!(decode_redirect(&deflate(laughs.as_bytes()), &l), Err(XmlError::Doctype));
    // An entity nobody declared (no DTD can declare one) is not XML either.
    assert!(matches!(check_safe("<r>&x;</r>", &l), Err(XmlError::Malformed(_))));
    assert_eq!(check_safe("<r a='&lt;'>&amp;&#65;&#x42;</r>", &l), Ok(()));
}

#[test]
fn depth_bomb_refused() {
    let l = limits();
    let deep = format!("{}{}", "<a>".repeat(33), "</a>".repeat(33));
    assert_eq!(check_safe(&deep, &l), Err(XmlError::TooDeep));
    let ok = format!("{}{}", "<a>".repeat(32), "</a>".repeat(32));
    assert_eq!(check_safe(&ok, &l), Ok(()));
    // Unclosed: the bound holds before the end of the document is seen.
    assert_eq!(check_safe(&"<a>".repeat(10_000), &l), Err(XmlError::TooDeep));
}

#[test]
fn malformed_refused() {
    let l = limits();
    for doc in ["", "   ", "<a>", "<a></b>", "</a>", "<a/><b/>", "<a/>text", "<p:a/>", "<a x='1' x='2'/>", "<a>\0</a>",
        r#"<?xml version="1.0" encoding="UTF-16"?><a/>"#, "<a><!-- x -- y --></a>"] {
        assert!(matches!(check_safe(doc, &l), Err(XmlError::Malformed(_))), "{doc:?}");
    }
}

#[test]
fn attribute_bomb_refused() {
    let many: String = (0..65).map(|i| format!(" a{i}=''")).collect();
    assert!(matches!(check_safe(&format!("<r{many}/>"), &limits()), Err(XmlError::Malformed(_))));
    let many: String = (0..64).map(|i| format!(" a{i}=''")).collect();
    assert_eq!(check_safe(&format!("<r{many}/>"), &limits()), Ok(()));
}

#[test]
fn authn_request_read() {
    let r = parse_authn_request(REQ, &limits()).unwrap();
    assert_eq!(r.id, "id-req-1");
    assert_eq!(r.issuer.as_deref(), Some("https://sp.test/metadata"));
    assert_eq!(r.destination.as_deref(), Some("https://idp.test/saml/sso"));
    assert_eq!(r.issue_instant, 1767323045);
    assert_eq!(r.acs_url.as_deref(), Some("https://sp.test/acs"));
    assert_eq!(r.acs_index, None);
    assert_eq!(r.protocol_binding.as_deref(), Some("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"));
    assert!(r.force_authn && !r.is_passive && !r.has_signature);
    assert_eq!(r.name_id_format.as_deref(), Some("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"));
    assert_eq!(r.authn_context_class_refs, ["urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"]);
    assert_eq!(r.authn_context_comparison.as_deref(), Some("minimum"));
}

#[test]
fn authn_request_refusals() {
    let l = limits();
    for doc in [
        REQ.replace("Version=\"2.0\"", "Version=\"1.1\""),
        REQ.replace("urn:oasis:names:tc:SAML:2.0:protocol", "urn:evil"),
        REQ.replace("AuthnRequest", "LogoutRequest"),
        REQ.replace("IssueInstant=\"2026-01-02T03:04:05Z\"", "IssueInstant=\"yesterday\""),
    ] {
        assert!(matches!(parse_authn_request(&doc, &l), Err(XmlError::Malformed(_))), "{doc}");
    }
}

pub(in crate::saml) fn metadata(cert_der: &[u8]) -> String {
    let b64 = STANDARD.encode(cert_der);
    let wrapped: Vec<String> = b64.as_bytes().chunks(64).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    format!(
        r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://sp.test/metadata">
<md:SPSSODescriptor AuthnRequestsSigned="true" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>
{}
</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{b64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://sp.test/slo"/>
<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
<md:AssertionConsumerService index="1" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.test/acs" isDefault="true"/>
<md:AssertionConsumerService index="2" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://sp.test/art"/>
</md:SPSSODescriptor></md:EntityDescriptor>"#,
        wrapped.join("\n")
    )
}

#[test]
fn sp_metadata_read() {
    let (_, cert) = key_and_cert("sp");
    let m = parse_sp_metadata(&metadata(&cert), &limits()).unwrap();
    assert_eq!(m.entity_id, "https://sp.test/metadata");
    assert_eq!(m.acs, [
        (1, "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST".to_string(), "https://sp.test/acs".to_string(), true),
        (2, "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact".to_string(), "https://sp.test/art".to_string(), false),
    ]);
    assert_eq!(m.slo, [("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect".to_string(), "https://sp.test/slo".to_string())]);
    assert_eq!(m.signing_certs, [cert.clone(), cert.clone()]);
    assert_eq!(m.encryption_certs, [cert]);
    assert_eq!(m.name_id_formats, ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"]);
    assert!(m.authn_requests_signed && m.want_assertions_signed);
}

#[test]
fn sp_metadata_refusals() {
    let (_, cert) = key_and_cert("sp");
    let md = metadata(&cert);
    let l = limits();
    let body = md.split_once('\n').unwrap().1.rsplit_once("</md:EntityDescriptor>").unwrap().0;
    let entities = format!(r#"<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">{md}</md:EntitiesDescriptor>"#);
    let two_sp = md.replace("</md:EntityDescriptor>", &format!("{body}</md:EntityDescriptor>"));
    for doc in [entities, two_sp, md.replace("SPSSODescriptor", "IDPSSODescriptor"), md.replace(&STANDARD.encode(&cert), "bm90IGEgY2VydA==")] {
        assert!(matches!(parse_sp_metadata(&doc, &l), Err(XmlError::Malformed(_))), "{doc}");
    }
}

fn pct(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A query as an SP signs it (Bindings §3.4.4.1), the signature appended.
fn signed_query(key: &PKey<Private>, relay: Option<&str>, alg: &str, digest: MessageDigest) -> String {
    let mut q = format!("SAMLRequest={}", pct(&deflate(REQ.as_bytes())));
    if let Some(r) = relay {
        q.push_str(&format!("&RelayState={}", pct(r)));
    }
    q.push_str(&format!("&SigAlg={}", pct(alg)));
    let mut s = openssl::sign::Signer::new(digest, key).unwrap();
    s.update(q.as_bytes()).unwrap();
    format!("{q}&Signature={}", pct(&STANDARD.encode(s.sign_to_vec().unwrap())))
}

const SHA256: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";

#[test]
fn redirect_signature() {
    let (key, cert) = key_and_cert("sp");
    let (_, other) = key_and_cert("other");
    let certs = [other.clone(), cert.clone()];
    let q = signed_query(&key, Some("rs /1+ü"), SHA256, MessageDigest::sha256());
    assert_eq!(verify_redirect_signature(&q, &certs), Ok(()));
    assert_eq!(verify_redirect_signature(&format!("?{q}&extra=1"), &certs), Ok(()));
    let sha512 = signed_query(&key, None, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512", MessageDigest::sha512());
    assert_eq!(verify_redirect_signature(&sha512, &certs), Ok(()));
    // Order in the query does not matter, the octets do.
    let (head, sig) = q.rsplit_once("&Signature=").unwrap();
    assert_eq!(verify_redirect_signature(&format!("Signature={sig}&{head}"), &certs), Ok(()));

    let refused = |q: &str, certs: &[Vec<u8>]| matches!(verify_redirect_signature(q, certs), Err(XmlError::Signature(_)));
    assert!(refused(&q, &[other.clone()]), "wrong certificate");
    assert!(refused(&q, &[]), "no certificate");
    assert!(refused(&q.replace("RelayState=rs", "RelayState=rt"), &certs), "tampered RelayState");
    assert!(refused(&q.replace("&RelayState=rs+%2F1%2B%C3%BC", ""), &certs), "RelayState dropped");
    // The same values re-encoded (%2F for / left as is): other octets, not what was signed.
    assert!(refused(&q.replace("%2F", "/"), &certs), "re-encoded");
    let sha1 = signed_query(&key, None, "http://www.w3.org/2000/09/xmldsig#rsa-sha1", MessageDigest::sha1());
    assert!(refused(&sha1, &certs), "SHA-1");
    let no_alg = q.split('&').filter(|p| !p.starts_with("SigAlg=")).collect::<Vec<_>>().join("&");
    assert!(refused(&no_alg, &certs), "no SigAlg");
    assert!(refused(&head, &certs), "no Signature");
    assert!(refused(&format!("{q}&RelayState=x"), &certs), "RelayState twice");
    assert!(refused(&format!("{q}&SAMLRequest=x"), &certs), "SAMLRequest twice");
    assert!(refused(&format!("{q}&SAMLResponse=x"), &certs), "request and response");
    assert!(refused(&format!("{head}&Signature=%%%"), &certs), "Signature not base64");
    assert!(refused("", &certs) && refused("&&&=&", &certs));
}

#[test]
fn verified_root_needs_a_signature() {
    let (_, cert) = key_and_cert("sp");
    assert!(matches!(verified_root(REQ, &[cert]), Err(XmlError::Signature(_))));
    assert_eq!(verified_root("<!DOCTYPE a><a/>", &[]), Err(XmlError::Doctype));
}

#[test]
fn garbage_certificates_refuse_without_panic() {
    let (key, _) = key_and_cert("sp");
    let junk = vec![vec![], vec![0x30, 0x82, 0xff, 0xff], b"-----BEGIN CERTIFICATE-----".to_vec()];
    let q = signed_query(&key, None, SHA256, MessageDigest::sha256());
    assert!(matches!(verify_redirect_signature(&q, &junk), Err(XmlError::Signature(_))));
    let signed = REQ.replace("<saml:Issuer>", "<ds:Signature xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\"/><saml:Issuer>");
    assert!(matches!(verified_root(&signed, &junk), Err(XmlError::Signature(_))));
    assert!(matches!(verified_response(&signed, &junk, &limits()), Err(XmlError::Malformed(_))));
}

#[test]
fn errors_display_short() {
    for e in [XmlError::TooLarge, XmlError::Doctype, XmlError::Wrapped, XmlError::Signature("x".into())] {
        assert!(e.to_string().len() < 80);
    }
}

/// The fuzz target's seeds are genuine (so that its mutations start from accepted messages);
/// its certificate is the one in the metadata seed.
#[test]
fn fuzz_seeds_are_accepted() {
    let seed = |name: &str| {
        let b = std::fs::read(format!("{}/fuzz/corpus/saml_message/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        String::from_utf8(b[1..].to_vec()).unwrap()
    };
    let l = limits();
    let md = parse_sp_metadata(&seed("seed-metadata"), &l).unwrap();
    let certs = md.signing_certs;
    let req = decode_post(&seed("seed-post"), &l).unwrap();
    assert_eq!(decode_redirect(&seed("seed-redirect"), &l).unwrap(), req);
    assert_eq!(parse_authn_request(&seed("seed-authn-request"), &l).unwrap().id, "id-req-1");
    let reduced = verified_root(&seed("seed-signed-request"), &certs).unwrap();
    // The reduction keeps what the signature covers: the enveloped signature itself is gone.
    let r = parse_authn_request(&reduced, &l).unwrap();
    assert_eq!((r.id.as_str(), r.has_signature), ("id-req-1", false));
    let r = verified_response(&seed("seed-response"), &certs, &l).unwrap();
    let a = r.assertion.unwrap();
    assert_eq!((a.id.as_str(), a.name_id.as_str(), a.session_index.as_deref()), ("_a1", "alice", Some("s1")));
    assert_eq!(a.attributes, [("mail".to_string(), vec!["alice@example.com".to_string()])]);
    assert_eq!(a.authn_context_class_ref.as_deref(), Some("urn:oasis:names:tc:SAML:2.0:ac:classes:Password"));
    assert_eq!(a.not_before, Some(1767225600));
    assert_eq!(parse_logout_request(&seed("seed-logout-request"), &l).unwrap().session_indexes, ["sid-1", "sid-2"]);
    assert_eq!(parse_logout_response(&seed("seed-logout-response"), &l).unwrap().in_response_to.as_deref(), Some("_ours"));
}

const LOGOUT_REQ: &str = r#"<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="id-lo-1" Version="2.0" IssueInstant="2026-01-02T03:04:05Z" Destination="https://idp.test/saml/slo" NotOnOrAfter="2026-01-02T03:09:05Z">
  <saml:Issuer> https://sp.test/metadata </saml:Issuer>
  <saml:NameID SPNameQualifier="https://sp.test/metadata" Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">a&amp;b&#x3C;c<![CDATA[>d]]></saml:NameID>
  <samlp:SessionIndex>sid-1</samlp:SessionIndex>
  <samlp:SessionIndex>sid-2</samlp:SessionIndex>
</samlp:LogoutRequest>"#;

#[test]
fn logout_request_read() {
    let r = parse_logout_request(LOGOUT_REQ, &limits()).unwrap();
    assert_eq!(r.id, "id-lo-1");
    assert_eq!(r.issuer.as_deref(), Some("https://sp.test/metadata"));
    assert_eq!(r.destination.as_deref(), Some("https://idp.test/saml/slo"));
    assert_eq!(r.issue_instant, 1_767_323_045);
    assert_eq!(r.not_on_or_after, Some(1_767_323_045 + 300));
    assert_eq!(r.name_id, "a&b<c>d", "entities, character references and CDATA resolved");
    assert_eq!(r.name_id_format.as_deref(), Some("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"));
    assert_eq!(r.session_indexes, ["sid-1", "sid-2"]);
    assert!(!r.has_signature);
    // What the Redirect binding carries reads the same.
    let xml = decode_redirect(&deflate(LOGOUT_REQ.as_bytes()), &limits()).unwrap();
    assert_eq!(parse_logout_request(&xml, &limits()).unwrap(), r);
}

#[test]
fn logout_request_refusals() {
    let nameid = "<saml:NameID SPNameQualifier=\"https://sp.test/metadata\" Format=\"urn:oasis:names:tc:SAML:2.0:nameid-format:persistent\">a&amp;b&#x3C;c<![CDATA[>d]]></saml:NameID>";
    let cases = [
        LOGOUT_REQ.replace("a&amp;b", "a<!-- x -->b"),
        LOGOUT_REQ.replace(nameid, &format!("{nameid}{nameid}")),
        LOGOUT_REQ.replace(nameid, ""),
        LOGOUT_REQ.replace(nameid, "<saml:EncryptedID/>"),
        LOGOUT_REQ.replace("Version=\"2.0\"", "Version=\"1.1\""),
        LOGOUT_REQ.replace(" IssueInstant=\"2026-01-02T03:04:05Z\"", ""),
        LOGOUT_REQ.replace("NotOnOrAfter=\"2026-01-02T03:09:05Z\"", "NotOnOrAfter=\"soon\""),
        LOGOUT_REQ.replace(" ID=\"id-lo-1\"", ""),
        LOGOUT_REQ.replace("<saml:Issuer>", "<saml:Issuer>x</saml:Issuer><saml:Issuer>"),
        LOGOUT_REQ.replace("LogoutRequest", "AuthnRequest"),
    ];
    for doc in cases {
        assert!(matches!(parse_logout_request(&doc, &limits()), Err(XmlError::Malformed(_))), "{doc}");
    }
    let bomb = format!("<!DOCTYPE x [<!ENTITY a \"b\">]>{LOGOUT_REQ}");
    assert_eq!(parse_logout_request(&bomb, &limits()), Err(XmlError::Doctype));
    let undefined = LOGOUT_REQ.replace("a&amp;b", "a&xxe;b");
    assert!(parse_logout_request(&undefined, &limits()).is_err());
    // Signed by nobody we know: verified_root refuses it whatever the caller thinks.
    assert!(verified_root(LOGOUT_REQ, &[key_and_cert("sp").1]).is_err());
}

#[test]
fn logout_response_read_and_refusals() {
    let doc = r#"<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="id-lr-1" Version="2.0" IssueInstant="2026-01-02T03:04:05Z" Destination="https://idp.test/saml/slo" InResponseTo="_ours"><saml:Issuer>https://sp.test/metadata</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Requester"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal"/></samlp:StatusCode></samlp:Status></samlp:LogoutResponse>"#;
    let r = parse_logout_response(doc, &limits()).unwrap();
    assert_eq!(r.id, "id-lr-1");
    assert_eq!(r.in_response_to.as_deref(), Some("_ours"));
    assert_eq!(r.issuer.as_deref(), Some("https://sp.test/metadata"));
    assert_eq!(r.status, "urn:oasis:names:tc:SAML:2.0:status:Requester");
    assert_eq!(r.sub_status.as_deref(), Some("urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal"));
    for bad in [
        doc.replace("<samlp:Status>", "<samlp:Other>").replace("</samlp:Status>", "</samlp:Other>"),
        doc.replace(" Value=\"urn:oasis:names:tc:SAML:2.0:status:Requester\"", ""),
        doc.replace("LogoutResponse", "Response"),
    ] {
        assert!(matches!(parse_logout_response(&bad, &limits()), Err(XmlError::Malformed(_))), "{bad}");
    }
}

#[test]
fn a_soap_logout_response_is_read_from_the_envelope_s_body_only() {
    let lr = r#"<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r1" Version="2.0" IssueInstant="2026-01-02T03:04:05Z" InResponseTo="_ours"><saml:Issuer>https://sp.test/metadata</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal"/></samlp:StatusCode></samlp:Status></samlp:LogoutResponse>"#;
    let env = |body: &str| format!(r#"<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Header/><S:Body>{body}</S:Body></S:Envelope>"#);
    let r = parse_soap_logout_response(&env(lr), &limits()).unwrap();
    assert_eq!((r.id.as_str(), r.in_response_to.as_deref(), r.issuer.as_deref()), ("_r1", Some("_ours"), Some("https://sp.test/metadata")));
    assert_eq!((r.status.as_str(), r.sub_status.as_deref()), ("urn:oasis:names:tc:SAML:2.0:status:Responder", Some("urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal")));
    // Not enveloped, enveloped twice over, two of them, none, another envelope's namespace, a DTD.
    assert!(parse_soap_logout_response(lr, &limits()).is_err());
    assert!(parse_soap_logout_response(&env(&env(lr)), &limits()).is_err());
    assert!(parse_soap_logout_response(&env(&format!("{lr}{lr}")), &limits()).is_err());
    assert!(parse_soap_logout_response(&env(""), &limits()).is_err());
    assert!(parse_soap_logout_response(&env(lr).replace("http://schemas.xmlsoap.org/soap/envelope/", "urn:other"), &limits()).is_err());
    assert!(parse_soap_logout_response(&format!("<!DOCTYPE x [<!ENTITY e \"x\">]>{}", env(lr)), &limits()).is_err());
}
