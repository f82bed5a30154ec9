//! Signatures: the Redirect binding's over the raw query (ours, on aws-lc-rs), and enveloped
//! XML signatures (xmlsec through samael), reduced to what they cover before anything is read.

use super::decrypt::{decrypt_assertion, UNDECRYPTABLE};
use super::read::{assertion, assertion_in, common, guarded, response};
use super::safe::{scan, Doc, NS_ASSERTION, NS_PROTOCOL};
use super::{Limits, ResponseIn, XmlError};
use aws_lc_rs::signature::{self, UnparsedPublicKey};
use base64::Engine;
use samael::schema::Assertion;
use samael::crypto::{AllowedSignatureAlgorithm, CertificateDer, Crypto, CryptoProvider, ReduceMode};

fn sig(m: &str) -> XmlError {
    XmlError::Signature(m.into())
}

fn bad(m: &str) -> XmlError {
    XmlError::Malformed(m.into())
}

/// `%XX` only: a `+` stays a `+`, since a base64 signature never holds a space and some SPs
/// leave its `+` unencoded.
fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

const RSA_SHA256: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const RSA_SHA512: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512";

/// The RSAPublicKey inside a certificate's SubjectPublicKeyInfo (what aws-lc-rs verifies with).
fn rsa_public_key(cert_der: &[u8]) -> Option<Vec<u8>> {
    use x509_parser::prelude::{FromDer, X509Certificate};
    let (_, cert) = X509Certificate::from_der(cert_der).ok()?;
    let spki = &cert.tbs_certificate.subject_pki;
    (spki.algorithm.algorithm == x509_parser::oid_registry::OID_PKCS1_RSAENCRYPTION)
        .then(|| spki.subject_public_key.data.to_vec())
}

pub(super) fn verify_redirect_signature(raw_query: &str, certs_der: &[Vec<u8>]) -> Result<(), XmlError> {
    let query = raw_query.strip_prefix('?').unwrap_or(raw_query);
    let (mut message, mut relay, mut alg, mut signature) = (None, None, None, None);
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let slot = match key {
            "SAMLRequest" | "SAMLResponse" => &mut message,
            "RelayState" => &mut relay,
            "SigAlg" => &mut alg,
            "Signature" => &mut signature,
            _ => continue,
        };
        // Two of a kind: which one was signed is ambiguous.
        if slot.replace((part, value)).is_some() {
            return Err(sig("a parameter given twice"));
        }
    }
    let (message, _) = message.ok_or_else(|| sig("no SAML message"))?;
    let (alg_part, alg) = alg.ok_or_else(|| sig("no SigAlg"))?;
    let (_, signature) = signature.ok_or_else(|| sig("no Signature"))?;
    let algorithm: &'static dyn signature::VerificationAlgorithm = match percent_decode(alg).as_deref() {
        Some(a) if a == RSA_SHA256.as_bytes() => &signature::RSA_PKCS1_2048_8192_SHA256,
        Some(a) if a == RSA_SHA512.as_bytes() => &signature::RSA_PKCS1_2048_8192_SHA512,
        _ => return Err(sig("SigAlg not accepted")),
    };
    let signature = percent_decode(signature).ok_or_else(|| sig("Signature not URL-encoded"))?;
    let signature: Vec<u8> = signature.into_iter().filter(|b| !b.is_ascii_whitespace()).collect();
    let signature = base64::engine::general_purpose::STANDARD.decode(signature).map_err(|_| sig("Signature not base64"))?;
    // Bindings §3.4.4.1: the octets as sent, in this order.
    let mut signed = message.to_string();
    if let Some((relay_part, _)) = relay {
        signed.push('&');
        signed.push_str(relay_part);
    }
    signed.push('&');
    signed.push_str(alg_part);
    let ok = certs_der.iter().filter_map(|c| rsa_public_key(c)).any(|key| {
        UnparsedPublicKey::new(algorithm, key).verify(signed.as_bytes(), &signature).is_ok()
    });
    if ok { Ok(()) } else { Err(sig("signature does not verify")) }
}

const ALLOWED: &[AllowedSignatureAlgorithm] = &[AllowedSignatureAlgorithm::RsaSha256, AllowedSignatureAlgorithm::RsaSha512];

/// Every signature in the document verified (by a configured certificate only) and the
/// document pruned to what they cover.
fn reduce(xml: &str, certs_der: &[Vec<u8>]) -> Result<String, XmlError> {
    if certs_der.is_empty() {
        return Err(sig("no certificate configured"));
    }
    super::xmlsec_errors::route(&certs_der[0]);
    let certs: Vec<CertificateDer> = certs_der.iter().cloned().map(CertificateDer::from).collect();
    guarded(|| {
        Crypto::reduce_xml_to_signed_with_allowed_algorithms(xml, &certs, ReduceMode::ValidateAndMarkNoAncestors, Some(ALLOWED))
            .map_err(|_| sig("signature does not verify"))
    })
}

