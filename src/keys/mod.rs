//! KeyManager: the signing keys, their publication (JWKS), and token signing and verification,
//! answered from a node-side cache so that no request reads the database for a key.
//!
//! Key states follow the reference design: `next` (published, not yet signing), `active` (signing),
//! `retired` (published until tokens it signed have expired). The cache is re-read every
//! `key_cache_ttl` seconds by a background task, and at once when another node notifies a
//! change (PostgreSQL); a request never waits on it. `key_publish_delay` > `key_cache_ttl`
//! (checked by the config) is what makes a key published by every node before it signs.

mod encryption_key;
pub mod jwe;
mod signing_key;
mod vault;

pub use encryption_key::{encryption_alg, EncryptionKey, ENCRYPTION_KEY_ALGS};
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
    /// Every published encryption key (`use: enc`), newest activation first; never verifiers.
    decrypters: Vec<Arc<EncryptionKey>>,
    /// The encryption algs that have an active key.
    active_enc: Vec<&'static str>,
    /// The RS256 keys that sign or are about to (`active`, then `next`): SAML's (issue 33),
    /// whose metadata lists a key's certificate before it signs, as the JWKS does.
    rsa: Vec<(bool, Arc<SigningKey>)>,
    /// The RSA encryption keys (RSA-OAEP-256) with their state: active, then next, then
    /// retired. SAML publishes the first two as certificates and decrypts with all three.
    rsa_enc: Vec<(&'static str, Arc<EncryptionKey>)>,
    jwks: Arc<str>,
}

/// Why a JWE sent to us (an encrypted request object) was not decrypted.
#[derive(Debug, PartialEq, Eq)]
pub enum DecryptError {
    /// Its `kid` names none of our published encryption keys, or none suits its `alg`.
    UnknownKey,
    /// Not a JWE we read, or it does not decrypt (said the same way for any key).
    Jwe(jwe::JweError),
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
        let mut fresh = false;
        for alg in algs {
            fresh |= ensure_active_key(&db, &vault, tenant, alg).await?;
        }
        // A new tenant (or deployment) gets its encryption keys with its signing keys. One
        // that predates them gets them from the first refresh instead (`refresh`), off the
        // start: an RSA key per tenant would make starting 1,000 of them take minutes. A
        // tenant another node has just created counts as new here too (its first key is
        // minutes old): otherwise this node would publish a key set without the encryption
        // keys the creating node is still making, until its next refresh.
        if fresh || just_created(&db, tenant).await? {
            for alg in ENCRYPTION_KEY_ALGS {
                ensure_active_key(&db, &vault, tenant, alg).await?;
            }
        }
        let set = build_key_set(&vault, load_key_rows(&db, tenant, publish_delay, retired_visibility).await?, None)?;
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
    /// An encryption key's alg (`ENCRYPTION_KEY_ALGS`) rotates the same way: the new key is
    /// published at once, clients encrypt to it once it is active, and the old one keeps
    /// decrypting while it stays published.
    pub async fn rotate_alg(db: &Database, vault: &Vault, tenant: TenantId, alg: &str) -> anyhow::Result<String> {
        let alg = key_alg(alg)?;
        let (kid, pkcs8, jwk) = tokio::task::spawn_blocking(move || generate(alg)).await??;
        let (sealed, jwk, id) = (vault.seal(&kid, &pkcs8), jwk.to_string(), kid.clone());
        db.write(move |sql| {
            sql.execute(
                "INSERT INTO signing_keys (tenant_id, kid, alg, state, private_key, public_jwk, created_at) VALUES (?6, ?1, ?2, 'next', ?3, ?4, ?5)",
                crate::params![&kid, alg, sealed, jwk, now() as i64, tenant],
            )?;
            crate::db::notify(sql, crate::db::postgres::CHANNEL_KEYS, &kid)
        })
        .await?;
        tracing::info!(kid = %id, "rotation started: new key published");
        Ok(id)
    }

    fn current(&self) -> Arc<KeySet> {
        self.cache.read().clone()
    }

