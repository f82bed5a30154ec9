//! Encrypted assertions from upstream identity providers (SAML Core §2.3.4; XML Encryption
//! 1.0 and 1.1): the `EncryptedAssertion` of a Response decrypted with one of our RSA
//! encryption keys, before the Assertion inside is verified like any other (`verify`).
//!
//! Why by hand and not xmlsec1, which signatures use: samael's decryption offers one key and
//! two algorithms and its bindings are private; decryption needs no canonicalisation, only
//! reading a few elements (our quick-xml scan of the document, already bounded) and two
//! primitives: the key transport (RSA-OAEP by OpenSSL, which, unlike aws-lc-rs, takes the
//! OAEP digest and the MGF1 digest apart: xmlenc11 `rsa-oaep` with a SHA-256 digest keeps
//! MGF1-SHA1 by default) and the content (AES-GCM and AES-CBC by aws-lc-rs). What comes out
//! is bounded and checked (`scan`: size, DTD, depth) as a message is.
//!
//! Not accepted: RSA PKCS#1 v1.5 key transport (Bleichenbacher's oracle, and the downgrade
//! that reuses it against OAEP), Triple DES, `OAEPparams` labels, `CipherReference` (a URL to
//! fetch), key agreement. Each is a refusal naming it.

use super::safe::{base64_bounded, scan, Doc, NS_DSIG};
use super::{Limits, XmlError};
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, NONCE_LEN};
use aws_lc_rs::cipher::{DecryptingKey, DecryptionContext, UnboundCipherKey, AES_128, AES_256};
use aws_lc_rs::iv::FixedLength;
use openssl::md::{Md, MdRef};
use openssl::pkey::{PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;

pub(super) const NS_XENC: &str = "http://www.w3.org/2001/04/xmlenc#";
const NS_XENC11: &str = "http://www.w3.org/2009/xmlenc11#";

pub const AES256_GCM: &str = "http://www.w3.org/2009/xmlenc11#aes256-gcm";
pub const AES128_GCM: &str = "http://www.w3.org/2009/xmlenc11#aes128-gcm";
pub const AES256_CBC: &str = "http://www.w3.org/2001/04/xmlenc#aes256-cbc";
pub const AES128_CBC: &str = "http://www.w3.org/2001/04/xmlenc#aes128-cbc";
pub const RSA_OAEP_MGF1P: &str = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p";
pub const RSA_OAEP: &str = "http://www.w3.org/2009/xmlenc11#rsa-oaep";
const SHA1: &str = "http://www.w3.org/2000/09/xmldsig#sha1";
const SHA256: &str = "http://www.w3.org/2001/04/xmlenc#sha256";
const MGF1_SHA1: &str = "http://www.w3.org/2009/xmlenc11#mgf1sha1";
const MGF1_SHA256: &str = "http://www.w3.org/2009/xmlenc11#mgf1sha256";
const ELEMENT: &str = "http://www.w3.org/2001/04/xmlenc#Element";
const ENCRYPTED_KEY_TYPE: &str = "http://www.w3.org/2001/04/xmlenc#EncryptedKey";
/// One `EncryptedKey` per recipient is usual; more than this is not a message for us.
const MAX_ENCRYPTED_KEYS: usize = 8;

/// Every failure after the content key is found says this, whatever it was (bad padding,
/// not UTF-8, not XML, not signed): with CBC, which has no integrity of its own, telling
/// them apart would be the padding oracle of XML Encryption (Jager and Somorovsky, 2011).
pub(super) const UNDECRYPTABLE: &str = "the encrypted assertion does not decrypt to a signed assertion";

fn bad(m: &str) -> XmlError {
    XmlError::Malformed(m.into())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Content {
    Gcm(usize),
    Cbc(usize),
}

impl Content {
    fn parse(alg: &str) -> Option<Self> {
        Some(match alg {
            AES256_GCM => Content::Gcm(32),
            AES128_GCM => Content::Gcm(16),
            AES256_CBC => Content::Cbc(32),
            AES128_CBC => Content::Cbc(16),
            _ => return None,
        })
    }

    fn key_len(self) -> usize {
        match self {
            Content::Gcm(n) | Content::Cbc(n) => n,
        }
    }

    /// `data`: the IV, then the ciphertext (GCM: and its 16-byte tag), XML Encryption 1.1
    /// §5.2.2 and §5.2.4.
    fn open(self, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
        match self {
            Content::Gcm(_) => {
                if data.len() < NONCE_LEN + 16 {
                    return None;
                }
                let (iv, sealed) = data.split_at(NONCE_LEN);
                let alg = if key.len() == 32 { &AES_256_GCM } else { &AES_128_GCM };
                let key = LessSafeKey::new(UnboundKey::new(alg, key).ok()?);
                let mut buf = sealed.to_vec();
                let plain = key.open_in_place(Nonce::try_assume_unique_for_key(iv).ok()?, Aad::empty(), &mut buf).ok()?;
                Some(plain.to_vec())
            }
            Content::Cbc(_) => {
                if data.len() < 32 || data.len() % 16 != 0 {
                    return None;
                }
                let (iv, body) = data.split_at(16);
                let iv: [u8; 16] = iv.try_into().ok()?;
                let alg = if key.len() == 32 { &AES_256 } else { &AES_128 };
                let key = DecryptingKey::cbc(UnboundCipherKey::new(alg, key).ok()?).ok()?;
                let mut buf = body.to_vec();
                let plain = key.decrypt(&mut buf, DecryptionContext::Iv128(FixedLength::from(iv))).ok()?;
                // XML Encryption §5.2: the last byte is the padding's length (1 to 16); the
                // other padding bytes are arbitrary (not PKCS#7: xmlsec1 writes random ones).
                let pad = usize::from(*plain.last()?);
                if pad == 0 || pad > 16 || pad > plain.len() {
                    return None;
                }
                let n = plain.len() - pad;
                Some(plain[..n].to_vec())
            }
        }
    }
}

/// The base64 of `i`'s `CipherData/CipherValue` (a `CipherReference` is refused: it would
/// have us fetch a URL).
fn cipher_value(doc: &Doc, i: usize, limits: &Limits) -> Result<Vec<u8>, XmlError> {
    let data = doc.only_child(i, NS_XENC, "CipherData")?.ok_or_else(|| bad("no CipherData"))?;
    if doc.children(data).any(|c| !doc.is(c, NS_XENC, "CipherValue")) {
        return Err(bad("CipherReference is not accepted"));
    }
    let value = doc.only_child(data, NS_XENC, "CipherValue")?.ok_or_else(|| bad("no CipherValue (CipherReference is not accepted)"))?;
    base64_bounded(&doc.els[value].text, limits.max_message_bytes).map_err(|_| bad("CipherValue not base64"))
}

fn algorithm<'a>(doc: &'a Doc, i: usize) -> Result<&'a str, XmlError> {
    let m = doc.only_child(i, NS_XENC, "EncryptionMethod")?.ok_or_else(|| bad("no EncryptionMethod"))?;
    doc.attr(m, "Algorithm").map(str::trim).ok_or_else(|| bad("EncryptionMethod without Algorithm"))
}

