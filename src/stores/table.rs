//! `ShardedTable`: the embedded backend shared by every store. Each shard is a map behind its
//! own lock (the single writer of that shard: a check-and-set under the lock is atomic, as a
//! Durable Object's single-threaded turn is); the map answers reads from memory; changes are
//! made durable through the group-commit journal before the caller is answered.
//!
//! Rows are `(hash, shard, data, expires_at)`: the key is always a SHA-256, never the secret.

use crate::db::{Journal, StoreResult};
use parking_lot::Mutex;
use rusqlite::Connection;
use serde::{de::DeserializeOwned, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

pub type Key = [u8; 32];

pub struct Entry<V> {
    pub value: V,
    pub expires_at: u64,
}

pub struct ShardedTable<V> {
    table: &'static str,
    shards: Vec<Mutex<HashMap<Key, Entry<V>>>>,
    journal: Journal,
    /// Built once: every write reuses the text, and the writer's statement cache its plan.
    upsert_sql: Arc<str>,
    delete_sql: Arc<str>,
}

impl<V> ShardedTable<V>
where
    V: Serialize + DeserializeOwned + Send + Sync + 'static,
{
    pub fn new(table: &'static str, shard_count: usize, journal: Journal) -> Self {
        let shards = (0..shard_count).map(|_| Mutex::new(HashMap::new())).collect();
        // An upsert, not INSERT OR REPLACE: REPLACE deletes the row and inserts it under a new
        // rowid, dirtying the old and the new table page and both entries in each index (about
        // six pages per write, measured); an update in place dirties the row's page and, when
        // the expiry moved, the expiry index. Fewer pages per commit: smaller fsyncs, rarer
        // checkpoints.
        let upsert_sql = format!(
            "INSERT INTO {table} (hash, shard, data, expires_at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (hash) DO UPDATE SET shard = excluded.shard, data = excluded.data, expires_at = excluded.expires_at"
        )
        .into();
        let delete_sql = format!("DELETE FROM {table} WHERE hash = ?1").into();
        Self { table, shards, journal, upsert_sql, delete_sql }
    }

    /// Time one store operation on `shard` (recorded on drop) under the store's seed name.
    pub fn timer(&self, shard: usize) -> crate::metrics::StoreTimer {
        let store = match self.table {
            "auth_codes" => "AuthorizationCodeStore",
            "sessions" => "SessionStore",
            "challenges" => "ChallengeStore",
            "revoked_tokens" => "TokenRevocationStore",
            "refresh_families" => "RefreshTokenRotator",
            other => other,
        };
        crate::metrics::StoreTimer::start(store, shard)
    }

    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Load every unexpired row. A row whose shard no longer exists (the shard count was
    /// lowered) lands where `shard % count` routes it, as parsing a prefixed value does.
    pub fn load(&self, conn: &Connection, now: u64) -> rusqlite::Result<usize> {
        let mut stmt = conn.prepare(&format!(
            "SELECT hash, shard, data, expires_at FROM {} WHERE expires_at > ?1",
            self.table
        ))?;
        let mut rows = stmt.query([now as i64])?;
        crate::metrics::METRICS.db_reads.inc();
        let mut loaded = 0;
        while let Some(row) = rows.next()? {
            let hash: Vec<u8> = row.get(0)?;
            let shard: i64 = row.get(1)?;
            let data: String = row.get(2)?;
            let expires_at: i64 = row.get(3)?;
            let (Ok(key), Ok(value)) = (Key::try_from(hash.as_slice()), serde_json::from_str::<V>(&data)) else {
                tracing::warn!(table = self.table, "skipping unreadable row");
                continue;
            };
            let shard = shard as usize % self.shards.len();
            self.shards[shard].lock().insert(key, Entry { value, expires_at: expires_at as u64 });
            loaded += 1;
        }
        Ok(loaded)
    }

    /// Run `f` with the shard's map locked. Keep `f` short and free of I/O.
    pub fn with_shard<R>(&self, shard: usize, f: impl FnOnce(&mut HashMap<Key, Entry<V>>) -> R) -> R {
        f(&mut self.shards[shard].lock())
    }

    /// Make `value` under `key` durable (insert or replace), waiting for the commit; returns
    /// when it committed (for the store timer).
    pub async fn persist(&self, shard: usize, key: Key, value: &V, expires_at: u64) -> StoreResult<Instant> {
        let data = serde_json::to_string(value).map_err(|e| crate::db::StoreError::Database(e.to_string()))?;
        let sql = self.upsert_sql.clone();
        self.journal
            .write(move |c| {
                c.prepare_cached(&sql)?.execute((key.to_vec(), shard as i64, data, expires_at as i64)).map(|_| ())
            })
            .await
    }

    /// Delete `key` durably, waiting for the commit; returns when it committed.
    pub async fn persist_delete(&self, key: Key) -> StoreResult<Instant> {
        let sql = self.delete_sql.clone();
        self.journal.write(move |c| c.prepare_cached(&sql)?.execute([key.to_vec()]).map(|_| ())).await
    }

    /// Drop expired entries from memory and, in the background, from disk.
    pub async fn sweep(&self, now: u64) -> StoreResult<usize> {
        let mut removed = 0;
        for shard in &self.shards {
            let mut map = shard.lock();
            let before = map.len();
            map.retain(|_, e| e.expires_at > now);
            removed += before - map.len();
        }
        let sql = format!("DELETE FROM {} WHERE expires_at <= ?1", self.table);
        self.journal.write_detached(move |c| c.execute(&sql, [now as i64]).map(|_| ())).await?;
        Ok(removed)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn shard_lens(&self) -> Vec<usize> {
        self.shards.iter().map(|s| s.lock().len()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_write_of_a_key_updates_its_row_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(crate::db::open(dir.path(), "NORMAL").unwrap());
        let table: ShardedTable<String> = ShardedTable::new("challenges", 2, journal.clone());
        let key = [7u8; 32];
        let rowid = || {
            let reader = crate::db::open_reader(dir.path()).unwrap();
            reader
                .query_row("SELECT rowid, data, expires_at FROM challenges WHERE hash = ?1", [key.to_vec()], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
                })
                .unwrap()
        };
        table.persist(1, key, &"first".to_string(), 100).await.unwrap();
        table.persist(0, [8u8; 32], &"other".to_string(), 100).await.unwrap();
        let (first_rowid, _, _) = rowid();
        table.persist(1, key, &"second".to_string(), 200).await.unwrap();
        // Same row (a REPLACE would have deleted it and inserted a new one at the end), new values.
        assert_eq!(rowid(), (first_rowid, "\"second\"".to_string(), 200));
        journal.shutdown().await;
    }
}
