//! `cargo bench --bench multi_node`: throughput of two workloads on three deployments, in one
//! run on one machine:
//!   - `sqlite`: one node on the embedded SQLite database, `synchronous=FULL`;
//!   - `pg1`: one node on PostgreSQL;
//!   - `pg2`: two nodes on the same PostgreSQL database (one issuer and one key-encryption key
//!     for the fleet), the load spread round-robin over both, request by request.
//!
//! Workloads, each a closed loop of AUTHRIM_BENCH_WORKERS workers for AUTHRIM_BENCH_SECONDS:
//!   - `refresh`: as benches/refresh_rotation.rs: each worker owns one refresh-token family
//!     (seeded through `/test/bulk/*`, scope `offline_access`) and rotates it; a failed
//!     rotation ends that worker's chain. On `pg2` consecutive rotations alternate nodes.
//!   - `exchange`: RFC 8693 token exchange as benches/token_exchange.rs, but with valid subject
//!     tokens only (its "valid only" run: 1,000 tokens, 20 audiences, 10 resources, 4 scopes; no
//!     actor, expired, invalid or revoked tokens), so every answer other than 200 is an error.
//!
//! Every (deployment, workload) gets fresh server processes and, on PostgreSQL, a fresh
//! database in a throwaway cluster this bench starts and stops (`scripts/pg.sh`). Seeding goes
//! through the first node; the load starts as soon as every node knows the seeded clients and
//! users, with no quiet period: a node must serve correctly while it is still applying a
//! burst of registry changes (a first node-sync version did not; see docs/benchmarks.md).
//! Reported: requests, errors (non-200), RPS, p50/p99, CPU per request of the authrim processes
//! (all nodes) and of PostgreSQL (postmaster and children), and the requests per node. The load
//! generator shares the machine with all of them. Knobs: AUTHRIM_BENCH_WORKERS (64),
//! AUTHRIM_BENCH_SECONDS (10), AUTHRIM_BENCH_DEPLOYMENTS ("sqlite,pg1,pg2").

mod common;

use common::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const GRANT: &str = EXCHANGE_GRANT;
const AT: &str = "urn:ietf:params:oauth:token-type:access_token";
const SCOPES: [&str; 4] = EXCHANGE_SCOPES;
/// 32 bytes, base64url: the key-encryption key every PostgreSQL node shares.
const KEK: &str = "YmVuY2gtbm9kZXMtc2hhcmUtb25lLWtleS1lbmNyeXA";
/// One issuer for a PostgreSQL fleet (loopback, so the test endpoints are allowed).
const FLEET_ISSUER: &str = "http://localhost:9999";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A throwaway PostgreSQL cluster (`scripts/pg.sh`), stopped when dropped (also on a panic).
struct Cluster {
    dir: tempfile::TempDir,
    url: String,
}

fn pg_script() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh")
}

impl Cluster {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (script, port) = (pg_script(), free_port().to_string());
        let out = server_side(&mut Command::new(script)).arg("start").arg(dir.path()).arg(port).stderr(Stdio::inherit()).output().expect("scripts/pg.sh");
        assert!(out.status.success(), "scripts/pg.sh start failed");
        Self { url: String::from_utf8(out.stdout).unwrap().trim().to_string(), dir }
    }

    async fn connect(&self) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await.expect("connect to the cluster");
        tokio::spawn(conn);
        client
    }

    /// A fresh database; returns its URL.
    async fn database(&self, name: &str) -> String {
        self.connect().await.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create database");
        format!("{}/{name}", self.url.rsplit_once('/').unwrap().0)
    }

    /// CPU seconds of the postmaster and every process it forked that is still alive.
    fn cpu_seconds(&self) -> f64 {
        let pid = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid")).unwrap_or_default();
        let Some(postmaster) = pid.lines().next().and_then(|l| l.trim().parse::<u32>().ok()) else { return 0.0 };
        let children = std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid: u32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == postmaster).then_some(pid)
        });
        process_cpu_seconds(postmaster) + children.map(process_cpu_seconds).sum::<f64>()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(pg_script()).arg("stop").arg(self.dir.path()).status();
    }
}

/// Start the nodes of one deployment (`sqlite`, `pg1`, `pg2`), one after the other.
async fn deploy(kind: &str, cluster: Option<&Cluster>, db: &str) -> Vec<Server> {
    let mut env = vec![("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true".to_string()), ("NO_COLOR", "1".to_string())];
    let nodes = match kind {
        "sqlite" => {
            env.push(("AUTHRIM_SQLITE_SYNCHRONOUS", "FULL".to_string()));
            1
        }
        "pg1" | "pg2" => {
            env.push(("AUTHRIM_DATABASE_URL", cluster.expect("cluster").database(db).await));
            env.push(("AUTHRIM_KEY_ENCRYPTION_KEY", KEK.to_string()));
            env.push(("AUTHRIM_ISSUER", FLEET_ISSUER.to_string()));
            if kind == "pg1" { 1 } else { 2 }
        }
        other => panic!("unknown deployment {other:?} (sqlite, pg1, pg2)"),
    };
    let mut servers = Vec::new();
    for _ in 0..nodes {
        servers.push(Server::start(&env).await);
    }
    servers
}

