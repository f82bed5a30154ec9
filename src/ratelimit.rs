//! Sign-in throttling: failed logins per account and per client address over a sliding
//! window, and a bound on how many password hashes run at once.
//!
//! An attempt is *reserved* before its password is checked and settled after: attempts in
//! flight count against the limits, so N parallel guesses against one account evaluate at
//! most as many passwords as the limit allows, and a locked account refuses the right
//! password too until its window has slid past the failures. The account bucket is keyed by
//! the account (whatever name or e-mail was typed for it); a name that matches no account has
//! a bucket of its own, so the limiter behaves the same either way and reveals nothing about
//! which accounts exist.
//!
//! An address is counted as the unit a client controls (`address_unit`): an IPv6 client is
//! its /64, so that rotating through the addresses of one's own prefix gains nothing.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Semaphore;

pub mod recipients;

pub struct LoginLimiter {
    per_account: u32,
    per_address: u32,
    window: u64,
    max_keys: usize,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Default)]
struct Bucket {
    failures: VecDeque<u64>,
    in_flight: u32,
    /// When a failure last filled this bucket and was reported (`Attempt::failed`), so that a
    /// lock is reported once per window, not once per failure that refills it.
    reported: Option<u64>,
}

impl Bucket {
    fn slide(&mut self, now: u64, window: u64) {
        while self.failures.front().is_some_and(|t| t + window <= now) {
            self.failures.pop_front();
        }
    }

    fn idle(&self) -> bool {
        self.in_flight == 0 && self.failures.is_empty()
    }
}

/// A reserved sign-in attempt. Settle it with `failed` or `succeeded`; one dropped unsettled
/// (its request was abandoned mid-check) counts as a failure.
pub struct Attempt<'a> {
    limiter: &'a LoginLimiter,
    keys: [String; 2],
    settled: bool,
}

impl LoginLimiter {
    pub fn new(per_account: u32, per_address: u32, window: u64, max_keys: usize) -> Self {
        Self { per_account, per_address, window, max_keys, buckets: Mutex::new(HashMap::new()) }
    }

    /// Reserve an attempt for the account bucket `account` (see `account_key`) from `address`,
    /// or `None` while either bucket's failures and attempts in flight reach its limit.
    pub fn begin(&self, account: &str, address: &str, now: u64) -> Option<Attempt<'_>> {
        let keys = [format!("acct:{account}"), format!("addr:{}", address_key(address))];
        let limits = [self.per_account, self.per_address];
        let mut map = self.buckets.lock();
        for (key, limit) in keys.iter().zip(limits) {
            if let Some(b) = map.get_mut(key) {
                b.slide(now, self.window);
                if b.failures.len() as u64 + u64::from(b.in_flight) >= u64::from(limit) {
                    return None;
                }
            }
        }
        for key in &keys {
            if !map.contains_key(key) {
                self.make_room(&mut map, now);
            }
            map.entry(key.clone()).or_default().in_flight += 1;
        }
        Some(Attempt { limiter: self, keys, settled: false })
    }

    /// Keep the map within `max_keys`: drop idle buckets, then those whose last failure is
    /// oldest. Buckets with attempts in flight are never dropped.
    fn make_room(&self, map: &mut HashMap<String, Bucket>, now: u64) {
        if map.len() < self.max_keys {
            return;
        }
        let window = self.window;
        map.retain(|_, b| {
            b.slide(now, window);
            !b.idle()
        });
        if map.len() < self.max_keys {
            return;
        }
        let mut by_age: Vec<(u64, String)> = map
            .iter()
            .filter(|(_, b)| b.in_flight == 0)
            .map(|(k, b)| (b.failures.back().copied().unwrap_or(0), k.clone()))
            .collect();
        by_age.sort_unstable();
        let excess = map.len() - self.max_keys * 9 / 10;
        for (_, key) in by_age.into_iter().take(excess) {
            map.remove(&key);
        }
    }

    /// Settle an attempt; whether a failure filled the account bucket (it is now locked) and no
    /// lock of it was reported within the window.
    fn settle(&self, keys: &[String; 2], outcome: Outcome) -> bool {
        let mut map = self.buckets.lock();
        let mut locked = false;
        for (i, key) in keys.iter().enumerate() {
            let Some(b) = map.get_mut(key) else { continue };
            b.in_flight = b.in_flight.saturating_sub(1);
            match outcome {
                Outcome::Failed(t) => {
                    b.failures.push_back(t);
                    let full = b.failures.len() as u64 >= u64::from(self.per_account);
                    if i == 0 && full && b.reported.is_none_or(|r| r + self.window <= t) {
                        b.reported = Some(t);
                        locked = true;
                    }
                }
                // A success clears the account's failures, not the address's.
                Outcome::Succeeded if i == 0 => b.failures.clear(),
                Outcome::Succeeded | Outcome::Unchecked => {}
            }
            if b.idle() {
                map.remove(key);
            }
        }
        locked
    }

    pub fn prune(&self, now: u64) {
        let window = self.window;
        self.buckets.lock().retain(|_, b| {
            b.slide(now, window);
            !b.idle()
        });
    }

    pub fn tracked_keys(&self) -> usize {
        self.buckets.lock().len()
    }
}

