//! The XML boundary of SAML (`authrim::saml::xml`) against the attacks of the literature: the
//! eight XML Signature Wrapping variants (Somorovsky et al., "On Breaking SAML: Be Whoever You
//! Want to Be", USENIX Security 2012; as SAML Raider builds them), comment injection in NameID
//! (Duo Labs, 2018), a certificate swapped into KeyInfo, XXE and billion laughs, duplicated
//! IDs, and a signed AuthnRequest wrapped in an attacker's. Fixtures are built at run time: an
//! IdP key and certificate and an attacker's (OpenSSL), Responses signed by xmlsec (samael).

use authrim::saml::xml::{self, Limits, XmlError};
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use samael::crypto::{CertificateDer, Crypto, CryptoProvider};
use samael::idp::response_builder::{build_response_template, ResponseAttribute};
use samael::idp::sp_extractor::RequiredAttribute;
use samael::signature::{DigestAlgorithm, Signature};
use samael::traits::ToXml;
use std::sync::OnceLock;
use std::time::Duration;

const SP_ENTITY: &str = "https://sp.test/metadata";
const SP_ACS: &str = "https://sp.test/acs";
const IDP_ENTITY: &str = "https://idp.test/saml/metadata";
const MAIL: &str = "urn:oid:0.9.2342.19200300.100.1.3";

struct Party {
    key_der: Vec<u8>,
    key: PKey<Private>,
    cert: Vec<u8>,
}

fn party(cn: &str) -> Party {
    use openssl::x509::{X509NameBuilder, X509};
    let rsa = openssl::rsa::Rsa::generate(2048).unwrap();
    let key_der = rsa.private_key_to_der().unwrap();
    let key = PKey::from_rsa(rsa).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&openssl::bn::BigNum::from_u32(1).unwrap().to_asn1_integer().unwrap()).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).unwrap()).unwrap();
    b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(30).unwrap()).unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    Party { key_der, key, cert: b.build().to_der().unwrap() }
}

fn idp() -> &'static Party {
    static P: OnceLock<Party> = OnceLock::new();
    P.get_or_init(|| party("idp.test"))
}

fn attacker() -> &'static Party {
    static P: OnceLock<Party> = OnceLock::new();
    P.get_or_init(|| party("evil.test"))
}

fn trusted() -> Vec<Vec<u8>> {
    vec![idp().cert.clone()]
}

/// A samael signature template with SHA-256 as the reference digest (its default is SHA-1).
fn sig_template(id: &str, cert: &[u8]) -> Signature {
    let mut s = Signature::template(id, &CertificateDer::from(cert.to_vec()));
    for r in s.signed_info.reference.iter_mut() {
        r.digest_method.algorithm = DigestAlgorithm::Sha256;
    }
    s
}

#[derive(Clone, Copy, PartialEq)]
enum Signed {
    Assertion,
    Response,
    Both,
}

/// A Response as an IdP signs it (docs/design/saml.md, "What a spike found"): the Assertion
/// signed first, then a Response signature spliced in after the Response's Issuer and signed
/// (xmlsec signs the first template in document order).
fn response_by(p: &Party, name_id: &str, signed: Signed) -> String {
    response_with(p, name_id, signed, sig_template)
}

