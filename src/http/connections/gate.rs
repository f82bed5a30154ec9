//! The connection caps: how many connections may be open at once, in all and per client
//! address. Over either cap a connection is refused at once, never queued: a queued
//! connection would still hold its socket (a file descriptor) while it waits, which is the
//! resource the caps exist to protect.

use crate::metrics::{RefusalLabels, METRICS};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use tokio::sync::Notify;

/// The global cap when the open-file limit cannot be read, and the most we derive from it.
/// Past this many concurrent connections a two-core node is saturated anyway (each one is a
/// task, buffers and a share of the CPU), and refusing the excess fast beats accepting it and
/// answering everything late.
const CEILING: usize = 10_000;
/// File descriptors kept for everything that is not a client connection: the SQLite database,
/// its WAL and journal, the PostgreSQL pool (16 + 1 by default), the listener, epoll and
/// eventfd, stdio, key and certificate reads, and the socket the accept loop itself takes in
/// order to refuse a connection politely. Without that headroom `accept` fails with EMFILE
/// and clients wait in the kernel's backlog instead of being refused.
const RESERVED_FDS: usize = 128;

/// The default global cap: the open-file limit minus what the process needs besides client
/// sockets (at least half the limit, at most [`CEILING`]). The incident behind it: with the
/// limit at 256, 300 half-open requests exhausted the descriptors and every new client timed
/// out; with this cap the excess is refused while the server still has descriptors to spare.
pub fn default_max_connections() -> usize {
    open_file_limit().map_or(CEILING, derive_cap)
}

/// How many client connections the open-file limit leaves room for, if it is limited: a
/// configured `max_connections` above this will meet EMFILE before its cap.
pub fn descriptor_budget() -> Option<usize> {
    open_file_limit().map(|limit| limit.saturating_sub(RESERVED_FDS))
}

fn derive_cap(limit: usize) -> usize {
    limit.saturating_sub(RESERVED_FDS).max(limit / 2).clamp(1, CEILING)
}

/// The soft `RLIMIT_NOFILE`, or None if unlimited or unreadable.
fn open_file_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit into the valid pointer we pass.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
        if rc != 0 || rl.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        usize::try_from(rl.rlim_cur).ok()
    }
    #[cfg(not(unix))]
    None
}

/// Which cap refused a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Global,
    Address,
}

impl Refusal {
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Global => "global_limit",
            Refusal::Address => "address_limit",
        }
    }
}

/// Counts open connections; admits a new one only under both caps.
pub struct Gate {
    max_total: usize,
    max_per_address: usize,
    counts: Mutex<Counts>,
    /// Woken when the last connection closes (graceful shutdown waits for it).
    drained: Notify,
}

#[derive(Default)]
struct Counts {
    total: usize,
    /// Open connections per address key. An entry exists only while its count is positive,
    /// so the map never holds more than `total` ≤ `max_total` entries: a flood of distinct
    /// addresses cannot grow it past the global cap.
    per_address: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
pub struct Permit {
    gate: Arc<Gate>,
    key: IpAddr,
}

impl Gate {
    pub fn new(max_total: usize, max_per_address: usize) -> Arc<Self> {
        Arc::new(Self { max_total, max_per_address, counts: Mutex::default(), drained: Notify::new() })
    }

    /// Admit a connection from `ip`, or say which cap it would exceed.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Permit, Refusal> {
        let key = address_key(ip);
        let mut counts = self.counts.lock();
        if counts.total >= self.max_total {
            return Err(Refusal::Global);
        }
        if counts.per_address.get(&key).copied().unwrap_or(0) >= self.max_per_address {
            return Err(Refusal::Address);
        }
        *counts.per_address.entry(key).or_insert(0) += 1;
        counts.total += 1;
        METRICS.connections_open.inc();
        Ok(Permit { gate: self.clone(), key })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.counts.lock().total
    }

