//! The tenant's RSA keys as SAML signs with them: xmlsec1 takes the key itself (PKCS#1 DER),
//! and SAML publishes a key as an X.509 certificate, made here from the key: self-signed,
//! and the same bytes on every node and after every restart (PKCS#1 v1.5 signatures are
//! deterministic, and nothing else in it varies), so that metadata an SP fetched from one
//! node matches what another signs with. It rolls over with the key (`keys::KeyManager`):
//! a `next` key's certificate is in the metadata before the key signs.

use super::SamlError;
use crate::keys::{KeyManager, SigningKey};
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::x509::{X509Builder, X509NameBuilder};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// The certificates' validity: fixed, so that every node makes the same certificate. SPs
/// trust the key, not a chain; an expiry is not what retires it, rotation is.
const NOT_BEFORE: i64 = 1_735_689_600; // 2025-01-01T00:00:00Z
const NOT_AFTER: &str = "20491231235959Z";
/// Certificates made are kept by key id; past this many the cache starts over (each is
/// made again in about a millisecond).
const MAX_CACHED: usize = 4096;

pub struct Signer {
    pub kid: String,
    key_pkcs1: Vec<u8>,
    pub cert_der: Vec<u8>,
}

static CACHE: LazyLock<Mutex<HashMap<String, Arc<Signer>>>> = LazyLock::new(Default::default);

/// Every RSA key of the tenant SAML publishes: (whether it signs now, its signer), the
/// signing one first.
pub fn all(keys: &KeyManager) -> Result<Vec<(bool, Arc<Signer>)>, SamlError> {
    keys.rsa_keys().into_iter().map(|(signs, key)| Ok((signs, of(&key)?))).collect()
}

/// The key SAML signs with now.
pub fn current(keys: &KeyManager) -> Result<Arc<Signer>, SamlError> {
    let (_, key) = keys.rsa_keys().into_iter().find(|(signs, _)| *signs).ok_or(SamlError::NoKey)?;
    of(&key)
}

pub fn of(key: &SigningKey) -> Result<Arc<Signer>, SamlError> {
    cached(&key.kid, || key.rsa_pkcs8().ok_or(SamlError::NoKey))
}

/// The certificates of the tenant's RSA encryption keys that metadata lists (`active`, then
/// `next`: an IdP that reads the metadata before a rotation already encrypts to a key we
/// hold), made as the signing keys' are: self-signed by the key itself, the same on every
/// node. A retired key is not listed (nobody should encrypt to it) but still decrypts
/// (`decryption_keys`). None (a tenant whose encryption keys come at its next refresh): no
/// encryption certificate, not an error.
pub fn encryption_certs(keys: &KeyManager) -> Result<Vec<Arc<Signer>>, SamlError> {
    keys.rsa_encryption_keys()
        .into_iter()
        .filter(|(state, _, _)| *state != "retired")
        .map(|(_, kid, pkcs8)| cached(&kid, || Ok(pkcs8)))
        .collect()
}

/// The PKCS#8 of every published RSA encryption key (active, next, retired): what an
/// encrypted assertion from an upstream IdP is decrypted with, each tried in turn.
pub fn decryption_keys(keys: &KeyManager) -> Vec<Vec<u8>> {
    keys.rsa_encryption_keys().into_iter().map(|(_, _, pkcs8)| pkcs8).collect()
}

/// By key id: a signing key's and an encryption key's ids are thumbprints of different keys.
fn cached(kid: &str, pkcs8: impl FnOnce() -> Result<Vec<u8>, SamlError>) -> Result<Arc<Signer>, SamlError> {
    if let Some(s) = CACHE.lock().get(kid) {
        return Ok(s.clone());
    }
    let pkcs8 = pkcs8()?;
    let signer = Arc::new(make(kid, &pkcs8).map_err(|e| SamlError::Internal(format!("certificate of key {kid}: {e}")))?);
    let mut cache = CACHE.lock();
    if cache.len() >= MAX_CACHED {
        cache.clear();
    }
    cache.insert(kid.to_string(), signer.clone());
    Ok(signer)
}

fn make(kid: &str, pkcs8: &[u8]) -> Result<Signer, openssl::error::ErrorStack> {
    let pkey = PKey::private_key_from_pkcs8(pkcs8)?;
    let key_pkcs1 = pkey.rsa()?.private_key_to_der()?;
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_text("CN", &format!("Authrim SAML {}", &kid[..kid.len().min(16)]))?;
    let name = name.build();
    let mut b = X509Builder::new()?;
    b.set_version(2)?;
    // A positive serial from the key id: unique per key, the same on every node.
    let mut serial = crate::util::sha256(kid.as_bytes())[..16].to_vec();
    serial[0] &= 0x7f;
    let serial = BigNum::from_slice(&serial)?.to_asn1_integer()?;
    b.set_serial_number(&serial)?;
    b.set_subject_name(&name)?;
    b.set_issuer_name(&name)?;
    b.set_pubkey(&pkey)?;
    let (from, until) = (Asn1Time::from_unix(NOT_BEFORE)?, Asn1Time::from_str(NOT_AFTER)?);
    b.set_not_before(&from)?;
    b.set_not_after(&until)?;
    b.sign(&pkey, MessageDigest::sha256())?;
    Ok(Signer { kid: kid.to_string(), key_pkcs1, cert_der: b.build().to_der()? })
}