/// What the workers need, seeded through the first node.
enum Plan {
    Refresh { secret: String, tokens: Vec<String> },
    Exchange { secret: String, cases: Arc<Vec<[String; 3]>> },
}

async fn seed(http: &reqwest::Client, nodes: &[Server], workload: &str, workers: usize) -> Plan {
    let base = &nodes[0].base;
    let (plan, clients, users) = if workload == "refresh" {
        let (secret, tokens, users) = seed_refresh_families(http, base, workers).await;
        (Plan::Refresh { secret, tokens }, vec!["bench"], users)
    } else {
        let (secret, ids, users) = seed_exchange_parties(http, base).await;
        let tokens = admin_post(http, base, "/test/bulk/tokens", json!({
            "client_id": "webapp", "user_ids": ids, "per_user": 10, "kind": "valid", "scope": SCOPES[0],
        }))
        .await;
        let cases = strings(&tokens["tokens"], |t| t)
            .into_iter()
            .enumerate()
            .map(|(i, subject)| {
                [subject, format!("https://api.example.com/service-{}", i % 20), format!("https://resource.example.com/api/v{}", i % 10)]
            })
            .collect();
        (Plan::Exchange { secret, cases: Arc::new(cases) }, vec!["exchanger", "webapp"], users)
    };
    // Every other node must know the clients and users before the load starts.
    let users = strings(&users["users"], |u| &u["id"]);
    let paths: Vec<String> = clients.iter().map(|c| format!("/admin/clients/{c}")).chain(users.iter().map(|u| format!("/admin/users/{u}"))).collect();
    for node in &nodes[1..] {
        let start = Instant::now();
        for path in &paths {
            while http.get(format!("{}{path}", node.base)).bearer_auth(ADMIN).send().await.unwrap().status() != 200 {
                assert!(start.elapsed() < Duration::from_secs(10), "{path} never reached {}", node.base);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    plan
}

/// One POST to `/token`; the body of a 200, or a description of the failure.
async fn token(http: &reqwest::Client, base: &str, client: &str, secret: &str, form: &[(&str, &str)]) -> (Duration, Result<String, String>) {
    let t = Instant::now();
    let res = http.post(format!("{base}/token")).basic_auth(client, Some(secret)).form(form).send().await;
    let out = match res {
        Ok(r) => {
            let status = r.status();
            let body = r.text().await.unwrap_or_default();
            if status == 200 { Ok(body) } else { Err(format!("{status} {}", body.chars().take(160).collect::<String>())) }
        }
        Err(e) => Err(format!("transport: {e}")),
    };
    (t.elapsed(), out)
}

/// One worker's record: latencies, requests sent to each node, what went wrong.
struct Tally {
    latencies: Vec<Duration>,
    per_node: Vec<usize>,
    errors: Vec<String>,
}

impl Tally {
    fn new(n: usize) -> Self {
        Self { latencies: Vec::new(), per_node: vec![0; n], errors: Vec::new() }
    }
    fn record<T>(&mut self, node: usize, d: Duration, out: &Result<T, String>) {
        self.latencies.push(d);
        self.per_node[node] += 1;
        if let Err(e) = out {
            self.errors.push(e.clone());
        }
    }
}

async fn load(http: &reqwest::Client, nodes: &[Server], plan: Plan, workers: usize, seconds: u64) -> (Vec<Tally>, f64) {
    let bases: Arc<Vec<String>> = Arc::new(nodes.iter().map(|s| s.base.clone()).collect());
    let n = bases.len();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    match plan {
        Plan::Refresh { secret, tokens } => {
            for (w, mut current) in tokens.into_iter().enumerate() {
                let (http, bases, secret) = (http.clone(), bases.clone(), secret.clone());
                set.spawn(async move {
                    let mut tally = Tally::new(n);
                    for k in w.. {
                        if Instant::now() >= deadline {
                            break;
                        }
                        let form = [("grant_type", "refresh_token"), ("refresh_token", current.as_str())];
                        let (d, out) = token(&http, &bases[k % n], "bench", &secret, &form).await;
                        let out = out.and_then(|body| {
                            let v: Value = serde_json::from_str(&body).map_err(|e| format!("200 with a bad body: {e}"))?;
                            v["refresh_token"].as_str().map(String::from).ok_or_else(|| "200 without refresh_token".to_string())
                        });
                        tally.record(k % n, d, &out);
                        match out {
                            Ok(next) => current = next,
                            Err(_) => break, // a failed rotation ends this worker's chain
                        }
                    }
                    tally
                });
            }
        }
        Plan::Exchange { secret, cases } => {
            let next = Arc::new(AtomicUsize::new(0));
            for _ in 0..workers {
                let (http, bases, secret, cases, next) = (http.clone(), bases.clone(), secret.clone(), cases.clone(), next.clone());
                set.spawn(async move {
                    let mut tally = Tally::new(n);
                    while Instant::now() < deadline {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let [subject, audience, resource] = &cases[i % cases.len()];
                        let form = [("grant_type", GRANT), ("subject_token", subject.as_str()), ("subject_token_type", AT),
                                    ("audience", audience.as_str()), ("resource", resource.as_str()), ("scope", SCOPES[i % 4])];
                        let (d, out) = token(&http, &bases[i % n], "exchanger", &secret, &form).await;
                        tally.record(i % n, d, &out);
                    }
                    tally
                });
            }
        }
    }
    let tallies = set.join_all().await;
    (tallies, started.elapsed().as_secs_f64())
}

fn main() {
    load_generator_runtime().block_on(bench());
}

async fn bench() {
    let workers: usize = env_or("AUTHRIM_BENCH_WORKERS", 64);
    let seconds: u64 = env_or("AUTHRIM_BENCH_SECONDS", 10);
    let list: String = env_or("AUTHRIM_BENCH_DEPLOYMENTS", "sqlite,pg1,pg2".to_string());
    let deployments: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).pool_max_idle_per_host(1024).build().unwrap();

    let cluster = deployments.iter().any(|d| d.starts_with("pg")).then(Cluster::start);
    let pg = match &cluster {
        Some(c) => {
            let settings = ["server_version", "fsync", "synchronous_commit", "max_connections"].map(|s| format!("current_setting('{s}')"));
            let row = c.connect().await.query_one(&format!("SELECT {}", settings.join(", ")), &[]).await.unwrap();
            let show = |i: usize| row.get::<_, String>(i);
            format!(
                "PostgreSQL {} (fsync={}, synchronous_commit={}, max_connections={}; throwaway cluster on loopback; each node its default pool)",
                show(0), show(1), show(2), show(3)
            )
        }
        None => "no PostgreSQL".to_string(),
    };
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "multi-node: {workers} workers (closed loop), {seconds} s per run, {cores} cores shared \
         by load generator, nodes and database; SQLite synchronous=FULL; {pg}"
    );
    println!("exchange: valid subject tokens only (no actor, expired, invalid or revoked tokens); refresh: scope offline_access");
    println!("| deployment | workload | requests | errors | RPS | p50 ms | p99 ms | authrim CPU/req | PostgreSQL CPU/req | requests per node |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut notes = Vec::new();
    for deployment in &deployments {
        for workload in ["refresh", "exchange"] {
            let nodes = deploy(deployment, cluster.as_ref(), &format!("bench_{deployment}_{workload}")).await;
            let plan = seed(&http, &nodes, workload, workers).await;
            let cpu = || nodes.iter().map(|s| process_cpu_seconds(s.pid())).sum::<f64>();
            let pg_cpu = || cluster.as_ref().map_or(0.0, Cluster::cpu_seconds);
            let (cpu0, pg0) = (cpu(), pg_cpu());
            let (tallies, elapsed) = load(&http, &nodes, plan, workers, seconds).await;
            let (cpu1, pg1) = (cpu(), pg_cpu());

            let mut per_node = vec![0usize; nodes.len()];
            let mut errors: Vec<String> = Vec::new();
            for t in &tallies {
                per_node.iter_mut().zip(&t.per_node).for_each(|(a, b)| *a += b);
                errors.extend(t.errors.iter().cloned());
            }
            let sum = summarise(tallies.into_iter().flat_map(|t| t.latencies).collect());
            let per_req = |s: f64| format!("{:.0} µs", s / sum.n.max(1) as f64 * 1e6);
            let split = per_node.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" / ");
            let pg = if deployment.starts_with("pg") { per_req(pg1 - pg0) } else { "–".into() };
            let (n, e, rps, cpu) = (sum.n, errors.len(), sum.n as f64 / elapsed, per_req(cpu1 - cpu0));
            println!("| {deployment} | {workload} | {n} | {e} | {rps:.0} | {:.2} | {:.2} | {cpu} | {pg} | {split} |", sum.p50, sum.p99);
            let mut kinds = std::collections::BTreeMap::<String, usize>::new();
            errors.iter().for_each(|e| *kinds.entry(e.clone()).or_default() += 1);
            for (e, count) in kinds.iter().take(5) {
                notes.push(format!("{deployment}/{workload}: {count}× {e}"));
            }
            for (i, log) in nodes.iter().map(Server::log).enumerate() {
                let bad: Vec<&str> = log.lines().filter(|l| l.contains("ERROR") || l.contains("panicked")).collect();
                if let Some(first) = bad.first() {
                    notes.push(format!("{deployment}/{workload}: node {} logged {} ERROR/panic lines, first: {first}", i + 1, bad.len()));
                }
            }
        }
    }
    println!("(CPU is user + system over the measured period: all authrim nodes together; PostgreSQL's postmaster and its live children)");
    for note in &notes {
        println!("{note}");
    }
}
