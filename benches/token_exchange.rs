//! `cargo bench --bench token_exchange`: RFC 8693 token exchange with the reference's seeded mix
//! (token-exchange-load-test.ja.md §5.3: 56 % valid, 14 % valid with an actor token, 10 %
//! expired, 10 % invalid, 10 % revoked) and variations (§5.4: 20 audiences, 4 scope patterns,
//! 10 resources, 5 service clients). Every response is checked: valid → 200, others → 400.
//!
//! Reports: saturation throughput (closed loop), p99 at a sustained open-loop rate, and the
//! server's CPU per request beside one RSA-2048 signature measured in the same run.
//! Knobs: AUTHRIM_BENCH_WORKERS (64), AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_RATE (sustained RPS, 1000).

mod common;

use common::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const GRANT: &str = EXCHANGE_GRANT;
const AT: &str = "urn:ietf:params:oauth:token-type:access_token";
const SCOPES: [&str; 4] = EXCHANGE_SCOPES;
const SERVICES: [&str; 5] = ["service-gateway", "service-bff", "service-worker", "service-scheduler", "service-notifier"];

#[derive(Clone)]
struct Case {
    subject: String,
    actor: Option<String>,
    expect: u16,
    audience: String,
    resource: String,
    scope: &'static str,
}

struct Seed {
    secret: String,
    cases: Vec<Case>,
}

async fn seed(http: &reqwest::Client, base: &str, valid_only: bool) -> Seed {
    let (secret, ids, _) = seed_exchange_parties(http, base).await;
    for s in SERVICES {
        admin_post(http, base, "/admin/clients", json!({"client_id": s, "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"})).await;
    }
    let mint = |kind: &'static str, n: usize| {
        let ids = ids.clone();
        async move {
            let per_user = n.div_ceil(ids.len());
            let v = admin_post(http, base, "/test/bulk/tokens", json!({"client_id": "webapp", "user_ids": ids, "per_user": per_user, "kind": kind, "scope": SCOPES[0]})).await;
            v["tokens"].as_array().unwrap()[..n].iter().map(|t| t.as_str().unwrap().to_string()).collect::<Vec<_>>()
        }
    };
    let mut actors = Vec::new();
    for s in SERVICES {
        let v = admin_post(http, base, "/test/bulk/tokens", json!({"client_id": s, "count": 1, "kind": "valid", "scope": "svc"})).await;
        actors.push(v["tokens"][0].as_str().unwrap().to_string());
    }
    // The reference's 1,000-token mix.
    let mut mix: Vec<(String, bool, u16)> = Vec::new();
    if valid_only {
        mix.extend(mint("valid", 1000).await.into_iter().map(|t| (t, false, 200)));
    } else {
        let valid = mint("valid", 700).await;
        mix.extend(valid[..140].iter().map(|t| (t.clone(), true, 200)));
        mix.extend(valid[140..].iter().map(|t| (t.clone(), false, 200)));
        mix.extend(mint("expired", 100).await.into_iter().map(|t| (t, false, 400)));
        mix.extend((0..100).map(|i| (format!("invalid.{}.{i}", authrim::util::random_token()), false, 400)));
        mix.extend(mint("revoked", 100).await.into_iter().map(|t| (t, false, 400)));
    }
    let cases = mix
        .into_iter()
        .enumerate()
        .map(|(i, (subject, with_actor, expect))| Case {
            subject,
            actor: with_actor.then(|| actors[i % 5].clone()),
            expect,
            audience: format!("https://api.example.com/service-{}", i % 20),
            resource: format!("https://resource.example.com/api/v{}", i % 10),
            scope: SCOPES[i % 4],
        })
        .collect();
    Seed { secret, cases }
}

async fn exchange(http: &reqwest::Client, base: &str, secret: &str, c: &Case) -> (Duration, bool) {
    let mut form = vec![
        ("grant_type", GRANT),
        ("subject_token", c.subject.as_str()),
        ("subject_token_type", AT),
        ("audience", c.audience.as_str()),
        ("resource", c.resource.as_str()),
        ("scope", c.scope),
    ];
    if let Some(a) = &c.actor {
        form.extend([("actor_token", a.as_str()), ("actor_token_type", AT)]);
    }
    let t = Instant::now();
    let res = http.post(format!("{base}/token")).basic_auth("exchanger", Some(secret)).form(&form).send().await;
    let ok = match res {
        Ok(r) => {
            let st = r.status().as_u16();
            let _ = r.bytes().await;
            st == c.expect
        }
        Err(_) => false,
    };
    (t.elapsed(), ok)
}

struct Run {
    rps: f64,
    summary: Summary,
    misclassified: usize,
    cpu_per_request: Duration,
    proc_cpu_per_request: Duration,
}