    /// Decrypt a JWE sent to this tenant: with the published encryption key its `kid` names,
    /// or, without a `kid`, with each key that suits its `alg` in turn (newest first). A
    /// tenant's keys only: another tenant's kid is unknown here.
    pub fn decrypt(&self, compact: &str) -> Result<jwe::Decrypted, DecryptError> {
        let header = jwe::protected_header(compact).map_err(DecryptError::Jwe)?;
        let alg = header.get("alg").and_then(serde_json::Value::as_str).unwrap_or_default();
        let rsa = alg.starts_with("RSA-OAEP");
        let set = self.current();
        let kid = header.get("kid").and_then(serde_json::Value::as_str);
        let candidates = set.decrypters.iter().filter(|k| kid.is_none_or(|kid| k.kid == kid) && (k.alg == "RSA-OAEP-256") == rsa);
        let mut last = DecryptError::UnknownKey;
        for key in candidates {
            let decryptor = key.decryptor(&self.vault).map_err(|e| {
                tracing::error!(kid = %key.kid, error = %e, "cannot open an encryption key");
                DecryptError::UnknownKey
            })?;
            match jwe::decrypt(&decryptor, compact) {
                Ok(d) => return Ok(d),
                Err(e) => last = DecryptError::Jwe(e),
            }
        }
        Err(last)
    }

    /// The kids of the published encryption keys (tests, the console).
    pub fn encryption_kids(&self) -> Vec<(String, &'static str)> {
        self.current().decrypters.iter().map(|k| (k.kid.clone(), k.alg)).collect()
    }

    /// The kid of the default algorithm's active key.
    pub fn active_kid(&self) -> String {
        self.current().signers[self.default_alg].kid.clone()
    }

    /// The kid of `alg`'s active key, if there is one.
    /// The RS256 keys SAML signs with: (whether it signs now, the key), the signing one first.
    pub fn rsa_keys(&self) -> Vec<(bool, Arc<SigningKey>)> {
        self.current().rsa.clone()
    }

    /// The RSA encryption keys with their private keys (PKCS#8): (state, kid, PKCS#8), state
    /// `active`, `next` or `retired`, in that order. For XML Encryption (SAML), which is not
    /// JWE and so not `decrypt`: the caller makes what it publishes (certificates) from them.
    /// A key that does not open is left out (and logged), as `decrypt` would fail it.
    pub fn rsa_encryption_keys(&self) -> Vec<(&'static str, String, Vec<u8>)> {
        let set = self.current();
        set.rsa_enc
            .iter()
            .filter_map(|(state, key)| match key.pkcs8(&self.vault) {
                Ok(pkcs8) => Some((*state, key.kid.clone(), pkcs8)),
                Err(e) => {
                    tracing::error!(kid = %key.kid, error = %e, "cannot open an encryption key");
                    None
                }
            })
            .collect()
    }

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
    /// A tenant made before Authrim had encryption keys gets them here, once.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let previous = self.current();
        let missing: Vec<&'static str> = ENCRYPTION_KEY_ALGS.iter().copied().filter(|alg| !previous.active_enc.contains(alg)).collect();
        for alg in missing {
            ensure_active_key(&self.db, &self.vault, self.tenant, alg).await?;
        }
        let rows = load_key_rows(&self.db, self.tenant, self.publish_delay, self.retired_visibility).await?;
        *self.cache.write() = Arc::new(build_key_set(&self.vault, rows, Some(&previous))?);
        Ok(())
    }
}

/// The `&'static` name of a key's alg: a signing or an encryption one.
fn key_alg(alg: &str) -> anyhow::Result<&'static str> {
    signing_alg(alg).or_else(|| encryption_alg(alg)).ok_or_else(|| {
        anyhow::anyhow!("no key for {alg}; supported: {}, and for encryption {}", SIGNING_ALGS.join(", "), ENCRYPTION_KEY_ALGS.join(", "))
    })
}

/// A fresh key for `alg` (signing or encryption): kid, PKCS#8, public JWK.
fn generate(alg: &'static str) -> anyhow::Result<(String, Vec<u8>, serde_json::Value)> {
    match encryption_alg(alg) {
        Some(alg) => EncryptionKey::generate(alg),
        None => SigningKey::generate_for(alg).map(|(key, pkcs8)| (key.kid, pkcs8, key.public_jwk)),
    }
}

