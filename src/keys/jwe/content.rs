//! Content encryption (RFC 7518 §5): AES-GCM (§5.3) and AES-CBC with HMAC-SHA-2 (§5.2), the
//! OpenID default `A128CBC-HS256`. The ciphers and MACs are aws-lc-rs's; only their
//! composition into the JWA algorithms is written here.

use super::JweError;
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::cipher::{DecryptionContext, EncryptionContext, PaddedBlockDecryptingKey, PaddedBlockEncryptingKey, UnboundCipherKey, AES_128, AES_256};
use aws_lc_rs::hmac;
use aws_lc_rs::iv::FixedLength;

/// A JWA `enc` we implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    A128Gcm,
    A256Gcm,
    A128CbcHs256,
    A256CbcHs512,
}

impl Enc {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "A128GCM" => Self::A128Gcm,
            "A256GCM" => Self::A256Gcm,
            "A128CBC-HS256" => Self::A128CbcHs256,
            "A256CBC-HS512" => Self::A256CbcHs512,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::A128Gcm => "A128GCM",
            Self::A256Gcm => "A256GCM",
            Self::A128CbcHs256 => "A128CBC-HS256",
            Self::A256CbcHs512 => "A256CBC-HS512",
        }
    }

    /// The content encryption key's length in bytes (a CBC-HS key is the MAC key and the
    /// AES key, concatenated: §5.2.2.1).
    pub fn key_len(self) -> usize {
        match self {
            Self::A128Gcm => 16,
            Self::A256Gcm | Self::A128CbcHs256 => 32,
            Self::A256CbcHs512 => 64,
        }
    }

    pub fn iv_len(self) -> usize {
        match self {
            Self::A128Gcm | Self::A256Gcm => 12,
            Self::A128CbcHs256 | Self::A256CbcHs512 => 16,
        }
    }

    /// Encrypt `plaintext` under `cek` and `iv`, authenticating `aad` (the protected header's
    /// base64url): (ciphertext, tag).
    pub fn seal(self, cek: &[u8], iv: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<(Vec<u8>, Vec<u8>), JweError> {
        if cek.len() != self.key_len() || iv.len() != self.iv_len() {
            return Err(JweError::Crypto);
        }
        match self {
            Self::A128Gcm | Self::A256Gcm => {
                let key = gcm_key(self, cek)?;
                let mut in_out = plaintext.to_vec();
                let nonce = Nonce::try_assume_unique_for_key(iv).map_err(|_| JweError::Crypto)?;
                let tag = key.seal_in_place_separate_tag(nonce, Aad::from(aad), &mut in_out).map_err(|_| JweError::Crypto)?;
                Ok((in_out, tag.as_ref().to_vec()))
            }
            Self::A128CbcHs256 | Self::A256CbcHs512 => {
                let (mac_key, enc_key) = cek.split_at(cek.len() / 2);
                let key = PaddedBlockEncryptingKey::cbc_pkcs7(aes_key(enc_key)?).map_err(|_| JweError::Crypto)?;
                let mut in_out = plaintext.to_vec();
                let iv16: [u8; 16] = iv.try_into().map_err(|_| JweError::Crypto)?;
                key.less_safe_encrypt(&mut in_out, EncryptionContext::Iv128(FixedLength::from(iv16))).map_err(|_| JweError::Crypto)?;
                let tag = cbc_tag(self, mac_key, aad, iv, &in_out);
                Ok((in_out, tag))
            }
        }
    }

    /// Check the tag and decrypt. Every failure is the same `Decrypt`, whatever failed (tag or
    /// padding), so that the answer tells an attacker nothing.
    pub fn open(self, cek: &[u8], iv: &[u8], aad: &[u8], ciphertext: &[u8], tag: &[u8]) -> Result<Vec<u8>, JweError> {
        if cek.len() != self.key_len() || iv.len() != self.iv_len() {
            return Err(JweError::Decrypt);
        }
        match self {
            Self::A128Gcm | Self::A256Gcm => {
                let key = gcm_key(self, cek).map_err(|_| JweError::Decrypt)?;
                let nonce = Nonce::try_assume_unique_for_key(iv).map_err(|_| JweError::Decrypt)?;
                let mut in_out = Vec::with_capacity(ciphertext.len() + tag.len());
                in_out.extend_from_slice(ciphertext);
                in_out.extend_from_slice(tag);
                // aws-lc-rs compares the tag in constant time.
                let plain = key.open_in_place(nonce, Aad::from(aad), &mut in_out).map_err(|_| JweError::Decrypt)?;
                Ok(plain.to_vec())
            }
            Self::A128CbcHs256 | Self::A256CbcHs512 => {
                let (mac_key, enc_key) = cek.split_at(cek.len() / 2);
                // MAC first (§5.2.2.2): nothing unauthenticated reaches the padding check.
                let expected = cbc_tag(self, mac_key, aad, iv, ciphertext);
                if !crate::util::ct_eq(&expected, tag) {
                    return Err(JweError::Decrypt);
                }
                let key = PaddedBlockDecryptingKey::cbc_pkcs7(aes_key(enc_key).map_err(|_| JweError::Decrypt)?).map_err(|_| JweError::Decrypt)?;
                let iv16: [u8; 16] = iv.try_into().map_err(|_| JweError::Decrypt)?;
                let mut in_out = ciphertext.to_vec();
                let plain = key.decrypt(&mut in_out, DecryptionContext::Iv128(FixedLength::from(iv16))).map_err(|_| JweError::Decrypt)?;
                Ok(plain.to_vec())
            }
        }
    }
}

