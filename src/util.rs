//! Small cryptographic and time helpers shared by every layer.

use aws_lc_rs::{digest, rand::SecureRandom};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use subtle::ConstantTimeEq;

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A moment (seconds since the epoch) in ISO 8601 / RFC 3339, UTC: `2026-11-28T02:50:35Z`.
pub fn iso8601(t: u64) -> String {
    let (y, m, d) = civil(t);
    let s = t % 86_400;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", s / 3600, (s % 3600) / 60, s % 60)
}

/// Seconds since the epoch to (year, month, day), UTC (Howard Hinnant's days-to-civil).
pub fn civil(t: u64) -> (i64, i64, i64) {
    let z = (t / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `n` bytes from the system CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    aws_lc_rs::rand::SystemRandom::new()
        .fill(&mut buf)
        .expect("system RNG unavailable");
    buf
}

/// 256 bits of randomness, base64url: the body of every code, session id, challenge and secret.
pub fn random_token() -> String {
    b64(&random_bytes::<32>())
}

/// `N` (≤ 64) bytes of the system CSPRNG's output for values that must be unique and
/// unguessable but are no secret (request ids, access-token `jti`s): taken from a per-thread
/// block drawn 512 bytes at a time, because each draw from the generator has a fixed cost
/// (about 2,400 instructions, as much as the rest of a request id) that two draws per token
/// request paid in full. Never for secrets: the block holds values before they are used.
pub fn unique_random<const N: usize>() -> [u8; N] {
    const BLOCK: usize = 512;
    const { assert!(N <= 64) };
    thread_local! {
        static POOL: std::cell::RefCell<([u8; BLOCK], usize)> = const { std::cell::RefCell::new(([0; BLOCK], BLOCK)) };
    }
    POOL.with_borrow_mut(|(block, used)| {
        if BLOCK - *used < N {
            *block = random_bytes::<BLOCK>();
            *used = 0;
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&block[*used..*used + N]);
        *used += N;
        out
    })
}

/// A `unique_random` 256-bit id, base64url (the same form as `random_token`).
pub fn unique_token() -> String {
    b64(&unique_random::<32>())
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn b64_decode(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s).ok()
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    let d = digest::digest(&digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// What stores keep instead of a secret: codes, session ids, challenges and client secrets are
/// 256-bit random values, so an unsalted SHA-256 is preimage-safe and cheap enough for the hot path.
pub fn secret_hash(secret: &str) -> [u8; 32] {
    sha256(secret.as_bytes())
}

pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// Escape text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    // Writing to a String cannot fail.
    let _ = write_html_escaped(&mut out, s);
    out
}

/// `s` escaped for HTML (as `html_escape`) written straight to `out`: the pages' formatter
/// writes every value this way, without a copy of it first.
pub fn write_html_escaped(out: &mut impl std::fmt::Write, s: &str) -> std::fmt::Result {
    // The five characters are ASCII, so every cut below is at a character boundary; the runs
    // between them are copied whole (pages escape every value they show).
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.write_str(&s[from..i])?;
        out.write_str(entity)?;
        from = i + 1;
    }
    out.write_str(&s[from..])
}

/// Space-delimited lists (scope, prompt, acr_values …) as RFC 6749 §3.3 defines them.
pub fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split(' ').filter(|v| !v.is_empty())
}

/// RFC 3986 §2.1 percent-decoding, strictly: a '%' must start two hex digits, and the result
/// must be UTF-8. `None` otherwise (never a guess).
pub fn percent_decode(s: &str) -> Option<String> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let (hi, lo) = (hex(bytes.next()?)?, hex(bytes.next()?)?);
            out.push(hi << 4 | lo);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

/// Lower-case hex, two digits a byte (no `format!` per byte: every userinfo answer uses it).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_random_values_differ_across_blocks() {
        // 100 × 32 bytes spans several 512-byte blocks, and 12-byte draws leave remainders.
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            assert!(seen.insert(unique_random::<32>().to_vec()));
            assert!(seen.insert(unique_random::<12>().to_vec()));
        }
        assert_eq!(unique_token().len(), random_token().len());
    }

    #[test]
    fn iso8601_is_utc_civil_time() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
        assert_eq!(iso8601(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso8601(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn random_tokens_differ_and_are_43_chars() {
        let a = random_token();
        let b = random_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
    }

    #[test]
    fn ct_eq_compares_content_and_length() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"abcd"));
    }

    #[test]
    fn sha256_matches_fips_180_vector() {
        // FIPS 180-2 appendix B.1: SHA-256("abc")
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn html_escape_neutralises_markup() {
        assert_eq!(html_escape("<a href=\"x\">'&"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;");
        assert_eq!(html_escape("サインイン <b>é</b>"), "サインイン &lt;b&gt;é&lt;/b&gt;");
        assert_eq!(html_escape(""), "");
        assert_eq!(html_escape("plain"), "plain");
    }
}
