//! Mail per recipient: how many messages unauthenticated requests (sign-up links, the notice
//! to an address's owner, reset links) may send to one address within a sliding window,
//! whoever asks and from however many client addresses. The client-address throttles bound
//! what one client can do; this bounds what many clients can do to one inbox.
//!
//! The key is the address as its inbox sees it: compared as login names are (NFKC, lower
//! case), and without a `+tag` of the local part (RFC 5233 sub-addressing delivers
//! `victim+1@…` and `victim+2@…` to one inbox).

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};

pub struct RecipientLimiter {
    limit: u32,
    window: u64,
    max_keys: usize,
    sent: Mutex<HashMap<String, VecDeque<u64>>>,
}

/// The inbox `address` delivers to, for counting.
pub fn recipient_key(address: &str) -> String {
    let key = crate::registry::users::login_key(address);
    match key.rsplit_once('@') {
        Some((local, domain)) => format!("{}@{domain}", local.split('+').next().unwrap_or(local)),
        None => key,
    }
}

impl RecipientLimiter {
    pub fn new(limit: u32, window: u64, max_keys: usize) -> Self {
        Self { limit, window, max_keys: max_keys.max(1), sent: Mutex::new(HashMap::new()) }
    }

    /// Count one message to `address` at `now` and say yes, or say no (and count nothing)
    /// when the address already had `limit` within the window.
    pub fn allow(&self, address: &str, now: u64) -> bool {
        let key = recipient_key(address);
        let window = self.window;
        let mut map = self.sent.lock();
        if let Some(times) = map.get_mut(&key) {
            while times.front().is_some_and(|t| t + window <= now) {
                times.pop_front();
            }
            if times.len() as u64 >= u64::from(self.limit) {
                return false;
            }
        } else if map.len() >= self.max_keys {
            // Bounded: drop the addresses whose window has passed, then (a spray of distinct
            // addresses) those whose last message is oldest. An attacker who mails
            // `max_keys` other addresses first frees one inbox's count: that costs them far
            // more mail than it gains.
            map.retain(|_, t| t.back().is_some_and(|last| last + window > now));
            if map.len() >= self.max_keys {
                let mut by_age: Vec<(u64, String)> = map.iter().map(|(k, t)| (t.back().copied().unwrap_or(0), k.clone())).collect();
                by_age.sort_unstable();
                let excess = map.len() - self.max_keys * 9 / 10;
                for (_, k) in by_age.into_iter().take(excess) {
                    map.remove(&k);
                }
            }
        }
        map.entry(key).or_default().push_back(now);
        true
    }

    pub fn prune(&self, now: u64) {
        let window = self.window;
        self.sent.lock().retain(|_, t| t.back().is_some_and(|last| last + window > now));
    }

    pub fn tracked_keys(&self) -> usize {
        self.sent.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_inbox_gets_at_most_the_limit_then_the_window_slides() {
        let l = RecipientLimiter::new(3, 3600, 1_000);
        let spellings = ["victim@example.com", "VICTIM@Example.com", "victim+1@example.com", "ｖｉｃｔｉｍ@example.com", "victim+2@example.com"];
        let allowed = spellings.iter().filter(|a| l.allow(a, 100)).count();
        assert_eq!(allowed, 3, "every spelling is one inbox");
        assert!(l.allow("other@example.com", 100));
        assert!(!l.allow("victim@example.com", 3699));
        assert!(l.allow("victim@example.com", 3700), "the window slid past the first");
    }

    #[test]
    fn the_map_stays_bounded() {
        let l = RecipientLimiter::new(2, 3600, 1_000);
        for i in 0..5_000 {
            assert!(l.allow(&format!("spray{i}@example.com"), 10));
        }
        assert!(l.tracked_keys() <= 1_000, "{}", l.tracked_keys());
        l.prune(10 + 3600);
        assert_eq!(l.tracked_keys(), 0);
    }
}
