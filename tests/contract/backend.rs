//! The two backends the contract runs on. PostgreSQL comes from `AUTHRIM_TEST_POSTGRES_URL`
//! (a superuser URL; `scripts/test.sh` starts a throwaway cluster and sets it); each test gets
//! a database of its own. Without it the PostgreSQL tests fail, unless
//! `AUTHRIM_TEST_POSTGRES=skip` says, explicitly, to leave PostgreSQL out of this run.

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

pub fn postgres_skipped() -> bool {
    std::env::var("AUTHRIM_TEST_POSTGRES_URL").is_err() && std::env::var("AUTHRIM_TEST_POSTGRES").as_deref() == Ok("skip")
}

/// A fresh database on the test cluster; `None` only when PostgreSQL is explicitly skipped.
pub async fn fresh_database() -> Option<String> {
    if postgres_skipped() {
        eprintln!("PostgreSQL left out of this run (AUTHRIM_TEST_POSTGRES=skip)");
        return None;
    }
    let admin = std::env::var("AUTHRIM_TEST_POSTGRES_URL").expect(
        "AUTHRIM_TEST_POSTGRES_URL is not set: run ./scripts/test.sh (it starts a throwaway PostgreSQL), \
         or set AUTHRIM_TEST_POSTGRES=skip to leave PostgreSQL out",
    );
    let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.expect("connect to the test cluster");
    tokio::spawn(conn);
    let name = format!("authrim_t_{}", authrim::util::hex(&authrim::util::random_bytes::<6>()));
    client.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create the test database");
    let (base, _) = admin.rsplit_once('/').expect("URL with a database name");
    Some(format!("{base}/{name}"))
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