async fn closed_loop(server: &Server, http: &reqwest::Client, seed: &Seed, workers: usize, seconds: u64) -> Run {
    let before = metrics(http, &server.base).await;
    let proc_before = process_cpu_seconds(server.pid());
    let next = Arc::new(AtomicUsize::new(0));
    let cases = Arc::new(seed.cases.clone());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let (http, base, secret, next, cases) = (http.clone(), server.base.clone(), seed.secret.clone(), next.clone(), cases.clone());
        set.spawn(async move {
            let (mut lat, mut bad) = (Vec::new(), 0);
            while Instant::now() < deadline {
                let c = &cases[next.fetch_add(1, Ordering::Relaxed) % cases.len()];
                let (d, ok) = exchange(&http, &base, &secret, c).await;
                lat.push(d);
                bad += usize::from(!ok);
            }
            (lat, bad)
        });
    }
    let results = set.join_all().await;
    let elapsed = started.elapsed().as_secs_f64();
    finish(server, http, &before, proc_before, results, elapsed).await
}

async fn open_loop(server: &Server, http: &reqwest::Client, seed: &Seed, rate: usize, seconds: u64) -> Run {
    let before = metrics(http, &server.base).await;
    let proc_before = process_cpu_seconds(server.pid());
    let cases = Arc::new(seed.cases.clone());
    let mut set = tokio::task::JoinSet::new();
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let per_tick = rate / 100;
    let mut i = 0usize;
    while started.elapsed() < Duration::from_secs(seconds) {
        tick.tick().await;
        for _ in 0..per_tick {
            let (http, base, secret, cases) = (http.clone(), server.base.clone(), seed.secret.clone(), cases.clone());
            let idx = i;
            i += 1;
            set.spawn(async move {
                let (d, ok) = exchange(&http, &base, &secret, &cases[idx % cases.len()]).await;
                (vec![d], usize::from(!ok))
            });
        }
    }
    let results = set.join_all().await;
    let elapsed = started.elapsed().as_secs_f64();
    finish(server, http, &before, proc_before, results, elapsed).await
}

async fn finish(server: &Server, http: &reqwest::Client, before: &str, proc_before: f64, results: Vec<(Vec<Duration>, usize)>, elapsed: f64) -> Run {
    let after = metrics(http, &server.base).await;
    let label = format!("{{endpoint=\"token\",grant_type=\"{GRANT}\"}}");
    let cpu_sum = sample(&after, &format!("authrim_http_request_cpu_seconds_sum{label}")) - sample(before, &format!("authrim_http_request_cpu_seconds_sum{label}"));
    let cpu_n = sample(&after, &format!("authrim_http_request_cpu_seconds_count{label}")) - sample(before, &format!("authrim_http_request_cpu_seconds_count{label}"));
    let proc_cpu = process_cpu_seconds(server.pid()) - proc_before;
    let misclassified = results.iter().map(|(_, b)| b).sum();
    let all: Vec<Duration> = results.into_iter().flat_map(|(l, _)| l).collect();
    let n = all.len();
    Run {
        rps: n as f64 / elapsed,
        summary: summarise(all),
        misclassified,
        cpu_per_request: Duration::from_secs_f64(cpu_sum / cpu_n.max(1.0)),
        proc_cpu_per_request: Duration::from_secs_f64(proc_cpu / n.max(1) as f64),
    }
}

fn row(name: &str, r: &Run, sign: Duration, signatures: f64) {
    println!(
        "| {name} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.1} µs | {:.1} µs | {:.2}× |",
        r.summary.n,
        r.misclassified,
        r.rps,
        r.summary.p50,
        r.summary.p99,
        r.summary.max,
        r.cpu_per_request.as_secs_f64() * 1e6,
        r.proc_cpu_per_request.as_secs_f64() * 1e6,
        r.proc_cpu_per_request.as_secs_f64() / (sign.as_secs_f64() * signatures),
    );
}

fn main() {
    load_generator_runtime().block_on(bench());
}

async fn bench() {
    let workers: usize = env_or("AUTHRIM_BENCH_WORKERS", 64);
    let seconds: u64 = env_or("AUTHRIM_BENCH_SECONDS", 10);
    let rate: usize = env_or("AUTHRIM_BENCH_RATE", 1000);
    let http = reqwest::Client::builder().pool_max_idle_per_host(1024).build().unwrap();
    let env = [("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true".to_string())];

    let sign = rsa_sign_cost();
    println!("token exchange; RSA-2048 signature measured now: {:.1} µs", sign.as_secs_f64() * 1e6);
    println!("| run | requests | misclassified | RPS | p50 ms | p99 ms | max ms | handler CPU/req | process CPU/req | process CPU / signatures |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    {
        let server = Server::start(&env).await;
        let seed = seed(&http, &server.base, false).await;
        let r = closed_loop(&server, &http, &seed, workers, seconds).await;
        row(&format!("mix, saturation ({workers} workers)"), &r, sign, 0.7);
        let r = open_loop(&server, &http, &seed, rate, seconds).await;
        row(&format!("mix, sustained {rate} RPS"), &r, sign, 0.7);
    }
    {
        let server = Server::start(&env).await;
        let seed = seed(&http, &server.base, true).await;
        let r = closed_loop(&server, &http, &seed, workers, seconds).await;
        row(&format!("valid only, saturation ({workers} workers)"), &r, sign, 1.0);
    }
    println!("(the mix signs on 70 % of requests: 0.7 signatures per request; valid only: 1)");
}
