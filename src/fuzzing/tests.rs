//! Every fuzz-target body over a few thousand inputs, without nightly or libFuzzer: the seed
//! corpus of `fuzz/corpus/<target>/`, generated inputs, and mutations of both by a small
//! deterministic mutator. The seed is printed, and with a failing input; set
//! `AUTHRIM_FUZZ_SEED` to replay another one, `AUTHRIM_FUZZ_ITERATIONS` to run longer.

use super::TARGETS;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;

const ITERATIONS: usize = 3_000;
const MAX_LEN: usize = 80_000;

use super::SplitMix as Rng;

/// Tokens that matter to the parsers under test: separators, escapes, JSON edges, the
/// bodies' placeholders and field separator.
const DICTIONARY: &[&[u8]] = &[
    b"%", b"%2", b"%zz", b"%ff", b"%C3%A9", b"%00", b"%0A", b"\xff", b"\xc3", b"\xed\xa0\x80", b"&", b"=", b"+", b"\n",
    b"\0", b";", b":", b".", b"_", b"-", b" ", b"\t", b"\r\n", b"\"", b"\\", b"{", b"}", b"[", b"]", b",", b"null",
    b"true", b"false", b"0", b"-1", b"1e999", b"1.5", b"18446744073709551616", b"\\u0000", b"\\ud800", b"$B", b"$P",
    b"$ISS", b"$EXP", b"$OLD", b"Basic ", b"Bearer ", b"basic ", b"audience=", b"resource=", b"client_id=",
    b"client_secret=", b"scope=", b"grant_type=", b"\"client_id\":", b"\"claims\":", b"\"redirect_uris\":",
    b"\"userinfo\":", b"\"id_token\":", b"\"essential\":", b"\"sub\":", b"\"exp\":", b"\"iss\":", b"\"aud\":",
    b"\"typ\":", b"at+jwt", b"JWT", b"application/", b"authrim_session=", b"authrim_browser=", b"fz-basic",
    b"fz-post", b"fz-public", b"https://", b"javascript:", b"http://127.0.0.1/", b"com.example.app:/",
];

fn mutate(rng: &mut Rng, input: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = v.len();
        let at = rng.below(len + 1);
        match rng.below(10) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.next() as u8;
            }
            2 => {
                let n = 1 + rng.below(8);
                let b = rng.bytes(n);
                v.splice(at..at, b);
            }
            3 if len > 0 => {
                let end = (at + 1 + rng.below(16)).min(len);
                v.drain(at.min(len - 1)..end.max(at.min(len - 1)));
            }
            4 if len > 0 => {
                let start = rng.below(len);
                let chunk = v[start..(start + 1 + rng.below(32)).min(len)].to_vec();
                v.splice(at..at, chunk);
            }
            5 | 6 => {
                let token = rng.pick(DICTIONARY).to_vec();
                v.splice(at..at, token);
            }
            7 => v.truncate(at),
            8 if !pool.is_empty() => {
                let other = rng.pick(pool);
                let start = rng.below(other.len() + 1);
                let end = (start + rng.below(other.len() + 1)).min(other.len());
                v.splice(at..at, other[start..end].iter().copied());
            }
            9 if len > 0 => {
                // Something oversized: a chunk repeated up to tens of kilobytes.
                let start = rng.below(len);
                let chunk = v[start..(start + 1 + rng.below(8)).min(len)].to_vec();
                let times = 1 + rng.below(10_000);
                let repeated: Vec<u8> = chunk.iter().copied().cycle().take(chunk.len() * times).collect();
                v.splice(at..at, repeated);
            }
            _ => v.push(rng.next() as u8),
        }
    }
    v.truncate(MAX_LEN);
    v
}

