//! The PostgreSQL backend of the stores, for several nodes on one database. Each decision
//! that the embedded backend takes under a shard lock is here one conditional statement:
//! PostgreSQL's row lock is the single writer, and a statement that lost the race sees the
//! winner's committed row (READ COMMITTED re-checks the condition after waiting).
//!
//! Shards: the `shard` column records the shard a value names, for metrics and for operators
//! who partition the big tables by it (docs/deploy.md); correctness does not depend on it.

pub mod challenges;
pub mod codes;
pub mod device;
pub mod refresh;
pub mod revocations;
pub mod sessions;

use crate::db::postgres::{classify, PgDb};
use crate::db::StoreResult;
use parking_lot::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// One store's table: statement helpers, timing under the store's seed name, and the
/// per-shard row counts (refreshed by the sweep: a gauge, not a hot-path read).
pub struct PgTable {
    db: PgDb,
    table: &'static str,
    store: &'static str,
    shards: usize,
    counts: Mutex<Vec<usize>>,
}

impl PgTable {
    pub fn new(db: PgDb, table: &'static str, store: &'static str, shards: usize) -> Self {
        Self { db, table, store, shards, counts: Mutex::new(vec![0; shards]) }
    }

    pub fn shard_count(&self) -> usize {
        self.shards
    }

    pub fn timer(&self, shard: usize) -> crate::metrics::StoreTimer {
        crate::metrics::StoreTimer::start(self.store, shard)
    }

    /// One statement on a pooled connection, prepared once per connection.
    async fn run(&self, sql: &str, params: Params<'_>) -> StoreResult<Vec<Row>> {
        let client = self.db.client().await?;
        let stmt = client.prepare_cached(sql).await.map_err(classify)?;
        client.query(&stmt, params).await.map_err(classify)
    }

    pub async fn read(&self, sql: &str, params: Params<'_>) -> StoreResult<Option<Row>> {
        crate::metrics::METRICS.db_reads.inc();
        Ok(self.run(sql, params).await?.into_iter().next())
    }

    /// Every row a read returns (reloads, off the request path).
    pub async fn read_all(&self, sql: &str, params: Params<'_>) -> StoreResult<Vec<Row>> {
        crate::metrics::METRICS.db_reads.inc();
        self.run(sql, params).await
    }

    /// A write (autocommitted, so durable when it returns); its `RETURNING` row, if any.
    pub async fn write(&self, sql: &str, params: Params<'_>) -> StoreResult<Option<Row>> {
        crate::metrics::METRICS.db_writes.inc();
        crate::metrics::METRICS.db_commits.inc();
        Ok(self.run(sql, params).await?.into_iter().next())
    }

    /// Store `value` under a freshly minted `{shard}_{random}` id (sessions, challenges: tables
    /// of `hash, shard, data, expires_at`); returns the id.
    pub async fn insert_minted<T: serde::Serialize>(&self, tenant: crate::tenant::TenantId, value: &T, ttl: u64) -> StoreResult<String> {
        let (shard, id) = crate::stores::shard::mint_prefixed(self.shards);
        let (_, key) = crate::stores::shard::parse_prefixed(tenant, &id, self.shards).expect("minted id parses");
        let _timer = self.timer(shard);
        let expires_at = (crate::util::now() + ttl) as i64;
        let sql = format!("INSERT INTO {} (hash, shard, data, expires_at) VALUES ($1, $2, $3, $4)", self.table);
        self.write(&sql, &[&key.as_slice(), &(shard as i32), &encode(value), &expires_at]).await?;
        Ok(id)
    }

    /// Delete expired rows and refresh the per-shard counts.
    pub async fn sweep(&self, now: u64) -> StoreResult<usize> {
        let now = now as i64;
        let deleted = {
            let client = self.db.client().await?;
            let sql = format!("DELETE FROM {} WHERE expires_at <= $1", self.table);
            client.execute(sql.as_str(), &[&now]).await.map_err(classify)?
        };
        let sql = format!("SELECT shard, COUNT(*) FROM {} GROUP BY shard", self.table);
        let rows = self.run(&sql, &[]).await?;
        let mut counts = vec![0; self.shards];
        for r in rows {
            let (shard, n): (i32, i64) = (col(&r, 0)?, col(&r, 1)?);
            counts[shard as usize % self.shards] += n as usize;
        }
        *self.counts.lock() = counts;
        Ok(deleted as usize)
    }

    pub fn shard_lens(&self) -> Vec<usize> {
        self.counts.lock().clone()
    }
}

/// Column `i` of `row`, or a `Database` error (never a panic on an unexpected row).
pub fn col<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> StoreResult<T> {
    row.try_get(i).map_err(|e| crate::db::StoreError::Database(e.to_string()))
}

/// `serde_json` text of a stored value, or a `Database` error naming the table.
pub fn decode<T: serde::de::DeserializeOwned>(table: &str, text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| crate::db::StoreError::Database(format!("{table}: unreadable row: {e}")))
}

pub fn encode<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("store values serialise")
}
