//! KeyManager: the signing keys, their publication (JWKS), and token signing and verification,
//! answered from a node-side cache so that no request reads the database for a key.
//!
//! Key states follow DESIGN.md §4: `next` (published, not yet signing), `active` (signing),
//! `retired` (published until tokens it signed have expired). The cache is re-read every
//! `key_cache_ttl` seconds by a background task; a request never waits on it.

mod signing_key;
mod vault;

pub use signing_key::{rsa_thumbprint, SigningKey, ALG_RS256};
pub use vault::Vault;

use crate::util::now;
use jsonwebtoken::{jwk::Jwk, DecodingKey, TokenData, Validation};
use parking_lot::RwLock;
use rusqlite::{Connection, OptionalExtension};
use serde::{de::DeserializeOwned, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct KeySet {
    signer: Arc<SigningKey>,
    verifiers: HashMap<String, DecodingKey>,
    jwks: Arc<str>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// Not a JWS we can read, or a header we do not accept (alg, typ).
    Malformed,
    /// Signed with a key we do not publish.
    UnknownKey,
    /// Bad signature, expired, wrong issuer or audience.
    Invalid(jsonwebtoken::errors::ErrorKind),
}

pub struct KeyManager {
    vault: Vault,
    data_dir: PathBuf,
    /// Retired keys stay published this long after retirement.
    retired_visibility: u64,
    /// A `next` key signs only after being published this long.
    publish_delay: u64,
    cache: RwLock<Arc<KeySet>>,
}

impl KeyManager {
    /// Load the key set, generating the first signing key if there is none. Runs before the
    /// server accepts requests, on the connection that will become the journal's.
    pub fn init(conn: &Connection, data_dir: &Path, kek: Option<&str>, retired_visibility: u64, publish_delay: u64) -> anyhow::Result<Self> {
        let vault = Vault::open(kek, data_dir)?;
        ensure_active_key(conn, &vault)?;
        promote_due(conn, publish_delay)?;
        let set = load_key_set(conn, &vault, retired_visibility)?;
        Ok(Self { vault, data_dir: data_dir.to_path_buf(), retired_visibility, publish_delay, cache: RwLock::new(Arc::new(set)) })
    }

    /// Start a rotation: a new key, published at once as `next`, signing only after
    /// `publish_delay` (see `promote_due`). Returns its kid.
    pub fn rotate(conn: &Connection, data_dir: &Path, kek: Option<&str>) -> anyhow::Result<String> {
        let vault = Vault::open(kek, data_dir)?;
        let (key, pkcs8) = SigningKey::generate()?;
        conn.execute(
            "INSERT INTO signing_keys (kid, alg, state, private_key, public_jwk, created_at) VALUES (?1, ?2, 'next', ?3, ?4, ?5)",
            (&key.kid, ALG_RS256, vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string(), now() as i64),
        )?;
        tracing::info!(kid = %key.kid, "rotation started: new key published");
        Ok(key.kid)
    }

    fn current(&self) -> Arc<KeySet> {
        self.cache.read().clone()
    }

    /// A key derived from the key-encryption key for `purpose` (see `Vault::derive`).
    pub fn derived_key(&self, purpose: &str) -> [u8; 32] {
        self.vault.derive(purpose)
    }

    pub fn active_kid(&self) -> String {
        self.current().signer.kid.clone()
    }

    /// The JWKS document, pre-serialised.
    pub fn jwks_json(&self) -> Arc<str> {
        self.current().jwks.clone()
    }

    pub fn sign<T: Serialize>(&self, typ: &str, claims: &T) -> anyhow::Result<String> {
        let signer = self.current().signer.clone();
        signer.sign_jwt(typ, claims)
    }

    /// Verify a JWS signed by one of our published keys and decode its claims. `typ`, when
    /// given, must match the header's (RFC 9068 §4 asks resource servers to check `at+jwt`).
    pub fn verify<T: DeserializeOwned>(
        &self,
        token: &str,
        typ: Option<&str>,
        validation: &Validation,
    ) -> Result<TokenData<T>, VerifyError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| VerifyError::Malformed)?;
        if header.alg != jsonwebtoken::Algorithm::RS256 {
            return Err(VerifyError::Malformed);
        }
        if let Some(expected) = typ {
            let actual = header.typ.as_deref().unwrap_or("");
            // RFC 9068 §4: "application/at+jwt" and "at+jwt" are the same media type.
            if !actual.trim_start_matches("application/").eq_ignore_ascii_case(expected) {
                return Err(VerifyError::Malformed);
            }
        }
        let kid = header.kid.ok_or(VerifyError::UnknownKey)?;
        let set = self.current();
        let key = set.verifiers.get(&kid).ok_or(VerifyError::UnknownKey)?;
        jsonwebtoken::decode::<T>(token, key, validation).map_err(|e| VerifyError::Invalid(e.into_kind()))
    }

    /// Re-read the key set from the database (the cache refresh).
    pub fn refresh(&self) -> anyhow::Result<()> {
        let conn = crate::db::open_reader(&self.data_dir)?;
        crate::metrics::METRICS.db_reads.inc();
        promote_due(&conn, self.publish_delay)?;
        let set = load_key_set(&conn, &self.vault, self.retired_visibility)?;
        *self.cache.write() = Arc::new(set);
        Ok(())
    }
}

