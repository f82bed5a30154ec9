//! The two backends the contract runs on (PostgreSQL: see `tests/common/postgres.rs`).

pub use crate::pg_cluster::fresh_database;
use authrim::app::{App, AppState};
use authrim::config::Config;
use std::sync::Arc;
use tokio::task::JoinHandle;

pub struct Backend {
    dir: tempfile::TempDir,
    /// `Some` on PostgreSQL: the test's own database.
    pub url: Option<String>,
    kek: String,
}

pub struct Node {
    pub app: AppState,
    sync: Option<JoinHandle<()>>,
}

impl Node {
    /// Stop like a server does: the audit queue and pending writes are flushed.
    pub async fn stop(mut self) {
        if let Some(t) = self.sync.take() {
            t.abort();
        }
        self.app.close().await;
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(t) = self.sync.take() {
            t.abort();
        }
    }
}

impl Backend {
    pub fn sqlite() -> Self {
        Self { dir: tempfile::tempdir().unwrap(), url: None, kek: authrim::util::b64(&authrim::util::random_bytes::<32>()) }
    }

    /// On PostgreSQL; panics (see the module) if there is none and it was not skipped.
    pub async fn postgres() -> Self {
        let mut b = Self::sqlite();
        b.url = fresh_database().await;
        if b.url.is_none() {
            // Explicitly skipped: run the contract on SQLite again rather than on nothing.
            eprintln!("running this PostgreSQL test on SQLite instead");
        }
        b
    }

    pub fn config(&self, tweak: impl FnOnce(&mut Config)) -> Config {
        let mut c = Config {
            data_dir: self.dir.path().to_path_buf(),
            sqlite_synchronous: "NORMAL".into(),
            database_url: self.url.clone(),
            key_encryption_key: Some(self.kek.clone()),
            database_pool_size: 8,
            code_shards: 8,
            session_shards: 4,
            challenge_shards: 4,
            revocation_shards: 4,
            refresh_shards: 8,
            // Strict rotation; the grace's test sets one.
            refresh_reuse_grace: 0,
            ..Config::default()
        };
        tweak(&mut c);
        c
    }

    /// A node on this backend, in step with the others (PostgreSQL) before it is returned.
    pub async fn node(&self, tweak: impl FnOnce(&mut Config)) -> Node {
        let app = Arc::new(App::open(self.config(tweak)).await.expect("node opens"));
        let sync = authrim::node_sync::NodeSync::spawn(app.clone());
        if let Some(s) = &app.sync {
            s.wait_fresh(std::time::Duration::from_secs(10)).await.expect("node gets in step");
        }
        Node { app, sync }
    }
}
