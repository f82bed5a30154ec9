//! `App`: everything a request needs, built once at start and passed explicitly as axum state.

use crate::audit::AuditLog;
use crate::config::Config;
use crate::db::Journal;
use crate::grants::GrantRegistry;
use crate::keys::KeyManager;
use crate::ratelimit::LoginLimiter;
use crate::registry::Registry;
use crate::stores::Stores;
use std::sync::Arc;

pub struct App {
    pub config: Config,
    pub keys: KeyManager,
    pub registry: Registry,
    pub stores: Stores,
    pub journal: Journal,
    pub grants: GrantRegistry,
    pub login_limiter: LoginLimiter,
    pub audit: AuditLog,
}

pub type AppState = Arc<App>;

impl App {
    /// Open the data directory (creating schema and first key on a first start) and load the
    /// in-memory state. Needs a Tokio runtime (the audit writer is a task). Shut down with
    /// `close` to flush the audit queue and pending writes.
    pub fn open(config: Config) -> anyhow::Result<Self> {
        let conn = crate::db::open(&config.data_dir, &config.sqlite_synchronous)?;
        let retired_visibility = config.access_token_ttl.max(config.id_token_ttl);
        let keys = KeyManager::init(
            &conn,
            &config.data_dir,
            config.key_encryption_key.as_deref(),
            retired_visibility,
            config.key_publish_delay,
        )?;
        let journal = Journal::start(conn);
        let reader = crate::db::open_reader(&config.data_dir)?;
        let registry = Registry::load(&reader, journal.clone())?;
        let stores = Stores::embedded(&config, &journal, &reader, keys.derived_key("authrim refresh-token mac v1"))?;
        let audit = AuditLog::start(journal.clone());
        let login_limiter = LoginLimiter::new(
            config.login_max_failures_per_account,
            config.login_max_failures_per_address,
            config.login_window,
        );
        Ok(Self { config, keys, registry, stores, journal, grants: GrantRegistry::standard(), login_limiter, audit })
    }

    pub async fn close(&self) {
        self.audit.flush().await;
        self.journal.shutdown().await;
    }

    pub fn issuer(&self) -> &str {
        self.config.base_url()
    }

    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{}", self.config.base_url(), path)
    }
}
