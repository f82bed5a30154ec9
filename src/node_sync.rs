//! PostgreSQL nodes: keeping this node's caches (registry, signing keys, revocation list) in
//! step with what the other nodes and the CLI commit, from the notifications the listener
//! hears. Revocations and heartbeats are handled strictly in arrival order, which is commit
//! order, so a handled heartbeat vouches for every revocation committed before it (see
//! `db::postgres::listener`). Registry and key changes follow in order on a task of their own.

use crate::app::AppState;
use crate::db::postgres::{Freshness, Listener, NodeEvent, PgDb, CHANNEL_KEYS, CHANNEL_REGISTRY, CHANNEL_REVOCATIONS};
use crate::stores::postgres::revocations::PgRevocationStore;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

pub struct NodeSync {
    config: tokio_postgres::Config,
    freshness: Arc<Freshness>,
    revocations: Option<Arc<PgRevocationStore>>,
}

impl NodeSync {
    pub fn new(db: &PgDb, max_staleness: Duration) -> (Self, Arc<Freshness>) {
        let freshness = Freshness::new(max_staleness);
        (Self { config: db.config().clone(), freshness: freshness.clone(), revocations: None }, freshness)
    }

    pub fn with_revocations(mut self, revocations: Arc<PgRevocationStore>) -> Self {
        self.revocations = Some(revocations);
        self
    }

    pub fn is_fresh(&self) -> bool {
        self.freshness.is_fresh()
    }

    /// Start listening and applying. The tasks end when the server stops.
    ///
    /// Revocations and heartbeats are applied by the listening task itself, in memory, so the
    /// revocation bound never waits on anything else. Registry and key changes need database
    /// reads: a second task applies those, in order, so that a burst of them (a bulk import
    /// while the node is busy) cannot hold heartbeats back.
    pub fn spawn(app: AppState) -> Option<JoinHandle<()>> {
        let sync = app.sync.as_ref()?;
        let mut events = Listener::start(sync.config.clone(), sync.freshness.clone());
        let (work_tx, work_rx) = tokio::sync::mpsc::unbounded_channel();
        let worker = tokio::spawn(apply_cache_changes(app.clone(), work_rx));
        Some(tokio::spawn(async move {
            let Some(sync) = app.sync.as_ref() else { return };
            // Until the revocation list has been reloaded, heartbeats vouch for nothing.
            let mut synced = false;
            while let Some(event) = events.recv().await {
                match event {
                    NodeEvent::Resync => {
                        synced = false;
                        let _ = work_tx.send(CacheWork::ReloadAll);
                    }
                    NodeEvent::Heartbeat { sent } if synced => sync.freshness.heard_through(sent),
                    NodeEvent::Heartbeat { .. } => {}
                    NodeEvent::Notification { channel, payload } => match channel.as_str() {
                        CHANNEL_REVOCATIONS => {
                            if let Some(r) = &sync.revocations {
                                r.apply_notification(&payload);
                            }
                        }
                        CHANNEL_REGISTRY => drop(work_tx.send(CacheWork::Registry(payload))),
                        CHANNEL_KEYS => drop(work_tx.send(CacheWork::Keys)),
                        _ => {}
                    },
                }
                let mut pause = Duration::from_millis(100);
                while !synced {
                    match sync.reload_revocations().await {
                        Ok(()) => synced = true,
                        Err(e) => {
                            tracing::warn!(error = %e, "reloading the revocation list failed; retrying");
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(2));
                        }
                    }
                }
            }
            worker.abort();
        }))
    }

    async fn reload_revocations(&self) -> anyhow::Result<()> {
        if let Some(r) = &self.revocations {
            let n = r.resync().await?;
            tracing::debug!(revocations = n, "revocation list reloaded");
        }
        Ok(())
    }

    /// Wait until this node is in step (at start, before taking traffic).
    pub async fn wait_fresh(&self, limit: Duration) -> anyhow::Result<()> {
        let start = std::time::Instant::now();
        while !self.is_fresh() {
            if start.elapsed() > limit {
                anyhow::bail!("could not get in step with the database's notifications within {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }
}

enum CacheWork {
    ReloadAll,
    Registry(String),
    Keys,
}

/// Apply registry and key changes in arrival order. A change that cannot be applied (the
/// database went away) is recovered by reloading everything once the database answers.
async fn apply_cache_changes(app: AppState, mut work: tokio::sync::mpsc::UnboundedReceiver<CacheWork>) {
    while let Some(item) = work.recv().await {
        let result = match item {
            CacheWork::ReloadAll => Err(anyhow::anyhow!("reconnected")),
            CacheWork::Registry(payload) => match app.registry.apply_notification(&payload).await {
                Ok(()) => {
                    app.apply_tenant_changes().await;
                    Ok(())
                }
                Err(e) => Err(e.into()),
            },
            CacheWork::Keys => app.tenants.refresh_keys().await,
        };
        let Err(reason) = result else { continue };
        tracing::debug!(%reason, "reloading the registry and keys");
        let mut pause = Duration::from_millis(100);
        while let Err(e) = reload_caches(&app).await {
            tracing::warn!(error = %e, "reloading the registry and keys failed; retrying");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }
}

async fn reload_caches(app: &AppState) -> anyhow::Result<()> {
    app.registry.resync().await?;
    app.tenants.reload_changed(app.tenant_parts()).await?;
    app.tenants.refresh_keys().await
}