/// The reduced documents are what libxml2 wrote: no user limit applies, only sanity.
fn scan_reduced(xml: &str) -> Result<Doc, XmlError> {
    scan(xml, &Limits { max_message_bytes: usize::MAX, max_depth: 256 }).map_err(|_| XmlError::Wrapped)
}

fn same_element(a: &Doc, ai: usize, b: &Doc, bi: usize) -> bool {
    let (x, y) = (&a.els[ai], &b.els[bi]);
    x.ns == y.ns && x.local == y.local && a.attr(ai, "ID").is_some() && a.attr(ai, "ID") == b.attr(bi, "ID")
}

fn root_verified(xml: &str, doc: &Doc, certs_der: &[Vec<u8>]) -> Result<(String, Doc), XmlError> {
    if !doc.has_signature_child(0) {
        return Err(sig("not signed"));
    }
    if doc.duplicate_ids() {
        return Err(XmlError::Wrapped);
    }
    let reduced = reduce(xml, certs_der)?;
    let rdoc = scan_reduced(&reduced)?;
    if !same_element(doc, 0, &rdoc, 0) {
        return Err(XmlError::Wrapped);
    }
    Ok((reduced, rdoc))
}

pub(super) fn verified_root(xml: &str, certs_der: &[Vec<u8>]) -> Result<String, XmlError> {
    // The caller bounded the message; here the bound only keeps the scan finite.
    let doc = scan(xml, &Limits { max_message_bytes: xml.len(), max_depth: Limits::default().max_depth })?;
    root_verified(xml, &doc, certs_der).map(|(reduced, _)| reduced)
}

const SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";

/// XML comments are not signed (exclusive c14n drops them): text read around one is not what
/// the IdP wrote (a NameID, an e-mail attribute cut short). No IdP writes comments there.
fn comment_in_assertion(doc: &Doc) -> Result<(), XmlError> {
    if doc.all(NS_ASSERTION, "NameID").into_iter().any(|i| doc.els[i].comment) {
        return Err(bad("a comment inside NameID"));
    }
    match (0..doc.els.len()).any(|i| doc.els[i].comment && doc.within(i, NS_ASSERTION, "Assertion")) {
        true => Err(bad("a comment inside the assertion")),
        false => Ok(()),
    }
}

/// A Response's own fields, as `ResponseIn` carries them.
struct Head {
    id: String,
    in_response_to: Option<String>,
    destination: Option<String>,
    issuer: Option<String>,
    status: String,
}

fn head_of(r: &samael::schema::Response) -> Result<Head, XmlError> {
    Ok(Head {
        id: r.id.clone(),
        in_response_to: r.in_response_to.clone(),
        destination: r.destination.clone(),
        issuer: r.issuer.as_ref().and_then(|i| i.value.as_ref()).map(|v| v.trim().to_string()),
        status: r.status.as_ref().and_then(|s| s.status_code.value.clone()).ok_or_else(|| bad("no StatusCode"))?,
    })
}

/// The same from our scan, for a Response with an `EncryptedAssertion`: samael's type reads
/// at most one `EncryptedKey` beside the data, and its reading of the rest is not needed.
fn head_of_doc(doc: &Doc) -> Result<Head, XmlError> {
    let (id, _, issuer) = common(doc)?;
    let st = doc.only_child(0, NS_PROTOCOL, "Status")?.ok_or_else(|| bad("no Status"))?;
    let code = doc.only_child(st, NS_PROTOCOL, "StatusCode")?.ok_or_else(|| bad("no StatusCode"))?;
    Ok(Head {
        id,
        in_response_to: doc.attr(0, "InResponseTo").map(str::to_string),
        destination: doc.attr(0, "Destination").map(str::to_string),
        issuer,
        status: doc.attr(code, "Value").ok_or_else(|| bad("no StatusCode"))?.to_string(),
    })
}

/// The Assertion decrypted from the one `EncryptedAssertion` (`ea`, a child of the root) of
/// `doc`, and verified: read only under a signature that covers it, the Response's (over the
/// ciphertext: `doc` is then the reduced, signed document) or its own (checked whenever it
/// has one, as the one-assertion path does).
fn decrypted_assertion(doc: &Doc, ea: usize, response_signed: bool, certs_der: &[Vec<u8>], limits: &Limits, keys: &[Vec<u8>]) -> Result<Assertion, XmlError> {
    if doc.els[ea].parent != Some(0) {
        return Err(XmlError::Wrapped);
    }
    let (plain, cbc) = decrypt_assertion(doc, ea, keys, limits)?;
    let read = || -> Result<Assertion, XmlError> {
        let pdoc = scan(&plain, limits)?;
        if !pdoc.is(0, NS_ASSERTION, "Assertion") || pdoc.all(NS_ASSERTION, "Assertion").len() != 1 || pdoc.duplicate_ids() {
            return Err(XmlError::Wrapped);
        }
        comment_in_assertion(&pdoc)?;
        if pdoc.has_signature_child(0) {
            let reduced = reduce(&plain, certs_der)?;
            let rdoc = scan_reduced(&reduced)?;
            if !same_element(&pdoc, 0, &rdoc, 0) || rdoc.all(NS_ASSERTION, "Assertion").len() != 1 {
                return Err(XmlError::Wrapped);
            }
            comment_in_assertion(&rdoc)?;
            assertion(&reduced)
        } else if response_signed {
            assertion(&plain)
        } else {
            Err(sig("neither the Response nor the encrypted assertion is signed"))
        }
    };
    // Under CBC (no integrity of its own) and no Response signature over the ciphertext,
    // why the plaintext failed is not told (the padding oracle: see `decrypt`).
    match read() {
        Err(_) if cbc && !response_signed => Err(XmlError::Signature(UNDECRYPTABLE.into())),
        r => r,
    }
}

