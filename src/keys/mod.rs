//! KeyManager: the signing keys, their publication (JWKS), and token signing and verification,
//! answered from a node-side cache so that no request reads the database for a key.
//!
//! Key states follow DESIGN.md §4: `next` (published, not yet signing), `active` (signing),
//! `retired` (published until tokens it signed have expired). The cache is re-read every
//! `key_cache_ttl` seconds by a background task, and at once when another node notifies a
//! change (PostgreSQL); a request never waits on it. `key_publish_delay` > `key_cache_ttl`
//! (checked by the config) is what makes a key published by every node before it signs.

mod signing_key;
mod vault;

pub use signing_key::{rsa_thumbprint, SigningKey, ALG_RS256};
pub use vault::Vault;

use crate::util::now;
use jsonwebtoken::{jwk::Jwk, DecodingKey, TokenData, Validation};
use parking_lot::RwLock;
use crate::db::sql::AppLock;
use crate::db::{Database, Sql, StoreResult};
use serde::{de::DeserializeOwned, Serialize};
use std::collections::HashMap;
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
    db: Database,
    /// Retired keys stay published this long after retirement.
    retired_visibility: u64,
    /// A `next` key signs only after being published this long.
    publish_delay: u64,
    cache: RwLock<Arc<KeySet>>,
}

/// A stored key as read: (kid, state, sealed private key, public JWK).
type KeyRow = (String, String, Vec<u8>, String);

impl KeyManager {
    /// Load the key set, generating the first signing key if there is none. Runs before the
    /// server accepts requests.
    pub async fn init(db: Database, vault: Vault, retired_visibility: u64, publish_delay: u64) -> anyhow::Result<Self> {
        ensure_active_key(&db, &vault).await?;
        let set = build_key_set(&vault, load_key_rows(&db, publish_delay, retired_visibility).await?)?;
        Ok(Self { vault, db, retired_visibility, publish_delay, cache: RwLock::new(Arc::new(set)) })
    }

    /// Start a rotation: a new key, published at once as `next`, signing only after
    /// `publish_delay` (see `promote_due`). Every node is told at commit. Returns its kid.
    pub async fn rotate(db: &Database, vault: &Vault) -> anyhow::Result<String> {
        let (key, pkcs8) = SigningKey::generate()?;
        let (kid, sealed, jwk) = (key.kid.clone(), vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string());
        db.write(move |sql| {
            sql.execute(
                "INSERT INTO signing_keys (kid, alg, state, private_key, public_jwk, created_at) VALUES (?1, ?2, 'next', ?3, ?4, ?5)",
                crate::params![&kid, ALG_RS256, sealed, jwk, now() as i64],
            )?;
            crate::db::notify(sql, crate::db::postgres::CHANNEL_KEYS, &kid)
        })
        .await?;
        tracing::info!(kid = %key.kid, "rotation started: new key published");
        Ok(key.kid)
    }

    /// The vault that seals keys (and `client_secret_jwt` secrets) at rest.
    pub fn vault(&self) -> &Vault {
        &self.vault
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

    /// Re-read the key set from the database (the cache refresh), promoting a due key first.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let rows = load_key_rows(&self.db, self.publish_delay, self.retired_visibility).await?;
        *self.cache.write() = Arc::new(build_key_set(&self.vault, rows)?);
        Ok(())
    }
}

async fn ensure_active_key(db: &Database, vault: &Vault) -> anyhow::Result<()> {
    let count = "SELECT COUNT(*) FROM signing_keys WHERE state = 'active'";
    if db.read(move |sql| sql.query(count, &[])?[0].i64(0)).await? > 0 {
        return Ok(());
    }
    // Generated outside the transaction (it takes a while); inserted only if no other node
    // or process got there first, which the lock makes a clean decision.
    let (key, pkcs8) = SigningKey::generate()?;
    let (kid, sealed, jwk) = (key.kid.clone(), vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string());
    let inserted = db
        .write(move |sql| {
            sql.lock_exclusive(AppLock::SigningKeys)?;
            if sql.query(count, &[])?[0].i64(0)? > 0 {
                return Ok(false);
            }
            let t = now() as i64;
            sql.execute(
                "INSERT INTO signing_keys (kid, alg, state, private_key, public_jwk, created_at, activated_at)
                 VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?5)",
                crate::params![&kid, ALG_RS256, sealed, jwk, t],
            )?;
            Ok(true)
        })
        .await?;
    if inserted {
        tracing::info!(kid = %key.kid, "generated signing key");
    }
    Ok(())
}

/// Finish a rotation whose new key has been published long enough: it becomes `active`, the
/// previous active key `retired` (still published until its tokens have expired). One
/// transaction under the key lock, so nodes doing this at once promote once.
const DUE_SQL: &str = "SELECT kid FROM signing_keys WHERE state = 'next' AND created_at <= ?1 ORDER BY created_at DESC LIMIT 1";

