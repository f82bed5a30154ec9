//! PostgreSQL: several stateless nodes on one database. Unlike the embedded backend, the
//! database is the authority: every store decision is one conditional statement (or a short
//! transaction) that PostgreSQL's row locks make atomic across nodes. What nodes still cache
//! (clients, users, keys, the revocation list) is kept in step by LISTEN/NOTIFY (`listener`).

mod listener;
mod schema;
pub use schema::latest_version;
mod value;

pub use listener::{Freshness, Listener, NodeEvent, CHANNEL_KEYS, CHANNEL_REGISTRY, CHANNEL_REVOCATIONS};
pub use schema::{current_version, migrate, migrate_to, versions};

use super::sql::{to_postgres_placeholders, AppLock, Dialect, Row, Sql, Value};
use super::{StoreError, StoreResult};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use std::time::Duration;
use tokio_postgres::NoTls;

#[derive(Clone)]
pub struct PgDb {
    pool: Pool,
    config: tokio_postgres::Config,
}

/// Pool and connection knobs (`AUTHRIM_DATABASE_*`).
#[derive(Debug, Clone, Copy)]
pub struct PgOptions {
    pub pool_size: usize,
    /// Bound on waiting for a connection, on connecting, and (×10) on any one statement.
    pub timeout: Duration,
}

impl PgDb {
    /// Connect and migrate. A database that is not up yet is waited for (clear log lines,
    /// growing pauses) up to `startup_wait`; after that the start fails with the reason.
    pub async fn connect(url: &str, options: PgOptions, startup_wait: Duration) -> anyhow::Result<Self> {
        let db = Self::unmigrated(url, options)?;
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(200);
        loop {
            match db.run(true, |sql| migrate(sql)).await {
                Ok(version) => {
                    tracing::info!(version, "PostgreSQL schema ready");
                    return Ok(db);
                }
                Err(StoreError::Unavailable(e)) if started.elapsed() < startup_wait => {
                    tracing::warn!(error = %e, retry_in_ms = pause.as_millis() as u64, "PostgreSQL not reachable yet");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                Err(e) => anyhow::bail!("PostgreSQL at {}: {e}", redact(url)),
            }
        }
    }

    /// The pool, with the schema as it is (`connect` migrates; the upgrade test does not).
    #[doc(hidden)]
    pub fn unmigrated(url: &str, options: PgOptions) -> anyhow::Result<Self> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| anyhow::anyhow!("AUTHRIM_DATABASE_URL is not a PostgreSQL URL: {e}"))?;
        if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
            anyhow::bail!("sslmode=require: TLS to PostgreSQL is not supported yet; use a private network or a local TLS proxy (docs/deploy.md)");
        }
        config.connect_timeout(options.timeout);
        config.application_name("authrim");
        // A statement stuck behind a lock or a dying server must not hold a request forever.
        config.options(format!("-c statement_timeout={}", options.timeout.as_millis() * 10));
        let manager = Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .wait_timeout(Some(options.timeout))
            .create_timeout(Some(options.timeout))
            .recycle_timeout(Some(options.timeout))
            .runtime(Runtime::Tokio1)
            .build()?;
        Ok(Self { pool, config })
    }

    /// A pooled connection for the hot-path stores.
    pub async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        self.pool.get().await.map_err(|e| StoreError::Unavailable(format!("no database connection: {e}")))
    }

    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// Run `f` in one transaction on a pooled connection, on a blocking thread (the `Sql`
    /// seam is synchronous so that SQLite's journal closures and these share one body).
    pub async fn run<R, F>(&self, write: bool, f: F) -> StoreResult<R>
    where
        F: FnOnce(&mut dyn Sql) -> StoreResult<R> + Send + 'static,
        R: Send + 'static,
    {
        let client = self.client().await?;
        let handle = tokio::runtime::Handle::current();
        let counter = if write { &crate::metrics::METRICS.db_writes } else { &crate::metrics::METRICS.db_reads };
        counter.inc();
        tokio::task::spawn_blocking(move || {
            let mut sql = PgSql { client: &client, handle };
            sql.batch(if write { "BEGIN" } else { "BEGIN READ ONLY" })?;
            match f(&mut sql) {
                Ok(r) => {
                    sql.batch("COMMIT")?;
                    if write {
                        crate::metrics::METRICS.db_commits.inc();
                    }
                    Ok(r)
                }
                Err(e) => {
                    let _ = sql.batch("ROLLBACK");
                    Err(e)
                }
            }
        })
        .await
        .map_err(|e| StoreError::Database(format!("database task failed: {e}")))?
    }

    /// Stop handing out connections; in-flight statements finish.
    pub fn close(&self) {
        self.pool.close();
    }
}

/// The URL without its password, for error messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "(unparsable URL)".into(),
    }
}

/// Connection-class failures are outages (503, retry later); everything else is a bug or a
/// constraint and is reported as such.
pub fn classify(e: tokio_postgres::Error) -> StoreError {
    let unavailable = match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08") || code.starts_with("57P") || code == "53300" || code == "57014"
        }
    };
    if unavailable || e.is_closed() {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Database(e.to_string())
    }
}

struct PgSql<'a> {
    client: &'a tokio_postgres::Client,
    handle: tokio::runtime::Handle,
}

impl PgSql<'_> {
    fn params(params: &[Value]) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
        params.iter().map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync)).collect()
    }
}

impl Sql for PgSql<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> StoreResult<u64> {
        let sql = to_postgres_placeholders(sql);
        self.handle.block_on(self.client.execute(sql.as_str(), &Self::params(params))).map_err(classify)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> StoreResult<Vec<Row>> {
        let sql = to_postgres_placeholders(sql);
        let rows = self.handle.block_on(self.client.query(sql.as_str(), &Self::params(params))).map_err(classify)?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| r.try_get::<_, Value>(i).map_err(classify)).collect::<StoreResult<Vec<_>>>().map(Row))
            .collect()
    }

    fn batch(&mut self, sql: &str) -> StoreResult<()> {
        self.handle.block_on(self.client.batch_execute(sql)).map_err(classify)
    }

    fn lock_exclusive(&mut self, lock: AppLock) -> StoreResult<()> {
        self.execute("SELECT pg_advisory_xact_lock(?1)", &[Value::Int(lock as i64)]).map(|_| ())
    }
}
