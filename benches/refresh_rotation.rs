//! `cargo bench --bench refresh_rotation`: refresh-token rotations per second and latency at
//! 1, 8 and 32 RefreshTokenRotator shards, on SQLite with `synchronous=FULL` (every answered
//! rotation is on disk). The release binary runs as its own process on loopback; this process
//! is the load generator (both share the machine's two cores).
//!
//! Each worker owns one family and rotates it in a closed loop for the measured period. Each
//! refresh asks for scope `offline_access` only, so it makes exactly one RS256 signature.
//! Knobs: AUTHRIM_BENCH_WORKERS (64), AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_SHARDS ("1,8,32").

mod common;

use common::{summarise, Server, ADMIN};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const REDIRECT: &str = "https://rp.example/cb";
const PASSWORD: &str = "correct horse battery";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let workers: usize = env_or("AUTHRIM_BENCH_WORKERS", 64);
    let seconds: u64 = env_or("AUTHRIM_BENCH_SECONDS", 10);
    let shard_list: String = env_or("AUTHRIM_BENCH_SHARDS", "1,8,32".to_string());
    println!("refresh rotation, SQLite synchronous=FULL, {workers} workers, {seconds} s per run");
    println!("| shards | requests | errors | RPS | p50 ms | p90 ms | p99 ms | max ms |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for shards in shard_list.split(',').filter_map(|s| s.trim().parse::<usize>().ok()) {
        run(shards, workers, seconds).await;
    }
}

async fn run(shards: usize, workers: usize, seconds: u64) {
    let server = Server::start(&[
        ("AUTHRIM_REFRESH_SHARDS", shards.to_string()),
        ("AUTHRIM_SQLITE_SYNCHRONOUS", "FULL".to_string()),
    ])
    .await;
    let base = server.base.clone();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(workers)
        .build()
        .unwrap();
    let secret = seed_client_and_user(&http, &base).await;
    let tokens = seed_families(&http, &base, &secret, workers).await;

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut set = tokio::task::JoinSet::new();
    for token in tokens {
        let (http, base, secret) = (http.clone(), base.clone(), secret.clone());
        set.spawn(async move {
            let mut token = token;
            let (mut latencies, mut errors) = (Vec::new(), 0usize);
            while Instant::now() < deadline {
                let t = Instant::now();
                let res = http
                    .post(format!("{base}/token"))
                    .basic_auth("bench", Some(&secret))
                    .form(&[("grant_type", "refresh_token"), ("refresh_token", token.as_str())])
                    .send()
                    .await;
                let ok = match res {
                    Ok(r) if r.status().is_success() => match r.json::<Value>().await {
                        Ok(v) => {
                            token = v["refresh_token"].as_str().unwrap_or_default().to_string();
                            true
                        }
                        Err(_) => false,
                    },
                    _ => false,
                };
                latencies.push(t.elapsed());
                if !ok {
                    errors += 1;
                    break; // a failed rotation ends this worker's chain
                }
            }
            (latencies, errors)
        });
    }
    let started = Instant::now();
    let results = set.join_all().await;
    let elapsed = started.elapsed().as_secs_f64();
    let errors: usize = results.iter().map(|(_, e)| e).sum();
    let sum = summarise(results.into_iter().flat_map(|(l, _)| l).collect());
    println!(
        "| {shards} | {} | {errors} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} |",
        sum.n,
        sum.n as f64 / elapsed,
        sum.p50,
        sum.p90,
        sum.p99,
        sum.max
    );
}

async fn seed_client_and_user(http: &reqwest::Client, base: &str) -> String {
    let created: Value = http
        .post(format!("{base}/admin/clients"))
        .bearer_auth(ADMIN)
        .json(&json!({"client_id": "bench", "redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "refresh_token"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    http.post(format!("{base}/admin/users"))
        .bearer_auth(ADMIN)
        .json(&json!({"username": "bench", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    created["client_secret"].as_str().unwrap().to_string()
}

/// One login (with consent), then a silent authorization per family: each code becomes a family.
async fn seed_families(http: &reqwest::Client, base: &str, secret: &str, n: usize) -> Vec<String> {
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).cookie_store(true).build().unwrap();
    let query = [("response_type", "code"), ("client_id", "bench"), ("redirect_uri", REDIRECT), ("scope", "offline_access")];
    let page = browser.get(format!("{base}/authorize")).query(&query).send().await.unwrap().text().await.unwrap();
    let page = browser
        .post(format!("{base}/login"))
        .form(&[("challenge", challenge(&page).as_str()), ("username", "bench"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    browser.post(format!("{base}/consent")).form(&[("challenge", challenge(&page).as_str()), ("decision", "allow")]).send().await.unwrap();
    let mut tokens = Vec::with_capacity(n);
    for _ in 0..n {
        let res = browser.get(format!("{base}/authorize")).query(&query).send().await.unwrap();
        let location = res.headers()["location"].to_str().unwrap().to_string();
        let code: String = url::Url::parse(&location).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
        let tok: Value = http
            .post(format!("{base}/token"))
            .basic_auth("bench", Some(secret))
            .form(&[("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        tokens.push(tok["refresh_token"].as_str().unwrap().to_string());
    }
    tokens
}

fn challenge(html: &str) -> String {
    let marker = "name=\"challenge\" value=\"";
    let start = html.find(marker).expect("challenge") + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}