fn response_with(p: &Party, name_id: &str, signed: Signed, sig_template: fn(&str, &[u8]) -> Signature) -> String {
    let attrs = [ResponseAttribute {
        required_attribute: RequiredAttribute {
            name: MAIL.into(),
            format: Some("urn:oasis:names:tc:SAML:2.0:attrname-format:uri".into()),
        },
        value: "alice@example.com",
    }];
    let cert = CertificateDer::from(p.cert.clone());
    let mut resp = build_response_template(&cert, name_id, SP_ENTITY, IDP_ENTITY, SP_ACS, "id-req-1", &attrs);
    resp.signature = None;
    let now = resp.issue_instant;
    let a = resp.assertion.as_mut().unwrap();
    if signed != Signed::Response {
        a.signature = Some(sig_template(&a.id, &p.cert));
    }
    for sc in a.subject.as_mut().unwrap().subject_confirmations.iter_mut().flatten() {
        sc.subject_confirmation_data.as_mut().unwrap().not_on_or_after = Some(now + Duration::from_secs(300));
    }
    let c = a.conditions.as_mut().unwrap();
    c.not_before = Some(now - Duration::from_secs(60));
    c.not_on_or_after = Some(now + Duration::from_secs(300));
    a.authn_statements.as_mut().unwrap()[0].session_index = Some("sess-1".into());
    let mut xml = resp.to_string().unwrap();
    if signed != Signed::Response {
        xml = Crypto::sign_xml(&xml, &p.key_der).unwrap();
    }
    if signed == Signed::Assertion {
        return xml;
    }
    let tpl = sig_template(&resp.id, &p.cert).to_string().unwrap();
    let at = xml.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    xml.insert_str(at, &tpl);
    Crypto::sign_xml(&xml, &p.key_der).unwrap()
}

fn response(signed: Signed) -> String {
    response_by(idp(), "alice", signed)
}

fn verify(doc: &str) -> Result<xml::ResponseIn, XmlError> {
    xml::verified_response(doc, &trusted(), &Limits::default())
}

#[track_caller]
fn refused(doc: &str, expected: XmlError) {
    assert_eq!(verify(doc).map(|r| r.assertion.map(|a| a.name_id)), Err(expected), "{doc}");
}

// -------------------------------------------------------------------------------------------
// pieces of a document, by text (the attacks are textual edits of a genuine document)

fn span(doc: &str, open: &str, close: &str) -> (usize, usize) {
    let s = doc.find(open).unwrap_or_else(|| panic!("no {open}"));
    (s, s + doc[s..].find(close).unwrap_or_else(|| panic!("no {close}")) + close.len())
}

fn assertion_span(doc: &str) -> (usize, usize) {
    span(doc, "<saml2:Assertion", "</saml2:Assertion>")
}

fn without_signature(el: &str) -> String {
    let (s, e) = span(el, "<ds:Signature", "</ds:Signature>");
    format!("{}{}", &el[..s], &el[e..])
}

/// An evil copy: another ID, the NameID changed, its signature gone.
fn evil(el: &str, id_attr_prefix: &str) -> String {
    let id = format!("ID=\"{id_attr_prefix}");
    without_signature(el).replacen(&id, &format!("{id}evil"), 1).replace(">alice<", ">admin<")
}

/// The Response's own signature (after its Issuer, before the Assertion).
fn response_signature_span(doc: &str) -> (usize, usize) {
    let (a, _) = assertion_span(doc);
    let (s, e) = span(doc, "<ds:Signature", "</ds:Signature>");
    assert!(e < a, "the Response's signature comes first");
    (s, e)
}

fn root_id(doc: &str) -> String {
    let s = doc.find("<saml2p:Response").unwrap();
    let i = s + doc[s..].find(" ID=\"").unwrap() + 5;
    doc[i..i + doc[i..].find('"').unwrap()].to_string()
}

// -------------------------------------------------------------------------------------------
// accepted

#[test]
fn genuine_responses_accepted_in_each_signing_style() {
    for signed in [Signed::Assertion, Signed::Response, Signed::Both] {
        let doc = response(signed);
        let r = verify(&doc).unwrap_or_else(|e| panic!("{e}: {doc}"));
        assert_eq!(r.id, root_id(&doc));
        assert_eq!(r.status, "urn:oasis:names:tc:SAML:2.0:status:Success");
        assert_eq!((r.in_response_to.as_deref(), r.destination.as_deref(), r.issuer.as_deref()), (Some("id-req-1"), Some(SP_ACS), Some(IDP_ENTITY)));
        let a = r.assertion.unwrap();
        assert_eq!(a.name_id, "alice");
        assert_eq!(a.issuer, IDP_ENTITY);
        assert_eq!(a.in_response_to.as_deref(), Some("id-req-1"));
        assert_eq!(a.recipient.as_deref(), Some(SP_ACS));
        assert_eq!(a.audiences, [SP_ENTITY]);
        assert_eq!(a.session_index.as_deref(), Some("sess-1"));
        assert!(a.not_before.unwrap() < a.not_on_or_after.unwrap());
        assert_eq!(a.confirmation_not_on_or_after, a.not_on_or_after);
        assert_eq!(a.attributes, [(MAIL.to_string(), vec!["alice@example.com".to_string()])]);
        // And through the POST binding.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&doc);
        assert_eq!(xml::decode_post(&b64, &Limits::default()).unwrap(), doc);
    }
}

