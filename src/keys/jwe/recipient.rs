//! Key management (RFC 7518 §4): whose key a content encryption key is sealed to, and how.
//! RSAES-OAEP (§4.3), ECDH-ES directly or with AES key wrap (§4.6) with the Concat KDF
//! (NIST SP 800-56A, which aws-lc-rs names SSKDF), on P-256, P-384, P-521 and X25519
//! (RFC 8037 §3.2).

use super::content::Enc;
use super::JweError;
use crate::util::{b64, b64_decode};
use aws_lc_rs::agreement::{self, UnparsedPublicKey};
use aws_lc_rs::key_wrap::{AesKek, KeyWrap, AES_128, AES_256};
use aws_lc_rs::rsa::{self, OaepPrivateDecryptingKey, OaepPublicEncryptingKey, PrivateDecryptingKey, PublicEncryptingKey};
use serde_json::{json, Map, Value};

/// A JWA key management `alg` we implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alg {
    RsaOaep,
    RsaOaep256,
    EcdhEs,
    EcdhEsA128Kw,
    EcdhEsA256Kw,
}

impl Alg {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "RSA-OAEP" => Self::RsaOaep,
            "RSA-OAEP-256" => Self::RsaOaep256,
            "ECDH-ES" => Self::EcdhEs,
            "ECDH-ES+A128KW" => Self::EcdhEsA128Kw,
            "ECDH-ES+A256KW" => Self::EcdhEsA256Kw,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::RsaOaep => "RSA-OAEP",
            Self::RsaOaep256 => "RSA-OAEP-256",
            Self::EcdhEs => "ECDH-ES",
            Self::EcdhEsA128Kw => "ECDH-ES+A128KW",
            Self::EcdhEsA256Kw => "ECDH-ES+A256KW",
        }
    }

    pub fn is_rsa(self) -> bool {
        matches!(self, Self::RsaOaep | Self::RsaOaep256)
    }

    fn oaep(self) -> &'static rsa::OaepAlgorithm {
        if self == Self::RsaOaep { &rsa::OAEP_SHA1_MGF1SHA1 } else { &rsa::OAEP_SHA256_MGF1SHA256 }
    }

    /// The key-wrapping key's length for ECDH-ES+AxxxKW.
    fn kw_len(self) -> Option<usize> {
        match self {
            Self::EcdhEsA128Kw => Some(16),
            Self::EcdhEsA256Kw => Some(32),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    P256,
    P384,
    P521,
    X25519,
}

impl Curve {
    fn parse(kty: &str, crv: &str) -> Option<Self> {
        Some(match (kty, crv) {
            ("EC", "P-256") => Self::P256,
            ("EC", "P-384") => Self::P384,
            ("EC", "P-521") => Self::P521,
            ("OKP", "X25519") => Self::X25519,
            _ => return None,
        })
    }

    fn agreement(self) -> &'static agreement::Algorithm {
        match self {
            Self::P256 => &agreement::ECDH_P256,
            Self::P384 => &agreement::ECDH_P384,
            Self::P521 => &agreement::ECDH_P521,
            Self::X25519 => &agreement::X25519,
        }
    }

    /// Bytes of a coordinate (or of an X25519 key).
    fn size(self) -> usize {
        match self {
            Self::P256 | Self::X25519 => 32,
            Self::P384 => 48,
            Self::P521 => 66,
        }
    }

    /// The public key as aws-lc-rs reads it (X9.62 uncompressed for the NIST curves, raw
    /// for X25519) from a JWK's `x` (and `y`).
    fn point(self, jwk: &Map<String, Value>) -> Result<Vec<u8>, String> {
        let coord = |name: &str| -> Result<Vec<u8>, String> {
            let bytes = jwk.get(name).and_then(Value::as_str).and_then(b64_decode).ok_or_else(|| format!("no base64url \"{name}\""))?;
            // RFC 7518 §6.2.1.2 asks for the full length; a shorter one lost its leading zeros.
            if bytes.len() > self.size() {
                return Err(format!("\"{name}\" is longer than the curve's coordinates"));
            }
            let mut full = vec![0u8; self.size() - bytes.len()];
            full.extend_from_slice(&bytes);
            Ok(full)
        };
        if self == Self::X25519 {
            return coord("x");
        }
        let mut point = vec![4u8];
        point.extend(coord("x")?);
        point.extend(coord("y")?);
        Ok(point)
    }

    /// The public JWK of an ephemeral key, for the header's `epk`.
    fn epk(self, public: &[u8]) -> Value {
        match self {
            Self::X25519 => json!({"kty": "OKP", "crv": "X25519", "x": b64(public)}),
            _ => {
                let (x, y) = public[1..].split_at(self.size());
                let crv = match self {
                    Self::P256 => "P-256",
                    Self::P384 => "P-384",
                    _ => "P-521",
                };
                json!({"kty": "EC", "crv": crv, "x": b64(x), "y": b64(y)})
            }
        }
    }
}