fn gcm_key(enc: Enc, cek: &[u8]) -> Result<LessSafeKey, JweError> {
    let alg = if enc == Enc::A128Gcm { &aead::AES_128_GCM } else { &aead::AES_256_GCM };
    Ok(LessSafeKey::new(UnboundKey::new(alg, cek).map_err(|_| JweError::Crypto)?))
}

fn aes_key(key: &[u8]) -> Result<UnboundCipherKey, JweError> {
    let alg = if key.len() == 16 { &AES_128 } else { &AES_256 };
    UnboundCipherKey::new(alg, key).map_err(|_| JweError::Crypto)
}

/// RFC 7518 §5.2.2.1: the first half of HMAC(MAC_KEY, A ‖ IV ‖ E ‖ AL), AL being the bit
/// length of A as a 64-bit big-endian number.
fn cbc_tag(enc: Enc, mac_key: &[u8], aad: &[u8], iv: &[u8], ciphertext: &[u8]) -> Vec<u8> {
    let alg = if enc == Enc::A128CbcHs256 { hmac::HMAC_SHA256 } else { hmac::HMAC_SHA512 };
    let mut ctx = hmac::Context::with_key(&hmac::Key::new(alg, mac_key));
    ctx.update(aad);
    ctx.update(iv);
    ctx.update(ciphertext);
    ctx.update(&((aad.len() as u64) * 8).to_be_bytes());
    let full = ctx.sign();
    full.as_ref()[..mac_key.len()].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// RFC 7518 Appendix B.1: AES_128_CBC_HMAC_SHA_256.
    #[test]
    fn rfc7518_b1_a128cbc_hs256() {
        let k: Vec<u8> = (0u8..32).collect();
        let p = b"A cipher system must not be required to be secret, and it must be able to fall into the hands of the enemy without inconvenience";
        let iv = hex("1a f3 8c 2d c2 b9 6f fd d8 66 94 09 23 41 bc 04");
        let a = b"The second principle of Auguste Kerckhoffs";
        let e = hex(
            "c8 0e df a3 2d df 39 d5 ef 00 c0 b4 68 83 42 79 a2 e4 6a 1b 80 49 f7 92 f7 6b fe 54 b9 03 a9 c9
             a9 4a c9 b4 7a d2 65 5c 5f 10 f9 ae f7 14 27 e2 fc 6f 9b 3f 39 9a 22 14 89 f1 63 62 c7 03 23 36
             09 d4 5a c6 98 64 e3 32 1c f8 29 35 ac 40 96 c8 6e 13 33 14 c5 40 19 e8 ca 79 80 df a4 b9 cf 1b
             38 4c 48 6f 3a 54 c5 10 78 15 8e e5 d7 9d e5 9f bd 34 d8 48 b3 d6 95 50 a6 76 46 34 44 27 ad e5
             4b 88 51 ff b5 98 f7 f8 00 74 b9 47 3c 82 e2 db",
        );
        let t = hex("65 2c 3f a3 6b 0a 7c 5b 32 19 fa b3 a3 0b c1 c4");
        let (ct, tag) = Enc::A128CbcHs256.seal(&k, &iv, a, p).unwrap();
        assert_eq!((ct.clone(), tag.clone()), (e, t));
        assert_eq!(Enc::A128CbcHs256.open(&k, &iv, a, &ct, &tag).unwrap(), p);
    }

    #[test]
    fn every_enc_round_trips_and_refuses_any_change() {
        for enc in [Enc::A128Gcm, Enc::A256Gcm, Enc::A128CbcHs256, Enc::A256CbcHs512] {
            assert_eq!(Enc::parse(enc.name()), Some(enc));
            let cek: Vec<u8> = (0..enc.key_len() as u8).collect();
            let iv = vec![7u8; enc.iv_len()];
            let (ct, tag) = enc.seal(&cek, &iv, b"aad", b"the plaintext").unwrap();
            assert_eq!(enc.open(&cek, &iv, b"aad", &ct, &tag).unwrap(), b"the plaintext", "{enc:?}");
            let flip = |v: &[u8], i: usize| {
                let mut v = v.to_vec();
                v[i] ^= 1;
                v
            };
            assert_eq!(enc.open(&cek, &iv, b"aad", &flip(&ct, 0), &tag), Err(JweError::Decrypt), "{enc:?}: ciphertext");
            assert_eq!(enc.open(&cek, &iv, b"aad", &ct, &flip(&tag, 15)), Err(JweError::Decrypt), "{enc:?}: tag");
            assert_eq!(enc.open(&cek, &iv, b"aaD", &ct, &tag), Err(JweError::Decrypt), "{enc:?}: aad");
            assert_eq!(enc.open(&cek, &flip(&iv, 0), b"aad", &ct, &tag), Err(JweError::Decrypt), "{enc:?}: iv");
            assert_eq!(enc.open(&flip(&cek, 0), &iv, b"aad", &ct, &tag), Err(JweError::Decrypt), "{enc:?}: key");
            assert_eq!(enc.open(&cek, &iv, b"aad", &ct, &tag[..8]), Err(JweError::Decrypt), "{enc:?}: short tag");
        }
        assert_eq!(Enc::parse("A192GCM"), None);
    }
}