fn promote_due(sql: &mut dyn Sql, publish_delay: u64) -> StoreResult<()> {
    let t = now() as i64;
    let cutoff = t - publish_delay as i64;
    sql.lock_exclusive(AppLock::SigningKeys)?;
    // Again under the lock: another node may have promoted it meanwhile.
    let Some(row) = sql.query_opt(DUE_SQL, crate::params![cutoff])? else { return Ok(()) };
    let kid = row.text(0)?;
    sql.execute("UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE state = 'active'", crate::params![t])?;
    sql.execute("UPDATE signing_keys SET state = 'active', activated_at = ?1 WHERE kid = ?2", crate::params![t, &kid])?;
    // Older pending keys (two rotations started back to back) retire with it.
    sql.execute(
        "UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE state = 'next' AND created_at <= ?2",
        crate::params![t, cutoff],
    )?;
    crate::db::notify(sql, crate::db::postgres::CHANNEL_KEYS, &kid)?;
    tracing::info!(%kid, "rotation finished: key is now signing");
    Ok(())
}

async fn load_key_rows(db: &Database, publish_delay: u64, retired_visibility: u64) -> StoreResult<Vec<KeyRow>> {
    // A write transaction (a commit, an fsync on SQLite) only when a rotation is due.
    let cutoff = now() as i64 - publish_delay as i64;
    if db.read(move |sql| sql.query_opt(DUE_SQL, crate::params![cutoff])).await?.is_some() {
        db.write(move |sql| promote_due(sql, publish_delay)).await?;
    }
    let cutoff = now().saturating_sub(retired_visibility) as i64;
    db.read(move |sql| {
        let rows = sql.query(
            "SELECT kid, state, private_key, public_jwk FROM signing_keys
             WHERE state IN ('next', 'active') OR (state = 'retired' AND retired_at > ?1)
             ORDER BY activated_at DESC",
            crate::params![cutoff],
        )?;
        rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?, r.blob(2)?, r.text(3)?))).collect()
    })
    .await
}

fn build_key_set(vault: &Vault, rows: Vec<KeyRow>) -> anyhow::Result<KeySet> {
    let mut signer = None;
    let mut verifiers = HashMap::new();
    let mut published = Vec::new();
    for (kid, state, sealed, public_jwk) in rows {
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

    async fn open(dir: &std::path::Path, publish_delay: u64) -> (Database, KeyManager) {
        let config = crate::config::Config { data_dir: dir.into(), ..Default::default() };
        let db = Database::open(&config).await.unwrap();
        let km = KeyManager::init(db.clone(), Vault::open(None, dir).unwrap(), 3600, publish_delay).await.unwrap();
        (db, km)
    }

    #[tokio::test]
    async fn first_start_generates_one_key_and_later_starts_reuse_it() {
        let dir = tempfile::tempdir().unwrap();
        let (db, km) = open(dir.path(), 600).await;
        let kid = km.active_kid();
        let again = KeyManager::init(db, Vault::open(None, dir.path()).unwrap(), 3600, 600).await.unwrap();
        assert_eq!(again.active_kid(), kid);
        let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 1);
        assert_eq!(jwks["keys"][0]["kid"], kid.as_str());
        assert!(jwks["keys"][0].get("d").is_none(), "private part published");
    }

    #[tokio::test]
    async fn a_rotated_key_is_published_before_it_signs_and_the_old_one_stays_published() {
        let dir = tempfile::tempdir().unwrap();
        let (db, km) = open(dir.path(), 2).await;
        let old = km.active_kid();
        let mut v = Validation::new(jsonwebtoken::Algorithm::RS256);
        v.validate_aud = false;
        v.set_required_spec_claims(&["exp"]);
        let before = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
        let new = KeyManager::rotate(&db, &Vault::open(None, dir.path()).unwrap()).await.unwrap();
        km.refresh().await.unwrap();
        let kids = |km: &KeyManager| -> Vec<String> {
            let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
            jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect()
        };
        assert!(kids(&km).contains(&new), "published at once");
        assert_eq!(km.active_kid(), old, "but not signing yet");
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        km.refresh().await.unwrap();
        assert_eq!(km.active_kid(), new, "signing after the publish delay");
        assert!(kids(&km).contains(&old), "the retired key stays published");
        assert!(km.verify::<serde_json::Value>(&before, None, &v).is_ok(), "tokens of the old key still verify");
        let after = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
        assert_eq!(jsonwebtoken::decode_header(&after).unwrap().kid.as_deref(), Some(new.as_str()));
    }

    #[tokio::test]
    async fn verify_checks_kid_typ_and_signature() {
        let dir = tempfile::tempdir().unwrap();
        let (_db, km) = open(dir.path(), 600).await;
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
