//! `cargo bench --bench issuance`: server CPU per token issuance against the signatures it
//! makes (RS256 by default), for each grant (client credentials, refresh, token exchange, authorization code),
//! in one run.
//!
//! Each grant gets a fresh release server and a closed loop of workers. The CPU per request is
//! the server process's whole CPU time (user + system, /proc) over the run divided by the
//! requests answered; the signatures it is set against are measured twice: once in a quiet
//! loop at the start (the ceiling: RSA-2048 unless configured otherwise) and once where they
//! are made, under the same load (`authrim_token_signing_cpu_seconds`). Every response must be
//! a 200. The last column is the process CPU per request minus its signatures under load.
//! Knobs: AUTHRIM_BENCH_WORKERS (64), AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_GRANTS (all:
//! client_credentials,refresh_token,exchange,authorization_code; also on request:
//! client_credentials_dpop, userinfo_bearer, userinfo_dpop), AUTHRIM_BENCH_ID_TOKEN_ALG (the
//! `rp` client's id_token_signed_response_alg; unset: the server's RS256),
//! AUTHRIM_BENCH_CODE_RATE (codes seeded per second of run: 5,000 with RSA, 20,000 otherwise).
//!
//! The server inherits the environment, so AUTHRIM_SIGNING_ALGORITHMS and
//! AUTHRIM_TOKEN_SIGNING_ALG choose what access tokens are signed with; the quiet-loop
//! baseline follows them (and AUTHRIM_BENCH_ID_TOKEN_ALG).
//!
//! DPoP (RFC 9449) loads: every worker holds its own ES256 key and sends a fresh proof (unique
//! `jti`, `iat` now, its public `jwk` in the header) with every request. `client_credentials_dpop`
//! is `client_credentials` with a proof at /token (DPoP-bound tokens; the difference in CPU per
//! request is one proof's verification). `userinfo_bearer` and `userinfo_dpop` call /userinfo
//! with an access token per worker, redeemed from an authorization code (with the worker's
//! proof for `userinfo_dpop`, which then presents `Authorization: DPoP` and a proof with `ath`).

mod common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use common::*;
use serde_json::json;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const AT: &str = "urn:ietf:params:oauth:token-type:access_token";
const REDIRECT: &str = "https://rp.example/cb";

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// One worker's DPoP key: an ES256 key pair and its proofs' encoded header (`typ`, `alg`, the
/// public `jwk`), made once; every proof gets a fresh `jti` and `iat`.
struct Prover {
    pair: aws_lc_rs::signature::EcdsaKeyPair,
    rng: aws_lc_rs::rand::SystemRandom,
    header: String,
    /// Random, so that `jti`s stay unique across workers and runs.
    prefix: String,
    next: AtomicU64,
}

impl Prover {
    fn new() -> Self {
        use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_FIXED_SIGNING};
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = pair.public_key().as_ref(); // 0x04 ‖ x ‖ y
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..65])});
        let header = b64(&serde_json::to_vec(&json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk})).unwrap());
        let mut prefix = [0u8; 9];
        aws_lc_rs::rand::fill(&mut prefix).unwrap();
        Self { pair, rng, header, prefix: b64(&prefix), next: AtomicU64::new(0) }
    }

    /// A proof for `htm` `htu`; at a resource, bound to `token` (`ath`).
    fn proof(&self, htm: &str, htu: &str, token: Option<&str>) -> String {
        let jti = format!("{}{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed));
        let iat = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let mut claims = json!({"jti": jti, "htm": htm, "htu": htu, "iat": iat});
        if let Some(token) = token {
            claims["ath"] = b64(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes()).as_ref()).into();
        }
        let input = format!("{}.{}", self.header, b64(&serde_json::to_vec(&claims).unwrap()));
        let sig = self.pair.sign(&self.rng, input.as_bytes()).unwrap();
        format!("{input}.{}", b64(sig.as_ref()))
    }
}

fn provers(n: usize) -> Arc<Vec<Prover>> {
    Arc::new((0..n).map(|_| Prover::new()).collect())
}

/// What a worker sends: a form, with Basic credentials, and how it learns its next form.
#[derive(Clone)]
enum Load {
    ClientCredentials { secret: String },
    /// Client credentials with a fresh DPoP proof per request (one key per worker).
    ClientCredentialsDpop { secret: String, htu: String, provers: Arc<Vec<Prover>> },
    /// GET /userinfo with one access token per worker: Bearer, or DPoP with a proof per request.
    Userinfo { url: String, tokens: Vec<String>, provers: Option<Arc<Vec<Prover>>> },
    /// One family per worker; each answer carries the worker's next token.
    Refresh { secret: String, tokens: Vec<String> },
    Exchange { secret: String, subjects: Vec<String> },
    /// Single-use codes, shared out by a counter.
    Code { secret: String, codes: Vec<String> },
}

