//! Failed-login throttling, per account name and per client address, over a sliding window.
//! Keys are what the form says, whether or not such a user exists, so the limiter reveals
//! nothing about which accounts exist.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};

pub struct LoginLimiter {
    per_account: u32,
    per_address: u32,
    window: u64,
    failures: Mutex<HashMap<String, VecDeque<u64>>>,
}

const MAX_TRACKED_KEYS: usize = 100_000;

impl LoginLimiter {
    pub fn new(per_account: u32, per_address: u32, window: u64) -> Self {
        Self { per_account, per_address, window, failures: Mutex::new(HashMap::new()) }
    }

    fn keys(login: &str, address: &str) -> [(String, bool); 2] {
        [(format!("acct:{}", login.trim().to_lowercase()), true), (format!("addr:{address}"), false)]
    }

    /// Whether another attempt for this account from this address may be tried now.
    pub fn allowed(&self, login: &str, address: &str, now: u64) -> bool {
        let mut map = self.failures.lock();
        Self::keys(login, address).iter().all(|(key, is_account)| {
            let limit = if *is_account { self.per_account } else { self.per_address } as usize;
            match map.get_mut(key) {
                Some(q) => {
                    while q.front().is_some_and(|t| *t + self.window <= now) {
                        q.pop_front();
                    }
                    q.len() < limit
                }
                None => true,
            }
        })
    }

    pub fn record_failure(&self, login: &str, address: &str, now: u64) {
        let mut map = self.failures.lock();
        if map.len() >= MAX_TRACKED_KEYS {
            let window = self.window;
            map.retain(|_, q| q.back().is_some_and(|t| t + window > now));
        }
        for (key, _) in Self::keys(login, address) {
            map.entry(key).or_default().push_back(now);
        }
    }

    /// A successful login clears the account's failures (not the address's).
    pub fn record_success(&self, login: &str) {
        self.failures.lock().remove(&format!("acct:{}", login.trim().to_lowercase()));
    }

    pub fn prune(&self, now: u64) {
        let window = self.window;
        self.failures.lock().retain(|_, q| q.back().is_some_and(|t| t + window > now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_limit_then_window_expiry() {
        let l = LoginLimiter::new(3, 100, 60);
        for _ in 0..3 {
            assert!(l.allowed("Alice", "1.2.3.4", 1000));
            l.record_failure("Alice", "1.2.3.4", 1000);
        }
        assert!(!l.allowed("alice", "5.6.7.8", 1001), "account limit is per account, any address");
        assert!(l.allowed("bob", "1.2.3.4", 1001));
        assert!(l.allowed("alice", "5.6.7.8", 1060), "window slid past the failures");
    }

    #[test]
    fn address_limit_spans_accounts() {
        let l = LoginLimiter::new(100, 2, 60);
        l.record_failure("a", "9.9.9.9", 10);
        l.record_failure("b", "9.9.9.9", 10);
        assert!(!l.allowed("c", "9.9.9.9", 11));
        assert!(l.allowed("c", "8.8.8.8", 11));
    }
}