fn ensure_active_key(conn: &Connection, vault: &Vault) -> anyhow::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> anyhow::Result<()> {
        let active: i64 =
            conn.query_row("SELECT COUNT(*) FROM signing_keys WHERE state = 'active'", [], |r| r.get(0))?;
        if active == 0 {
            let (key, pkcs8) = SigningKey::generate()?;
            let t = now() as i64;
            conn.execute(
                "INSERT INTO signing_keys (kid, alg, state, private_key, public_jwk, created_at, activated_at)
                 VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?5)",
                (&key.kid, ALG_RS256, vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string(), t),
            )?;
            tracing::info!(kid = %key.kid, "generated signing key");
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(())
}

/// Finish a rotation whose new key has been published long enough: it becomes `active`, the
/// previous active key `retired` (still published until its tokens have expired). One
/// transaction, so two processes doing this at once promote once.
fn promote_due(conn: &Connection, publish_delay: u64) -> anyhow::Result<()> {
    let t = now() as i64;
    let cutoff = t - publish_delay as i64;
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> rusqlite::Result<()> {
        let due: Option<String> = conn
            .query_row(
                "SELECT kid FROM signing_keys WHERE state = 'next' AND created_at <= ?1 ORDER BY created_at DESC LIMIT 1",
                [cutoff],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(kid) = due {
            conn.execute("UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE state = 'active'", [t])?;
            conn.execute("UPDATE signing_keys SET state = 'active', activated_at = ?1 WHERE kid = ?2", (t, &kid))?;
            // Older pending keys (two rotations started back to back) retire with it.
            conn.execute("UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE state = 'next' AND created_at <= ?2", (t, cutoff))?;
            tracing::info!(%kid, "rotation finished: key is now signing");
        }
        Ok(())
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
    }
    Ok(())
}

fn load_key_set(conn: &Connection, vault: &Vault, retired_visibility: u64) -> anyhow::Result<KeySet> {
    let mut stmt = conn.prepare(
        "SELECT kid, state, private_key, public_jwk FROM signing_keys
         WHERE state IN ('next', 'active') OR (state = 'retired' AND retired_at > ?1)
         ORDER BY activated_at DESC",
    )?;
    let cutoff = now().saturating_sub(retired_visibility) as i64;
    let rows = stmt.query_map([cutoff], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Vec<u8>>(2)?, r.get::<_, String>(3)?))
    })?;
    let mut signer = None;
    let mut verifiers = HashMap::new();
    let mut published = Vec::new();
    for row in rows {
        let (kid, state, sealed, public_jwk) = row?;
        let jwk_value: serde_json::Value = serde_json::from_str(&public_jwk)?;
        let jwk: Jwk = serde_json::from_value(jwk_value.clone())?;
        verifiers.insert(kid.clone(), DecodingKey::from_jwk(&jwk)?);
        published.push(jwk_value);
        if state == "active" && signer.is_none() {
            let key = SigningKey::from_pkcs8(&vault.open_sealed(&kid, &sealed)?)?;
            if key.kid != kid {
                anyhow::bail!("signing key {kid} does not match its stored thumbprint");
            }
            signer = Some(Arc::new(key));
        }
    }
    let signer = signer.ok_or_else(|| anyhow::anyhow!("no active signing key"))?;
    let jwks = serde_json::json!({ "keys": published }).to_string();
    Ok(KeySet { signer, verifiers, jwks: Arc::from(jwks) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_start_generates_one_key_and_later_starts_reuse_it() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let km = KeyManager::init(&conn, dir.path(), None, 3600, 600).unwrap();
        let kid = km.active_kid();
        let again = KeyManager::init(&conn, dir.path(), None, 3600, 600).unwrap();
        assert_eq!(again.active_kid(), kid);
        let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);
        assert_eq!(jwks["keys"][0]["kid"], kid.as_str());
        assert!(jwks["keys"][0].get("d").is_none(), "private part published");
    }

    #[test]
    fn a_rotated_key_is_published_before_it_signs_and_the_old_one_stays_published() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let km = KeyManager::init(&conn, dir.path(), None, 3600, 2).unwrap();
        let old = km.active_kid();
        let mut v = Validation::new(jsonwebtoken::Algorithm::RS256);
        v.validate_aud = false;
        v.set_required_spec_claims(&["exp"]);
        let before = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
        let new = KeyManager::rotate(&conn, dir.path(), None).unwrap();
        km.refresh().unwrap();
        let kids = |km: &KeyManager| -> Vec<String> {
            let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
            jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect()
        };
        assert!(kids(&km).contains(&new), "published at once");
        assert_eq!(km.active_kid(), old, "but not signing yet");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        km.refresh().unwrap();
        assert_eq!(km.active_kid(), new, "signing after the publish delay");
        assert!(kids(&km).contains(&old), "the retired key stays published");
        assert!(km.verify::<serde_json::Value>(&before, None, &v).is_ok(), "tokens of the old key still verify");
        let after = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
        assert_eq!(jsonwebtoken::decode_header(&after).unwrap().kid.as_deref(), Some(new.as_str()));
    }

    #[test]
    fn verify_checks_kid_typ_and_signature() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let km = KeyManager::init(&conn, dir.path(), None, 3600, 600).unwrap();
        let claims = serde_json::json!({"sub": "u", "exp": now() + 60, "iss": "me"});
        let token = km.sign("at+jwt", &claims).unwrap();
        let mut v = Validation::new(jsonwebtoken::Algorithm::RS256);
        v.set_issuer(&["me"]);
        v.validate_aud = false;
        assert!(km.verify::<serde_json::Value>(&token, Some("at+jwt"), &v).is_ok());
        assert_eq!(km.verify::<serde_json::Value>(&token, Some("JWT"), &v).unwrap_err(), VerifyError::Malformed);
        assert_eq!(km.verify::<serde_json::Value>("a.b.c", None, &v).unwrap_err(), VerifyError::Malformed);
        // The same claims signed by a key we do not publish.
        let (stranger, _) = SigningKey::generate().unwrap();
        let forged = stranger.sign_jwt("at+jwt", &claims).unwrap();
        assert_eq!(km.verify::<serde_json::Value>(&forged, None, &v).unwrap_err(), VerifyError::UnknownKey);
        v.set_issuer(&["someone-else"]);
        assert!(matches!(km.verify::<serde_json::Value>(&token, None, &v), Err(VerifyError::Invalid(_))));
    }
}
