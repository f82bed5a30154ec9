//! `ShardedTable`: the embedded backend shared by every store. Each shard is a map behind its
//! own lock (the single writer of that shard: a check-and-set under the lock is atomic, as a
//! Durable Object's single-threaded turn is); the map answers reads from memory; changes are
//! made durable through the group-commit journal before the caller is answered.
//!
//! Rows are `(hash, shard, data, expires_at)`: the key is always a SHA-256, never the secret.

use crate::db::journal::{OnCommit, Pending, Slot};
use crate::db::{Journal, Sql, SqliteSql, StoreError, StoreResult};
use parking_lot::Mutex;
use rusqlite::Connection;
use serde::{de::DeserializeOwned, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use std::pin::Pin;
use tokio::sync::futures::OwnedNotified;
use tokio::sync::Notify;

pub type Key = [u8; 32];

#[derive(Clone)]
pub struct Entry<V> {
    pub value: V,
    pub expires_at: u64,
}

/// What one turn decided to do to its key.
pub enum Write<V> {
    Put(Entry<V>),
    Delete,
}

/// More SQL to run in the same transaction as a turn's write (an outbox row that must
/// commit, or fail, with it).
pub type Also = Box<dyn FnOnce(&mut dyn Sql) -> StoreResult<()> + Send>;

/// A turn's outcome: the answer for the caller and the change, if any, to make durable.
pub struct Turn<V, R> {
    pub answer: R,
    pub write: Option<Write<V>>,
    pub also: Option<Also>,
}

impl<V, R> Turn<V, R> {
    /// Answer without changing anything.
    pub fn read(answer: R) -> Self {
        Self { answer, write: None, also: None }
    }

    pub fn put(answer: R, value: V, expires_at: u64) -> Self {
        Self { answer, write: Some(Write::Put(Entry { value, expires_at })), also: None }
    }

    pub fn delete(answer: R) -> Self {
        Self { answer, write: Some(Write::Delete), also: None }
    }

    /// Run `f` in the write's transaction: both commit or neither does (a write turn only).
    pub fn also(mut self, f: impl FnOnce(&mut dyn Sql) -> StoreResult<()> + Send + 'static) -> Self {
        debug_assert!(self.write.is_some(), "only a write has a transaction to join");
        self.also = Some(Box::new(f));
        self
    }
}

struct Shard<V> {
    map: HashMap<Key, Entry<V>>,
    /// Keys with a write on its way to disk, and, once someone waits for one, how to wake them.
    busy: HashMap<Key, Option<Arc<Notify>>>,
}

pub struct ShardedTable<V> {
    table: &'static str,
    shards: Arc<[Mutex<Shard<V>>]>,
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
        let shards = (0..shard_count).map(|_| Mutex::new(Shard { map: HashMap::new(), busy: HashMap::new() })).collect();
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
            "device_requests" => "DeviceCodeStore",
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
            self.shards[shard].lock().map.insert(key, Entry { value, expires_at: expires_at as u64 });
            loaded += 1;
        }
        Ok(loaded)
    }

    /// Read the shard's committed state. Keep `f` short and free of I/O.
    pub fn read<R>(&self, shard: usize, f: impl FnOnce(&HashMap<Key, Entry<V>>) -> R) -> R {
        f(&self.shards[shard].lock().map)
    }

    /// One atomic, durable turn on `key`: `decide` sees the key's committed entry and says
    /// what to answer and what to write. The write is committed before it is applied to
    /// memory, and the caller hears back after both. So:
    /// - an answer that is an error changed nothing, in memory or on disk;
    /// - two writes of one key never overlap: a turn on a key whose write is still on its way
    ///   waits for it and then decides on the result, so the disk receives each key's writes
    ///   in the order memory applies them, and a crash can only cut that sequence short.
    ///
    /// `decide` may run more than once (again after each wait), and must be free of I/O.
    pub async fn update<R>(&self, shard: usize, key: Key, mut decide: impl FnMut(Option<&Entry<V>>) -> Turn<V, R>) -> StoreResult<(R, Option<Instant>)> {
        // Taken before deciding, so that a decided write is sent at once, under the lock.
        let mut slot = Some(self.journal.reserve().await?);
        loop {
            match self.step(shard, key, &mut decide, &mut slot)? {
                Step::Wait(woken) => woken.await,
                Step::Answered(answer) => return Ok((answer, None)),
                Step::Sent(answer, pending) => return Ok((answer, Some(pending.committed().await?))),
            }
        }
    }

    /// One attempt at a turn, all under the shard lock (no await in here).
    fn step<R>(
        &self,
        shard: usize,
        key: Key,
        decide: &mut impl FnMut(Option<&Entry<V>>) -> Turn<V, R>,
        slot: &mut Option<Slot<'_>>,
    ) -> StoreResult<Step<R>> {
        let mut guard = self.shards[shard].lock();
        let sh = &mut *guard;
        if let Some(waker) = sh.busy.get_mut(&key) {
            let notify = waker.get_or_insert_with(|| Arc::new(Notify::new())).clone();
            // Registered under the lock, so the wake-up cannot slip in between.
            let mut woken = Box::pin(notify.notified_owned());
            woken.as_mut().enable();
            return Ok(Step::Wait(woken));
        }
        let Turn { answer, write, also } = decide(sh.map.get(&key));
        let Some(write) = write else { return Ok(Step::Answered(answer)) };
        let job = match &write {
            Write::Put(e) => JobSql::Upsert {
                sql: self.upsert_sql.clone(),
                data: serde_json::to_string(&e.value).map_err(|e| StoreError::Database(e.to_string()))?,
                shard: shard as i64,
                expires_at: e.expires_at as i64,
                also,
            },
            Write::Delete => JobSql::Delete { sql: self.delete_sql.clone(), also },
        };
        sh.busy.insert(key, None);
        let shards = self.shards.clone();
        let then = OnCommit::new(move |committed| {
            let mut sh = shards[shard].lock();
            if committed {
                match write {
                    Write::Put(e) => sh.map.insert(key, e),
                    Write::Delete => sh.map.remove(&key),
                };
            }
            if let Some(Some(waiters)) = sh.busy.remove(&key) {
                waiters.notify_waiters();
            }
        });
        let slot = slot.take().expect("one write per turn");
        Ok(Step::Sent(answer, slot.send(move |c| job.run(c, key), then)))
    }

    /// Drop expired entries from memory and, in the background, from disk.
    pub async fn sweep(&self, now: u64) -> StoreResult<usize> {
        let mut removed = 0;
        for shard in self.shards.iter() {
            let mut sh = shard.lock();
            let before = sh.map.len();
            sh.map.retain(|_, e| e.expires_at > now);
            removed += before - sh.map.len();
        }
        let sql = format!("DELETE FROM {} WHERE expires_at <= ?1", self.table);
        self.journal.write_detached(move |c| c.execute(&sql, [now as i64]).map(|_| ())).await?;
        Ok(removed)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn shard_lens(&self) -> Vec<usize> {
        self.shards.iter().map(|s| s.lock().map.len()).collect()
    }
}