/// A signed error Response: no assertion, the status and its second level read.
#[test]
fn signed_error_response_without_assertion() {
    let p = idp();
    let cert = CertificateDer::from(p.cert.clone());
    let mut resp = build_response_template(&cert, "alice", SP_ENTITY, IDP_ENTITY, SP_ACS, "id-req-1", &[]);
    resp.signature = None;
    resp.assertion = None;
    resp.status.as_mut().unwrap().status_code.value = Some("urn:oasis:names:tc:SAML:2.0:status:Responder".into());
    let mut xml = resp.to_string().unwrap();
    let code = "Value=\"urn:oasis:names:tc:SAML:2.0:status:Responder\"/>";
    assert!(xml.contains(code), "{xml}");
    let sub = "Value=\"urn:oasis:names:tc:SAML:2.0:status:Responder\"><saml2p:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:NoPassive\"/></saml2p:StatusCode>";
    xml = xml.replace(code, sub);
    let unsigned = xml.clone();
    let at = xml.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    xml.insert_str(at, &sig_template(&resp.id, &p.cert).to_string().unwrap());
    let signed = Crypto::sign_xml(&xml, &p.key_der).unwrap();
    let r = verify(&signed).unwrap();
    assert_eq!((r.status.as_str(), r.sub_status.as_deref(), r.assertion), ("urn:oasis:names:tc:SAML:2.0:status:Responder", Some("urn:oasis:names:tc:SAML:2.0:status:NoPassive"), None));
    // Unsigned, it is refused like any other.
    refused(&unsigned, XmlError::Signature("not signed".into()));
}

// -------------------------------------------------------------------------------------------
// XSW1-2: the Response's signature, its signed Response moved aside

