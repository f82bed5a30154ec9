//! Authrim's own encryption keys: what clients encrypt request objects to (RFC 9101 §6.1,
//! OIDC Core §6.3.1). One RSA-2048 key for RSA-OAEP-256 (RSA-OAEP is taken too) and one P-256
//! key for ECDH-ES (directly or with A128KW/A256KW) per tenant, published in the tenant's JWKS
//! with `use: "enc"`. They live in the `signing_keys` table beside the signing keys, under
//! the same states (`next`, `active`, `retired`), sealing and rotation: the table's `alg`
//! says which kind a row is, so no schema change was needed, and a retired key keeps
//! decrypting for as long as it stays published.
//!
//! A key's private half is opened (unsealed, parsed) on its first use, not when the key set is
//! loaded: a tenant that never receives an encrypted request object pays nothing for it at
//! start or at a refresh.

use super::jwe::DecryptionKey;
use super::Vault;
use std::sync::{Arc, OnceLock};

/// The algorithm each kind of encryption key is stored and published under.
pub const ENCRYPTION_KEY_ALGS: &[&str] = &["RSA-OAEP-256", "ECDH-ES"];

/// The `&'static` name of `alg` if it is one our encryption keys are stored under.
pub fn encryption_alg(alg: &str) -> Option<&'static str> {
    ENCRYPTION_KEY_ALGS.iter().copied().find(|a| *a == alg)
}

/// What kind of key `alg` (one of `ENCRYPTION_KEY_ALGS`) is, as `DecryptionKey` names it.
fn kind(alg: &str) -> &'static str {
    if alg == "RSA-OAEP-256" { "RSA" } else { "P-256" }
}

/// A published encryption key, its private half sealed until first needed.
pub struct EncryptionKey {
    pub kid: String,
    pub alg: &'static str,
    sealed: Vec<u8>,
    opened: OnceLock<Result<Arc<DecryptionKey>, String>>,
}

impl EncryptionKey {
    /// A fresh key for `alg`: its kid (RFC 7638 thumbprint), PKCS#8 and public JWK (with
    /// `use`, `alg` and `kid`).
    pub fn generate(alg: &'static str) -> anyhow::Result<(String, Vec<u8>, serde_json::Value)> {
        let (_, jwk, pkcs8) = DecryptionKey::generate_pkcs8(kind(alg)).map_err(anyhow::Error::msg)?;
        let (kid, jwk) = publish(alg, jwk)?;
        Ok((kid, pkcs8, jwk))
    }

    pub fn new(kid: String, alg: &'static str, sealed: Vec<u8>) -> Self {
        Self { kid, alg, sealed, opened: OnceLock::new() }
    }

    /// The private key's PKCS#8, unsealed (it was sealed under its kid: moved to another kid,
    /// it does not open). For a protocol that uses the key outside JWE (SAML's XML
    /// Encryption), which parses it itself.
    pub fn pkcs8(&self, vault: &Vault) -> Result<Vec<u8>, String> {
        vault.open_sealed(&self.kid, &self.sealed).map_err(|e| e.to_string())
    }

    /// The private key, unsealed and parsed once; it must be the key its kid names.
    pub fn decryptor(&self, vault: &Vault) -> Result<Arc<DecryptionKey>, String> {
        self.opened
            .get_or_init(|| {
                let pkcs8 = vault.open_sealed(&self.kid, &self.sealed).map_err(|e| e.to_string())?;
                let (key, jwk) = DecryptionKey::from_pkcs8(kind(self.alg), &pkcs8)?;
                match publish(self.alg, jwk) {
                    Ok((kid, _)) if kid == self.kid => Ok(Arc::new(key)),
                    _ => Err(format!("encryption key {} does not match its stored thumbprint", self.kid)),
                }
            })
            .clone()
    }
}

/// The public JWK as published, and its kid.
fn publish(alg: &str, mut jwk: serde_json::Value) -> anyhow::Result<(String, serde_json::Value)> {
    let kid = super::signing_key::thumbprint(&jwk)?;
    jwk["use"] = "enc".into();
    jwk["alg"] = alg.into();
    jwk["kid"] = kid.clone().into();
    Ok((kid, jwk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::jwe::{self, RecipientKey};

    #[test]
    fn each_kind_generates_a_published_key_that_decrypts_what_is_encrypted_to_it() {
        let vault = Vault::from_key([3; 32]);
        for (alg, algs) in [("RSA-OAEP-256", &["RSA-OAEP-256", "RSA-OAEP"][..]), ("ECDH-ES", &["ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW"][..])] {
            let (kid, pkcs8, jwk) = EncryptionKey::generate(alg).unwrap();
            assert_eq!((jwk["use"].as_str(), jwk["alg"].as_str(), jwk["kid"].as_str()), (Some("enc"), Some(alg), Some(kid.as_str())));
            assert!(jwk.get("d").is_none(), "private part published");
            let key = EncryptionKey::new(kid.clone(), alg, vault.seal(&kid, &pkcs8));
            let mut recipient_jwk = jwk.clone();
            recipient_jwk.as_object_mut().unwrap().remove("alg");
            let recipient = RecipientKey::from_jwk(&recipient_jwk).unwrap().unwrap();
            for a in algs {
                let compact = jwe::encrypt(&recipient, a, "A256GCM", Some("JWT"), b"inner").unwrap();
                assert_eq!(jwe::decrypt(&key.decryptor(&vault).unwrap(), &compact).unwrap().plaintext, b"inner", "{alg} {a}");
            }
            // Sealed under the kid: the same bytes under another kid, or another KEK, do not open.
            let moved = EncryptionKey::new("other".into(), alg, vault.seal(&kid, &pkcs8));
            assert!(moved.decryptor(&vault).is_err());
            let foreign = EncryptionKey::new(kid.clone(), alg, vault.seal(&kid, &pkcs8));
            assert!(foreign.decryptor(&Vault::from_key([4; 32])).is_err());
        }
    }
}
