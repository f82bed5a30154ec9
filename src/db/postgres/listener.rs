//! LISTEN/NOTIFY: how one node hears what the others changed (clients and users, signing
//! keys, revoked tokens), and how it knows it has heard everything up to a point in time.
//!
//! PostgreSQL delivers notifications to a listening session in commit order. Every few
//! hundred milliseconds the node notifies itself (a heartbeat stamped with its send time);
//! once the heartbeat sent at `t` has been handled, every notification committed before `t`
//! has been handled too. `Freshness` turns that into a bound: a node that has not handled a
//! heartbeat younger than `max_staleness` refuses to answer from its revocation cache (503)
//! rather than answer from a cache that may be missing a revocation.

use super::classify;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, NoTls};

pub const CHANNEL_REGISTRY: &str = "authrim_registry";
pub const CHANNEL_REVOCATIONS: &str = "authrim_revocations";
pub const CHANNEL_KEYS: &str = "authrim_keys";

#[derive(Debug)]
pub enum NodeEvent {
    /// Listening (again) after a connect: what happened meanwhile is unknown; reload caches.
    Resync,
    Notification { channel: String, payload: String },
    /// Our own heartbeat, sent at `Freshness` time `sent`.
    Heartbeat { sent: u64 },
}

/// Up to when this node has handled every committed notification.
pub struct Freshness {
    epoch: Instant,
    heard_through_us: AtomicU64,
    max_staleness: Duration,
}

impl Freshness {
    pub fn new(max_staleness: Duration) -> Arc<Self> {
        Arc::new(Self { epoch: Instant::now(), heard_through_us: AtomicU64::new(0), max_staleness })
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// Called once the heartbeat sent at `sent` has been handled, after everything before it.
    pub fn heard_through(&self, sent: u64) {
        self.heard_through_us.fetch_max(sent, Ordering::AcqRel);
    }

    /// Every notification committed more than `max_staleness` ago has been handled.
    pub fn is_fresh(&self) -> bool {
        let heard = self.heard_through_us.load(Ordering::Acquire);
        heard > 0 && self.now_us().saturating_sub(heard) <= self.max_staleness.as_micros() as u64
    }

    pub fn max_staleness(&self) -> Duration {
        self.max_staleness
    }
}

pub struct Listener;

impl Listener {
    /// Start the notification connection; events arrive on the returned receiver in order.
    /// The task reconnects on its own and ends when the receiver is dropped.
    pub fn start(config: tokio_postgres::Config, freshness: Arc<Freshness>) -> mpsc::Receiver<NodeEvent> {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(async move {
            let mut pause = Duration::from_millis(100);
            loop {
                let started = Instant::now();
                let result = session(&config, &freshness, &tx).await;
                if tx.is_closed() {
                    return;
                }
                if let Err(e) = result {
                    tracing::warn!(error = %e, "notification connection lost; reconnecting");
                }
                if started.elapsed() > Duration::from_secs(10) {
                    pause = Duration::from_millis(100);
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        });
        rx
    }
}

async fn session(config: &tokio_postgres::Config, freshness: &Freshness, tx: &mpsc::Sender<NodeEvent>) -> anyhow::Result<()> {
    let (client, mut connection) = config.connect(NoTls).await.map_err(classify)?;
    let (note_tx, mut notes) = mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if note_tx.send(n).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "notification connection failed");
                    return;
                }
            }
        }
    });
    let heartbeat_channel = format!("authrim_hb_{}", crate::util::hex(&crate::util::random_bytes::<8>()));
    let result = async {
        client
            .batch_execute(&format!(
                "LISTEN {CHANNEL_REGISTRY}; LISTEN {CHANNEL_REVOCATIONS}; LISTEN {CHANNEL_KEYS}; LISTEN {heartbeat_channel}"
            ))
            .await
            .map_err(classify)?;
        tx.send(NodeEvent::Resync).await?;
        let every = freshness.max_staleness() / 4;
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let sent = freshness.now_us().to_string();
                    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&heartbeat_channel, &sent];
                    let beat = client.execute("SELECT pg_notify($1, $2)", &params);
                    tokio::time::timeout(freshness.max_staleness(), beat).await??;
                }
                note = notes.recv() => {
                    let Some(n) = note else { anyhow::bail!("notification connection closed") };
                    let event = if n.channel() == heartbeat_channel {
                        NodeEvent::Heartbeat { sent: n.payload().parse().unwrap_or(0) }
                    } else {
                        NodeEvent::Notification { channel: n.channel().to_string(), payload: n.payload().to_string() }
                    };
                    tx.send(event).await?;
                }
            }
        }
    }
    .await;
    driver.abort();
    result
}
