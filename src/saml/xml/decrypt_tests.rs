//! Encrypted assertions to us (`decrypt`): every accepted algorithm and layout, and each way
//! one is refused. The IdP's side is built here with OpenSSL (what xmlsec1 uses), the
//! assertions signed by xmlsec (samael) as an IdP signs them; one round trip goes through our
//! own IdP-side `saml::encrypt`.

use super::decrypt::*;
use super::safe::scan;
use super::*;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use openssl::md::Md;
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;
use openssl::symm::{Cipher, Crypter, Mode};
use samael::crypto::{CertificateDer, Crypto, CryptoProvider};
use samael::idp::response_builder::{build_response_template, ResponseAttribute};
use samael::idp::sp_extractor::RequiredAttribute;
use samael::signature::{DigestAlgorithm, Signature};
use samael::traits::ToXml;
use std::sync::OnceLock;

const SHA1: &str = "http://www.w3.org/2000/09/xmldsig#sha1";
const SHA256: &str = "http://www.w3.org/2001/04/xmlenc#sha256";
const MGF1_SHA256: &str = "http://www.w3.org/2009/xmlenc11#mgf1sha256";

struct Party {
    key_der: Vec<u8>,
    pkcs8: Vec<u8>,
    cert: Vec<u8>,
}

fn party(cn: &str) -> Party {
    let (key, cert) = super::tests::key_and_cert(cn);
    let key_der = key.rsa().unwrap().private_key_to_der().unwrap();
    let pkcs8 = key.private_key_to_pkcs8().unwrap();
    Party { key_der, pkcs8, cert }
}

fn idp() -> &'static Party {
    static P: OnceLock<Party> = OnceLock::new();
    P.get_or_init(|| party("idp.test"))
}

/// Our encryption key (what the metadata's certificate holds).
fn ours() -> &'static Party {
    static P: OnceLock<Party> = OnceLock::new();
    P.get_or_init(|| party("sp.test"))
}

/// Another of our keys (a retired one, say), tried first.
fn older() -> &'static Party {
    static P: OnceLock<Party> = OnceLock::new();
    P.get_or_init(|| party("sp-old.test"))
}

fn sig_template(id: &str, cert: &[u8]) -> Signature {
    let mut s = Signature::template(id, &CertificateDer::from(cert.to_vec()));
    for r in s.signed_info.reference.iter_mut() {
        r.digest_method.algorithm = DigestAlgorithm::Sha256;
    }
    s
}

/// A Response of the IdP, its assertion signed or not, the Response not (yet).
fn response(sign_assertion: bool) -> String {
    let attrs = [ResponseAttribute {
        required_attribute: RequiredAttribute { name: "mail".into(), format: None },
        value: "alice@example.com",
    }];
    let cert = CertificateDer::from(idp().cert.clone());
    let mut resp = build_response_template(&cert, "alice", "https://sp.test/sp", "https://idp.test", "https://sp.test/acs", "id-req-1", &attrs);
    resp.signature = None;
    let a = resp.assertion.as_mut().unwrap();
    a.signature = sign_assertion.then(|| sig_template(&a.id, &idp().cert));
    let xml = resp.to_string().unwrap();
    if sign_assertion { Crypto::sign_xml(&xml, &idp().key_der).unwrap() } else { xml }
}

