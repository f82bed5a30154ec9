//! ChallengeStore on PostgreSQL: consumption is a `DELETE … RETURNING`, so exactly one post
//! takes a challenge, whichever node it reaches.

use super::{col, decode, encode, PgTable};
use crate::db::postgres::PgDb;
use crate::db::StoreResult;
use crate::stores::challenges::{ChallengeRecord, ChallengeStore};
use crate::stores::shard::{parse_prefixed, route};
use crate::tenant::TenantId;
use crate::util::now;
use async_trait::async_trait;

pub struct PgChallengeStore {
    table: PgTable,
}

impl PgChallengeStore {
    pub fn new(db: PgDb, shards: usize) -> Self {
        Self { table: PgTable::new(db, "challenges", "ChallengeStore", shards) }
    }
}

#[async_trait]
impl ChallengeStore for PgChallengeStore {
    async fn issue(&self, tenant: TenantId, record: ChallengeRecord, ttl: u64) -> StoreResult<String> {
        self.table.insert_minted(tenant, &record, ttl).await
    }

    async fn consume(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let row = self
            .table
            .write("DELETE FROM challenges WHERE hash = $1 RETURNING data, expires_at", &[&key.as_slice()])
            .await?;
        let Some(row) = row else { return Ok(None) };
        let record: ChallengeRecord = decode("challenges", &col::<String>(&row, 0)?)?;
        let live = col::<i64>(&row, 1)? > now() as i64;
        Ok((live && record.kind == kind).then_some(record))
    }

    async fn peek(&self, tenant: TenantId, id: &str, kind: &str) -> StoreResult<Option<ChallengeRecord>> {
        let Some((shard, key)) = parse_prefixed(tenant, id, self.table.shard_count()) else { return Ok(None) };
        let _timer = self.table.timer(shard);
        let row = self
            .table
            .read("SELECT data FROM challenges WHERE hash = $1 AND expires_at > $2", &[&key.as_slice(), &(now() as i64)])
            .await?;
        let Some(row) = row else { return Ok(None) };
        let record: ChallengeRecord = decode("challenges", &col::<String>(&row, 0)?)?;
        Ok((record.kind == kind).then_some(record))
    }

    /// One statement decides, on whichever node: the insert wins, or finds an unexpired row
    /// and returns nothing. An expired row for the same value is taken over.
    async fn first_use(&self, tenant: TenantId, value: &str, expires_at: u64) -> StoreResult<bool> {
        let (shard, key) = route(tenant, value, self.table.shard_count());
        let _timer = self.table.timer(shard);
        let row = self
            .table
            .write(
                "INSERT INTO challenges (hash, shard, data, expires_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (hash) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at
                 WHERE challenges.expires_at <= $5 RETURNING 1",
                &[&key.as_slice(), &(shard as i32), &encode(&ChallengeRecord::used_marker()), &(expires_at as i64), &(now() as i64)],
            )
            .await?;
        Ok(row.is_some())
    }

    async fn used(&self, tenant: TenantId, value: &str) -> StoreResult<bool> {
        let (shard, key) = route(tenant, value, self.table.shard_count());
        let _timer = self.table.timer(shard);
        let row = self.table.read("SELECT 1 FROM challenges WHERE hash = $1 AND expires_at > $2", &[&key.as_slice(), &(now() as i64)]).await?;
        Ok(row.is_some())
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}