/// The OAEP digest and MGF1 digest an `EncryptedKey` names (XML Encryption 1.1 §5.5.2:
/// SHA-1 for both unless said; `rsa-oaep-mgf1p` fixes MGF1-SHA1).
fn oaep_digests(doc: &Doc, ek: usize) -> Result<(&'static MdRef, &'static MdRef), XmlError> {
    let m = doc.only_child(ek, NS_XENC, "EncryptionMethod")?.ok_or_else(|| bad("no EncryptionMethod on the EncryptedKey"))?;
    let alg = doc.attr(m, "Algorithm").map(str::trim).unwrap_or_default();
    if doc.children(m).any(|c| doc.is(c, NS_XENC, "OAEPparams")) {
        return Err(bad("OAEPparams are not accepted"));
    }
    let digest = match doc.only_child(m, NS_DSIG, "DigestMethod")?.and_then(|d| doc.attr(d, "Algorithm")).map(str::trim) {
        None | Some(SHA1) => Md::sha1(),
        Some(SHA256) => Md::sha256(),
        Some(_) => return Err(bad("OAEP digest not accepted (SHA-1 or SHA-256)")),
    };
    let mgf = match alg {
        RSA_OAEP_MGF1P => {
            if doc.children(m).any(|c| doc.is(c, NS_XENC11, "MGF")) {
                return Err(bad("rsa-oaep-mgf1p with an MGF element"));
            }
            Md::sha1()
        }
        RSA_OAEP => match doc.only_child(m, NS_XENC11, "MGF")?.and_then(|g| doc.attr(g, "Algorithm")).map(str::trim) {
            None | Some(MGF1_SHA1) => Md::sha1(),
            Some(MGF1_SHA256) => Md::sha256(),
            Some(_) => return Err(bad("MGF not accepted (MGF1 with SHA-1 or SHA-256)")),
        },
        _ => return Err(bad("key transport algorithm not accepted (RSA-OAEP only)")),
    };
    Ok((digest, mgf))
}

