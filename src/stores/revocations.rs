//! TokenRevocationStore: revoked access-token ids, each kept until the token would have
//! expired anyway. Sharded by SHA-256 of the `jti`.

use super::table::{ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;

#[async_trait]
pub trait TokenRevocationStore: Send + Sync {
    async fn revoke(&self, tenant: TenantId, jti: &str, expires_at: u64) -> StoreResult<()>;
    async fn is_revoked(&self, tenant: TenantId, jti: &str) -> StoreResult<bool>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

/// Where a revoked `jti` lives, on either backend (`shard::route`), or `None` when it needs no
/// entry because the token has expired anyway.
pub(crate) fn route(tenant: TenantId, jti: &str, expires_at: u64, shards: usize) -> Option<(usize, [u8; 32])> {
    (expires_at > now()).then(|| super::shard::route(tenant, jti, shards))
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
    async fn revoke(&self, tenant: TenantId, jti: &str, expires_at: u64) -> StoreResult<()> {
        let Some((shard, key)) = route(tenant, jti, expires_at, self.table.shard_count()) else { return Ok(()) };
        let mut timer = self.table.timer(shard);
        // A key revoked already keeps the later of the two expiries, and is not written again.
        let ((), at) = self
            .table
            .update(shard, key, |e| match e {
                Some(e) if e.expires_at >= expires_at => Turn::read(()),
                _ => Turn::put((), (), expires_at),
            })
            .await?;
        timer.answered_at(at);
        Ok(())
    }

    async fn is_revoked(&self, tenant: TenantId, jti: &str) -> StoreResult<bool> {
        let (shard, key) = super::shard::route(tenant, jti, self.table.shard_count());
        let _timer = self.table.timer(shard);
        Ok(self.table.read(shard, |m| m.contains_key(&key)))
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