    /// Wait until every connection has closed.
    pub async fn drained(&self) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            // Registered before the check, so a close between the check and the await is not missed.
            notified.as_mut().enable();
            if self.open() == 0 {
                return;
            }
            notified.await;
        }
    }

    fn release(&self, key: &IpAddr) {
        let mut counts = self.counts.lock();
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.per_address.get_mut(key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.per_address.remove(key);
            }
        }
        METRICS.connections_open.dec();
        if counts.total == 0 {
            self.drained.notify_waiters();
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.release(&self.key);
    }
}

/// Count a refused connection.
pub fn record_refusal(refusal: Refusal) {
    METRICS.connections_refused.get_or_create(&RefusalLabels { reason: refusal.label() }).inc();
}

/// The unit the per-address cap counts: the one every address throttle counts
/// (`ratelimit::address_unit`), an IPv6 /64 as one address.
fn address_key(ip: IpAddr) -> IpAddr {
    crate::ratelimit::address_unit(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_per_address_cap_refuses_only_that_address() {
        let gate = Gate::new(10, 2);
        let a = [gate.admit(ip("10.0.0.1")).unwrap(), gate.admit(ip("10.0.0.1")).unwrap()];
        assert_eq!(gate.admit(ip("10.0.0.1")).err(), Some(Refusal::Address));
        let b = gate.admit(ip("10.0.0.2")).expect("another address is admitted");
        drop(a);
        assert!(gate.admit(ip("10.0.0.1")).is_ok(), "closing frees the address's places");
        drop(b);
    }

    #[test]
    fn the_global_cap_refuses_every_address() {
        let gate = Gate::new(3, 2);
        let held: Vec<_> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"].iter().map(|a| gate.admit(ip(a)).unwrap()).collect();
        assert_eq!(gate.admit(ip("10.0.0.4")).err(), Some(Refusal::Global));
        drop(held);
        assert_eq!(gate.open(), 0);
        assert!(gate.admit(ip("10.0.0.4")).is_ok());
    }

    #[test]
    fn the_address_map_holds_only_open_addresses() {
        let gate = Gate::new(2, 1);
        for i in 0..50u8 {
            drop(gate.admit(IpAddr::from([10, 0, 0, i])).unwrap());
        }
        assert!(gate.counts.lock().per_address.is_empty(), "a closed address leaves no entry");
        let _held = [gate.admit(ip("10.0.0.1")).unwrap(), gate.admit(ip("10.0.0.2")).unwrap()];
        assert_eq!(gate.admit(ip("10.0.0.1")).err(), Some(Refusal::Global));
        assert_eq!(gate.admit(ip("10.0.0.3")).err(), Some(Refusal::Global));
        assert_eq!(gate.counts.lock().per_address.len(), 2, "a refused address leaves no entry");
    }

    #[test]
    fn ipv6_is_counted_per_64_and_mapped_ipv4_as_ipv4() {
        assert_eq!(address_key(ip("2001:db8:1:2:aaaa::1")), address_key(ip("2001:db8:1:2:bbbb::2")));
        assert_ne!(address_key(ip("2001:db8:1:2::1")), address_key(ip("2001:db8:1:3::1")));
        assert_eq!(address_key(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
    }

    #[test]
    fn the_derived_cap_leaves_descriptors_for_the_process() {
        assert_eq!(derive_cap(256), 128, "half of a small limit");
        assert_eq!(derive_cap(1024), 1024 - RESERVED_FDS);
        assert_eq!(derive_cap(1_048_576), CEILING);
        assert_eq!(derive_cap(1), 1);
        assert!(default_max_connections() >= 1);
    }

    #[tokio::test]
    async fn drained_waits_for_the_last_connection() {
        let gate = Gate::new(4, 4);
        let permit = gate.admit(ip("10.0.0.1")).unwrap();
        let waiter = tokio::spawn({
            let gate = gate.clone();
            async move { gate.drained().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        drop(permit);
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter).await.unwrap().unwrap();
    }
}