fn rsa_oaep_decrypt(key: &PKey<Private>, digest: &MdRef, mgf: &MdRef, wrapped: &[u8]) -> Option<Vec<u8>> {
    let mut ctx = PkeyCtx::new(key).ok()?;
    ctx.decrypt_init().ok()?;
    ctx.set_rsa_padding(Padding::PKCS1_OAEP).ok()?;
    ctx.set_rsa_oaep_md(digest).ok()?;
    ctx.set_rsa_mgf1_md(mgf).ok()?;
    let mut out = Vec::new();
    ctx.decrypt_to_vec(wrapped, &mut out).ok()?;
    Some(out)
}

/// The `EncryptedKey`s that may hold the content key of `ed` (a child of `ea`): those inside
/// its `KeyInfo`, those its `RetrievalMethod`s name (siblings under the EncryptedAssertion,
/// Core §2.3.4), or else every sibling `EncryptedKey`.
fn encrypted_keys(doc: &Doc, ea: usize, ed: usize) -> Result<Vec<usize>, XmlError> {
    let siblings: Vec<usize> = doc.children(ea).filter(|&c| doc.is(c, NS_XENC, "EncryptedKey")).collect();
    let mut found = Vec::new();
    if let Some(ki) = doc.only_child(ed, NS_DSIG, "KeyInfo")? {
        for c in doc.children(ki) {
            if doc.is(c, NS_XENC, "EncryptedKey") {
                found.push(c);
            } else if doc.is(c, NS_DSIG, "RetrievalMethod") {
                if doc.attr(c, "Type").is_some_and(|t| t.trim() != ENCRYPTED_KEY_TYPE) {
                    return Err(bad("a RetrievalMethod to something else than an EncryptedKey"));
                }
                // Same-document references only: nothing is fetched.
                let id = doc.attr(c, "URI").and_then(|u| u.trim().strip_prefix('#')).ok_or_else(|| bad("RetrievalMethod without a same-document URI"))?;
                let mut named = siblings.iter().copied().filter(|&s| doc.attr(s, "Id") == Some(id));
                match (named.next(), named.next()) {
                    (Some(s), None) => found.push(s),
                    _ => return Err(bad("RetrievalMethod names no EncryptedKey, or more than one")),
                }
            }
        }
    }
    if found.is_empty() {
        found = siblings;
    }
    if found.is_empty() {
        return Err(bad("no EncryptedKey"));
    }
    if found.len() > MAX_ENCRYPTED_KEYS {
        return Err(bad("too many EncryptedKeys"));
    }
    Ok(found)
}

