//! PostgreSQL nodes: keeping this node's caches (registry, signing keys, revocation list) in
//! step with what the other nodes and the CLI commit, from the notifications the listener
//! hears. Events are handled strictly in arrival order, which is commit order, so a handled
//! heartbeat vouches for everything committed before it (see `db::postgres::listener`).

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

    /// Start listening and applying. The task ends when the server stops.
    pub fn spawn(app: AppState) -> Option<JoinHandle<()>> {
        let sync = app.sync.as_ref()?;
        let mut events = Listener::start(sync.config.clone(), sync.freshness.clone());
        Some(tokio::spawn(async move {
            let Some(sync) = app.sync.as_ref() else { return };
            // Until a resync has succeeded, heartbeats vouch for nothing.
            let mut synced = false;
            while let Some(event) = events.recv().await {
                match event {
                    NodeEvent::Resync => synced = false,
                    NodeEvent::Heartbeat { sent } if synced => sync.freshness.heard_through(sent),
                    NodeEvent::Heartbeat { .. } => {}
                    NodeEvent::Notification { channel, payload } if synced => {
                        if let Err(e) = sync.apply(&app, &channel, &payload).await {
                            tracing::warn!(error = %e, %channel, "could not apply a change from another node; resyncing");
                            synced = false;
                        }
                    }
                    NodeEvent::Notification { .. } => {}
                }
                // Anything missed (a reconnect, a failed apply) is recovered by reloading all,
                // before any later event is handled.
                let mut pause = Duration::from_millis(100);
                while !synced {
                    match sync.resync(&app).await {
                        Ok(()) => synced = true,
                        Err(e) => {
                            tracing::warn!(error = %e, "resync with the database failed; retrying");
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(2));
                        }
                    }
                }
            }
        }))
    }

    async fn apply(&self, app: &AppState, channel: &str, payload: &str) -> anyhow::Result<()> {
        match channel {
            CHANNEL_REVOCATIONS => {
                if let Some(r) = &self.revocations {
                    r.apply_notification(payload);
                }
            }
            CHANNEL_REGISTRY => app.registry.apply_notification(payload).await?,
            CHANNEL_KEYS => app.keys.refresh().await?,
            _ => {}
        }
        Ok(())
    }

    async fn resync(&self, app: &AppState) -> anyhow::Result<()> {
        if let Some(r) = &self.revocations {
            let n = r.resync().await?;
            tracing::debug!(revocations = n, "revocation list reloaded");
        }
        app.registry.resync().await?;
        app.keys.refresh().await?;
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
