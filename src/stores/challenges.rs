//! ChallengeStore: one-time values that tie a form post to the page that rendered it (login,
//! consent). A challenge is consumed once; a replayed or forged form finds nothing.

use super::shard::{mint_prefixed, parse_prefixed, route};
use super::table::{ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChallengeRecord {
    /// What the challenge is for ("login", "consent"); a challenge of one kind never serves another.
    pub kind: String,
    /// SHA-256 of what the post must also present (the browser cookie, the session id).
    pub binding: [u8; 32],
    /// The state the form continues (for example, the pending authorization request).
    pub payload: serde_json::Value,
}

impl ChallengeRecord {
    /// What `first_use` stores: the value's hash is the key; nothing else is needed.
    pub fn used_marker() -> Self {
        Self { kind: "used".into(), binding: [0; 32], payload: serde_json::Value::Null }
    }
}

#[async_trait]
pub trait ChallengeStore: Send + Sync {
    async fn issue(&self, tenant: TenantId, record: ChallengeRecord, ttl: u64) -> StoreResult<String>;
    /// Take the challenge if it exists, is unexpired and is of `kind`. Consumed either way.
    async fn consume(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>>;
    /// Read the challenge if it exists, is unexpired and is of `kind`, leaving it in place.
    async fn peek(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>>;
    /// Mark `value` (a value we are handed, such as a client assertion's `jti`) used until
    /// `expires_at`. `true` the first time; `false` while an earlier use is unexpired.
    async fn first_use(&self, tenant: TenantId, value: &str, expires_at: u64) -> StoreResult<bool>;
    /// Whether `value` is marked used (by `first_use`) and the mark unexpired; changes nothing.
    async fn used(&self, tenant: TenantId, value: &str) -> StoreResult<bool>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

pub struct EmbeddedChallengeStore {
    table: ShardedTable<ChallengeRecord>,
}

impl EmbeddedChallengeStore {
    pub fn new(shards: usize, journal: Journal) -> Self {
        Self { table: ShardedTable::new("challenges", shards, journal) }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }
}

#[async_trait]
impl ChallengeStore for EmbeddedChallengeStore {
    async fn issue(&self, tenant: TenantId, record: ChallengeRecord, ttl: u64) -> StoreResult<String> {
        let (shard, id) = mint_prefixed(self.table.shard_count());
        let (_, key) = parse_prefixed(tenant, &id, self.table.shard_count()).expect("minted id parses");
        let mut timer = self.table.timer(shard);
        let expires_at = now() + ttl;
        let mut record = Some(record);
        let ((), at) =
            self.table.update(shard, key, |_| Turn::put((), record.take().expect("a fresh key is never busy"), expires_at)).await?;
        timer.answered_at(at);
        Ok(id)
    }

    async fn consume(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let mut timer = self.table.timer(shard);
        let t = now();
        let (taken, at) = self
            .table
            .update(shard, key, |entry| match entry {
                None => Turn::read(None),
                Some(e) => Turn::delete((e.expires_at > t && e.value.kind == kind).then(|| e.value.clone())),
            })
            .await?;
        timer.answered_at(at);
        Ok(taken)
    }

    async fn peek(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| m.get(&key).filter(|e| e.expires_at > t && e.value.kind == kind).map(|e| e.value.clone())))
    }

    async fn first_use(&self, tenant: TenantId, value: &str, expires_at: u64) -> StoreResult<bool> {
        let (shard, key) = route(tenant, value, self.table.shard_count());
        let mut timer = self.table.timer(shard);
        let t = now();
        let (first, at) = self
            .table
            .update(shard, key, |entry| match entry {
                Some(e) if e.expires_at > t => Turn::read(false),
                _ => Turn::put(true, ChallengeRecord::used_marker(), expires_at),
            })
            .await?;
        timer.answered_at(at);
        Ok(first)
    }

    async fn used(&self, tenant: TenantId, value: &str) -> StoreResult<bool> {
        let (shard, key) = route(tenant, value, self.table.shard_count());
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| m.get(&key).is_some_and(|e| e.expires_at > t)))
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