#[derive(Clone, Copy)]
enum Outcome {
    Failed(u64),
    Succeeded,
    /// The password was never checked (the server was too busy): nothing to count.
    Unchecked,
}

impl Attempt<'_> {
    /// A failure. `true` when it locked the account bucket (its failures reached the limit),
    /// reported at most once per window: the caller tells the user.
    pub fn failed(mut self, now: u64) -> bool {
        self.settled = true;
        self.limiter.settle(&self.keys, Outcome::Failed(now))
    }

    pub fn succeeded(mut self) {
        self.settled = true;
        self.limiter.settle(&self.keys, Outcome::Succeeded);
    }

    /// Give the place back without a verdict: the password was not checked.
    pub fn unchecked(mut self) {
        self.settled = true;
        self.limiter.settle(&self.keys, Outcome::Unchecked);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.limiter.settle(&self.keys, Outcome::Failed(crate::util::now()));
        }
    }
}

/// The unit every per-address limit counts. IPv4: the address. IPv6: its /64, the block a
/// single host or subscriber is normally given, so that one client cannot step around a limit
/// by rotating through the addresses of its own prefix. An IPv4 client of a dual-stack
/// listener arrives as an IPv4-mapped IPv6 address and is counted as the IPv4 address it is.
pub fn address_unit(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u64::MAX as u128))),
        v4 => v4,
    }
}

/// The throttle key of a client address as `endpoints::interaction::client_address` gives it
/// (the peer, or a proxy's `X-Forwarded-For` hop): its `address_unit`, or the text as it is
/// when it is no IP address (a proxy's odd value still gets a bucket of its own).
pub fn address_key(address: &str) -> String {
    match address.parse::<IpAddr>() {
        Ok(ip) => address_unit(ip).to_string(),
        Err(_) => address.to_string(),
    }
}

/// The account bucket for what was typed into the login form: the account's id when the name
/// or e-mail belongs to one, else the typed name in its normalized form.
pub fn account_key(user_id: Option<&str>, typed: &str) -> String {
    match user_id {
        Some(id) => format!("user:{id}"),
        None => format!("name:{}", crate::registry::users::login_key(typed)),
    }
}

