//! Shard routing: a pure function of the key, so no lookup is needed to find a shard.
//! Secrets we mint (codes, session ids, challenges) carry their shard as a prefix,
//! `{shard}_{random}`, picked at random for an even spread; keys we are handed (a `jti`,
//! `userId:clientId`) are routed by a hash.

use crate::util::{random_bytes, random_token, sha256};

/// Mint `{shard}_{random}` with a uniformly chosen shard.
pub fn mint_prefixed(shard_count: usize) -> (usize, String) {
    let r = u64::from_le_bytes(random_bytes::<8>());
    let shard = (r % shard_count as u64) as usize;
    (shard, format!("{shard}_{}", random_token()))
}

/// Split a `{shard}_{random}` value into its shard (modulo the current shard count, so values
/// minted before a shard-count change still route consistently with how they were loaded) and
/// the SHA-256 under which it is stored. Anything not of that shape is `None`.
pub fn parse_prefixed(value: &str, shard_count: usize) -> Option<(usize, [u8; 32])> {
    let (prefix, random) = value.split_once('_')?;
    if prefix.is_empty() || prefix.len() > 5 || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if random.len() != 43 || !random.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return None;
    }
    let shard: usize = prefix.parse().ok()?;
    Some((shard % shard_count, sha256(value.as_bytes())))
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
            let (parsed, hash) = parse_prefixed(&v, 64).unwrap();
            assert_eq!(parsed, shard);
            assert_eq!(hash, sha256(v.as_bytes()));
        }
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
            assert!(parse_prefixed(&bad, 8).is_none(), "{bad:?} accepted");
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
