//! `cargo bench --bench issuance`: server CPU per token issuance against the RSA signatures it
//! makes, for each grant (client credentials, refresh, token exchange, authorization code),
//! in one run.
//!
//! Each grant gets a fresh release server and a closed loop of workers. The CPU per request is
//! the server process's whole CPU time (user + system, /proc) over the run divided by the
//! requests answered; the signatures it is set against are measured twice: once in a quiet
//! loop at the start (the RSA-2048 ceiling) and once where they are made, under the same load
//! (`authrim_token_signing_cpu_seconds`). Every response must be a 200.
//! Knobs: AUTHRIM_BENCH_WORKERS (64), AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_GRANTS (all:
//! client_credentials,refresh_token,exchange,authorization_code).

mod common;

use common::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const AT: &str = "urn:ietf:params:oauth:token-type:access_token";
const REDIRECT: &str = "https://rp.example/cb";

/// What a worker sends: a form, with Basic credentials, and how it learns its next form.
#[derive(Clone)]
enum Load {
    ClientCredentials { secret: String },
    /// One family per worker; each answer carries the worker's next token.
    Refresh { secret: String, tokens: Vec<String> },
    Exchange { secret: String, subjects: Vec<String> },
    /// Single-use codes, shared out by a counter.
    Code { secret: String, codes: Vec<String> },
}

impl Load {
    fn grant(&self) -> &'static str {
        match self {
            Load::ClientCredentials { .. } => "client_credentials",
            Load::Refresh { .. } => "refresh_token",
            Load::Exchange { .. } => EXCHANGE_GRANT,
            Load::Code { .. } => "authorization_code",
        }
    }

    fn client(&self) -> (&'static str, &str) {
        match self {
            Load::ClientCredentials { secret } => ("svc", secret),
            Load::Refresh { secret, .. } => ("bench", secret),
            Load::Exchange { secret, .. } => ("exchanger", secret),
            Load::Code { secret, .. } => ("rp", secret),
        }
    }
}

async fn seed(http: &reqwest::Client, base: &str, grant: &str, workers: usize, codes: usize) -> Load {
    match grant {
        "client_credentials" => {
            let c = admin_post(http, base, "/admin/clients", json!({"client_id": "svc", "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"})).await;
            Load::ClientCredentials { secret: c["client_secret"].as_str().unwrap().into() }
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
            let c = admin_post(http, base, "/admin/clients", json!({"client_id": "rp", "redirect_uris": [REDIRECT], "scope": "openid profile email"})).await;
            let users = admin_post(http, base, "/test/bulk/users", json!({"count": 100, "password": "bench-password-1"})).await;
            let ids = strings(&users["users"], |u| &u["id"]);
            let v = admin_post(http, base, "/test/bulk/codes", json!({
                "client_id": "rp", "redirect_uri": REDIRECT, "user_ids": ids, "per_user": codes.div_ceil(100),
                "scope": "openid profile", "expires_in": 600,
            }))
            .await;
            Load::Code { secret: c["client_secret"].as_str().unwrap().into(), codes: strings(&v["codes"], |c| c) }
        }
    }
}

/// One request; Some(next refresh token) for the refresh loop. None when out of codes.
async fn issue(http: &reqwest::Client, base: &str, load: &Load, worker: usize, i: usize, current: &mut Option<String>) -> Option<(Duration, bool)> {
    let mut form: Vec<(&str, String)> = vec![("grant_type", load.grant().into())];
    match load {
        Load::ClientCredentials { .. } => form.push(("scope", "svc".into())),
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
    let t = Instant::now();
    let ok = match http.post(format!("{base}/token")).basic_auth(id, Some(secret)).form(&form).send().await {
        Ok(r) if r.status().is_success() => match r.json::<serde_json::Value>().await {
            Ok(body) => {
                if let Some(next) = body["refresh_token"].as_str().filter(|_| matches!(load, Load::Refresh { .. })) {
                    *current = Some(next.to_string());
                }
                true
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
    let label = format!("{{endpoint=\"token\",grant_type=\"{}\"}}", load.grant());
    let errors = results.iter().map(|(_, b)| b).sum();
    let all: Vec<Duration> = results.into_iter().flat_map(|(l, _)| l).collect();
    let n = all.len().max(1) as f64;
    let signatures = delta("authrim_token_signing_cpu_seconds_count");
    Run {
        rps: all.len() as f64 / elapsed,
        summary: summarise(all),
        errors,
        process_cpu: proc_cpu / n,
        handler_cpu: delta(&format!("authrim_http_request_cpu_seconds_sum{label}")) / delta(&format!("authrim_http_request_cpu_seconds_count{label}")).max(1.0),
        signatures: signatures / n,
        signing_cpu: delta("authrim_token_signing_cpu_seconds_sum") / signatures.max(1.0),
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
    let quiet = rsa_sign_cost().as_secs_f64();
    let us = |s: f64| s * 1e6;
    let policy = generator_policy();
    println!("token issuance, {workers} closed-loop workers (generator policy: {policy}), {seconds} s per grant; RSA-2048 signature in a quiet loop: {:.1} µs", us(quiet));
    println!("| grant | requests | errors | RPS | p50 ms | p99 ms | signatures/req | signature under load | handler CPU/req | process CPU/req | ÷ signatures (quiet) | ÷ signatures (under load) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let grants: String = env_or("AUTHRIM_BENCH_GRANTS", "client_credentials,refresh_token,exchange,authorization_code".to_string());
    for grant in grants.split(',') {
        let server = Server::start(&env).await;
        // Codes are single-use: enough for the run at 5,000 RPS.
        let load = seed(&http, &server.base, grant, workers, 5_000 * seconds as usize).await;
        let r = run(&server, &http, load, workers, seconds).await;
        println!(
            "| {grant} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.1} µs | {:.1} µs | {:.1} µs | {:.2}× | {:.2}× |",
            r.summary.n,
            r.errors,
            r.rps,
            r.summary.p50,
            r.summary.p99,
            r.signatures,
            us(r.signing_cpu),
            us(r.handler_cpu),
            us(r.process_cpu),
            r.process_cpu / (quiet * r.signatures),
            r.process_cpu / (r.signing_cpu * r.signatures),
        );
    }
}