impl Signer {
    /// Sign the first `ds:Signature` template of `xml` in document order (xmlsec1's rule).
    pub fn sign(&self, xml: &str) -> Result<String, SamlError> {
        use samael::crypto::CryptoProvider as _;
        super::xml::xmlsec_errors::route(&self.cert_der);
        samael::crypto::Crypto::sign_xml(xml, &self.key_pkcs1).map_err(|e| SamlError::Internal(format!("signing: {e}")))
    }

    /// An RSASSA-PKCS1-v1_5 SHA-256 signature of `data` (the HTTP-Redirect binding signs the
    /// query's octets, not XML: Bindings §3.4.4.1).
    pub fn sign_bytes(&self, data: &[u8]) -> Result<Vec<u8>, SamlError> {
        let sign = || -> Result<Vec<u8>, openssl::error::ErrorStack> {
            let key = PKey::from_rsa(openssl::rsa::Rsa::private_key_from_der(&self.key_pkcs1)?)?;
            let mut s = openssl::sign::Signer::new(MessageDigest::sha256(), &key)?;
            s.update(data)?;
            s.sign_to_vec()
        };
        sign().map_err(|e| SamlError::Internal(format!("signing: {e}")))
    }

    /// The certificate as metadata and `KeyInfo` carry it (base64 DER).
    pub fn cert_base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.cert_der)
    }

    /// An enveloped-signature template over the element of ID `id`: exclusive C14N,
    /// RSA-SHA256 and a SHA-256 digest (samael's template digests with SHA-1).
    pub fn template(&self, id: &str) -> Result<String, SamlError> {
        use samael::traits::ToXml as _;
        let mut s = samael::signature::Signature::template(id, &self.cert_der.clone().into());
        for r in s.signed_info.reference.iter_mut() {
            r.digest_method.algorithm = samael::signature::DigestAlgorithm::Sha256;
        }
        s.to_string().map_err(|e| SamlError::Internal(format!("signature template: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_is_the_same_each_time_it_is_made_and_holds_the_key() {
        let (key, _) = SigningKey::generate().unwrap();
        let pkcs8 = key.rsa_pkcs8().unwrap();
        let (a, b) = (make(&key.kid, &pkcs8).unwrap(), make(&key.kid, &pkcs8).unwrap());
        assert_eq!(a.cert_der, b.cert_der, "every node must publish the same certificate");
        let cert = openssl::x509::X509::from_der(&a.cert_der).unwrap();
        let public = PKey::private_key_from_pkcs8(&pkcs8).unwrap().public_key_to_der().unwrap();
        assert_eq!(cert.public_key().unwrap().public_key_to_der().unwrap(), public);
        assert!(cert.verify(&cert.public_key().unwrap()).unwrap(), "self-signed");
    }

    #[test]
    fn an_encryption_key_s_certificate_is_made_the_same_way() {
        // What the keys module stores for an RSA-OAEP-256 key: its PKCS#8.
        let (kid, pkcs8, jwk) = crate::keys::EncryptionKey::generate("RSA-OAEP-256").unwrap();
        let (a, b) = (make(&kid, &pkcs8).unwrap(), make(&kid, &pkcs8).unwrap());
        assert_eq!(a.cert_der, b.cert_der, "deterministic");
        let cert = openssl::x509::X509::from_der(&a.cert_der).unwrap();
        let n = cert.public_key().unwrap().rsa().unwrap().n().to_vec();
        use base64::Engine as _;
        let jwk_n = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(jwk["n"].as_str().unwrap()).unwrap();
        assert_eq!(n, jwk_n, "the JWKS's key");
        assert!(cert.verify(&cert.public_key().unwrap()).unwrap(), "self-signed");
    }

    #[test]
    fn bytes_are_signed_with_rsa_sha256_by_the_certificate_s_key() {
        let (key, _) = SigningKey::generate().unwrap();
        let s = make(&key.kid, &key.rsa_pkcs8().unwrap()).unwrap();
        let sig = s.sign_bytes(b"SAMLRequest=x&SigAlg=y").unwrap();
        let public = openssl::x509::X509::from_der(&s.cert_der).unwrap().public_key().unwrap();
        let mut v = openssl::sign::Verifier::new(MessageDigest::sha256(), &public).unwrap();
        v.update(b"SAMLRequest=x&SigAlg=y").unwrap();
        assert!(v.verify(&sig).unwrap());
    }
}