#[derive(Clone)]
enum Public {
    Rsa(PublicEncryptingKey),
    Ec { curve: Curve, point: Vec<u8> },
}

/// A client's public encryption key, from its JWK Set.
#[derive(Clone)]
pub struct RecipientKey {
    pub kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key is then for that algorithm only.
    pub alg: Option<String>,
    key: Public,
}

impl std::fmt::Debug for RecipientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecipientKey").field("kid", &self.kid).field("alg", &self.alg).finish()
    }
}

impl RecipientKey {
    /// The encryption key a JWK describes: `Ok(None)` for a key that is not one (`use: sig`,
    /// a signature `alg`, a key type or curve we do not encrypt to).
    pub fn from_jwk(jwk: &Value) -> Result<Option<Self>, String> {
        let obj = jwk.as_object().ok_or("a key is not a JSON object")?;
        let text = |name: &str| obj.get(name).and_then(Value::as_str);
        if text("use").is_some_and(|u| u != "enc") {
            return Ok(None);
        }
        let alg = text("alg").map(str::to_string);
        let alg_kind = alg.as_deref().map(Alg::parse);
        if matches!(alg_kind, Some(None)) {
            return Ok(None); // a signature algorithm, or an encryption one we do not offer
        }
        let key = match (text("kty"), text("crv")) {
            (Some("RSA"), _) => {
                let part = |name: &str| text(name).and_then(b64_decode).ok_or_else(|| format!("RSA key without a base64url \"{name}\""));
                let components = rsa::PublicKeyComponents { n: part("n")?, e: part("e")? };
                let key: PublicEncryptingKey = components.try_into().map_err(|_| "unusable RSA key (at least 2048 bits)".to_string())?;
                Public::Rsa(key)
            }
            (Some(kty), Some(crv)) => match Curve::parse(kty, crv) {
                Some(curve) => {
                    let point = curve.point(obj)?;
                    // Parsed now so that a point off the curve is refused at registration.
                    agreement::ParsedPublicKey::try_from(UnparsedPublicKey::new(curve.agreement(), &point)).map_err(|_| format!("the {crv} key is not a valid point"))?;
                    Public::Ec { curve, point }
                }
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let this = Self { kid: text("kid").map(str::to_string), alg, key };
        // A key whose `alg` is of the other family (an RSA key marked ECDH-ES) fits nothing.
        Ok(match alg_kind.flatten() {
            Some(a) if !this.suits(a) => None,
            _ => Some(this),
        })
    }

    /// Whether this key can receive a JWE of `alg`: its type matches, and its own `alg` (if
    /// any) is `alg`.
    pub fn fits(&self, alg: &str) -> bool {
        Alg::parse(alg).is_some_and(|a| self.suits(a)) && self.alg.as_deref().is_none_or(|own| own == alg)
    }

    fn suits(&self, alg: Alg) -> bool {
        matches!(&self.key, Public::Rsa(_)) == alg.is_rsa()
    }

    /// The content encryption key for `enc`, and the JWE Encrypted Key and header members
    /// (`epk`) that let the recipient find it again.
    pub(super) fn wrap(&self, alg: Alg, enc: Enc, header: &mut Map<String, Value>) -> Result<(Vec<u8>, Vec<u8>), JweError> {
        match (&self.key, alg.kw_len()) {
            (Public::Rsa(key), _) => {
                let cek = random_key(enc.key_len());
                let key = OaepPublicEncryptingKey::new(key.clone()).map_err(|_| JweError::Crypto)?;
                let mut out = vec![0u8; key.ciphertext_size()];
                let len = key.encrypt(alg.oaep(), &cek, &mut out, None).map_err(|_| JweError::Crypto)?.len();
                out.truncate(len);
                Ok((cek, out))
            }
            (Public::Ec { curve, point }, kw) => {
                let ephemeral = agreement::PrivateKey::generate(curve.agreement()).map_err(|_| JweError::Crypto)?;
                let public = ephemeral.compute_public_key().map_err(|_| JweError::Crypto)?;
                header.insert("epk".into(), curve.epk(public.as_ref()));
                let z = agree(&ephemeral, *curve, point).map_err(|_| JweError::Crypto)?;
                match kw {
                    // Direct key agreement: the derived key is the CEK, and there is no Encrypted Key.
                    None => Ok((concat_kdf(&z, enc.name(), &[], &[], enc.key_len())?, Vec::new())),
                    Some(len) => {
                        let kek = concat_kdf(&z, alg.name(), &[], &[], len)?;
                        let cek = random_key(enc.key_len());
                        Ok((cek.clone(), key_wrap(&kek, &cek)?))
                    }
                }
            }
        }
    }
}

fn random_key(len: usize) -> Vec<u8> {
    let mut k = vec![0u8; len];
    aws_lc_rs::rand::fill(&mut k).expect("system RNG unavailable");
    k
}

fn agree(private: &agreement::PrivateKey, curve: Curve, point: &[u8]) -> Result<Vec<u8>, ()> {
    agreement::agree(private, UnparsedPublicKey::new(curve.agreement(), point), (), |z| Ok(z.to_vec()))
}

/// RFC 7518 §4.6.2: the Concat KDF with SHA-256 over Z and OtherInfo = AlgorithmID ‖
/// PartyUInfo ‖ PartyVInfo (each length-prefixed) ‖ SuppPubInfo (the key's length in bits).
pub(super) fn concat_kdf(z: &[u8], alg_id: &str, apu: &[u8], apv: &[u8], len: usize) -> Result<Vec<u8>, JweError> {
    use aws_lc_rs::kdf::{get_sskdf_digest_algorithm, sskdf_digest, SskdfDigestAlgorithmId};
    let mut info = Vec::with_capacity(16 + alg_id.len() + apu.len() + apv.len());
    for part in [alg_id.as_bytes(), apu, apv] {
        info.extend_from_slice(&(part.len() as u32).to_be_bytes());
        info.extend_from_slice(part);
    }
    info.extend_from_slice(&((len * 8) as u32).to_be_bytes());
    let alg = get_sskdf_digest_algorithm(SskdfDigestAlgorithmId::Sha256).ok_or(JweError::Crypto)?;
    let mut out = vec![0u8; len];
    sskdf_digest(alg, z, &info, &mut out).map_err(|_| JweError::Crypto)?;
    Ok(out)
}

fn key_wrap(kek: &[u8], cek: &[u8]) -> Result<Vec<u8>, JweError> {
    let kek = AesKek::new(if kek.len() == 16 { &AES_128 } else { &AES_256 }, kek).map_err(|_| JweError::Crypto)?;
    let mut out = vec![0u8; cek.len() + 8];
    let len = kek.wrap(cek, &mut out).map_err(|_| JweError::Crypto)?.len();
    out.truncate(len);
    Ok(out)
}

fn key_unwrap(kek: &[u8], wrapped: &[u8]) -> Result<Vec<u8>, JweError> {
    let kek = AesKek::new(if kek.len() == 16 { &AES_128 } else { &AES_256 }, kek).map_err(|_| JweError::Decrypt)?;
    let mut out = vec![0u8; wrapped.len()];
    let len = kek.unwrap(wrapped, &mut out).map_err(|_| JweError::Decrypt)?.len();
    out.truncate(len);
    Ok(out)
}

enum Private {
    Rsa(PrivateDecryptingKey),
    Ec(Curve, agreement::PrivateKey),
}

/// A private key that JWEs are decrypted with (encrypted request objects, tests).
pub struct DecryptionKey {
    key: Private,
}

impl DecryptionKey {
    /// From a private JWK (RSA with its CRT parameters, EC or X25519 with `d`).
    pub fn from_jwk(jwk: &Value) -> Result<Self, String> {
        let obj = jwk.as_object().ok_or("not a JSON object")?;
        let part = |name: &str| obj.get(name).and_then(Value::as_str).and_then(b64_decode).ok_or_else(|| format!("no base64url \"{name}\""));
        let text = |name: &str| obj.get(name).and_then(Value::as_str).unwrap_or("");
        if text("kty") == "RSA" {
            let components = rsa::KeyPairComponents {
                public_key: rsa::PublicKeyComponents { n: part("n")?, e: part("e")? },
                d: part("d")?,
                p: part("p")?,
                q: part("q")?,
                dP: part("dp")?,
                dQ: part("dq")?,
                qInv: part("qi")?,
            };
            let pair = rsa::KeyPair::from_components(&components).map_err(|e| format!("unusable RSA key: {e}"))?;
            return Self::from_rsa_pkcs8(aws_lc_rs::encoding::AsDer::<aws_lc_rs::encoding::Pkcs8V1Der>::as_der(&pair).map_err(|_| "cannot encode the RSA key")?.as_ref());
        }
        let curve = Curve::parse(text("kty"), text("crv")).ok_or("not an RSA, EC (P-256, P-384, P-521) or X25519 key")?;
        let mut d = part("d")?;
        if d.len() < curve.size() {
            d.splice(0..0, std::iter::repeat_n(0u8, curve.size() - d.len()));
        }
        let key = agreement::PrivateKey::from_private_key(curve.agreement(), &d).map_err(|e| format!("unusable private key: {e}"))?;
        Ok(Self { key: Private::Ec(curve, key) })
    }

    /// A fresh private key and its public JWK (no `kid`, no `use`): `kind` is `RSA` (2048
    /// bits), `P-256`, `P-384`, `P-521` or `X25519`.
    pub fn generate(kind: &str) -> Result<(Self, Value), String> {
        if kind == "RSA" {
            use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
            let pair = rsa::KeyPair::generate(rsa::KeySize::Rsa2048).map_err(|_| "RSA key generation failed")?;
            let public = aws_lc_rs::signature::KeyPair::public_key(&pair);
            let jwk = json!({"kty": "RSA", "n": b64(public.modulus().big_endian_without_leading_zero()), "e": b64(public.exponent().big_endian_without_leading_zero())});
            let der: Pkcs8V1Der = pair.as_der().map_err(|_| "cannot encode the RSA key")?;
            return Ok((Self::from_rsa_pkcs8(der.as_ref())?, jwk));
        }
        let curve = [("P-256", Curve::P256), ("P-384", Curve::P384), ("P-521", Curve::P521), ("X25519", Curve::X25519)]
            .into_iter()
            .find_map(|(n, c)| (n == kind).then_some(c))
            .ok_or_else(|| format!("cannot make a {kind} key"))?;
        let key = agreement::PrivateKey::generate(curve.agreement()).map_err(|_| "key generation failed")?;
        let public = key.compute_public_key().map_err(|_| "key generation failed")?;
        Ok((Self { key: Private::Ec(curve, key) }, curve.epk(public.as_ref())))
    }

    /// A fresh key of `kind` (`RSA`: 2048 bits, or `P-256`) with its public JWK and its
    /// PKCS#8 encoding, which `from_pkcs8` reads back: Authrim's own encryption keys, stored
    /// sealed like signing keys.
    pub fn generate_pkcs8(kind: &str) -> Result<(Self, Value, Vec<u8>), String> {
        use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
        if kind == "RSA" {
            let pair = rsa::KeyPair::generate(rsa::KeySize::Rsa2048).map_err(|_| "RSA key generation failed")?;
            let der: Pkcs8V1Der = pair.as_der().map_err(|_| "cannot encode the RSA key")?;
            let (key, jwk) = Self::from_pkcs8("RSA", der.as_ref())?;
            return Ok((key, jwk, der.as_ref().to_vec()));
        }
        if kind != "P-256" {
            return Err(format!("cannot make a {kind} key"));
        }
        let key = agreement::PrivateKey::generate(&agreement::ECDH_P256).map_err(|_| "key generation failed")?;
        let der: Pkcs8V1Der = key.as_der().map_err(|_| "cannot encode the P-256 key")?;
        let (key, jwk) = Self::from_pkcs8("P-256", der.as_ref())?;
        Ok((key, jwk, der.as_ref().to_vec()))
    }

    /// A key of `kind` (`RSA` or `P-256`) from PKCS#8, with its public JWK (no `kid`, no `use`).
    pub fn from_pkcs8(kind: &str, pkcs8: &[u8]) -> Result<(Self, Value), String> {
        if kind == "RSA" {
            let pair = rsa::KeyPair::from_pkcs8(pkcs8).map_err(|e| format!("unusable RSA key: {e}"))?;
            let public = aws_lc_rs::signature::KeyPair::public_key(&pair);
            let jwk = json!({"kty": "RSA", "n": b64(public.modulus().big_endian_without_leading_zero()), "e": b64(public.exponent().big_endian_without_leading_zero())});
            return Ok((Self::from_rsa_pkcs8(pkcs8)?, jwk));
        }
        if kind != "P-256" {
            return Err(format!("not a key kind we decrypt with: {kind}"));
        }
        let key = agreement::PrivateKey::from_private_key_der(&agreement::ECDH_P256, pkcs8).map_err(|e| format!("unusable P-256 key: {e}"))?;
        let public = key.compute_public_key().map_err(|_| "unusable P-256 key")?;
        let jwk = Curve::P256.epk(public.as_ref());
        Ok((Self { key: Private::Ec(Curve::P256, key) }, jwk))
    }

    pub fn from_rsa_pkcs8(pkcs8: &[u8]) -> Result<Self, String> {
        let key = PrivateDecryptingKey::from_pkcs8(pkcs8).map_err(|e| format!("unusable RSA key: {e}"))?;
        Ok(Self { key: Private::Rsa(key) })
    }

    /// The content encryption key of a JWE with this header and Encrypted Key.
    pub(super) fn unwrap(&self, alg: Alg, enc: Enc, header: &Map<String, Value>, encrypted_key: &[u8]) -> Result<Vec<u8>, JweError> {
        match (&self.key, alg.kw_len()) {
            (Private::Rsa(key), _) if alg.is_rsa() => {
                let key = OaepPrivateDecryptingKey::new(key.clone()).map_err(|_| JweError::Decrypt)?;
                let mut out = vec![0u8; key.min_output_size()];
                let cek = key.decrypt(alg.oaep(), encrypted_key, &mut out, None).map_err(|_| JweError::Decrypt)?;
                Ok(cek.to_vec())
            }
            (Private::Ec(curve, key), kw) if !alg.is_rsa() => {
                let epk = header.get("epk").and_then(Value::as_object).ok_or(JweError::Malformed("no epk"))?;
                let text = |name: &str| epk.get(name).and_then(Value::as_str).unwrap_or("");
                if Curve::parse(text("kty"), text("crv")) != Some(*curve) {
                    return Err(JweError::WrongKey);
                }
                let point = curve.point(epk).map_err(|_| JweError::Malformed("epk"))?;
                let z = agree(key, *curve, &point).map_err(|_| JweError::Decrypt)?;
                let party = |name: &str| match header.get(name) {
                    None => Ok(Vec::new()),
                    Some(v) => v.as_str().and_then(b64_decode).ok_or(JweError::Malformed("apu/apv")),
                };
                let (apu, apv) = (party("apu")?, party("apv")?);
                match kw {
                    None if encrypted_key.is_empty() => concat_kdf(&z, enc.name(), &apu, &apv, enc.key_len()),
                    None => Err(JweError::Malformed("ECDH-ES has no encrypted key")),
                    Some(len) => key_unwrap(&concat_kdf(&z, alg.name(), &apu, &apv, len)?, encrypted_key),
                }
            }
            _ => Err(JweError::WrongKey),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7518 Appendix C: ECDH-ES with P-256 between the example keys, apu "Alice", apv
    /// "Bob", for A128GCM.
    #[test]
    fn rfc7518_appendix_c_key_agreement() {
        let bob = DecryptionKey::from_jwk(&json!({"kty":"EC","crv":"P-256","x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck","d":"VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"})).unwrap();
        let header = json!({"alg":"ECDH-ES","enc":"A128GCM","apu":"QWxpY2U","apv":"Qm9i",
            "epk":{"kty":"EC","crv":"P-256","x":"gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0","y":"SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps"}});
        let cek = bob.unwrap(Alg::EcdhEs, Enc::A128Gcm, header.as_object().unwrap(), &[]).unwrap();
        assert_eq!(b64(&cek), "VqqN6vgjbSBcIijNcacQGg");
        // The same from Alice's side: her ephemeral private key and Bob's public one.
        let alice = agreement::PrivateKey::from_private_key(&agreement::ECDH_P256, &b64_decode("0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo").unwrap()).unwrap();
        let bob_point = Curve::P256.point(json!({"x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"}).as_object().unwrap()).unwrap();
        let z = agree(&alice, Curve::P256, &bob_point).unwrap();
        assert_eq!(b64(&concat_kdf(&z, "A128GCM", b"Alice", b"Bob", 16).unwrap()), "VqqN6vgjbSBcIijNcacQGg");
    }

    #[test]
    fn keys_for_signatures_or_of_unknown_types_are_not_encryption_keys() {
        let ec = json!({"kty":"EC","crv":"P-256","x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"});
        let with = |k: &str, v: &str| {
            let mut j = ec.clone();
            j[k] = v.into();
            RecipientKey::from_jwk(&j).unwrap()
        };
        assert!(with("use", "sig").is_none());
        assert!(with("alg", "ES256").is_none());
        assert!(with("alg", "RSA-OAEP").is_none(), "an EC key marked for RSA");
        let k = with("use", "enc").unwrap();
        assert!(k.fits("ECDH-ES") && k.fits("ECDH-ES+A256KW") && !k.fits("RSA-OAEP-256"));
        let only = with("alg", "ECDH-ES+A128KW").unwrap();
        assert!(only.fits("ECDH-ES+A128KW") && !only.fits("ECDH-ES"));
        assert!(RecipientKey::from_jwk(&json!({"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})).unwrap().is_none());
        // A point off the curve is an error, not a key.
        let mut off = ec.clone();
        off["y"] = b64(&[1u8; 32]).into();
        assert!(RecipientKey::from_jwk(&off).is_err());
    }
}
