//! Persistence. Two backends behind one `Database`:
//! - **SQLite** (the embedded default): one file, one writing connection owned by the
//!   group-commit [`Journal`]; the stores answer from memory and persist through it. One
//!   process only.
//! - **PostgreSQL** (`AUTHRIM_DATABASE_URL=postgres://…`): several nodes on one database; the
//!   database decides, nodes cache only what NOTIFY keeps in step (see `postgres`).
//!
//! Code off the hot path (registry, keys, audit, CLI) talks to either through the small
//! [`Sql`] seam; the hot-path stores have one implementation per backend.

pub(crate) mod journal;
pub mod postgres;
pub(crate) mod schema;
pub mod sql;

pub use journal::{Journal, JournalStats};
pub use sql::{Dialect, Row, Sql, SqliteSql, Value};

use crate::config::Config;
use parking_lot::Mutex;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(String),
    /// The database cannot be reached (or cannot vouch for a cache): retry later, 503.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("the database writer has stopped")]
    WriterGone,
    /// The write would break a uniqueness rule (a login name taken by another user): 409.
    #[error("conflict: {0}")]
    Conflict(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(e.to_string())
    }
}

impl From<StoreError> for crate::error::OAuthError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(what) => {
                crate::error::OAuthError::invalid_request(what).with_status(axum::http::StatusCode::CONFLICT)
            }
            e => crate::error::OAuthError::internal("store", e),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

// One per process, cloned a handful of times at start: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum Database {
    Sqlite(SqliteDb),
    Postgres(postgres::PgDb),
}

#[derive(Clone)]
pub struct SqliteDb {
    pub journal: Journal,
    reader: Arc<Mutex<Connection>>,
}

impl SqliteDb {
    /// Run `f` on the reader connection (a blocking call: keep it off request tasks).
    pub fn with_reader<R>(&self, f: impl FnOnce(&Connection) -> R) -> R {
        f(&self.reader.lock())
    }
}

impl Database {
    /// Open the configured backend and bring its schema up to date.
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        let db = Self::open_backend(config).await?;
        // Data written before a migration that needs filling from Rust (login names are
        // normalized by Unicode rules SQL does not have). A no-op once done.
        let conflicts = db.write(crate::registry::users::backfill_login_names).await?;
        if conflicts > 0 {
            tracing::warn!(conflicts, "some users share a login name; each such name signs in its first owner only");
        }
        Ok(db)
    }

    async fn open_backend(config: &Config) -> anyhow::Result<Self> {
        match config.database_url.as_deref() {
            Some(url) => {
                let options = postgres::PgOptions {
                    pool_size: config.database_pool_size,
                    timeout: std::time::Duration::from_millis(config.database_timeout_ms),
                };
                let wait = std::time::Duration::from_secs(config.database_startup_wait);
                Ok(Database::Postgres(postgres::PgDb::connect(url, options, wait).await?))
            }
            None => {
                let conn = open(&config.data_dir, &config.sqlite_synchronous)?;
                let reader = open_reader(&config.data_dir)?;
                Ok(Database::Sqlite(SqliteDb { journal: Journal::start(conn), reader: Arc::new(Mutex::new(reader)) }))
            }
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Database::Sqlite(_) => Dialect::Sqlite,
            Database::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Run `f` in one durable write transaction (SQLite: in the next group commit).
    pub async fn write<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: FnOnce(&mut dyn Sql) -> StoreResult<R> + Send + 'static,
        R: Send + 'static,
    {
        match self {
            Database::Sqlite(db) => {
                let slot = Arc::new(Mutex::new(None));
                let out = slot.clone();
                db.journal
                    .write(move |c| {
                        *out.lock() = Some(f(&mut SqliteSql(c))?);
                        Ok::<_, StoreError>(())
                    })
                    .await?;
                let result = slot.lock().take();
                result.ok_or(StoreError::WriterGone)
            }
            Database::Postgres(db) => db.run(true, f).await,
        }
    }

    /// Run `f` in one read transaction, off the request path's threads.
    pub async fn read<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: FnOnce(&mut dyn Sql) -> StoreResult<R> + Send + 'static,
        R: Send + 'static,
    {
        match self {
            Database::Sqlite(db) => {
                let reader = db.reader.clone();
                crate::metrics::METRICS.db_reads.inc();
                tokio::task::spawn_blocking(move || {
                    let conn = reader.lock();
                    conn.execute_batch("BEGIN")?;
                    let r = f(&mut SqliteSql(&conn));
                    let _ = conn.execute_batch(if r.is_ok() { "COMMIT" } else { "ROLLBACK" });
                    r
                })
                .await
                .map_err(|e| StoreError::Database(format!("database task failed: {e}")))?
            }
            Database::Postgres(db) => db.run(false, f).await,
        }
    }

    /// Flush pending writes (SQLite) and stop.
    pub async fn close(&self) {
        match self {
            Database::Sqlite(db) => db.journal.shutdown().await,
            Database::Postgres(db) => db.close(),
        }
    }

    pub async fn schema_version(&self) -> StoreResult<i64> {
        match self {
            Database::Sqlite(_) => self.read(|sql| sql.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", &[])?[0].i64(0)).await,
            Database::Postgres(_) => self.read(|sql| postgres::current_version(sql)).await,
        }
    }
}

/// Send a notification to every node (PostgreSQL), within the caller's transaction so that
/// it is delivered only if the change commits. SQLite has one process: nothing to tell.
pub fn notify(sql: &mut dyn Sql, channel: &str, payload: &str) -> StoreResult<()> {
    if sql.dialect() == Dialect::Postgres {
        sql.execute("SELECT pg_notify(?1, ?2)", crate::params![channel, payload])?;
    }
    Ok(())
}

pub fn db_path(data_dir: &Path) -> PathBuf {
    data_dir.join("authrim.db")
}

/// Open (creating if needed) the SQLite database in `data_dir` and bring its schema up to date.
pub fn open(data_dir: &Path, synchronous: &str) -> anyhow::Result<Connection> {
    std::fs::create_dir_all(data_dir)
        .map_err(|e| anyhow::anyhow!("cannot create data directory {}: {e}", data_dir.display()))?;
    let conn = Connection::open(db_path(data_dir))?;
    configure(&conn, synchronous)?;
    schema::migrate(&conn)?;
    Ok(conn)
}

fn configure(conn: &Connection, synchronous: &str) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", synchronous.to_ascii_uppercase())?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// A second connection to the same file, for reads off the hot path (start-up loads, admin).
pub fn open_reader(data_dir: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(db_path(data_dir))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

pub fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    schema::current_version(conn)
}