/// How long after its first key a tenant counts as just created (`init_with`).
const JUST_CREATED: u64 = 300;

async fn just_created(db: &Database, tenant: TenantId) -> anyhow::Result<bool> {
    let first = db.read(move |sql| sql.query("SELECT COALESCE(MIN(created_at), 0) FROM signing_keys WHERE tenant_id = ?1", crate::params![tenant])?[0].i64(0)).await?;
    Ok(now().saturating_sub(first.max(0) as u64) < JUST_CREATED)
}

/// `true` if the tenant had no active key of `alg` (generated here, or by another node or
/// process racing this one: either way the tenant is new, and every racer says so alike).
async fn ensure_active_key(db: &Database, vault: &Vault, tenant: TenantId, alg: &'static str) -> anyhow::Result<bool> {
    let count = "SELECT COUNT(*) FROM signing_keys WHERE tenant_id = ?1 AND state = 'active' AND alg = ?2";
    if db.read(move |sql| sql.query(count, crate::params![tenant, alg])?[0].i64(0)).await? > 0 {
        return Ok(false);
    }
    // Generated outside the transaction (it takes a while); inserted only if no other node
    // or process got there first, which the lock makes a clean decision.
    // Off the runtime's workers: an RSA key takes from tens of milliseconds to seconds.
    let (kid, pkcs8, jwk) = tokio::task::spawn_blocking(move || generate(alg)).await??;
    let (sealed, jwk, id) = (vault.seal(&kid, &pkcs8), jwk.to_string(), kid.clone());
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
        tracing::info!(kid = %id, %alg, "generated key");
    }
    Ok(true)
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

/// `previous`: the set this one replaces, whose opened encryption keys are kept.
fn build_key_set(vault: &Vault, rows: Vec<KeyRow>, previous: Option<&KeySet>) -> anyhow::Result<KeySet> {
    let mut signers = HashMap::new();
    let mut verifiers = HashMap::new();
    let mut published = Vec::new();
    let (mut decrypters, mut active_enc, mut enc_published) = (Vec::new(), Vec::new(), Vec::new());
    let mut rsa_enc = Vec::new();
    let mut next_rsa = Vec::new();
    for (kid, alg, state, sealed, public_jwk) in rows {
        if let Some(alg) = encryption_alg(&alg) {
            let kept = previous.and_then(|p| p.decrypters.iter().find(|k| k.kid == kid)).cloned();
            let key = kept.unwrap_or_else(|| Arc::new(EncryptionKey::new(kid, alg, sealed)));
            if alg == "RSA-OAEP-256" {
                let state = match state.as_str() {
                    "active" => "active",
                    "next" => "next",
                    _ => "retired",
                };
                rsa_enc.push((state, key.clone()));
            }
            decrypters.push(key);
            if state == "active" {
                active_enc.push(alg);
            }
            enc_published.push(serde_json::from_str::<serde_json::Value>(&public_jwk)?);
            continue;
        }
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
        } else if state == "next" && alg == ALG_RS256 {
            // Opened once per key, not on every refresh.
            let kept = previous.and_then(|p| p.rsa.iter().find(|(_, k)| k.kid == kid)).map(|(_, k)| k.clone());
            let key = match kept {
                Some(k) => k,
                None => Arc::new(SigningKey::from_pkcs8_for(alg, &vault.open_sealed(&kid, &sealed)?)?),
            };
            next_rsa.push((false, key));
        }
    }
    let rsa = signers.get(ALG_RS256).map(|k| (true, k.clone())).into_iter().chain(next_rsa).collect();
    // A stable sort: within a state, newest activation first as the rows came.
    rsa_enc.sort_by_key(|(state, _)| ["active", "next", "retired"].iter().position(|s| s == state));
    if signers.is_empty() {
        anyhow::bail!("no active signing key");
    }
    // Signing keys first, so that a JWKS of one signing key starts with it, as it always did.
    published.extend(enc_published);
    let jwks = serde_json::json!({ "keys": published }).to_string();
    Ok(KeySet { signers, verifiers, decrypters, active_enc, rsa, rsa_enc, jwks: Arc::from(jwks) })
}

#[cfg(test)]
mod tests;