/// At most `slots` password hashes at once, on the blocking pool; at most `max_waiting`
/// callers queue for a slot, and the rest are turned away at once.
pub struct HashSlots {
    slots: Semaphore,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl HashSlots {
    pub fn new(slots: usize, max_waiting: usize) -> Self {
        Self { slots: Semaphore::new(slots.max(1)), waiting: AtomicUsize::new(0), max_waiting }
    }

    /// Run `f` (a password hash) when a slot is free; `None` when too many already wait.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let _permit = match self.slots.try_acquire() {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return None;
                }
                // Leaves the queue however the wait ends, also when the caller gives up.
                struct Queued<'a>(&'a AtomicUsize);
                impl Drop for Queued<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::AcqRel);
                    }
                }
                let _queued = Queued(&self.waiting);
                self.slots.acquire().await.ok()?
            }
        };
        tokio::task::spawn_blocking(f).await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_limit_then_window_expiry() {
        let l = LoginLimiter::new(3, 100, 60, 1_000);
        for _ in 0..3 {
            l.begin("alice", "1.2.3.4", 1000).unwrap().failed(1000);
        }
        assert!(l.begin("alice", "5.6.7.8", 1001).is_none(), "account limit is per account, any address");
        assert!(l.begin("bob", "1.2.3.4", 1001).is_some());
        assert!(l.begin("alice", "5.6.7.8", 1060).is_some(), "window slid past the failures");
    }

    #[test]
    fn address_limit_spans_accounts() {
        let l = LoginLimiter::new(100, 2, 60, 1_000);
        l.begin("a", "9.9.9.9", 10).unwrap().failed(10);
        l.begin("b", "9.9.9.9", 10).unwrap().failed(10);
        assert!(l.begin("c", "9.9.9.9", 11).is_none());
        assert!(l.begin("c", "8.8.8.8", 11).is_some());
    }

    #[test]
    fn a_lock_is_reported_once_per_window() {
        let l = LoginLimiter::new(2, 100, 60, 1_000);
        assert!(!l.begin("alice", "1.1.1.1", 10).unwrap().failed(10));
        assert!(l.begin("alice", "2.2.2.2", 11).unwrap().failed(11), "the failure that fills the bucket locks it");
        assert!(l.begin("alice", "2.2.2.2", 12).is_none());
        // The first failure slides out; a failure refills the bucket within the window of the
        // report: locked again, not reported again.
        assert!(!l.begin("alice", "3.3.3.3", 70).unwrap().failed(70));
        assert!(l.begin("alice", "3.3.3.3", 70).is_none(), "locked again");
        // Once the window of the report has passed, a new lock is reported.
        assert!(!l.begin("alice", "3.3.3.3", 131).unwrap().failed(131));
        assert!(l.begin("alice", "3.3.3.3", 132).unwrap().failed(132), "a new lock, a new report");
        assert!(!l.begin("bob", "3.3.3.3", 133).unwrap().failed(133), "the address bucket's failures lock no account");
    }

    #[test]
    fn an_ipv6_64_is_one_address() {
        let l = LoginLimiter::new(100, 2, 60, 1_000);
        l.begin("a", "2001:db8:1:2::1", 10).unwrap().failed(10);
        l.begin("b", "2001:db8:1:2:ffff:ffff:ffff:fffe", 10).unwrap().failed(10);
        assert!(l.begin("c", "2001:db8:1:2:abcd::7", 11).is_none(), "another address of the same /64 is the same client");
        // (An attempt dropped unsettled counts as a failure: these give their place back.)
        l.begin("c", "2001:db8:1:3::1", 11).expect("the next /64 is another client").unchecked();
        l.begin("d", "192.0.2.7", 11).unwrap().failed(11);
        l.begin("e", "::ffff:192.0.2.7", 11).unwrap().failed(11);
        assert!(l.begin("f", "192.0.2.7", 11).is_none(), "a mapped IPv4 address is the IPv4 address");
        assert_eq!(address_key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::");
        assert_eq!(address_key("not an address"), "not an address");
    }

    #[test]
    fn attempts_in_flight_count_against_the_limit() {
        let l = LoginLimiter::new(5, 100, 60, 1_000);
        let held: Vec<_> = (0..5).map(|i| l.begin("alice", &format!("10.0.0.{i}"), 1).unwrap()).collect();
        assert!(l.begin("alice", "10.0.0.9", 1).is_none(), "five guesses in flight fill the bucket");
        let mut held = held.into_iter();
        held.next().unwrap().succeeded();
        assert!(l.begin("alice", "10.0.0.9", 1).is_some(), "a settled success frees its place");
    }

    #[test]
    fn an_abandoned_attempt_counts_as_a_failure() {
        let l = LoginLimiter::new(1, 100, 60, 1_000);
        drop(l.begin("alice", "1.1.1.1", crate::util::now()).unwrap());
        assert!(l.begin("alice", "1.1.1.1", crate::util::now()).is_none());
    }

    #[test]
    fn the_map_stays_bounded_and_keeps_busy_buckets() {
        let l = LoginLimiter::new(5, 1_000_000, 60, 1_000);
        let busy = l.begin("victim", "1.1.1.1", 1).unwrap();
        for i in 0..5_000 {
            l.begin(&format!("spray{i}"), "1.1.1.1", 1).unwrap().failed(1);
        }
        assert!(l.tracked_keys() <= 1_000, "{} buckets", l.tracked_keys());
        busy.failed(1);
        let map = l.buckets.lock();
        assert_eq!(map.get("acct:victim").map(|b| b.failures.len()), Some(1), "a bucket in use was not evicted");
    }

    #[test]
    fn the_account_key_is_the_account_whatever_was_typed() {
        assert_eq!(account_key(Some("u1"), "bob"), account_key(Some("u1"), "BOB@EXAMPLE.COM"));
        assert_eq!(account_key(None, " Bob "), account_key(None, "bob"));
        assert_ne!(account_key(None, "bob"), account_key(Some("bob"), "bob"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn hash_slots_bound_concurrency_and_turn_away_the_excess() {
        use std::sync::Arc;
        let slots = Arc::new(HashSlots::new(1, 2));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Arc::new(parking_lot::Mutex::new(released));
        let mut tasks = Vec::new();
        for _ in 0..3 {
            let (slots, running, peak, released) = (slots.clone(), running.clone(), peak.clone(), released.clone());
            tasks.push(tokio::spawn(async move {
                slots
                    .run(move || {
                        let n = running.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(n, Ordering::SeqCst);
                        let _ = released.lock().recv();
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
            }));
        }
        // One hashing, two queued: a fourth finds the queue full and is turned away at once.
        while slots.waiting.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(slots.run(|| ()).await.is_none());
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        for t in tasks {
            assert!(t.await.unwrap().is_some());
        }
        assert_eq!(peak.load(Ordering::SeqCst), 1, "one hash at a time");
        assert!(HashSlots::new(1, 0).run(|| ()).await.is_some(), "a free slot needs no queue");
    }
}