/// XSW1: an evil Response as the root, the original (signature removed) inside the signature.
#[test]
fn xsw1_signed_response_moved_into_its_signature() {
    let doc = response(Signed::Response);
    let (rs, re) = response_signature_span(&doc);
    let root = &doc[doc.find("<saml2p:Response").unwrap()..];
    let copy = without_signature(root);
    let evil_root = format!("{}{}", &doc[..rs], &doc[re..]).replacen(&format!("ID=\"{}\"", root_id(&doc)), "ID=\"_evilresp\"", 1).replace(">alice<", ">admin<");
    let sig = &doc[rs..re];
    let sig = sig.replacen("</ds:Signature>", &format!("{copy}</ds:Signature>"), 1);
    let at = evil_root.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    let attack = format!("{}{}{}", &evil_root[..at], sig, &evil_root[at..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW2: the same, the original placed before the signature as a detached sibling.
#[test]
fn xsw2_signed_response_detached_before_its_signature() {
    let doc = response(Signed::Response);
    let (rs, re) = response_signature_span(&doc);
    let root = &doc[doc.find("<saml2p:Response").unwrap()..];
    let copy = without_signature(root);
    let evil_root = format!("{}{}", &doc[..rs], &doc[re..]).replacen(&format!("ID=\"{}\"", root_id(&doc)), "ID=\"_evilresp\"", 1).replace(">alice<", ">admin<");
    let at = evil_root.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    let attack = format!("{}{}{}{}", &evil_root[..at], copy, &doc[rs..re], &evil_root[at..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW1 and XSW2 without a second assertion (the evil root carries none): only the root's
/// signature decides. Inside the signature (as SAML Raider writes XSW1, or in a ds:Object)
/// the copy does not verify: the enveloped-signature transform drops the signature's whole
/// subtree, copy included. Detached beside it, it verifies, and is not the root.
#[test]
fn xsw1_xsw2_without_a_second_assertion() {
    let doc = response(Signed::Response);
    let (rs, re) = response_signature_span(&doc);
    let root = &doc[doc.find("<saml2p:Response").unwrap()..];
    let copy = without_signature(root);
    let (a, b) = assertion_span(&doc);
    let evil_root = format!("{}{}{}", &doc[..rs], &doc[re..a], &doc[b..]).replacen(&format!("ID=\"{}\"", root_id(&doc)), "ID=\"_evilresp\"", 1);
    let at = evil_root.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    let with_sig = |sig: &str| format!("{}{}{}", &evil_root[..at], sig, &evil_root[at..]);
    let no = || XmlError::Signature("signature does not verify".into());
    refused(&with_sig(&doc[rs..re].replacen("</ds:Signature>", &format!("{copy}</ds:Signature>"), 1)), no());
    refused(&with_sig(&doc[rs..re].replacen("</ds:Signature>", &format!("<ds:Object>{copy}</ds:Object></ds:Signature>"), 1)), no());
    refused(&with_sig(&format!("{copy}{}", &doc[rs..re])), XmlError::Wrapped);
}

// -------------------------------------------------------------------------------------------
// XSW3-8: the Assertion's signature

/// XSW3: an evil assertion before the signed one.
#[test]
fn xsw3_evil_assertion_before_the_signed_one() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let attack = format!("{}{}{}", &doc[..s], evil(&doc[s..e], "_"), &doc[s..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW4: the signed assertion inside the evil one.
#[test]
fn xsw4_signed_assertion_inside_the_evil_one() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let ev = evil(&doc[s..e], "_");
    let ev = ev.replacen("</saml2:Assertion>", &format!("{}</saml2:Assertion>", &doc[s..e]), 1);
    let attack = format!("{}{}{}", &doc[..s], ev, &doc[e..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW5: the evil assertion carries the signature; the original, unsigned, after it.
#[test]
fn xsw5_signature_on_the_evil_assertion_original_appended() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let orig = &doc[s..e];
    let ev = orig.replacen("ID=\"_", "ID=\"_evil", 1).replace(">alice<", ">admin<");
    let attack = format!("{}{}{}{}", &doc[..s], ev, without_signature(orig), &doc[e..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW6: the evil assertion carries the signature; the original inside that signature.
#[test]
fn xsw6_original_inside_the_evil_assertions_signature() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let orig = &doc[s..e];
    let ev = orig.replacen("ID=\"_", "ID=\"_evil", 1).replace(">alice<", ">admin<");
    let ev = ev.replacen("</ds:Signature>", &format!("{}</ds:Signature>", without_signature(orig)), 1);
    let attack = format!("{}{}{}", &doc[..s], ev, &doc[e..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW7: the signed assertion moved into an Extensions element; an evil one in its place.
#[test]
fn xsw7_signed_assertion_in_extensions() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let ext = format!("<saml2p:Extensions>{}</saml2p:Extensions>", &doc[s..e]);
    let attack = format!("{}{}{}{}", &doc[..s], ext, evil(&doc[s..e], "_"), &doc[e..]);
    refused(&attack, XmlError::Wrapped);
}

/// XSW8: the evil assertion carries the signature, the original in a ds:Object inside it.
#[test]
fn xsw8_original_in_an_object_of_the_evil_signature() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let orig = &doc[s..e];
    let ev = orig.replacen("ID=\"_", "ID=\"_evil", 1).replace(">alice<", ">admin<");
    let obj = format!("<ds:Object>{}</ds:Object></ds:Signature>", without_signature(orig));
    let attack = format!("{}{}{}", &doc[..s], ev.replacen("</ds:Signature>", &obj, 1), &doc[e..]);
    refused(&attack, XmlError::Wrapped);
}

/// The signed assertion moved out of the Response altogether, only the evil one left: the
/// signature then covers nothing in the document, or does not verify.
#[test]
fn signed_assertion_replaced() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let attack = format!("{}{}{}", &doc[..s], evil(&doc[s..e], "_"), &doc[e..]);
    refused(&attack, XmlError::Signature("not signed".into()));
}

#[test]
fn duplicated_id() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let same_id = without_signature(&doc[s..e]).replace(">alice<", ">admin<");
    refused(&format!("{}{}{}", &doc[..s], same_id, &doc[s..]), XmlError::Wrapped);
    refused(&format!("{}{}{}", &doc[..e], same_id, &doc[e..]), XmlError::Wrapped);
    // xml:id is an ID to libxml2 too.
    let (s2, _) = assertion_span(&doc);
    let xml_id = format!("{}<saml2p:Foo xml:id=\"{}\"/>{}", &doc[..s2], root_id(&doc), &doc[s2..]);
    refused(&xml_id, XmlError::Wrapped);
    // An ID shared with any element at all.
    let id = root_id(&doc);
    let attack = doc.replacen("<saml2:Issuer", &format!("<saml2:Issuer ID=\"{id}x\""), 1).replacen(&format!("ID=\"{id}\""), &format!("ID=\"{id}x\""), 1);
    assert!(verify(&attack).is_err());
}

// -------------------------------------------------------------------------------------------
// what is signed, and by whom

#[test]
fn comment_in_name_id_refused() {
    // The IdP vouches for "admin.evil.test"; exclusive c14n leaves comments out of the digest,
    // so a comment after "admin" keeps the signature valid, and a naive reader sees "admin".
    for signed in [Signed::Assertion, Signed::Both] {
        let doc = response_by(idp(), "admin.evil.test", signed);
        let attack = doc.replace(">admin.evil.test<", ">admin<!---->.evil.test<");
        assert_ne!(attack, doc);
        refused(&attack, XmlError::Malformed("a comment inside NameID".into()));
    }
}

#[test]
fn comment_in_an_attribute_value_refused() {
    // The same cut in the e-mail attribute (what accounts are often linked by): the comment
    // leaves the digest unchanged, and a reader keeping the first text node sees "alice@example".
    for signed in [Signed::Assertion, Signed::Response, Signed::Both] {
        let doc = response(signed);
        for attack in [
            doc.replace(">alice@example.com<", ">alice@example<!---->.com<"),
            doc.replace("<saml2:Audience>", "<saml2:Audience><!---->"),
        ] {
            assert_ne!(attack, doc);
            refused(&attack, XmlError::Malformed("a comment inside the assertion".into()));
        }
    }
}

#[test]
fn unsigned_response_and_assertion_refused() {
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    let unsigned = format!("{}{}{}", &doc[..s], without_signature(&doc[s..e]), &doc[e..]);
    refused(&unsigned, XmlError::Signature("not signed".into()));
}

#[test]
fn signed_response_with_assertion_modified_after_signing() {
    for signed in [Signed::Response, Signed::Both] {
        let doc = response(signed);
        refused(&doc.replace(">alice<", ">admin<"), XmlError::Signature("signature does not verify".into()));
        refused(&doc.replace(">alice@example.com<", ">admin@example.com<"), XmlError::Signature("signature does not verify".into()));
    }
}

#[test]
fn attacker_signed_with_his_certificate_in_key_info() {
    for signed in [Signed::Assertion, Signed::Response, Signed::Both] {
        let doc = response_by(attacker(), "admin", signed);
        assert!(doc.contains(&{
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(&attacker().cert)[..40].to_string()
        }));
        refused(&doc, XmlError::Signature("signature does not verify".into()));
    }
    // And the IdP's certificate swapped into KeyInfo changes nothing either.
    let doc = response_by(attacker(), "admin", Signed::Assertion);
    use base64::Engine;
    let e = base64::engine::general_purpose::STANDARD;
    let swapped = doc.replace(&e.encode(&attacker().cert), &e.encode(&idp().cert));
    refused(&swapped, XmlError::Signature("signature does not verify".into()));
}

/// Signed by the IdP's own key, with a SHA-1 digest (samael's template default) or RSA-SHA1:
/// refused (RSA-SHA256 and RSA-SHA512 with SHA-256/512 digests only).
#[test]
fn weak_algorithms_refused() {
    fn sha1_digest(id: &str, cert: &[u8]) -> Signature {
        Signature::template(id, &CertificateDer::from(cert.to_vec()))
    }
    fn rsa_sha1(id: &str, cert: &[u8]) -> Signature {
        let mut s = sig_template(id, cert);
        s.signed_info.signature_method.algorithm = samael::signature::SignatureAlgorithm::Unsupported("http://www.w3.org/2000/09/xmldsig#rsa-sha1".into());
        s
    }
    for weak in [sha1_digest as fn(&str, &[u8]) -> Signature, rsa_sha1] {
        for signed in [Signed::Assertion, Signed::Response, Signed::Both] {
            let doc = response_with(idp(), "alice", signed, weak);
            assert!(doc.contains("sha1"));
            refused(&doc, XmlError::Signature("signature does not verify".into()));
        }
    }
}

#[test]
fn wrong_certificate() {
    let doc = response(Signed::Both);
    let r = xml::verified_response(&doc, &[attacker().cert.clone()], &Limits::default());
    assert!(matches!(r, Err(XmlError::Signature(_))));
    assert!(matches!(xml::verified_response(&doc, &[], &Limits::default()), Err(XmlError::Signature(_))));
    // Among others, the right one is found.
    assert!(xml::verified_response(&doc, &[attacker().cert.clone(), idp().cert.clone()], &Limits::default()).is_ok());
}

#[test]
fn xxe_and_billion_laughs_on_a_genuine_response() {
    let doc = response(Signed::Both);
    let body = doc.split_once("?>").map(|(_, b)| b).unwrap_or(&doc);
    let xxe = format!("<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>{}", body.replace(">alice<", ">&x;<"));
    refused(&xxe, XmlError::Doctype);
    let mut laughs = String::from("<!DOCTYPE r [<!ENTITY l0 \"lol\">");
    for i in 1..10 {
        laughs.push_str(&format!("<!ENTITY l{i} \"{}\">", format!("&l{};", i - 1).repeat(10)));
    }
    laughs.push_str("]>");
    refused(&format!("{laughs}{}", body.replace(">alice<", ">&l9;<")), XmlError::Doctype);
    assert_eq!(xml::verified_root(&xxe, &trusted()), Err(XmlError::Doctype));
}

/// `verified_response` has no key to decrypt with (`verified_response_decrypting` has: its
/// cases are `saml::xml`'s unit tests): an encrypted assertion is refused, and one put in
/// place of a signed Response's assertion breaks that signature first.
#[test]
fn encrypted_assertion_without_a_key_refused() {
    let enc = "<saml2:EncryptedAssertion xmlns:saml2=\"urn:oasis:names:tc:SAML:2.0:assertion\"><xenc:EncryptedData xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\"/></saml2:EncryptedAssertion>";
    let doc = response(Signed::Assertion);
    let (s, e) = assertion_span(&doc);
    refused(&format!("{}{}{}", &doc[..s], enc, &doc[e..]), XmlError::Malformed("an encrypted assertion, and no encryption key to decrypt it".into()));
    let doc = response(Signed::Response);
    let (s, e) = assertion_span(&doc);
    assert!(matches!(verify(&format!("{}{}{}", &doc[..s], enc, &doc[e..])), Err(XmlError::Signature(_))));
}

// -------------------------------------------------------------------------------------------
// AuthnRequests (POST binding, enveloped signature)

fn signed_request(p: &Party) -> String {
    let mut req = samael::schema::AuthnRequest {
        id: "id-req-1".into(),
        version: "2.0".into(),
        destination: Some("https://idp.test/saml/sso".into()),
        assertion_consumer_service_url: Some(SP_ACS.into()),
        protocol_binding: Some("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST".into()),
        issuer: Some(samael::schema::Issuer { value: Some(SP_ENTITY.into()), ..Default::default() }),
        ..Default::default()
    };
    req.signature = Some(sig_template(&req.id, &p.cert));
    req.to_signed_xml(&p.key_der).unwrap()
}

#[test]
fn genuine_signed_authn_request() {
    let sp = party("sp.test");
    let doc = signed_request(&sp);
    let reduced = xml::verified_root(&doc, &[sp.cert.clone()]).unwrap();
    let r = xml::parse_authn_request(&reduced, &Limits::default()).unwrap();
    assert_eq!((r.id.as_str(), r.acs_url.as_deref(), r.issuer.as_deref()), ("id-req-1", Some(SP_ACS), Some(SP_ENTITY)));
    assert!(xml::parse_authn_request(&doc, &Limits::default()).unwrap().has_signature);
    assert!(matches!(xml::verified_root(&doc, &[attacker().cert.clone()]), Err(XmlError::Signature(_))));
    assert!(matches!(xml::verified_root(&doc.replace(SP_ACS, "https://evil.test/acs"), &[sp.cert.clone()]), Err(XmlError::Signature(_))));
    // Signed by the attacker, his certificate in KeyInfo.
    assert!(matches!(xml::verified_root(&signed_request(attacker()), &[sp.cert.clone()]), Err(XmlError::Signature(_))));
}

/// The spike's wrapped AuthnRequest: the SP's signed request inside an attacker's root, which
/// xmlsec1 --verify (and samael's try_verify_with_cert) accept with the attacker's ACS URL.
#[test]
fn wrapped_authn_request_refused() {
    let sp = party("sp.test");
    let signed = signed_request(&sp);
    let inner = signed.split_once("?>").map(|(_, b)| b).unwrap_or(&signed);
    let wrapped = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><saml2p:AuthnRequest xmlns:saml2p="urn:oasis:names:tc:SAML:2.0:protocol" ID="evil-1" Version="2.0" IssueInstant="2026-01-01T00:00:00Z" AssertionConsumerServiceURL="https://evil.test/acs"><saml2:Issuer xmlns:saml2="urn:oasis:names:tc:SAML:2.0:assertion">{SP_ENTITY}</saml2:Issuer><saml2p:Extensions>{inner}</saml2p:Extensions></saml2p:AuthnRequest>"#
    );
    // Unsigned root: refused before xmlsec is asked.
    assert!(matches!(xml::verified_root(&wrapped, &[sp.cert.clone()]), Err(XmlError::Signature(_))));
    // The root given the inner request's signature (it still references the inner request).
    let (s, e) = span(inner, "<ds:Signature", "</ds:Signature>");
    let sig = &inner[s..e];
    let moved = wrapped.replacen(sig, "", 1).replacen("</saml2:Issuer>", &format!("</saml2:Issuer>{sig}"), 1);
    assert_eq!(xml::verified_root(&moved, &[sp.cert.clone()]), Err(XmlError::Wrapped));
}

// -------------------------------------------------------------------------------------------
// the Redirect binding, end to end with an OpenSSL-signed query

#[test]
fn redirect_binding_query() {
    use base64::Engine;
    let e = base64::engine::general_purpose::STANDARD;
    let sp = party("sp.test");
    let doc = signed_request(&sp);
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut z, doc.as_bytes()).unwrap();
    let b64 = e.encode(z.finish().unwrap());
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let q = format!("SAMLRequest={}&RelayState=abc&SigAlg={}", enc(&b64), enc("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"));
    let mut s = openssl::sign::Signer::new(MessageDigest::sha256(), &sp.key).unwrap();
    s.update(q.as_bytes()).unwrap();
    let q = format!("{q}&Signature={}", enc(&e.encode(s.sign_to_vec().unwrap())));
    assert_eq!(xml::verify_redirect_signature(&q, &[sp.cert.clone()]), Ok(()));
    assert!(xml::verify_redirect_signature(&q, &[attacker().cert.clone()]).is_err());
    assert_eq!(xml::decode_redirect(&b64, &Limits::default()).unwrap(), doc);
}
