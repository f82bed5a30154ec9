//! KeyManager: the signing keys, their publication (JWKS), and token signing and verification,
//! answered from a node-side cache so that no request reads the database for a key.
//!
//! Key states follow the reference design: `next` (published, not yet signing), `active` (signing),
//! `retired` (published until tokens it signed have expired). The cache is re-read every
//! `key_cache_ttl` seconds by a background task, and at once when another node notifies a
//! change (PostgreSQL); a request never waits on it. `key_publish_delay` > `key_cache_ttl`
//! (checked by the config) is what makes a key published by every node before it signs.

pub mod jwe;
mod signing_key;
mod vault;

pub use signing_key::{rsa_thumbprint, signing_alg, SigningKey, ALG_RS256, SIGNING_ALGS};
pub use vault::Vault;

use crate::tenant::TenantId;
use crate::util::now;
use jsonwebtoken::{jwk::Jwk, DecodingKey, TokenData, Validation};
use parking_lot::RwLock;
use crate::db::sql::AppLock;
use crate::db::{Database, Sql, StoreResult};
use serde::{de::DeserializeOwned, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

pub struct KeySet {
    /// The active key of each algorithm.
    signers: HashMap<&'static str, Arc<SigningKey>>,
    /// Every published key, by kid, with the one algorithm it verifies.
    verifiers: HashMap<String, (jsonwebtoken::Algorithm, DecodingKey)>,
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
    vault: Arc<Vault>,
    db: Database,
    /// Whose keys these are.
    tenant: TenantId,
    /// Retired keys stay published this long after retirement.
    retired_visibility: u64,
    /// A `next` key signs only after being published this long.
    publish_delay: u64,
    cache: RwLock<Arc<KeySet>>,
    /// The algorithms we keep an active key for (`signing_algorithms`).
    algs: Vec<&'static str>,
    /// What tokens are signed with unless a client asks otherwise (`token_signing_alg`).
    default_alg: &'static str,
}

/// A stored key as read: (kid, alg, state, sealed private key, public JWK).
type KeyRow = (String, String, String, Vec<u8>, String);

impl KeyManager {
    /// Load the key set, generating the first signing key of each of `algs` that has none.
    /// Runs before the server accepts requests. `default_alg` (one of `algs`) signs tokens
    /// whose client asks for nothing else.
    pub async fn init(db: Database, vault: Arc<Vault>, retired_visibility: u64, publish_delay: u64) -> anyhow::Result<Self> {
        Self::init_with(db, vault, TenantId::DEFAULT, retired_visibility, publish_delay, &[ALG_RS256], ALG_RS256).await
    }

    /// `tenant`'s key set: its keys only are loaded, generated, rotated and published.
    pub async fn init_with(
        db: Database,
        vault: Arc<Vault>,
        tenant: TenantId,
        retired_visibility: u64,
        publish_delay: u64,
        algs: &[&'static str],
        default_alg: &'static str,
    ) -> anyhow::Result<Self> {
        for alg in algs {
            ensure_active_key(&db, &vault, tenant, alg).await?;
        }
        let set = build_key_set(&vault, load_key_rows(&db, tenant, publish_delay, retired_visibility).await?)?;
        if !set.signers.contains_key(default_alg) {
            anyhow::bail!("no active {default_alg} key");
        }
        Ok(Self { vault, db, tenant, retired_visibility, publish_delay, cache: RwLock::new(Arc::new(set)), algs: algs.to_vec(), default_alg })
    }

    /// The algorithms tokens can be signed with here.
    pub fn algorithms(&self) -> &[&'static str] {
        &self.algs
    }

    /// Start a rotation of the RS256 key (see `rotate_alg`).
    pub async fn rotate(db: &Database, vault: &Vault) -> anyhow::Result<String> {
        Self::rotate_alg(db, vault, TenantId::DEFAULT, ALG_RS256).await
    }

    /// Start a rotation of the `alg` key: a new key, published at once as `next`, signing only
    /// after `publish_delay` (see `promote_due`). Every node is told at commit. Returns its kid.
    pub async fn rotate_alg(db: &Database, vault: &Vault, tenant: TenantId, alg: &str) -> anyhow::Result<String> {
        let alg = signing_alg(alg).ok_or_else(|| anyhow::anyhow!("cannot sign with {alg}; supported: {}", SIGNING_ALGS.join(", ")))?;
        let (key, pkcs8) = SigningKey::generate_for(alg)?;
        let (kid, sealed, jwk) = (key.kid.clone(), vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string());
        db.write(move |sql| {
            sql.execute(
                "INSERT INTO signing_keys (tenant_id, kid, alg, state, private_key, public_jwk, created_at) VALUES (?6, ?1, ?2, 'next', ?3, ?4, ?5)",
                crate::params![&kid, alg, sealed, jwk, now() as i64, tenant],
            )?;
            crate::db::notify(sql, crate::db::postgres::CHANNEL_KEYS, &kid)
        })
        .await?;
        tracing::info!(kid = %key.kid, "rotation started: new key published");
        Ok(key.kid)
    }

    fn current(&self) -> Arc<KeySet> {
        self.cache.read().clone()
    }

    /// The kid of the default algorithm's active key.
    pub fn active_kid(&self) -> String {
        self.current().signers[self.default_alg].kid.clone()
    }

    /// The kid of `alg`'s active key, if there is one.
    pub fn active_kid_for(&self, alg: &str) -> Option<String> {
        self.current().signers.get(alg).map(|k| k.kid.clone())
    }

    /// The JWKS document, pre-serialised.
    pub fn jwks_json(&self) -> Arc<str> {
        self.current().jwks.clone()
    }

    /// Sign with the default algorithm's active key.
    pub fn sign<T: Serialize>(&self, typ: &str, claims: &T) -> anyhow::Result<String> {
        self.sign_as(self.default_alg, typ, claims)
    }

    /// Sign with `alg`'s active key (a client's registered algorithm).
    pub fn sign_as<T: Serialize>(&self, alg: &str, typ: &str, claims: &T) -> anyhow::Result<String> {
        let signer = self.current().signers.get(alg).cloned().ok_or_else(|| anyhow::anyhow!("no active {alg} signing key"))?;
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
        if let Some(expected) = typ {
            let actual = header.typ.as_deref().unwrap_or("");
            // RFC 9068 §4: "application/at+jwt" and "at+jwt" are the same media type.
            if !actual.trim_start_matches("application/").eq_ignore_ascii_case(expected) {
                return Err(VerifyError::Malformed);
            }
        }
        let kid = header.kid.ok_or(VerifyError::UnknownKey)?;
        let set = self.current();
        let (alg, key) = set.verifiers.get(&kid).ok_or(VerifyError::UnknownKey)?;
        // The key's own algorithm, and no other (no algorithm confusion across key types).
        if header.alg != *alg {
            return Err(VerifyError::Malformed);
        }
        let decoded = if validation.algorithms == [*alg] {
            jsonwebtoken::decode::<T>(token, key, validation)
        } else {
            let mut v = validation.clone();
            v.algorithms = vec![*alg];
            jsonwebtoken::decode::<T>(token, key, &v)
        };
        decoded.map_err(|e| VerifyError::Invalid(e.into_kind()))
    }

    /// Re-read the key set from the database (the cache refresh), promoting a due key first.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let rows = load_key_rows(&self.db, self.tenant, self.publish_delay, self.retired_visibility).await?;
        *self.cache.write() = Arc::new(build_key_set(&self.vault, rows)?);
        Ok(())
    }
}

async fn ensure_active_key(db: &Database, vault: &Vault, tenant: TenantId, alg: &'static str) -> anyhow::Result<()> {
    let count = "SELECT COUNT(*) FROM signing_keys WHERE tenant_id = ?1 AND state = 'active' AND alg = ?2";
    if db.read(move |sql| sql.query(count, crate::params![tenant, alg])?[0].i64(0)).await? > 0 {
        return Ok(());
    }
    // Generated outside the transaction (it takes a while); inserted only if no other node
    // or process got there first, which the lock makes a clean decision.
    // Off the runtime's workers: an RSA key takes from tens of milliseconds to seconds.
    let (key, pkcs8) = tokio::task::spawn_blocking(move || SigningKey::generate_for(alg)).await??;
    let (kid, sealed, jwk) = (key.kid.clone(), vault.seal(&key.kid, &pkcs8), key.public_jwk.to_string());
    let inserted = db
        .write(move |sql| {
            sql.lock_exclusive(AppLock::SigningKeys)?;
            if sql.query(count, crate::params![tenant, alg])?[0].i64(0)? > 0 {
                return Ok(false);
            }
            let t = now() as i64;
            sql.execute(
                "INSERT INTO signing_keys (tenant_id, kid, alg, state, private_key, public_jwk, created_at, activated_at)
                 VALUES (?6, ?1, ?2, 'active', ?3, ?4, ?5, ?5)",
                crate::params![&kid, alg, sealed, jwk, t, tenant],
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
const DUE_SQL: &str = "SELECT kid, alg FROM signing_keys WHERE tenant_id = ?2 AND state = 'next' AND created_at <= ?1 ORDER BY created_at DESC LIMIT 1";

/// Each algorithm rotates on its own: promoting a key retires the active key of its algorithm
/// only. Repeated until no key is due (rotations of several algorithms at once).
fn promote_due(sql: &mut dyn Sql, tenant: TenantId, publish_delay: u64) -> StoreResult<()> {
    let t = now() as i64;
    let cutoff = t - publish_delay as i64;
    sql.lock_exclusive(AppLock::SigningKeys)?;
    // Again under the lock: another node may have promoted it meanwhile.
    while let Some(row) = sql.query_opt(DUE_SQL, crate::params![cutoff, tenant])? {
        let (kid, alg) = (row.text(0)?, row.text(1)?);
        sql.execute(
            "UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE tenant_id = ?3 AND state = 'active' AND alg = ?2",
            crate::params![t, &alg, tenant],
        )?;
        sql.execute("UPDATE signing_keys SET state = 'active', activated_at = ?1 WHERE tenant_id = ?3 AND kid = ?2", crate::params![t, &kid, tenant])?;
        // Older pending keys of the algorithm (two rotations started back to back) retire with it.
        sql.execute(
            "UPDATE signing_keys SET state = 'retired', retired_at = ?1 WHERE tenant_id = ?4 AND state = 'next' AND alg = ?2 AND created_at <= ?3",
            crate::params![t, &alg, cutoff, tenant],
        )?;
        crate::db::notify(sql, crate::db::postgres::CHANNEL_KEYS, &kid)?;
        tracing::info!(%kid, %alg, "rotation finished: key is now signing");
    }
    Ok(())
}

async fn load_key_rows(db: &Database, tenant: TenantId, publish_delay: u64, retired_visibility: u64) -> StoreResult<Vec<KeyRow>> {
    // A write transaction (a commit, an fsync on SQLite) only when a rotation is due.
    let cutoff = now() as i64 - publish_delay as i64;
    if db.read(move |sql| sql.query_opt(DUE_SQL, crate::params![cutoff, tenant])).await?.is_some() {
        db.write(move |sql| promote_due(sql, tenant, publish_delay)).await?;
    }
    let cutoff = now().saturating_sub(retired_visibility) as i64;
    db.read(move |sql| {
        let rows = sql.query(
            "SELECT kid, alg, state, private_key, public_jwk FROM signing_keys
             WHERE tenant_id = ?2 AND (state IN ('next', 'active') OR (state = 'retired' AND retired_at > ?1))
             ORDER BY activated_at DESC",
            crate::params![cutoff, tenant],
        )?;
        rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?, r.text(2)?, r.blob(3)?, r.text(4)?))).collect()
    })
    .await
}

fn build_key_set(vault: &Vault, rows: Vec<KeyRow>) -> anyhow::Result<KeySet> {
    let mut signers = HashMap::new();
    let mut verifiers = HashMap::new();
    let mut published = Vec::new();
    for (kid, alg, state, sealed, public_jwk) in rows {
        let alg = signing_alg(&alg).ok_or_else(|| anyhow::anyhow!("signing key {kid} has an unknown algorithm {alg}"))?;
        let jwk_value: serde_json::Value = serde_json::from_str(&public_jwk)?;
        let jwk: Jwk = serde_json::from_value(jwk_value.clone())?;
        verifiers.insert(kid.clone(), (alg.parse()?, DecodingKey::from_jwk(&jwk)?));
        published.push(jwk_value);
        // Rows come newest activation first: the first active key of an algorithm signs.
        if state == "active" && !signers.contains_key(alg) {
            let key = SigningKey::from_pkcs8_for(alg, &vault.open_sealed(&kid, &sealed)?)?;
            if key.kid != kid {
                anyhow::bail!("signing key {kid} does not match its stored thumbprint");
            }
            signers.insert(alg, Arc::new(key));
        }
    }
    if signers.is_empty() {
        anyhow::bail!("no active signing key");
    }
    let jwks = serde_json::json!({ "keys": published }).to_string();
    Ok(KeySet { signers, verifiers, jwks: Arc::from(jwks) })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn open(dir: &std::path::Path, publish_delay: u64) -> (Database, KeyManager) {
        let config = crate::config::Config { data_dir: dir.into(), ..Default::default() };
        let db = Database::open(&config).await.unwrap();
        let km = KeyManager::init(db.clone(), Vault::open(None, dir).unwrap().into(), 3600, publish_delay).await.unwrap();
        (db, km)
    }

    #[tokio::test]
    async fn first_start_generates_one_key_and_later_starts_reuse_it() {
        let dir = tempfile::tempdir().unwrap();
        let (db, km) = open(dir.path(), 600).await;
        let kid = km.active_kid();
        let again = KeyManager::init(db, Vault::open(None, dir.path()).unwrap().into(), 3600, 600).await.unwrap();
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
    async fn each_algorithm_rotates_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config { data_dir: dir.path().into(), ..Default::default() };
        let db = Database::open(&config).await.unwrap();
        let vault = || Arc::new(Vault::open(None, dir.path()).unwrap());
        let km = KeyManager::init_with(db.clone(), vault(), TenantId::DEFAULT, 3600, 2, &["RS256", "ES256", "EdDSA"], "ES256").await.unwrap();
        let (rs, es, ed) = (km.active_kid_for("RS256").unwrap(), km.active_kid_for("ES256").unwrap(), km.active_kid_for("EdDSA").unwrap());
        assert_eq!(km.active_kid(), es, "the default algorithm signs by default");
        let new_es = KeyManager::rotate_alg(&db, &vault(), TenantId::DEFAULT, "ES256").await.unwrap();
        assert!(KeyManager::rotate_alg(&db, &vault(), TenantId::DEFAULT, "HS256").await.is_err());
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        km.refresh().await.unwrap();
        assert_eq!(km.active_kid_for("ES256"), Some(new_es), "the rotated algorithm moved on");
        assert_eq!((km.active_kid_for("RS256"), km.active_kid_for("EdDSA")), (Some(rs), Some(ed)), "the others did not");
        let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
        let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
        assert!(kids.contains(&es.as_str()), "the retired ES256 key stays published");
        // Restarting with the same list keeps every key; a new algorithm gets its first key.
        let again = KeyManager::init_with(db, vault(), TenantId::DEFAULT, 3600, 2, &["RS256", "ES256", "EdDSA", "PS256"], "RS256").await.unwrap();
        assert_eq!(again.active_kid_for("ES256"), km.active_kid_for("ES256"));
        assert!(again.active_kid_for("PS256").is_some());
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