/// The namespace declarations in scope at `i` (its own and its ancestors', the nearest
/// first): XML Encryption §4.3 decrypts an element in the context of where it was, so an
/// IdP (pysaml2 without `encrypt_assertion_self_contained`) may leave prefixes the Response
/// declared undeclared in the plaintext.
fn in_scope_namespaces(doc: &Doc, mut i: usize) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    loop {
        for (k, v) in &doc.els[i].attrs {
            if (k == "xmlns" || k.starts_with("xmlns:")) && !out.iter().any(|(n, _)| n == k) {
                out.push((k.clone(), v.clone()));
            }
        }
        match doc.els[i].parent {
            Some(p) => i = p,
            None => return out,
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;")
}

/// The plaintext's root start tag given the declarations it lacks (exclusive C14N, what
/// SAML signs with, writes a prefix's declaration where it is used, whoever declared it:
/// the digest does not change).
fn with_context(plain: &str, namespaces: &[(String, String)]) -> Option<String> {
    let start = plain.find('<')?;
    if !plain[start + 1..].starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return None;
    }
    let tag_end = start + plain[start..].find('>')?;
    let name_end = start + plain[start..tag_end].find(|c: char| c.is_whitespace() || c == '/').unwrap_or(tag_end - start);
    let tag = &plain[start..tag_end];
    let mut extra = String::new();
    for (k, v) in namespaces {
        if !tag.contains(&format!("{k}=")) {
            extra.push_str(&format!(" {k}=\"{}\"", escape(v)));
        }
    }
    Some(format!("{}{extra}{}", &plain[..name_end], &plain[name_end..]))
}

/// The XML of the Assertion in the `EncryptedAssertion` `ea` of `doc`, decrypted with the
/// first of `keys` (PKCS#8 RSA keys) that unwraps its content key, bounded and checked as a
/// message is (`scan`). Also whether its content cipher was CBC (no integrity of its own).
pub(super) fn decrypt_assertion(doc: &Doc, ea: usize, keys: &[Vec<u8>], limits: &Limits) -> Result<(String, bool), XmlError> {
    if keys.is_empty() {
        return Err(bad("an encrypted assertion, and no encryption key to decrypt it"));
    }
    if doc.children(ea).any(|c| !doc.is(c, NS_XENC, "EncryptedData") && !doc.is(c, NS_XENC, "EncryptedKey")) {
        return Err(bad("an EncryptedAssertion holds EncryptedData and EncryptedKeys only"));
    }
    let ed = doc.only_child(ea, NS_XENC, "EncryptedData")?.ok_or_else(|| bad("no EncryptedData"))?;
    if doc.attr(ed, "Type").is_some_and(|t| t.trim() != ELEMENT) {
        return Err(bad("EncryptedData is not of an element"));
    }
    let content = Content::parse(algorithm(doc, ed)?).ok_or_else(|| bad("content encryption not accepted (AES-GCM or AES-CBC, 128 or 256 bits)"))?;
    let data = cipher_value(doc, ed, limits)?;
    let private: Vec<PKey<Private>> = keys.iter().filter_map(|k| PKey::private_key_from_pkcs8(k).ok()).collect();
    let mut content_key = None;
    'keys: for ek in encrypted_keys(doc, ea, ed)? {
        let (digest, mgf) = oaep_digests(doc, ek)?;
        let wrapped = cipher_value(doc, ek, limits)?;
        for key in &private {
            if let Some(k) = rsa_oaep_decrypt(key, digest, mgf, &wrapped) {
                content_key = Some(k);
                break 'keys;
            }
        }
    }
    // OAEP has its own integrity: a key that unwraps it is the one it was wrapped for.
    let key = content_key.ok_or_else(|| XmlError::Signature("the encrypted assertion is not encrypted to any of our keys".into()))?;
    let cbc = matches!(content, Content::Cbc(_));
    let undecryptable = || if cbc { XmlError::Signature(UNDECRYPTABLE.into()) } else { bad("the encrypted assertion does not decrypt") };
    if key.len() != content.key_len() {
        return Err(undecryptable());
    }
    let plain = content.open(&key, &data).ok_or_else(undecryptable)?;
    let plain = String::from_utf8(plain).map_err(|_| undecryptable())?;
    // The plaintext is a message of its own: the same bounds, DTDs refused.
    let plain = match scan(&plain, limits) {
        Ok(_) => plain,
        Err(XmlError::Malformed(_)) => {
            let fixed = with_context(&plain, &in_scope_namespaces(doc, ea)).ok_or_else(undecryptable)?;
            scan(&fixed, limits).map_err(|e| if cbc { undecryptable() } else { e })?;
            fixed
        }
        Err(e) => return Err(if cbc { undecryptable() } else { e }),
    };
    Ok((plain, cbc))
}
