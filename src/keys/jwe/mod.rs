//! JSON Web Encryption, Compact Serialization (RFC 7516 §7.1), for what Authrim encrypts to a
//! client (ID tokens, userinfo answers: signed first, then encrypted) and for decrypting.
//!
//! There is no maintained Rust JWE crate on aws-lc-rs, so the format is written here and
//! every primitive is aws-lc-rs's: RSAES-OAEP, ECDH, the Concat KDF (its SSKDF), AES key
//! wrap, AES-GCM, AES-CBC and HMAC. Only the JOSE framing is ours: the header, the order of
//! the parts, what each algorithm feeds the next (RFC 7518 §4, §5). The RFCs' own examples
//! (RFC 7520 §5, RFC 7518 Appendices B and C) are decrypted or recomputed in the tests.
//!
//! Offered: `alg` RSA-OAEP, RSA-OAEP-256, ECDH-ES, ECDH-ES+A128KW, ECDH-ES+A256KW (P-256,
//! P-384, P-521, X25519); `enc` A128GCM, A256GCM, A128CBC-HS256 (OpenID's default),
//! A256CBC-HS512. Not offered: RSA1_5 (padding oracles), `dir` and the symmetric key wraps
//! (a client secret is not a key we encrypt to), compression (`zip`).

mod content;
mod recipient;

pub use recipient::{DecryptionKey, RecipientKey};

use crate::util::{b64, b64_decode};
use content::Enc;
use recipient::Alg;
use serde_json::{Map, Value};

/// Key management algorithms offered, as discovery lists them.
pub const KEY_ALGS: &[&str] = &["RSA-OAEP", "RSA-OAEP-256", "ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW"];
/// Content encryption algorithms offered.
pub const CONTENT_ENCS: &[&str] = &["A128CBC-HS256", "A256CBC-HS512", "A128GCM", "A256GCM"];
/// OpenID Connect Dynamic Registration §2: the `enc` of a client that registered only `alg`.
pub const DEFAULT_ENC: &str = "A128CBC-HS256";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JweError {
    /// Not a JWE we can read.
    Malformed(&'static str),
    /// An `alg`, `enc`, `zip` or `crit` we do not implement.
    Unsupported(String),
    /// The key is not of the kind the header's `alg` needs.
    WrongKey,
    /// The JWE does not decrypt under this key (any integrity failure, said the same way).
    Decrypt,
    /// The crypto library refused (a bad key length, the RNG).
    Crypto,
}

impl std::fmt::Display for JweError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed(what) => write!(f, "malformed JWE: {what}"),
            Self::Unsupported(what) => write!(f, "unsupported JWE: {what}"),
            Self::WrongKey => f.write_str("the key does not suit the JWE's alg"),
            Self::Decrypt => f.write_str("the JWE does not decrypt"),
            Self::Crypto => f.write_str("encryption failed"),
        }
    }
}

impl std::error::Error for JweError {}

/// Whether `alg` and `enc` are ones we encrypt with.
pub fn supported(alg: &str, enc: &str) -> bool {
    Alg::parse(alg).is_some() && Enc::parse(enc).is_some()
}