impl Load {
    fn grant(&self) -> &'static str {
        match self {
            Load::ClientCredentials { .. } | Load::ClientCredentialsDpop { .. } => "client_credentials",
            Load::Userinfo { .. } => "",
            Load::Refresh { .. } => "refresh_token",
            Load::Exchange { .. } => EXCHANGE_GRANT,
            Load::Code { .. } => "authorization_code",
        }
    }

    fn client(&self) -> (&'static str, &str) {
        match self {
            Load::ClientCredentials { secret } | Load::ClientCredentialsDpop { secret, .. } => ("svc", secret),
            Load::Userinfo { .. } => ("", ""),
            Load::Refresh { secret, .. } => ("bench", secret),
            Load::Exchange { secret, .. } => ("exchanger", secret),
            Load::Code { secret, .. } => ("rp", secret),
        }
    }
}

async fn seed(http: &reqwest::Client, base: &str, grant: &str, workers: usize, codes: usize) -> Load {
    match grant {
        "client_credentials" | "client_credentials_dpop" => {
            let c = admin_post(http, base, "/admin/clients", json!({"client_id": "svc", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"})).await;
            let secret = c["client_secret"].as_str().unwrap().into();
            match grant {
                "client_credentials" => Load::ClientCredentials { secret },
                _ => Load::ClientCredentialsDpop { secret, htu: format!("{base}/token"), provers: provers(workers) },
            }
        }
        "userinfo_bearer" | "userinfo_dpop" => {
            let (secret, codes) = seed_codes(http, base, workers).await;
            let provers = (grant == "userinfo_dpop").then(|| provers(workers));
            let mut tokens = Vec::new();
            for (w, code) in codes.iter().take(workers).enumerate() {
                let mut req = http.post(format!("{base}/token")).basic_auth("rp", Some(&secret));
                if let Some(p) = &provers {
                    req = req.header("dpop", p[w].proof("POST", &format!("{base}/token"), None));
                }
                let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)];
                let body: serde_json::Value = req.form(&form).send().await.unwrap().json().await.unwrap();
                let expected = if provers.is_some() { "DPoP" } else { "Bearer" };
                assert_eq!(body["token_type"], expected, "code redemption for userinfo: {body}");
                tokens.push(body["access_token"].as_str().unwrap().to_string());
            }
            Load::Userinfo { url: format!("{base}/userinfo"), tokens, provers }
        }
        "refresh_token" => {
            let (secret, tokens, _) = seed_refresh_families(http, base, workers).await;
            Load::Refresh { secret, tokens }
        }
        "exchange" => {
            let (secret, ids, _) = seed_exchange_parties(http, base).await;
            let v = admin_post(http, base, "/test/bulk/tokens", json!({"client_id": "webapp", "user_ids": ids, "per_user": 10, "kind": "valid", "scope": EXCHANGE_SCOPES[0]})).await;
            Load::Exchange { secret, subjects: strings(&v["tokens"], |t| t) }
        }
        _ => {
            let (secret, codes) = seed_codes(http, base, codes).await;
            Load::Code { secret, codes }
        }
    }
}

/// The client `rp` (its ID tokens signed with AUTHRIM_BENCH_ID_TOKEN_ALG when set), 100 users
/// and at least `n` codes for it (scope `openid profile`): (client secret, codes).
async fn seed_codes(http: &reqwest::Client, base: &str, n: usize) -> (String, Vec<String>) {
    let mut client = json!({"client_id": "rp", "redirect_uris": [REDIRECT], "scope": "openid profile email"});
    if let Some(alg) = id_token_alg() {
        client["id_token_signed_response_alg"] = alg.into();
    }
    let c = admin_post(http, base, "/admin/clients", client).await;
    let users = admin_post(http, base, "/test/bulk/users", json!({"count": 100, "password": "bench-password-1"})).await;
    let ids = strings(&users["users"], |u| &u["id"]);
    let mut codes = Vec::with_capacity(n);
    // At most 100,000 a call (the bulk interface's cap).
    while codes.len() < n {
        let v = admin_post(http, base, "/test/bulk/codes", json!({
            "client_id": "rp", "redirect_uri": REDIRECT, "user_ids": ids, "per_user": (n - codes.len()).div_ceil(100).min(500),
            "scope": "openid profile", "expires_in": 600,
        }))
        .await;
        codes.extend(strings(&v["codes"], |c| c));
    }
    (c["client_secret"].as_str().unwrap().into(), codes)
}

/// AUTHRIM_BENCH_ID_TOKEN_ALG, if set.
fn id_token_alg() -> Option<String> {
    std::env::var("AUTHRIM_BENCH_ID_TOKEN_ALG").ok().filter(|a| !a.is_empty())
}

/// The `alg` in a compact JWS's header.
fn jws_alg(jws: &str) -> String {
    let header = jws.split('.').next().and_then(|h| URL_SAFE_NO_PAD.decode(h).ok());
    let header: serde_json::Value = header.and_then(|h| serde_json::from_slice(&h).ok()).unwrap_or_default();
    header["alg"].as_str().unwrap_or("?").to_string()
}

/// One request; Some(next refresh token) for the refresh loop. None when out of codes.
async fn issue(http: &reqwest::Client, base: &str, load: &Load, worker: usize, i: usize, current: &mut Option<String>) -> Option<(Duration, bool)> {
    if let Load::Userinfo { url, tokens, provers } = load {
        let token = &tokens[worker];
        let req = match provers {
            Some(p) => http.get(url).header("authorization", format!("DPoP {token}")).header("dpop", p[worker].proof("GET", url, Some(token))),
            None => http.get(url).bearer_auth(token),
        };
        let t = Instant::now();
        let ok = match req.send().await {
            Ok(r) if r.status().is_success() => r.json::<serde_json::Value>().await.is_ok_and(|b| b["sub"].is_string()),
            _ => false,
        };
        return Some((t.elapsed(), ok));
    }
    let mut form: Vec<(&str, String)> = vec![("grant_type", load.grant().into())];
    match load {
        Load::ClientCredentials { .. } | Load::ClientCredentialsDpop { .. } => form.push(("scope", "svc".into())),
        Load::Userinfo { .. } => unreachable!(),
        Load::Refresh { tokens, .. } => form.push(("refresh_token", current.get_or_insert_with(|| tokens[worker].clone()).clone())),
        Load::Exchange { subjects, .. } => {
            form.extend([("subject_token", subjects[i % subjects.len()].clone()), ("subject_token_type", AT.into())]);
            form.extend([("audience", format!("https://api.example.com/service-{}", i % 20)), ("scope", EXCHANGE_SCOPES[i % 4].into())]);
        }
        Load::Code { codes, .. } => {
            form.extend([("code", codes.get(i)?.clone()), ("redirect_uri", REDIRECT.into())]);
        }
    }
    let (id, secret) = load.client();
    let mut req = http.post(format!("{base}/token")).basic_auth(id, Some(secret)).form(&form);
    if let Load::ClientCredentialsDpop { htu, provers, .. } = load {
        req = req.header("dpop", provers[worker].proof("POST", htu, None));
    }
    let t = Instant::now();
    let ok = match req.send().await {
        Ok(r) if r.status().is_success() => match r.json::<serde_json::Value>().await {
            Ok(body) => {
                if let Some(next) = body["refresh_token"].as_str().filter(|_| matches!(load, Load::Refresh { .. })) {
                    *current = Some(next.to_string());
                }
                if i == 0 {
                    // What the first answer was signed with, so that a run shows its algorithms.
                    let id_token = body["id_token"].as_str().map(|t| format!(", ID token {}", jws_alg(t))).unwrap_or_default();
                    eprintln!("{}: access token {}{id_token}, token_type {}", load.grant(), jws_alg(body["access_token"].as_str().unwrap_or("")), body["token_type"]);
                }
                matches!(load, Load::ClientCredentialsDpop { .. }) == (body["token_type"] == "DPoP")
            }
            Err(_) => false,
        },
        _ => false,
    };
    Some((t.elapsed(), ok))
}

struct Run {
    rps: f64,
    summary: Summary,
    errors: usize,
    process_cpu: f64,
    handler_cpu: f64,
    signatures: f64,
    signing_cpu: f64,
}

async fn run(server: &Server, http: &reqwest::Client, load: Load, workers: usize, seconds: u64) -> Run {
    let before = metrics(http, &server.base).await;
    let proc_before = process_cpu_seconds(server.pid());
    let next = Arc::new(AtomicUsize::new(0));
    let load = Arc::new(load);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for worker in 0..workers {
        let (http, base, next, load) = (http.clone(), server.base.clone(), next.clone(), load.clone());
        set.spawn(async move {
            let (mut lat, mut bad, mut current) = (Vec::new(), 0, None);
            while Instant::now() < deadline {
                let Some((d, ok)) = issue(&http, &base, &load, worker, next.fetch_add(1, Ordering::Relaxed), &mut current).await else { break };
                lat.push(d);
                bad += usize::from(!ok);
            }
            (lat, bad)
        });
    }
    let results = set.join_all().await;
    let elapsed = started.elapsed().as_secs_f64();
    let proc_cpu = process_cpu_seconds(server.pid()) - proc_before;
    let after = metrics(http, &server.base).await;
    let delta = |name: &str| sample(&after, name) - sample(&before, name);
    let endpoint = if matches!(*load, Load::Userinfo { .. }) { "userinfo" } else { "token" };
    let label = format!("{{endpoint=\"{endpoint}\",grant_type=\"{}\"}}", load.grant());
    let errors = results.iter().map(|(_, b)| b).sum();
    let all: Vec<Duration> = results.into_iter().flat_map(|(l, _)| l).collect();
    let n = all.len().max(1) as f64;
    // Every signature is counted; only a sample of them is timed (the histogram's count).
    let signatures = delta("authrim_token_signatures_total");
    let timed_signatures = delta("authrim_token_signing_cpu_seconds_count");
    Run {
        rps: all.len() as f64 / elapsed,
        summary: summarise(all),
        errors,
        process_cpu: proc_cpu / n,
        handler_cpu: delta(&format!("authrim_http_request_cpu_seconds_sum{label}")) / delta(&format!("authrim_http_request_cpu_seconds_count{label}")).max(1.0),
        signatures: signatures / n,
        signing_cpu: delta("authrim_token_signing_cpu_seconds_sum") / timed_signatures.max(1.0),
    }
}

fn main() {
    load_generator_runtime().block_on(bench());
}

async fn bench() {
    let workers: usize = env_or("AUTHRIM_BENCH_WORKERS", 64);
    let seconds: u64 = env_or("AUTHRIM_BENCH_SECONDS", 10);
    let http = reqwest::Client::builder().pool_max_idle_per_host(1024).build().unwrap();
    let env = [("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true".to_string())];
    // The quiet-loop baseline follows what the server signs with: access tokens with
    // AUTHRIM_TOKEN_SIGNING_ALG (which it inherits), the rp client's ID tokens with
    // AUTHRIM_BENCH_ID_TOKEN_ALG.
    let token_alg: String = env_or("AUTHRIM_TOKEN_SIGNING_ALG", "RS256".to_string());
    let id_alg = id_token_alg().unwrap_or_else(|| "RS256".to_string());
    let (token_quiet, id_quiet) = (sign_cost(&token_alg).as_secs_f64(), sign_cost(&id_alg).as_secs_f64());
    let us = |s: f64| s * 1e6;
    let policy = generator_policy();
    println!(
        "token issuance, {workers} closed-loop workers (generator policy: {policy}), {seconds} s per grant; a signature in a quiet loop: access tokens {token_alg} {:.1} µs, ID tokens {id_alg} {:.1} µs",
        us(token_quiet),
        us(id_quiet)
    );
    println!("| grant | requests | errors | RPS | p50 ms | p99 ms | signatures/req | signature under load | handler CPU/req | process CPU/req | ÷ signatures (quiet) | ÷ signatures (under load) | process CPU/req beyond signatures |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let grants: String = env_or("AUTHRIM_BENCH_GRANTS", "client_credentials,refresh_token,exchange,authorization_code".to_string());
    for grant in grants.split(',') {
        let server = Server::start(&env).await;
        // Codes are single-use: enough for the run at 5,000 RPS with RSA signatures, 20,000
        // otherwise, or AUTHRIM_BENCH_CODE_RATE (the same store size for every algorithm).
        let rsa = |alg: &str| alg.starts_with("RS") || alg.starts_with("PS");
        let rate: usize = env_or("AUTHRIM_BENCH_CODE_RATE", if rsa(&token_alg) && rsa(&id_alg) { 5_000 } else { 20_000 });
        let load = seed(&http, &server.base, grant, workers, rate * seconds as usize).await;
        let quiet = match grant {
            "authorization_code" => token_quiet + id_quiet,
            "userinfo_bearer" | "userinfo_dpop" => 0.0,
            _ => token_quiet,
        };
        let r = run(&server, &http, load, workers, seconds).await;
        // No signatures (userinfo): no ratio to them.
        let ratio = |x: f64| if r.signatures > 0.0 && x > 0.0 { format!("{x:.2}×") } else { "–".into() };
        println!(
            "| {grant} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.1} µs | {:.1} µs | {:.1} µs | {} | {} | {:.1} µs |",
            r.summary.n,
            r.errors,
            r.rps,
            r.summary.p50,
            r.summary.p99,
            r.signatures,
            us(r.signing_cpu),
            us(r.handler_cpu),
            us(r.process_cpu),
            ratio(r.process_cpu / quiet),
            ratio(r.process_cpu / (r.signing_cpu * r.signatures)),
            us(r.process_cpu - r.signing_cpu * r.signatures),
        );
    }
}
