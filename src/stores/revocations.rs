//! TokenRevocationStore: revoked access-token ids, each kept until the token would have
//! expired anyway. Sharded by SHA-256 of the `jti`.

use super::shard::hash_shard;
use super::table::{Entry, ShardedTable};
use crate::db::{Journal, StoreResult};
use crate::util::{now, sha256};
use async_trait::async_trait;

#[async_trait]
pub trait TokenRevocationStore: Send + Sync {
    async fn revoke(&self, jti: &str, expires_at: u64) -> StoreResult<()>;
    async fn is_revoked(&self, jti: &str) -> StoreResult<bool>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

pub struct EmbeddedRevocationStore {
    table: ShardedTable<()>,
}

impl EmbeddedRevocationStore {
    pub fn new(shards: usize, journal: Journal) -> Self {
        Self { table: ShardedTable::new("revoked_tokens", shards, journal) }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }
}

#[async_trait]
impl TokenRevocationStore for EmbeddedRevocationStore {
    async fn revoke(&self, jti: &str, expires_at: u64) -> StoreResult<()> {
        if expires_at <= now() {
            return Ok(()); // an expired token needs no entry: it is refused anyway
        }
        let shard = hash_shard(jti.as_bytes(), self.table.shard_count());
        let _timer = self.table.timer(shard);
        let key = sha256(jti.as_bytes());
        self.table.persist(shard, key, &(), expires_at).await?;
        self.table.with_shard(shard, |m| m.insert(key, Entry { value: (), expires_at }));
        Ok(())
    }

    async fn is_revoked(&self, jti: &str) -> StoreResult<bool> {
        let shard = hash_shard(jti.as_bytes(), self.table.shard_count());
        let _timer = self.table.timer(shard);
        let key = sha256(jti.as_bytes());
        Ok(self.table.with_shard(shard, |m| m.contains_key(&key)))
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
