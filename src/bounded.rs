//! A map that holds at most `capacity` entries and, when full, drops the one inserted longest
//! ago: for caches an unauthenticated client can add to (fetched metadata documents, their
//! key sets). Eviction is amortised O(1): insertion order is a queue, and a queue slot whose
//! key was inserted again since (or removed) is skipped when it comes up.

use std::collections::{HashMap, VecDeque};

pub struct BoundedMap<V> {
    entries: HashMap<String, (u64, V)>,
    order: VecDeque<(String, u64)>,
    next: u64,
    capacity: usize,
}

impl<V> BoundedMap<V> {
    pub fn new(capacity: usize) -> Self {
        Self { entries: HashMap::new(), order: VecDeque::new(), next: 0, capacity: capacity.max(1) }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries.get(key).map(|(_, v)| v)
    }

    /// Insert or replace `key`; the entry counts as the newest.
    pub fn insert(&mut self, key: String, value: V) {
        if !self.entries.contains_key(&key) {
            while self.entries.len() >= self.capacity {
                self.evict_oldest();
            }
        }
        let generation = self.next;
        self.next += 1;
        self.order.push_back((key.clone(), generation));
        self.entries.insert(key, (generation, value));
        // Stale queue slots (replaced keys) are bounded too: compact when they dominate.
        if self.order.len() > 2 * self.capacity + 16 {
            let entries = &self.entries;
            self.order.retain(|(k, g)| entries.get(k).is_some_and(|(eg, _)| eg == g));
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.entries.remove(key).map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn evict_oldest(&mut self) {
        while let Some((key, generation)) = self.order.pop_front() {
            if self.entries.get(&key).is_some_and(|(g, _)| *g == generation) {
                self.entries.remove(&key);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedMap;

    #[test]
    fn the_oldest_insertion_goes_first_and_reinsertion_renews() {
        let mut m = BoundedMap::new(2);
        m.insert("a".into(), 1);
        m.insert("b".into(), 2);
        m.insert("a".into(), 3); // renewed: b is now the oldest
        m.insert("c".into(), 4);
        assert_eq!((m.get("a"), m.get("b"), m.get("c")), (Some(&3), None, Some(&4)));
        assert_eq!(m.len(), 2);
        m.remove("a");
        m.insert("d".into(), 5);
        m.insert("e".into(), 6);
        assert_eq!((m.get("c"), m.get("d"), m.get("e")), (None, Some(&5), Some(&6)));
    }

    #[test]
    fn the_queue_stays_bounded_under_constant_replacement() {
        let mut m = BoundedMap::new(4);
        for i in 0..10_000 {
            m.insert(format!("k{}", i % 3), i);
        }
        assert_eq!(m.len(), 3);
        assert!(m.order.len() <= 2 * 4 + 16);
    }

    #[test]
    fn a_random_workload_matches_a_model() {
        // Model: a Vec in insertion order, oldest first.
        let mut m = BoundedMap::new(5);
        let mut model: Vec<(String, u32)> = Vec::new();
        let mut x: u32 = 12345;
        for _ in 0..20_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = format!("k{}", (x >> 16) % 9);
            if (x >> 8) % 5 == 0 {
                m.remove(&key);
                model.retain(|(k, _)| *k != key);
            } else {
                m.insert(key.clone(), x);
                model.retain(|(k, _)| *k != key);
                if model.len() >= 5 {
                    model.remove(0);
                }
                model.push((key, x));
            }
            assert_eq!(m.len(), model.len());
            for (k, v) in &model {
                assert_eq!(m.get(k), Some(v));
            }
        }
    }
}