pub(super) fn verified_response(xml: &str, certs_der: &[Vec<u8>], limits: &Limits, keys: &[Vec<u8>]) -> Result<ResponseIn, XmlError> {
    let doc = scan(xml, limits)?;
    if !doc.is(0, NS_PROTOCOL, "Response") {
        return Err(bad("not a Response"));
    }
    let encrypted = doc.all(NS_ASSERTION, "EncryptedAssertion");
    let assertions = doc.all(NS_ASSERTION, "Assertion");
    // One assertion, in the clear or encrypted: never both, never two.
    if assertions.len() + encrypted.len() > 1 || doc.duplicate_ids() {
        return Err(XmlError::Wrapped);
    }
    comment_in_assertion(&doc)?;
    let original = assertions.first().copied();
    let assertion_encrypted = !encrypted.is_empty();
    let (resp, signed_assertion) = if let Some(&ea) = encrypted.first() {
        if doc.has_signature_child(0) {
            // Decrypt what the Response's signature covers, not the original document's.
            let (_, rdoc) = root_verified(xml, &doc, certs_der)?;
            let found = rdoc.all(NS_ASSERTION, "EncryptedAssertion");
            let [ea] = found.as_slice() else { return Err(XmlError::Wrapped) };
            if !rdoc.all(NS_ASSERTION, "Assertion").is_empty() {
                return Err(XmlError::Wrapped);
            }
            let a = decrypted_assertion(&rdoc, *ea, true, certs_der, limits, keys)?;
            (head_of_doc(&rdoc)?, Some(a))
        } else {
            let a = decrypted_assertion(&doc, ea, false, certs_der, limits, keys)?;
            (head_of_doc(&doc)?, Some(a))
        }
    } else if doc.has_signature_child(0) {
        let (reduced, rdoc) = root_verified(xml, &doc, certs_der)?;
        let found = rdoc.all(NS_ASSERTION, "Assertion");
        match (original, found.as_slice()) {
            (None, []) => {}
            (Some(o), [r]) if same_element(&doc, o, &rdoc, *r) => {}
            _ => return Err(XmlError::Wrapped),
        }
        comment_in_assertion(&rdoc)?;
        let resp = response(&reduced)?;
        let a = resp.assertion.clone();
        (head_of(&resp)?, a)
    } else {
        let o = original.ok_or_else(|| sig("not signed"))?;
        if !doc.has_signature_child(o) {
            return Err(sig("not signed"));
        }
        let reduced = reduce(xml, certs_der)?;
        let rdoc = scan_reduced(&reduced)?;
        // Only the assertion is signed: it alone must be what remains.
        if !same_element(&doc, o, &rdoc, 0) || rdoc.all(NS_ASSERTION, "Assertion").len() != 1 {
            return Err(XmlError::Wrapped);
        }
        comment_in_assertion(&rdoc)?;
        (head_of(&response(xml)?)?, Some(assertion(&reduced)?))
    };
    let Head { id, in_response_to, destination, issuer, status } = resp;
    // samael reads one level of StatusCode; the second (a child of the first) from our scan.
    let top_status = doc.all(NS_PROTOCOL, "StatusCode").into_iter().find(|&i| {
        doc.els[i].parent.is_some_and(|p| doc.is(p, NS_PROTOCOL, "Status"))
    });
    let sub_status = top_status.and_then(|t| {
        doc.children(t).find(|&c| doc.is(c, NS_PROTOCOL, "StatusCode")).and_then(|c| doc.attr(c, "Value")).map(str::to_string)
    });
    let assertion = match (status == SUCCESS, signed_assertion) {
        (true, Some(a)) => Some(assertion_in(&a)?),
        (true, None) => return Err(bad("a successful Response without an assertion")),
        (false, Some(_)) => return Err(bad("an assertion in a failed Response")),
        (false, None) => None,
    };
    Ok(ResponseIn {
        id,
        in_response_to,
        destination,
        issuer,
        status,
        sub_status,
        assertion,
        assertion_encrypted,
    })
}
