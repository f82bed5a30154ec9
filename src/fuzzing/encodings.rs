//! Fuzz bodies for what is read back from our own encodings and from query grammars: refresh
//! tokens, shard-prefixed values, SCIM filters and paths (see the parent module).

use super::*;

// ---------------------------------------------------------------------------------------------
// refresh tokens and prefixed values

const REFRESH_SHARDS: usize = 32;

fn codec() -> &'static Codec {
    static CODEC: OnceLock<Codec> = OnceLock::new();
    CODEC.get_or_init(|| Codec::new([7; 32]))
}

/// `refresh::Codec` (`locate`, hence `decode`): how a presented refresh token is read. Modes:
/// 0. the data is a token: without the MAC key nothing is authentic;
/// 1. shard (2 bytes), version (8 bytes), then the family: a genuine token decodes to its parts;
/// 2. a genuine token, then edits as in `jwt` mode 2: any change makes it unknown.
pub fn refresh_token(data: &[u8]) {
    let c = codec();
    let (m, rest) = mode(data, 3);
    match m {
        0 => assert_eq!(c.locate(crate::tenant::TenantId::DEFAULT, &text(rest), REFRESH_SHARDS), None, "a forged refresh token located"),
        1 => {
            if rest.len() < 10 {
                return;
            }
            let shard = u16::from_le_bytes([rest[0], rest[1]]) as usize;
            let version = u64::from_le_bytes(rest[2..10].try_into().expect("8 bytes"));
            let family = text(&rest[10..]);
            let token = c.encode(shard, &family, version);
            let expected = (family.len() == 22 && !family.contains('.') && shard < 100_000)
                .then(|| (shard % REFRESH_SHARDS, sha256(family.as_bytes()), version));
            assert_eq!(c.locate(crate::tenant::TenantId::DEFAULT, &token, REFRESH_SHARDS), expected, "token {token:?}");
        }
        _ => {
            let genuine = c.encode(5, "AAAAAAAAAAAAAAAAAAAAAA", 3);
            let mut token = genuine.clone().into_bytes();
            for edit in rest.chunks(2) {
                let pos = edit[0] as usize * token.len() / 255;
                match edit.get(1) {
                    Some(&b) if b & 1 == 1 && pos < token.len() => token[pos] = b >> 1,
                    Some(&b) => token.insert(pos.min(token.len()), b >> 1),
                    None if pos < token.len() => drop(token.remove(pos)),
                    None => {}
                }
            }
            let token = text(&token);
            let located = c.locate(crate::tenant::TenantId::DEFAULT, &token, REFRESH_SHARDS);
            if token == genuine {
                assert_eq!(located, Some((5, sha256(b"AAAAAAAAAAAAAAAAAAAAAA"), 3)));
            } else {
                assert_eq!(located, None, "an edited refresh token located: {token:?}");
            }
        }
    }
}

/// `shard::parse_prefixed`: codes, session ids and challenges as presented. The first byte
/// picks the shard count (1–256), the rest is the value.
pub fn shard_prefix(data: &[u8]) {
    let (count, value) = match data.split_first() {
        Some((c, rest)) => (*c as usize + 1, text(rest)),
        None => (1, Cow::Borrowed("")),
    };
    if let Some((shard, hash)) = crate::stores::shard::parse_prefixed(crate::tenant::TenantId::DEFAULT, &value, count) {
        assert!(shard < count);
        assert_eq!(hash, sha256(value.as_bytes()));
        let (prefix, random) = value.split_once('_').expect("accepted without '_'");
        assert!((1..=5).contains(&prefix.len()) && prefix.bytes().all(|b| b.is_ascii_digit()), "prefix {prefix:?}");
        assert_eq!(shard, prefix.parse::<usize>().expect("digits") % count);
        // 43 base64url characters (not necessarily canonical: such a value is simply unknown).
        assert!(random.len() == 43 && random.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "random part {random:?}");
    }
}

/// `scim::patch`: a SCIM PATCH body (a provisioning system's), parsed and applied to a group
/// without panicking; applied, the group is still a JSON object that keeps its id.
pub fn scim_patch(data: &[u8]) {
    use crate::scim::{patch, CoreSchema};
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(ops) = patch::parse_body(&body) else { return };
    let mut group = serde_json::json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "id": "g1", "displayName": "G",
        "members": [{"value": "u1", "type": "User"}, {"value": "g2", "type": "Group"}]});
    if patch::apply(&mut group, &ops, &CoreSchema).is_ok() {
        assert!(group.is_object(), "{group}");
    }
}

/// `scim::filter::parse` and `scim::path::parse`: a SCIM `filter` parameter or PATCH path.
/// An accepted one prints to text that parses back to it, and a filter evaluates (to a match
/// or an `invalidFilter` error) against a user without panicking.
pub fn scim_filter(data: &[u8]) {
    use crate::scim::{filter, path, CoreSchema};
    let input = text(data);
    if let Ok(parsed) = filter::parse(&input) {
        assert_eq!(filter::parse(&parsed.to_string()).as_ref(), Ok(&parsed), "printed as {parsed}");
        let user = serde_json::json!({"userName": "u", "active": true, "name": {"familyName": "F"},
            "emails": [{"value": "u@example.com", "type": "work"}], "meta": {"lastModified": "2011-05-13T04:42:34Z"}});
        let _ = parsed.matches(&user, &CoreSchema);
    }
    if let Ok(parsed) = path::parse(&input) {
        assert_eq!(path::parse(&parsed.to_string()).as_ref(), Ok(&parsed), "printed as {parsed}");
    }
}
