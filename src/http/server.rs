//! Start, run and stop: bind, serve (plain HTTP or TLS), run housekeeping in the background,
//! and on shutdown finish in-flight requests, then flush pending writes.

use crate::app::{App, AppState};
use crate::config::Config;
use super::connections;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Run until SIGINT or SIGTERM.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    let app = Arc::new(App::open(config).await?);
    crate::endpoints::operations::bootstrap_admin(&crate::tenant::Issuer::default_of(&app)).await?;
    if app.config.demo {
        super::demo::prepare(&crate::tenant::Issuer::default_of(&app)).await?;
    }
    let listener = bind(&app.config)?;
    tracing::info!(issuer = %app.tenants.default_tenant().issuer, listen = %listener.local_addr()?, tls = app.config.tls_cert.is_some(), "authrim listening");
    run(app, listener, shutdown_signal()).await
}

pub fn bind(config: &Config) -> anyhow::Result<std::net::TcpListener> {
    let l = std::net::TcpListener::bind(config.listen).map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// A server running in this process (for tests and embedding).
pub struct RunningServer {
    pub addr: SocketAddr,
    pub app: AppState,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl RunningServer {
    pub async fn start(config: Config) -> anyhow::Result<Self> {
        let app = Arc::new(App::open(config).await?);
        crate::endpoints::operations::bootstrap_admin(&crate::tenant::Issuer::default_of(&app)).await?;
        let listener = bind(&app.config)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(run(app.clone(), listener, async {
            let _ = stopped.await;
        }));
        Ok(Self { addr, app, stop: Some(stop), task })
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.app.config.tls_cert.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{}", self.addr, path)
    }

    /// Graceful stop: in-flight requests finish, pending writes are committed.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.await?
    }
}

pub async fn run(app: AppState, listener: std::net::TcpListener, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    let router = super::root(app.clone());
    let tls = match (&app.config.tls_cert, &app.config.tls_key) {
        (Some(cert), Some(key)) => Some(connections::tls_acceptor(cert, key, app.config.mtls)?),
        _ => None,
    };
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let limits = connections::Limits::from_config(&app.config);
    log_limits(&limits, app.config.max_connections.is_some());
    let housekeeping = spawn_housekeeping(app.clone());
    if let Some(sync) = &app.sync {
        // A node takes traffic only once it is in step with the others (revocations).
        sync.wait_fresh(Duration::from_secs(app.config.database_startup_wait.max(5))).await?;
    }
    connections::Server::new(router, tls, limits).serve(listener, shutdown).await;
    housekeeping.iter().for_each(JoinHandle::abort);
    app.close().await;
    tracing::info!("authrim stopped; pending writes flushed");
    Ok(())
}

fn log_limits(limits: &connections::Limits, configured: bool) {
    tracing::info!(
        max_connections = limits.max_connections,
        max_connections_per_address = limits.max_connections_per_address,
        "connection limits"
    );
    match connections::descriptor_budget() {
        Some(budget) if configured && limits.max_connections > budget => tracing::warn!(
            max_connections = limits.max_connections,
            budget,
            "max_connections exceeds what the open-file limit leaves for clients: raise the limit (ulimit -n) or \
             connections past it will wait in the backlog instead of being refused"
        ),
        _ => {}
    }
}

fn spawn_housekeeping(app: AppState) -> Vec<JoinHandle<()>> {
    let sweeper = {
        let app = app.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(30));
            loop {
                tick.tick().await;
                if let Err(e) = app.stores.sweep_expired().await {
                    tracing::warn!(error = %e, "expiry sweep failed");
                }
                app.login_limiter.prune(crate::util::now());
                app.mail_limiter.prune(crate::util::now());
                app.factor_limiter.prune(crate::util::now());
                app.registration_limiter.prune(crate::util::now());
                app.device_limiter.prune(crate::util::now());
                app.dpop.prune();
                if let Err(e) = app.db.write(crate::registry::initial_access::sweep).await {
                    tracing::warn!(error = %e, "initial access token sweep failed");
                }
            }
        })
    };
    // SQLite: pick up registry edits made by other processes (the CLI) within a second.
    // PostgreSQL: other nodes' edits arrive as notifications (NodeSync).
    let follow = match crate::node_sync::NodeSync::spawn(app.clone()) {
        Some(task) => task,
        None => {
            let app = app.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                loop {
                    tick.tick().await;
                    match app.registry.poll_changes().await {
                        Ok(_) => app.apply_tenant_changes().await,
                        Err(e) => tracing::warn!(error = %e, "registry poll failed"),
                    }
                }
            })
        }
    };
    // Also what promotes a rotated key once its publish delay has passed.
    let key_refresh = tokio::spawn({
        let app = app.clone();
        async move {
        let mut tick = tokio::time::interval(Duration::from_secs(app.config.key_cache_ttl.max(1)));
        tick.tick().await;
        loop {
            tick.tick().await;
            if let Err(e) = app.tenants.refresh_keys().await {
                tracing::warn!(error = %e, "key cache refresh failed");
            }
        }
    }});
    // Deleted tenants' rows, in short batches (resumed after a restart).
    let purge = tokio::spawn({
        let app = app.clone();
        async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                crate::tenant::purge_deleted(&app).await;
            }
        }
    });
    let backchannel = tokio::spawn(crate::logout::backchannel::run(app.clone()));
    let mail = tokio::spawn(crate::mail::run(app.clone()));
    // LDAP directories with `mode = "sync"` (none: the task only ticks).
    let directory_sync = tokio::spawn(crate::endpoints::directory_sync::run(app.clone()));
    let mut tasks = vec![sweeper, follow, key_refresh, purge, backchannel, mail, directory_sync];
    // Dynamically registered clients never used: looked for a few times per TTL (at most
    // every minute), so that one outlives its TTL by a fraction of it at most.
    let ttl = app.config.registration_unused_client_ttl;
    if ttl > 0 {
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs((ttl / 4).clamp(1, 60)));
            loop {
                tick.tick().await;
                crate::endpoints::registration::expire_unused_clients(&app).await;
            }
        }));
    }
    tasks
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
