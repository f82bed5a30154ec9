//! Signing keys at rest: AES-256-GCM under a key-encryption key (KEK) that lives outside the
//! database: `AUTHRIM_KEY_ENCRYPTION_KEY`, or a `master.key` file (mode 0600) in the data
//! directory. A stolen database file alone does not yield the signing keys.

use crate::util::{b64, b64_decode, random_bytes};
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use std::path::Path;

pub struct Vault {
    key: LessSafeKey,
    /// Kept to derive purpose-specific keys (refresh-token MACs); never used directly.
    kek: [u8; 32],
}

impl Vault {
    pub fn open(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<Self> {
        let raw = match configured {
            Some(v) => b64_decode(v.trim()).ok_or_else(|| anyhow::anyhow!("AUTHRIM_KEY_ENCRYPTION_KEY is not base64url"))?,
            None => load_or_create_key_file(&data_dir.join("master.key"))?,
        };
        if raw.len() != 32 {
            anyhow::bail!("the key-encryption key must be 32 bytes");
        }
        Ok(Self::from_key(raw.as_slice().try_into().expect("checked length")))
    }

    /// A vault under the KEK `kek` itself (tests, fuzzing).
    pub fn from_key(kek: [u8; 32]) -> Self {
        let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &kek).expect("a 32-byte AES-256 key"));
        Self { key, kek }
    }

    /// A key for one purpose, derived from the KEK (HKDF-SHA256 with `purpose` as info), so
    /// that what lives outside the database stays one secret.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        self.expand(&[purpose.as_bytes()])
    }

    /// `derive` for one tenant: the default tenant's key is `derive(purpose)` (what it was
    /// before tenants: forms in flight at an upgrade still open), another's has the tenant's
    /// number in the info too, so what one tenant seals or MACs no other opens or accepts.
    pub fn derive_for(&self, tenant: crate::tenant::TenantId, purpose: &str) -> [u8; 32] {
        if tenant.is_default() {
            return self.derive(purpose);
        }
        self.expand(&[purpose.as_bytes(), b"\x1f", &tenant.0.to_be_bytes()])
    }

    fn expand(&self, info: &[&[u8]]) -> [u8; 32] {
        use aws_lc_rs::hkdf::{Salt, HKDF_SHA256};
        struct Len32;
        impl aws_lc_rs::hkdf::KeyType for Len32 {
            fn len(&self) -> usize {
                32
            }
        }
        let prk = Salt::new(HKDF_SHA256, b"authrim").extract(&self.kek);
        let okm = prk.expand(info, Len32).expect("32-byte HKDF output");
        let mut out = [0u8; 32];
        okm.fill(&mut out).expect("fill");
        out
    }

    /// nonce ‖ ciphertext ‖ tag, bound to `label` (the kid) as associated data.
    pub fn seal(&self, label: &str, plaintext: &[u8]) -> Vec<u8> {
        let nonce = random_bytes::<NONCE_LEN>();
        let mut data = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(label.as_bytes()), &mut data)
            .expect("AES-GCM seal");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        out
    }

    pub fn open_sealed(&self, label: &str, sealed: &[u8]) -> anyhow::Result<Vec<u8>> {
        if sealed.len() < NONCE_LEN + 16 {
            anyhow::bail!("sealed key too short");
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| anyhow::anyhow!("bad nonce"))?;
        let mut data = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(label.as_bytes()), &mut data)
            .map_err(|_| anyhow::anyhow!("cannot decrypt signing key {label}: wrong key-encryption key?"))?;
        Ok(plain.to_vec())
    }
}

fn load_or_create_key_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    if let Ok(text) = std::fs::read_to_string(path) {
        return b64_decode(text.trim()).ok_or_else(|| anyhow::anyhow!("{} is not base64url", path.display()));
    }
    let key = random_bytes::<32>();
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    use std::io::Write;
    let mut f = opts.open(path).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
    f.write_all(b64(&key).as_bytes())?;
    f.sync_all()?;
    Ok(key.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tenant_derives_its_own_keys_and_the_default_tenant_the_old_ones() {
        use crate::tenant::TenantId;
        let v = Vault::from_key([9; 32]);
        let p = "authrim interaction state v1";
        assert_eq!(v.derive_for(TenantId::DEFAULT, p), v.derive(p), "forms sealed before tenants still open");
        let (a, b) = (v.derive_for(TenantId(1), p), v.derive_for(TenantId(2), p));
        assert!(a != b && a != v.derive(p));
        assert_ne!(a, v.derive_for(TenantId(1), "authrim session state v1"), "and per purpose");
        let sealer = |k| crate::http::sealed::Sealer::new(k, 4096);
        let sealed = sealer(a).seal("login", "cookie", 60, &"request");
        assert!(sealer(a).open::<String>("login", Some("cookie"), &sealed).is_ok());
        assert!(sealer(b).open::<String>("login", Some("cookie"), &sealed).is_err(), "tenant 2 opens nothing of tenant 1's");
    }

    #[test]
    fn seal_round_trips_and_is_bound_to_its_label() {
        let dir = tempfile::tempdir().unwrap();
        let v = Vault::open(None, dir.path()).unwrap();
        let sealed = v.seal("kid1", b"secret key");
        assert_eq!(v.open_sealed("kid1", &sealed).unwrap(), b"secret key");
        assert!(v.open_sealed("kid2", &sealed).is_err());
        // The same file gives the same KEK on the next start.
        let v2 = Vault::open(None, dir.path()).unwrap();
        assert_eq!(v2.open_sealed("kid1", &sealed).unwrap(), b"secret key");
        let other = Vault::open(Some(&b64(&[9u8; 32])), dir.path()).unwrap();
        assert!(other.open_sealed("kid1", &sealed).is_err());
    }
}