/// Encrypt `plaintext` to `key` as a compact JWE. `cty` goes in the header (`JWT` for a
/// nested, signed-then-encrypted JWT: RFC 7519 §5.2); so does the key's `kid`, so that a
/// client with several keys knows which to use.
pub fn encrypt(key: &RecipientKey, alg: &str, enc: &str, cty: Option<&str>, plaintext: &[u8]) -> Result<String, JweError> {
    let a = Alg::parse(alg).ok_or_else(|| JweError::Unsupported(format!("alg {alg}")))?;
    let e = Enc::parse(enc).ok_or_else(|| JweError::Unsupported(format!("enc {enc}")))?;
    if !key.fits(alg) {
        return Err(JweError::WrongKey);
    }
    let mut header = Map::new();
    header.insert("alg".into(), a.name().into());
    header.insert("enc".into(), e.name().into());
    if let Some(kid) = &key.kid {
        header.insert("kid".into(), kid.as_str().into());
    }
    if let Some(cty) = cty {
        header.insert("cty".into(), cty.into());
    }
    let (cek, encrypted_key) = key.wrap(a, e, &mut header)?;
    let protected = b64(&serde_json::to_vec(&header).map_err(|_| JweError::Crypto)?);
    let mut iv = vec![0u8; e.iv_len()];
    aws_lc_rs::rand::fill(&mut iv).map_err(|_| JweError::Crypto)?;
    // RFC 7516 §5.1 step 14: the AAD is the ASCII of the encoded protected header.
    let (ciphertext, tag) = e.seal(&cek, &iv, protected.as_bytes(), plaintext)?;
    let mut out = String::with_capacity(protected.len() + (encrypted_key.len() + iv.len() + ciphertext.len() + tag.len()) * 4 / 3 + 8);
    for (i, part) in [&encrypted_key, &iv, &ciphertext, &tag].into_iter().enumerate() {
        if i == 0 {
            out.push_str(&protected);
        }
        out.push('.');
        out.push_str(&b64(part));
    }
    Ok(out)
}

/// A decrypted JWE: its protected header and plaintext.
#[derive(Debug)]
pub struct Decrypted {
    pub header: Map<String, Value>,
    pub plaintext: Vec<u8>,
}

/// The protected header of a compact JWE, read without decrypting (to pick the key).
pub fn protected_header(compact: &str) -> Result<Map<String, Value>, JweError> {
    if compact.split('.').count() != 5 {
        return Err(JweError::Malformed("not five parts"));
    }
    let protected = compact.split('.').next().and_then(b64_decode).ok_or(JweError::Malformed("a part is not base64url"))?;
    serde_json::from_slice(&protected).map_err(|_| JweError::Malformed("the header is not a JSON object"))
}

/// Whether `compact` has the shape of a compact JWE (five parts) rather than a JWS (three).
pub fn looks_like_jwe(compact: &str) -> bool {
    compact.bytes().filter(|b| *b == b'.').count() == 4
}

/// Decrypt a compact JWE with `key`. The header must name an `alg` and `enc` we implement, no
/// `zip`, and no `crit` (RFC 7516 §4.1.13: an extension we do not understand is refused).
pub fn decrypt(key: &DecryptionKey, compact: &str) -> Result<Decrypted, JweError> {
    let parts: Vec<&str> = compact.split('.').collect();
    let [protected, encrypted_key, iv, ciphertext, tag] = parts[..] else {
        return Err(JweError::Malformed("not five parts"));
    };
    let part = |p: &str| b64_decode(p).ok_or(JweError::Malformed("a part is not base64url"));
    let header: Map<String, Value> = serde_json::from_slice(&part(protected)?).map_err(|_| JweError::Malformed("the header is not a JSON object"))?;
    let text = |name: &str| header.get(name).and_then(Value::as_str);
    let alg = text("alg").ok_or(JweError::Malformed("no alg"))?;
    let enc = text("enc").ok_or(JweError::Malformed("no enc"))?;
    let a = Alg::parse(alg).ok_or_else(|| JweError::Unsupported(format!("alg {alg}")))?;
    let e = Enc::parse(enc).ok_or_else(|| JweError::Unsupported(format!("enc {enc}")))?;
    for refused in ["zip", "crit"] {
        if header.contains_key(refused) {
            return Err(JweError::Unsupported(refused.into()));
        }
    }
    let cek = key.unwrap(a, e, &header, &part(encrypted_key)?)?;
    let plaintext = e.open(&cek, &part(iv)?, protected.as_bytes(), &part(ciphertext)?, &part(tag)?)?;
    Ok(Decrypted { header, plaintext })
}

#[cfg(test)]
mod tests;
