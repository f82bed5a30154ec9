//! Encrypted assertions (SAML Core §2.3.4, XML Encryption 1.1): the signed Assertion, as an
//! element, encrypted with a fresh AES-256-GCM key, that key encrypted to the SP's
//! certificate with RSA-OAEP (`rsa-oaep-mgf1p`, the variant every SAML stack decrypts).
//!
//! Why not xmlsec1, as for signatures: samael keeps its xmlsec bindings private and offers
//! decryption only. Encrypting an element needs no canonicalisation or signature processing
//! (the plaintext is the element's serialisation, XML Encryption §4.1), only the two
//! primitives, which are aws-lc-rs's here as for JWE (`keys::jwe`); the markup around them is
//! a fixed template of algorithm names and base64. The SP side (xmlsec1 in pysaml2) decrypts
//! it in the end-to-end test.

use super::SamlError;
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::rsa::{OaepPublicEncryptingKey, PublicEncryptingKey, OAEP_SHA1_MGF1SHA1};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

pub const AES256_GCM: &str = "http://www.w3.org/2009/xmlenc11#aes256-gcm";
pub const RSA_OAEP_MGF1P: &str = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p";

/// `assertion` (the signed Assertion element, no XML declaration) as an
/// `EncryptedAssertion` for the holder of the certificate `cert_der`.
pub fn encrypted_assertion(assertion: &str, cert_der: &[u8]) -> Result<String, SamlError> {
    let failed = |what: &str| SamlError::Internal(format!("assertion encryption: {what}"));
    let (_, cert) = x509_parser::parse_x509_certificate(cert_der).map_err(|_| failed("not a certificate"))?;
    let public = PublicEncryptingKey::from_der(cert.public_key().raw).map_err(|_| failed("the certificate's key is not RSA"))?;
    let rng = SystemRandom::new();
    let mut key = [0u8; 32];
    let mut iv = [0u8; NONCE_LEN];
    rng.fill(&mut key).map_err(|_| failed("random"))?;
    rng.fill(&mut iv).map_err(|_| failed("random"))?;
    let aead = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &key).map_err(|_| failed("key"))?);
    let mut data = assertion.as_bytes().to_vec();
    aead.seal_in_place_append_tag(Nonce::assume_unique_for_key(iv), Aad::empty(), &mut data).map_err(|_| failed("seal"))?;
    // XML Encryption 1.1 §5.2.4: the IV, then the ciphertext and its tag.
    let mut cipher = iv.to_vec();
    cipher.extend_from_slice(&data);
    let oaep = OaepPublicEncryptingKey::new(public).map_err(|_| failed("RSA key"))?;
    let mut wrapped = vec![0u8; oaep.ciphertext_size()];
    let len = oaep.encrypt(&OAEP_SHA1_MGF1SHA1, &key, &mut wrapped, None).map_err(|_| failed("RSA-OAEP"))?.len();
    wrapped.truncate(len);
    Ok(format!(
        concat!(
            r#"<saml2:EncryptedAssertion xmlns:saml2="urn:oasis:names:tc:SAML:2.0:assertion">"#,
            r#"<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Type="http://www.w3.org/2001/04/xmlenc#Element">"#,
            r#"<xenc:EncryptionMethod Algorithm="{aes}"/>"#,
            r#"<ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><xenc:EncryptedKey>"#,
            r#"<xenc:EncryptionMethod Algorithm="{oaep}"><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>"#,
            r#"<xenc:CipherData><xenc:CipherValue>{key}</xenc:CipherValue></xenc:CipherData>"#,
            r#"</xenc:EncryptedKey></ds:KeyInfo>"#,
            r#"<xenc:CipherData><xenc:CipherValue>{data}</xenc:CipherValue></xenc:CipherData>"#,
            r#"</xenc:EncryptedData></saml2:EncryptedAssertion>"#
        ),
        aes = AES256_GCM,
        oaep = RSA_OAEP_MGF1P,
        key = STANDARD.encode(&wrapped),
        data = STANDARD.encode(&cipher),
    ))
}