enum Step<R> {
    /// The key's previous write is on its way: wait for it, then decide again.
    Wait(Pin<Box<OwnedNotified>>),
    Answered(R),
    Sent(R, Pending),
}

/// The statement a turn's write runs on the writer thread, and what else joins it.
enum JobSql {
    Upsert { sql: Arc<str>, data: String, shard: i64, expires_at: i64, also: Option<Also> },
    Delete { sql: Arc<str>, also: Option<Also> },
}

impl JobSql {
    /// Runs inside the journal's savepoint for this write: an error undoes all of it.
    fn run(self, c: &Connection, key: Key) -> StoreResult<()> {
        let also = match self {
            JobSql::Upsert { sql, data, shard, expires_at, also } => {
                c.prepare_cached(&sql)?.execute((key.to_vec(), shard, data, expires_at))?;
                also
            }
            JobSql::Delete { sql, also } => {
                c.prepare_cached(&sql)?.execute([key.to_vec()])?;
                also
            }
        };
        match also {
            Some(f) => f(&mut SqliteSql(c)),
            None => Ok(()),
        }
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
        let put = |shard: usize, key: Key, v: &str, exp: u64| {
            let v = v.to_string();
            let table = &table;
            async move { table.update(shard, key, |_| Turn::put((), v.clone(), exp)).await.unwrap() }
        };
        put(1, key, "first", 100).await;
        put(0, [8u8; 32], "other", 100).await;
        let (first_rowid, _, _) = rowid();
        put(1, key, "second", 200).await;
        // Same row (a REPLACE would have deleted it and inserted a new one at the end), new values.
        assert_eq!(rowid(), (first_rowid, "\"second\"".to_string(), 200));
        journal.shutdown().await;
    }
}
