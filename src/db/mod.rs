//! The embedded SQLite database: opening, versioned forward-only migrations, and the
//! group-commit [`Journal`] through which the server performs every write.
//!
//! SQLite admits one writer at a time per file, so the server owns exactly one writing
//! connection (the journal's thread). Store shards give single-writer semantics in memory
//! (one lock per shard); the journal makes their changes durable in batches.

mod journal;
mod schema;

pub use journal::{Journal, JournalStats};

use rusqlite::Connection;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(String),
    #[error("the database writer has stopped")]
    WriterGone,
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(e.to_string())
    }
}

impl From<StoreError> for crate::error::OAuthError {
    fn from(e: StoreError) -> Self {
        crate::error::OAuthError::internal("store", e)
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

pub fn db_path(data_dir: &Path) -> PathBuf {
    data_dir.join("authrim.db")
}

/// Open (creating if needed) the database in `data_dir` and bring its schema up to date.
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
