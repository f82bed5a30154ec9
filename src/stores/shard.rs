//! Shard routing: a pure function of the key, so no lookup is needed to find a shard.
//! Secrets we mint (codes, session ids, challenges) carry their shard as a prefix,
//! `{shard}_{random}`, picked at random for an even spread; keys we are handed (a `jti`,
//! `userId:clientId`) are routed by a hash.

use super::table::Key;
use crate::tenant::TenantId;
use crate::util::{random_bytes, random_token, sha256};

/// The key under which `value` (a secret we minted, a `jti`, a family id, a replay mark) is
/// stored for `tenant`: the tenant is part of every store key, so one tenant's lookup of
/// another's value finds nothing by construction.
///
/// The default tenant's key is `SHA-256(value)`, what every row was stored under before
/// tenants, so no row moves. Another tenant's is `SHA-256(0xFF ‖ id as 4 bytes ‖ value)`:
/// `value` is a `&str`, and no UTF-8 text begins with the byte 0xFF, so no value of the
/// default tenant can be made to hash like one of another's, and the fixed-width id keeps
/// two other tenants apart.
pub fn key(tenant: TenantId, value: &str) -> Key {
    if tenant == TenantId::DEFAULT {
        return sha256(value.as_bytes());
    }
    let mut framed = Vec::with_capacity(5 + value.len());
    framed.push(0xFF);
    framed.extend_from_slice(&tenant.0.to_be_bytes());
    framed.extend_from_slice(value.as_bytes());
    sha256(&framed)
}

/// The shard of a key we did not mint (a `jti`, a replay mark): its first 8 bytes modulo the
/// shard count. For the default tenant this is `hash_shard(value)`, so rows written before
/// tenants are found where they were put.
pub fn key_shard(key: &Key, shard_count: usize) -> usize {
    (u64::from_le_bytes(key[..8].try_into().expect("8 bytes")) % shard_count as u64) as usize
}

/// Where `tenant` keeps a value we did not mint: (shard, key).
pub fn route(tenant: TenantId, value: &str, shard_count: usize) -> (usize, Key) {
    let k = key(tenant, value);
    (key_shard(&k, shard_count), k)
}

/// Mint `{shard}_{random}` with a uniformly chosen shard.
pub fn mint_prefixed(shard_count: usize) -> (usize, String) {
    let r = u64::from_le_bytes(random_bytes::<8>());
    let shard = (r % shard_count as u64) as usize;
    (shard, format!("{shard}_{}", random_token()))
}

/// Split a `{shard}_{random}` value into its shard (modulo the current shard count, so values
/// minted before a shard-count change still route consistently with how they were loaded) and
/// the key under which `tenant` stores it (`key`). Anything not of that shape is `None`.
pub fn parse_prefixed(tenant: TenantId, value: &str, shard_count: usize) -> Option<(usize, Key)> {
    let (prefix, random) = value.split_once('_')?;
    if prefix.is_empty() || prefix.len() > 5 || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if random.len() != 43 || !random.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return None;
    }
    let shard: usize = prefix.parse().ok()?;
    Some((shard % shard_count, key(tenant, value)))
}

/// Shard of a key we did not mint: the first 8 bytes of its SHA-256, modulo the shard count.
/// SHA-256 makes the spread even whatever structure the keys have (the reference's hot
/// revocation shard came from keys that were not spread evenly).
pub fn hash_shard(key: &[u8], shard_count: usize) -> usize {
    let h = sha256(key);
    (u64::from_le_bytes(h[..8].try_into().expect("8 bytes")) % shard_count as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_values_parse_back_to_their_shard() {
        for _ in 0..200 {
            let (shard, v) = mint_prefixed(64);
            let (parsed, hash) = parse_prefixed(TenantId::DEFAULT, &v, 64).unwrap();
            assert_eq!(parsed, shard);
            assert_eq!(hash, sha256(v.as_bytes()));
            let (other, other_hash) = parse_prefixed(TenantId(7), &v, 64).unwrap();
            assert_eq!((other, other_hash), (shard, key(TenantId(7), &v)), "same shard, the tenant's key");
        }
    }

    #[test]
    fn the_default_tenant_keys_as_before_and_others_apart() {
        for v in ["1_abc", "jwt:client:jti", ""] {
            assert_eq!(key(TenantId::DEFAULT, v), sha256(v.as_bytes()), "default tenant's keys unchanged");
            assert_eq!(key_shard(&key(TenantId::DEFAULT, v), 16), hash_shard(v.as_bytes(), 16));
            let (a, b) = (key(TenantId(1), v), key(TenantId(2), v));
            assert!(a != b && a != key(TenantId::DEFAULT, v));
        }
        // The framing cannot be forged from the default tenant: its values are text.
        let framed = format!("\u{ff}\0\0\0\u{1}x");
        assert_ne!(key(TenantId::DEFAULT, &framed), key(TenantId(1), "x"));
        assert_ne!(key(TenantId(1), "\0x"), key(TenantId(256), "x"));
    }

    #[test]
    fn malformed_values_are_rejected() {
        let good_tail = "a".repeat(43);
        for bad in [
            String::new(),
            "nounderscore".into(),
            format!("_{good_tail}"),
            format!("x1_{good_tail}"),
            format!("-1_{good_tail}"),
            format!("123456_{good_tail}"),
            "1_short".into(),
            format!("1_{}", "é".repeat(43)),
        ] {
            assert!(parse_prefixed(TenantId::DEFAULT, &bad, 8).is_none(), "{bad:?} accepted");
        }
    }

    #[test]
    fn hash_routing_spreads_evenly() {
        let shards = 16;
        let mut counts = vec![0usize; shards];
        for i in 0..32_000 {
            counts[hash_shard(format!("jti-{i}").as_bytes(), shards)] += 1;
        }
        let expected = 32_000 / shards;
        for c in counts {
            assert!(c > expected * 85 / 100 && c < expected * 115 / 100, "uneven spread: {c}");
        }
    }

    #[test]
    fn minted_shards_spread_evenly() {
        let shards = 8;
        let mut counts = vec![0usize; shards];
        for _ in 0..16_000 {
            counts[mint_prefixed(shards).0] += 1;
        }
        for c in counts {
            assert!(c > 1_600 && c < 2_400, "uneven spread: {c}");
        }
    }
}