/// A random JSON text: values of every kind, nested up to `depth`.
fn json(rng: &mut Rng, depth: usize, keys: &[&str]) -> String {
    let leaf = |rng: &mut Rng| -> String {
        match rng.below(8) {
            0 => "null".into(),
            1 => "true".into(),
            2 => (rng.next() as i64).to_string(),
            3 => format!("{}", rng.next() as f64 / 3.0),
            4 => "\"\"".into(),
            5 => {
                let n = rng.below(12);
                format!("{:?}", String::from_utf8_lossy(&rng.bytes(n)))
            }
            _ => format!("\"{}\"", rng.pick(keys)),
        }
    };
    if depth == 0 {
        return leaf(rng);
    }
    match rng.below(4) {
        0 => leaf(rng),
        1 => {
            let items: Vec<String> = (0..rng.below(4)).map(|_| json(rng, depth - 1, keys)).collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let members: Vec<String> =
                (0..rng.below(6)).map(|_| format!("\"{}\":{}", rng.pick(keys), json(rng, depth - 1, keys))).collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

const JSON_KEYS: &[&str] = &[
    "userinfo", "id_token", "email", "name", "essential", "value", "values", "client_id", "client_name", "redirect_uris",
    "grant_types", "response_types", "token_endpoint_auth_method", "scope", "allowed_audiences", "allowed_resources",
    "token_exchange", "delegation", "impersonation", "subject_token_types", "may_outlive_subject", "username", "password",
    "disabled", "claims", "email_verified", "address", "country", "locality", "phone_number", "sub", "updated_at",
    "iss", "aud", "exp", "nbf", "iat", "jti", "typ", "none", "code", "authorization_code", "client_credentials",
    "https://rp.example/cb", "http://localhost/cb", "com.example.app:/cb", "javascript:alert(1)", "$ISS",
    "urn:ietf:params:oauth:token-type:access_token", "client_secret_basic", "client_secret_post",
];

/// Inputs made for one target, beside the corpus and its mutations.
fn generated(rng: &mut Rng, target: &str) -> Vec<u8> {
    match target {
        "claims_request" | "admin_client_json" | "admin_user_json" => match rng.below(10) {
            // Deeper than serde_json's recursion limit: must be an error, not a stack overflow.
            0 => {
                let depth = 100 + rng.below(20_000);
                let (open, close) = if rng.below(2) == 0 { ("[", "]") } else { ("{\"a\":", "}") };
                format!("{}1{}", open.repeat(depth), close.repeat(depth)).into_bytes()
            }
            _ => {
                let depth = 1 + rng.below(5);
                json(rng, depth, JSON_KEYS).into_bytes()
            }
        },
        "jwt" => {
            let typ = *rng.pick(&["at+jwt", "JWT", "application/at+jwt", "AT+JWT", "", "jwt", "at+jwt "]);
            let mut claims = json(rng, 3, JSON_KEYS);
            if rng.below(2) == 0 {
                // A plausible claim set, then one member changed.
                let exp = *rng.pick(&["$EXP", "$OLD", "\"$EXP\"", "1e10", "-1", "null", "$EXP.5"]);
                let sub = *rng.pick(&["\"u\"", "7", "null", "[]", "\"\""]);
                let iss = *rng.pick(&["\"$ISS\"", "\"$ISS/\"", "[\"$ISS\"]", "\"http://evil.example\""]);
                let aud = *rng.pick(&["\"$ISS\"", "[\"$ISS\"]", "[]", "7", "[7]"]);
                claims = format!(
                    "{{\"iss\":{iss},\"sub\":{sub},\"aud\":{aud},\"exp\":{exp},\"iat\":1,\"jti\":\"j\",\"client_id\":\"c\",\"scope\":\"openid\",\"x\":{claims}}}"
                );
            }
            format!("\x01{typ}\n{claims}").into_bytes()
        }
        "params" => {
            let keys = ["grant_type", "code", "scope", "audience", "resource", "client_id", "state", "", "a"];
            let pairs: Vec<String> = (0..rng.below(40))
                .map(|_| {
                    let v = match rng.below(4) {
                        0 => String::new(),
                        1 => "x".repeat(8 * 1024 + rng.below(3) - 1),
                        _ => format!("v{}", rng.below(3)),
                    };
                    format!("{}={v}", rng.pick(&keys))
                })
                .collect();
            pairs.join("&").into_bytes()
        }
        "saml_message" => {
            // XML's own bombs and edges, for each mode.
            let m = rng.below(8) as u8;
            let depth = 1 + rng.below(64);
            let el = *rng.pick(&["samlp:Response", "saml:Assertion", "a", "ds:Signature", "md:EntityDescriptor", "samlp:LogoutRequest", "saml:NameID"]);
            let ns = " xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" xmlns:saml=\"urn:oasis:names:tc:SAML:2.0:assertion\" xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\" xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\"";
            let body = match rng.below(5) {
                0 => format!("<{el}{ns}>{}{}</{el}>", format!("<{el}>").repeat(depth), format!("</{el}>").repeat(depth)),
                1 => format!("<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><{el}{ns}>&x;</{el}>"),
                2 => format!("<{el}{ns} ID=\"a\"><{el} ID=\"a\"/><!--c-->&amp;&#0;&#x110000;</{el}>"),
                3 => format!("<?xml version=\"1.0\" encoding=\"{}\"?><{el}{ns}/>", rng.pick(&["UTF-16", "utf-8", "ISO-8859-1", ""])),
                _ => {
                    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                    let n = rng.below(200_000);
                    std::io::Write::write_all(&mut e, &vec![b'<'; n]).expect("in memory");
                    STANDARD.encode(e.finish().expect("in memory"))
                }
            };
            let mut v = vec![m];
            v.extend_from_slice(body.as_bytes());
            v
        }
        _ => {
            let n = rng.below(256);
            rng.bytes(n)
        }
    }
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).expect("corpus file")).collect();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

fn escape(input: &[u8]) -> String {
    let shown: String = input.iter().take(2_000).flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect();
    if input.len() > 2_000 { format!("{shown}… ({} bytes)", input.len()) } else { shown }
}

fn run(target: &str) {
    let body = TARGETS.iter().find(|(name, _)| *name == target).expect("a target of that name").1;
    // A fixed seed per target (FNV-1a of its name), so a failure reproduces.
    let default_seed = target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let seed = env_number("AUTHRIM_FUZZ_SEED").unwrap_or(default_seed);
    let iterations = env_number("AUTHRIM_FUZZ_ITERATIONS").map_or(ITERATIONS, |n| n as usize);
    let mut rng = Rng(seed);
    let mut pool = corpus(target);
    let seeds = pool.len();
    let try_one = |i: usize, input: &[u8]| {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(input))) {
            eprintln!("fuzz {target}: failure at iteration {i} of seed {seed:#x} (AUTHRIM_FUZZ_SEED={seed:#x} replays it); input: b\"{}\"", escape(input));
            resume_unwind(panic);
        }
    };
    for (i, s) in pool.clone().iter().enumerate() {
        try_one(i, s);
    }
    for i in seeds..iterations {
        let input = match i % 8 {
            0 => generated(&mut rng, target),
            1 => {
                let g = generated(&mut rng, target);
                mutate(&mut rng, &g, &pool)
            }
            2 => {
                let n = rng.below(300);
                rng.bytes(n)
            }
            _ => {
                let base = rng.pick(&pool).clone();
                mutate(&mut rng, &base, &pool)
            }
        };
        try_one(i, &input);
        // Keep some inputs as bases for later mutations, as a fuzzer keeps its corpus.
        if rng.below(8) == 0 && input.len() < 4_096 {
            if pool.len() < 256 {
                pool.push(input);
            } else {
                let k = rng.below(pool.len() - seeds) + seeds;
                pool[k] = input;
            }
        }
    }
    eprintln!("fuzz {target}: {iterations} inputs from seed {seed:#x}, no failure");
}

#[test]
fn every_target_has_a_cargo_fuzz_binary_and_a_corpus() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
    for (name, _) in TARGETS {
        assert!(manifest.contains(&format!("name = \"{name}\"")), "fuzz/Cargo.toml has no [[bin]] {name}");
        let src = std::fs::read_to_string(format!("{}/fuzz/fuzz_targets/{name}.rs", env!("CARGO_MANIFEST_DIR"))).expect("target source");
        assert!(src.contains(&format!("authrim::fuzzing::{name}(")), "fuzz_targets/{name}.rs does not call its body");
        corpus(name);
    }
}

#[test]
fn mutator_is_deterministic() {
    let pool = corpus("params");
    let (mut a, mut b) = (Rng(42), Rng(42));
    for _ in 0..100 {
        assert_eq!(mutate(&mut a, &pool[0], &pool), mutate(&mut b, &pool[0], &pool));
    }
}

macro_rules! fuzz_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            run(stringify!($name));
        }
    )*};
}

fuzz_tests!(params, headers, client_auth, jwt, claims_request, admin_client_json, admin_user_json, refresh_token, shard_prefix, scim_filter, scim_patch, saml_message);
