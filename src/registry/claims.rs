//! A user's standard claims, as the registry holds them in memory.
//!
//! Every user of every tenant stays in memory (`registry`), so the per-user cost decides how
//! many users a node holds: with 1,000 tenants of 100 users each, a `serde_json::Map` (a
//! B-tree whose first node alone is some 620 bytes for three claims) was the largest part of
//! the resident memory (docs/benchmarks.md, "Tenants at scale"). `Claims` keeps the same
//! name/value pairs in one boxed slice, sorted by name: a few claims cost their entries
//! (48 bytes each) and their strings, and a lookup scans a handful of entries.
//!
//! It reads and writes as a JSON object, so the stored `profile` column and the admin API
//! are unchanged.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims(Box<[(Box<str>, Value)]>);

impl Claims {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.position(name).ok().map(|i| &self.0[i].1)
    }

    /// Sets a claim (replacing its value); the slice is rebuilt, which is fine for what
    /// changes a user's claims (an admin, a sign-up, a verified address), never a token path.
    pub fn insert(&mut self, name: &str, value: Value) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        match v.binary_search_by(|(k, _)| (**k).cmp(name)) {
            Ok(i) => v[i].1 = value,
            Err(i) => v.insert(i, (name.into(), value)),
        }
        self.0 = v.into_boxed_slice();
    }

    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.position(name).ok()?;
        let mut v = std::mem::take(&mut self.0).into_vec();
        let (_, value) = v.remove(i);
        self.0 = v.into_boxed_slice();
        Some(value)
    }

    /// In name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (&**k, v))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_map(&self) -> Map<String, Value> {
        self.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    /// The JSON object, as stored.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a JSON value always serializes")
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| (**k).cmp(name))
    }
}

impl From<Map<String, Value>> for Claims {
    fn from(map: Map<String, Value>) -> Self {
        // A `Map` iterates in key order (serde_json's default, a B-tree), but sort anyway so
        // that a different map type cannot break the binary search.
        let mut v: Vec<(Box<str>, Value)> = map.into_iter().map(|(k, v)| (k.into_boxed_str(), v)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        Claims(v.into_boxed_slice())
    }
}

/// `claims["name"]`: the value, or `null` when the claim is not set (as indexing a JSON value).
impl std::ops::Index<&str> for Claims {
    type Output = Value;
    fn index(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(name).unwrap_or(&NULL)
    }
}

impl Serialize for Claims {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Claims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::<String, Value>::deserialize(d).map(Claims::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model_ops(seed: u64) {
        // Randomized against serde_json's Map as the model: any sequence of inserts and
        // removes leaves the same pairs, the same lookups and the same JSON.
        let names = ["email", "name", "locale", "address", "email_verified", "zoneinfo", "a", "z"];
        let mut rng = seed;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut ours, mut model) = (Claims::default(), Map::new());
        for step in 0..200 {
            let name = names[(next() % names.len() as u64) as usize];
            if next() % 3 == 0 {
                assert_eq!(ours.remove(name), model.remove(name), "step {step}");
            } else {
                let value = json!(format!("v{step}"));
                ours.insert(name, value.clone());
                model.insert(name.to_string(), value);
            }
            for n in names {
                assert_eq!(ours.get(n), model.get(n));
            }
            assert_eq!(ours.to_map(), model);
            assert_eq!(ours.to_json(), Value::Object(model.clone()).to_string());
        }
    }

    #[test]
    fn behaves_as_a_json_object() {
        for seed in 1..20u64 {
            model_ops(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
    }

    #[test]
    fn reads_and_writes_the_stored_json() {
        let text = r#"{"name":"Alice","email":"alice@example.com","address":{"country":"FR"},"email_verified":true}"#;
        let c: Claims = serde_json::from_str(text).unwrap();
        assert_eq!(c.get("email"), Some(&json!("alice@example.com")));
        assert_eq!(c.get("address"), Some(&json!({"country": "FR"})));
        assert_eq!(c.get("missing"), None);
        assert_eq!(serde_json::from_str::<Value>(&c.to_json()).unwrap(), serde_json::from_str::<Value>(text).unwrap());
        assert!(serde_json::from_str::<Claims>("[1]").is_err());
    }
}
