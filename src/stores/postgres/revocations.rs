//! TokenRevocationStore on PostgreSQL. Checking a token must stay a memory lookup (userinfo
//! and introspection run at tens of thousands of requests per second), so every node keeps
//! the whole revocation list in memory: a revocation is written to the database and, in the
//! same statement, announced by NOTIFY; other nodes add it when the notification arrives.
//!
//! The bound: a node answers `is_revoked` only while `Freshness` says it has handled every
//! notification committed more than `revocation_max_staleness_ms` ago; otherwise it answers
//! "unavailable" (503). So a revocation acknowledged at `t` is honoured by every node from
//! `t + max_staleness` at the latest; in practice within the notification latency.

use super::{col, PgTable};
use crate::db::postgres::{Freshness, PgDb};
use crate::db::{StoreError, StoreResult};
use crate::stores::revocations::{route, TokenRevocationStore};
use crate::stores::shard::key_shard;
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

type Key = [u8; 32];

pub struct PgRevocationStore {
    table: PgTable,
    /// jti hash → expiry, one map per shard.
    cache: Vec<Mutex<HashMap<Key, u64>>>,
    freshness: Arc<Freshness>,
}

impl PgRevocationStore {
    pub fn new(db: PgDb, shards: usize, freshness: Arc<Freshness>) -> Self {
        let cache = (0..shards).map(|_| Mutex::new(HashMap::new())).collect();
        Self { table: PgTable::new(db, "revoked_tokens", "TokenRevocationStore", shards), cache, freshness }
    }

    fn remember(&self, key: Key, expires_at: u64) {
        // The same routing as `shard::route` of the jti.
        let shard = key_shard(&key, self.cache.len());
        let mut map = self.cache[shard].lock();
        let e = map.entry(key).or_insert(expires_at);
        *e = (*e).max(expires_at);
    }

    /// A notification `hex(hash):expires_at` from any node.
    pub fn apply_notification(&self, payload: &str) {
        let Some((hex, exp)) = payload.split_once(':') else { return };
        let (Some(key), Ok(exp)) = (decode_hex(hex), exp.parse::<u64>()) else {
            tracing::warn!(payload, "unreadable revocation notification");
            return;
        };
        self.remember(key, exp);
    }

    /// Add every unexpired revocation in the database (after a (re)connect of the listener).
    pub async fn resync(&self) -> StoreResult<usize> {
        let rows = self.table.read_all("SELECT hash, expires_at FROM revoked_tokens WHERE expires_at > $1", &[&(now() as i64)]).await?;
        for r in &rows {
            let hash: Vec<u8> = col(r, 0)?;
            if let Ok(key) = Key::try_from(hash.as_slice()) {
                self.remember(key, col::<i64>(r, 1)? as u64);
            }
        }
        Ok(rows.len())
    }
}

fn decode_hex(s: &str) -> Option<Key> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(chunk).ok()?, 16).ok()?;
    }
    Some(out)
}

#[async_trait]
impl TokenRevocationStore for PgRevocationStore {
    async fn revoke(&self, tenant: TenantId, jti: &str, expires_at: u64) -> StoreResult<()> {
        let Some((shard, key)) = route(tenant, jti, expires_at, self.table.shard_count()) else { return Ok(()) };
        let _timer = self.table.timer(shard);
        // One statement: the row and the announcement commit (or fail) together.
        self.table
            .write(
                "WITH stored AS (
                   INSERT INTO revoked_tokens (hash, shard, expires_at) VALUES ($1, $2, $3)
                   ON CONFLICT (hash) DO UPDATE SET expires_at = GREATEST(revoked_tokens.expires_at, EXCLUDED.expires_at)
                   RETURNING hash, expires_at)
                 SELECT pg_notify('authrim_revocations', encode(hash, 'hex') || ':' || expires_at) FROM stored",
                &[&key.as_slice(), &(shard as i32), &(expires_at as i64)],
            )
            .await?;
        self.remember(key, expires_at);
        Ok(())
    }

    async fn is_revoked(&self, tenant: TenantId, jti: &str) -> StoreResult<bool> {
        if !self.freshness.is_fresh() {
            return Err(StoreError::Unavailable("this node cannot vouch for its revocation list (database notifications lagging)".into()));
        }
        let (shard, key) = crate::stores::shard::route(tenant, jti, self.table.shard_count());
        let _timer = self.table.timer(shard);
        Ok(self.cache[shard].lock().contains_key(&key))
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        let t = now();
        for shard in &self.cache {
            shard.lock().retain(|_, exp| *exp > t);
        }
        self.table.sweep(t).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