fn sign_response(xml: &str) -> String {
    let id = xml.split(" ID=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    let tpl = sig_template(&id, &idp().cert).to_string().unwrap();
    let mut xml = xml.to_string();
    let at = xml.find("</saml2:Issuer>").unwrap() + "</saml2:Issuer>".len();
    xml.insert_str(at, &tpl);
    Crypto::sign_xml(&xml, &idp().key_der).unwrap()
}

/// (before, the Assertion element, after).
fn split_assertion(xml: &str) -> (String, String, String) {
    let start = xml.find("<saml2:Assertion").unwrap();
    let end = xml.find("</saml2:Assertion>").unwrap() + "</saml2:Assertion>".len();
    (xml[..start].to_string(), xml[start..end].to_string(), xml[end..].to_string())
}

#[derive(Clone, Copy, Debug)]
struct How {
    content: &'static str,
    transport: &'static str,
    digest: Option<&'static str>,
    mgf: Option<&'static str>,
    /// The EncryptedKey beside the EncryptedData, named by a RetrievalMethod.
    retrieval: bool,
}

const GCM_MGF1P: How = How { content: AES256_GCM, transport: RSA_OAEP_MGF1P, digest: None, mgf: None, retrieval: false };
const CBC_MGF1P: How = How { content: AES128_CBC, transport: RSA_OAEP_MGF1P, digest: Some(SHA1), mgf: None, retrieval: false };

fn content_encrypt(how: How, key: &[u8], plain: &[u8]) -> Vec<u8> {
    let mut iv = vec![0u8; if how.content.ends_with("gcm") { 12 } else { 16 }];
    openssl::rand::rand_bytes(&mut iv).unwrap();
    let mut out = iv.clone();
    match how.content {
        AES256_GCM | AES128_GCM => {
            let cipher = if key.len() == 32 { Cipher::aes_256_gcm() } else { Cipher::aes_128_gcm() };
            let mut tag = [0u8; 16];
            out.extend(openssl::symm::encrypt_aead(cipher, key, Some(&iv), &[], plain, &mut tag).unwrap());
            out.extend(tag);
        }
        _ => {
            let cipher = if key.len() == 32 { Cipher::aes_256_cbc() } else { Cipher::aes_128_cbc() };
            // XML Encryption's padding: arbitrary bytes, then their count.
            let n = 16 - plain.len() % 16;
            let mut padded = plain.to_vec();
            padded.extend(vec![0xA5u8; n - 1]);
            padded.push(n as u8);
            let mut c = Crypter::new(cipher, Mode::Encrypt, key, Some(&iv)).unwrap();
            c.pad(false);
            let mut buf = vec![0u8; padded.len() + 32];
            let k = c.update(&padded, &mut buf).unwrap();
            let f = c.finalize(&mut buf[k..]).unwrap();
            out.extend(&buf[..k + f]);
        }
    }
    out
}

fn wrap(how: How, cert: &[u8], key: &[u8]) -> Vec<u8> {
    let public = openssl::x509::X509::from_der(cert).unwrap().public_key().unwrap();
    let mut ctx = PkeyCtx::new(&public).unwrap();
    ctx.encrypt_init().unwrap();
    ctx.set_rsa_padding(Padding::PKCS1_OAEP).unwrap();
    ctx.set_rsa_oaep_md(if how.digest == Some(SHA256) { Md::sha256() } else { Md::sha1() }).unwrap();
    ctx.set_rsa_mgf1_md(if how.mgf == Some(MGF1_SHA256) { Md::sha256() } else { Md::sha1() }).unwrap();
    let mut out = Vec::new();
    ctx.encrypt_to_vec(key, &mut out).unwrap();
    out
}

/// `plain` as an IdP encrypts it to `cert`: an `EncryptedAssertion`.
fn encrypt(plain: &str, cert: &[u8], how: How) -> String {
    let mut key = vec![0u8; if how.content.contains("128") { 16 } else { 32 }];
    openssl::rand::rand_bytes(&mut key).unwrap();
    let data = STANDARD.encode(content_encrypt(how, &key, plain.as_bytes()));
    let digest = how.digest.map(|d| format!(r#"<ds:DigestMethod Algorithm="{d}"/>"#)).unwrap_or_default();
    let mgf = how.mgf.map(|m| format!(r#"<xenc11:MGF xmlns:xenc11="http://www.w3.org/2009/xmlenc11#" Algorithm="{m}"/>"#)).unwrap_or_default();
    // Wrapped the way xmlsec1 writes base64: 64-character lines.
    let wrapped: Vec<String> = STANDARD.encode(wrap(how, cert, &key)).as_bytes().chunks(64).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    let ek = format!(
        r#"<xenc:EncryptedKey Id="EK_1"><xenc:EncryptionMethod Algorithm="{}">{digest}{mgf}</xenc:EncryptionMethod><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{}</ds:X509Certificate></ds:X509Data></ds:KeyInfo><xenc:CipherData><xenc:CipherValue>
{}
</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>"#,
        how.transport,
        STANDARD.encode(cert),
        wrapped.join("\n")
    );
    let (key_info, sibling) = if how.retrieval {
        (r##"<ds:RetrievalMethod URI="#EK_1" Type="http://www.w3.org/2001/04/xmlenc#EncryptedKey"/>"##.to_string(), ek)
    } else {
        (ek, String::new())
    };
    format!(
        r#"<saml2:EncryptedAssertion xmlns:saml2="urn:oasis:names:tc:SAML:2.0:assertion"><xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="ED_1" Type="http://www.w3.org/2001/04/xmlenc#Element"><xenc:EncryptionMethod Algorithm="{}"/><ds:KeyInfo>{key_info}</ds:KeyInfo><xenc:CipherData><xenc:CipherValue>{data}</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>{}</saml2:EncryptedAssertion>"#,
        how.content,
        sibling.replace("<xenc:EncryptedKey ", r#"<xenc:EncryptedKey xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" "#)
    )
}

/// A Response whose assertion (signed or not) is encrypted to us as `how` says, the
/// Response then signed or not.
fn encrypted_response(how: How, sign_assertion: bool, signed_response: bool) -> String {
    let (before, assertion, after) = split_assertion(&response(sign_assertion));
    let xml = format!("{before}{}{after}", encrypt(&assertion, &ours().cert, how));
    if signed_response { sign_response(&xml) } else { xml }
}

fn keys() -> Vec<Vec<u8>> {
    vec![older().pkcs8.clone(), ours().pkcs8.clone()]
}

fn verify(doc: &str) -> Result<ResponseIn, XmlError> {
    verified_response_decrypting(doc, &[idp().cert.clone()], &Limits::default(), &keys())
}

fn name_id(doc: &str) -> String {
    verify(doc).unwrap_or_else(|e| panic!("{e}: {doc}")).assertion.unwrap().name_id
}

#[test]
fn every_accepted_algorithm_and_layout_decrypts() {
    let (before, assertion, after) = split_assertion(&response(true));
    let transports = [
        (RSA_OAEP_MGF1P, None, None),
        (RSA_OAEP_MGF1P, Some(SHA1), None),
        (RSA_OAEP, None, None),
        (RSA_OAEP, Some(SHA256), None), // MGF1-SHA1 by default: what aws-lc-rs cannot pair
        (RSA_OAEP, Some(SHA256), Some(MGF1_SHA256)),
    ];
    for content in [AES256_GCM, AES128_GCM, AES256_CBC, AES128_CBC] {
        for (transport, digest, mgf) in transports {
            for retrieval in [false, true] {
                let how = How { content, transport, digest, mgf, retrieval };
                let doc = format!("{before}{}{after}", encrypt(&assertion, &ours().cert, how));
                let r = verify(&doc).unwrap_or_else(|e| panic!("{how:?}: {e}"));
                assert!(r.assertion_encrypted, "{how:?}");
                let a = r.assertion.unwrap();
                assert_eq!((a.name_id.as_str(), r.in_response_to.as_deref()), ("alice", Some("id-req-1")), "{how:?}");
                assert_eq!(a.attributes, [("mail".to_string(), vec!["alice@example.com".to_string()])]);
            }
        }
    }
}

#[test]
fn what_we_encrypt_as_an_idp_we_decrypt_as_an_sp() {
    let (before, assertion, after) = split_assertion(&response(true));
    let ea = crate::saml::encrypt::encrypted_assertion(&assertion, &ours().cert).unwrap();
    assert_eq!(name_id(&format!("{before}{ea}{after}")), "alice");
}

#[test]
fn a_signature_must_cover_what_is_read() {
    // The Response's signature over the ciphertext: the assertion need not sign itself.
    assert_eq!(name_id(&encrypted_response(GCM_MGF1P, false, true)), "alice");
    assert_eq!(name_id(&encrypted_response(CBC_MGF1P, false, true)), "alice");
    // Both signed: both verified.
    assert_eq!(name_id(&encrypted_response(GCM_MGF1P, true, true)), "alice");
    // In the clear: read as before, and said so (`want_assertions_encrypted` refuses it).
    let plain = verify(&response(true)).unwrap();
    assert!(!plain.assertion_encrypted && plain.assertion.is_some());
    // Neither: refused.
    assert!(matches!(verify(&encrypted_response(GCM_MGF1P, false, false)), Err(XmlError::Signature(_))));
    assert!(matches!(verify(&encrypted_response(CBC_MGF1P, false, false)), Err(XmlError::Signature(_))));
    // Signed by a key not configured for the IdP (ours): refused.
    let r = encrypted_response(GCM_MGF1P, true, false);
    assert!(verified_response_decrypting(&r, &[ours().cert.clone()], &Limits::default(), &keys()).is_err());
    // Without our keys (the old entry point): an encrypted assertion is refused.
    assert!(matches!(verified_response(&r, &[idp().cert.clone()], &Limits::default()), Err(XmlError::Malformed(_))));
}

/// The base64 CipherValue of the EncryptedData (the first CipherValue after `ED_1`).
fn tamper(doc: &str, at: usize) -> String {
    let start = doc.find("Id=\"ED_1\"").unwrap();
    let marker = "</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>";
    let end = doc.find(marker).unwrap();
    let open = doc[..end].rfind("<xenc:CipherValue>").unwrap() + "<xenc:CipherValue>".len();
    assert!(open > start);
    let mut data = STANDARD.decode(&doc[open..end]).unwrap();
    let i = at.min(data.len() - 1);
    data[i] ^= 0x01;
    format!("{}{}{}", &doc[..open], STANDARD.encode(data), &doc[end..])
}

#[test]
fn tampered_ciphertext_is_refused() {
    for how in [GCM_MGF1P, CBC_MGF1P, How { content: AES256_CBC, ..CBC_MGF1P }] {
        let doc = encrypted_response(how, true, false);
        for at in [0, 20, 100, usize::MAX] {
            assert!(verify(&tamper(&doc, at)).is_err(), "{how:?} at {at}");
        }
        // Under the Response's signature, any change to the ciphertext breaks it first.
        let signed = encrypted_response(how, false, true);
        assert!(matches!(verify(&tamper(&signed, 40)), Err(XmlError::Signature(_))), "{how:?}");
    }
    // CBC without a Response signature: one reason for every failure after the key (no
    // padding oracle), whatever broke.
    let doc = encrypted_response(CBC_MGF1P, true, false);
    for at in [0, 20, usize::MAX] {
        assert_eq!(verify(&tamper(&doc, at)), Err(XmlError::Signature(UNDECRYPTABLE.into())), "at {at}");
    }
}

#[test]
fn encrypted_to_another_key_is_refused() {
    let doc = encrypted_response(GCM_MGF1P, true, false);
    let only_old = verified_response_decrypting(&doc, &[idp().cert.clone()], &Limits::default(), &[older().pkcs8.clone()]);
    assert!(matches!(only_old, Err(XmlError::Signature(m)) if m.contains("not encrypted to any of our keys")));
    let none = verified_response_decrypting(&doc, &[idp().cert.clone()], &Limits::default(), &[]);
    assert!(matches!(none, Err(XmlError::Malformed(_))));
    let junk = verified_response_decrypting(&doc, &[idp().cert.clone()], &Limits::default(), &[vec![], vec![0x30, 0x82]]);
    assert!(junk.is_err());
}

#[test]
fn a_dtd_or_an_oversized_plaintext_is_refused() {
    let (before, assertion, after) = split_assertion(&response(true));
    let dtd = format!(r#"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>{assertion}"#);
    let doc = format!("{before}{}{after}", encrypt(&dtd, &ours().cert, GCM_MGF1P));
    assert_eq!(verify(&doc), Err(XmlError::Doctype));
    let doc = format!("{before}{}{after}", encrypt(&dtd, &ours().cert, CBC_MGF1P));
    assert!(verify(&doc).is_err());
    // Deeper than the bound once decrypted.
    let deep = assertion.replacen("<saml2:Issuer", &format!("{}<saml2:Issuer", "<x:y xmlns:x=\"urn:x\">".repeat(40)), 1);
    let deep = deep.replacen("</saml2:Issuer>", &format!("</saml2:Issuer>{}", "</x:y>".repeat(40)), 1);
    let doc = format!("{before}{}{after}", encrypt(&deep, &ours().cert, GCM_MGF1P));
    assert_eq!(verify(&doc), Err(XmlError::TooDeep));
    // Larger than the message bound: the whole Response is, before anything is decrypted.
    let small = Limits { max_message_bytes: 4096, max_depth: 32 };
    let doc = encrypted_response(GCM_MGF1P, true, false);
    assert_eq!(verified_response_decrypting(&doc, &[idp().cert.clone()], &small, &keys()), Err(XmlError::TooLarge));
}

#[test]
fn unaccepted_algorithms_and_shapes_are_refused() {
    let doc = encrypted_response(GCM_MGF1P, true, false);
    let cases = [
        doc.replace(AES256_GCM, "http://www.w3.org/2001/04/xmlenc#tripledes-cbc"),
        doc.replace(RSA_OAEP_MGF1P, "http://www.w3.org/2001/04/xmlenc#rsa-1_5"),
        doc.replace("<xenc:CipherData><xenc:CipherValue>", "<xenc:CipherData><xenc:CipherReference URI=\"https://evil.test/\"/><xenc:CipherValue>"),
        doc.replace("</saml2:EncryptedAssertion>", "</saml2:EncryptedAssertion><saml2:EncryptedAssertion/>"),
        doc.replace("</saml2:Issuer>", "</saml2:Issuer><saml2:Assertion/>"),
        doc.replace("</xenc:EncryptionMethod>", "<xenc:OAEPparams>AAAA</xenc:OAEPparams></xenc:EncryptionMethod>"),
        doc.replace("Type=\"http://www.w3.org/2001/04/xmlenc#Element\"", "Type=\"http://www.w3.org/2001/04/xmlenc#Content\""),
        doc.replace("<saml2:EncryptedAssertion xmlns:saml2=\"urn:oasis:names:tc:SAML:2.0:assertion\">", "<saml2:EncryptedAssertion xmlns:saml2=\"urn:oasis:names:tc:SAML:2.0:assertion\"><other/>"),
    ];
    for (i, c) in cases.iter().enumerate() {
        assert!(verify(c).is_err(), "case {i}: {c}");
    }
    // Garbage where the ciphertexts are: refused, never a panic.
    let end = doc.find("</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>").unwrap();
    let open = doc[..end].rfind("<xenc:CipherValue>").unwrap() + "<xenc:CipherValue>".len();
    for junk in ["", "AA==", "not base64!", &STANDARD.encode([0u8; 27]), &STANDARD.encode([7u8; 4096])] {
        assert!(verify(&format!("{}{junk}{}", &doc[..open], &doc[end..])).is_err(), "{junk}");
    }
}

#[test]
fn a_plaintext_may_rely_on_the_response_s_namespaces() {
    // xmlsec1 decrypts in the context of the EncryptedAssertion (XML Encryption §4.3): an
    // IdP may leave the Response's prefixes undeclared in what it encrypts.
    let plain = "<saml2:Assertion ID=\"a1\"><saml2:Issuer>https://idp.test</saml2:Issuer></saml2:Assertion>";
    let doc = format!(
        r#"<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml2="urn:oasis:names:tc:SAML:2.0:assertion" ID="r1">{}</samlp:Response>"#,
        encrypt(plain, &ours().cert, GCM_MGF1P).replace(" xmlns:saml2=\"urn:oasis:names:tc:SAML:2.0:assertion\"", "")
    );
    let d = scan(&doc, &Limits::default()).unwrap();
    let ea = d.all(super::safe::NS_ASSERTION, "EncryptedAssertion")[0];
    let (out, cbc) = decrypt_assertion(&d, ea, &keys(), &Limits::default()).unwrap();
    assert!(!cbc);
    let p = scan(&out, &Limits::default()).unwrap();
    assert!(p.is(0, super::safe::NS_ASSERTION, "Assertion"), "{out}");
}

/// The fuzz target's encrypted seeds are read down to the key unwrap (nothing is encrypted
/// to a key of ours there): its mutations explore the reading of every part.
#[test]
fn fuzz_seeds_reach_the_key_unwrap() {
    for name in ["seed-encrypted-assertion", "seed-encrypted-assertion-retrieval"] {
        let b = std::fs::read(format!("{}/fuzz/corpus/saml_message/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let doc = String::from_utf8(b[1..].to_vec()).unwrap();
        let r = verified_response_decrypting(&doc, &[idp().cert.clone()], &Limits::default(), &keys());
        assert!(matches!(r, Err(XmlError::Signature(ref m)) if m.contains("not encrypted to any of our keys")), "{name}: {r:?}");
    }
}
