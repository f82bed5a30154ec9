//! `cargo bench --bench refresh_rotation`: refresh-token rotations per second and latency at
//! 1, 8 and 32 RefreshTokenRotator shards, on SQLite with `synchronous=FULL` (every answered
//! rotation is on disk). The release binary runs as its own process on loopback; this process
//! is the load generator (both share the machine's two cores).
//!
//! Each worker owns one family and rotates it in a closed loop for the measured period. Each
//! refresh asks for scope `offline_access` only, so it makes exactly one RS256 signature.
//! Knobs: AUTHRIM_BENCH_WORKERS (64), AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_SHARDS ("1,8,32").

mod common;

use common::{env_or, load_generator_runtime, seed_refresh_families, summarise, Server};
use serde_json::Value;
use std::time::{Duration, Instant};

fn main() {
    load_generator_runtime().block_on(bench());
}

async fn bench() {
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
        ("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true".to_string()),
    ])
    .await;
    let base = server.base.clone();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(workers)
        .build()
        .unwrap();
    let (secret, tokens, _) = seed_refresh_families(&http, &base, workers).await;

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

