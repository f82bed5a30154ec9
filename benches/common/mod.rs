//! Shared by the load benchmarks: run the release binary as its own process, scrape its
//! metrics, and summarise latencies.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const ADMIN: &str = "bench-admin";

pub struct Server {
    child: Child,
    pub base: String,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Start `authrim serve` on a free loopback port with `env` on top of bench defaults (which
    /// `env` overrides, e.g. AUTHRIM_ISSUER for several nodes sharing one issuer).
    pub async fn start(env: &[(&str, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = format!("http://127.0.0.1:{port}");
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        // AUTHRIM_BENCH_BIN measures another build (a before/after pair in one session).
        let bin = std::env::var("AUTHRIM_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_authrim").to_string());
        let mut cmd = Command::new(bin);
        cmd.arg("serve")
            .env("AUTHRIM_DATA_DIR", dir.path())
            .env("AUTHRIM_LISTEN", format!("127.0.0.1:{port}"))
            .env("AUTHRIM_ISSUER", &base)
            .env("AUTHRIM_ADMIN_TOKEN", ADMIN)
            .env("AUTHRIM_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log);
        for (k, v) in env {
            cmd.env(k, v);
        }
        server_side(&mut cmd);
        // Owned by the guard at once, so that Drop stops and reaps it on every path.
        let server = Self { child: cmd.spawn().expect("start authrim"), base, _dir: dir };
        let http = reqwest::Client::new();
        for _ in 0..200 {
            if http.get(format!("{}/healthz", server.base)).send().await.is_ok_and(|r| r.status().is_success()) {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server did not start");
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server has written to stderr so far (its log, at AUTHRIM_LOG's level).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

/// The runtime the load generator runs on. The generator shares the machine's two cores with
/// the server; under the default policy every response wakes a generator thread that preempts
/// a server worker on the spot (about 0.8 involuntary switches per request, each with its IPI
/// and cache refill billed to the server's CPU time), which a generator on another machine
/// would not do. So by default its threads run under SCHED_BATCH, which the scheduler never
/// lets preempt on wake-up (they still get their fair share at the tick); the server is started
/// back under SCHED_OTHER. AUTHRIM_BENCH_GENERATOR_POLICY=other keeps the default policy.
pub fn load_generator_runtime() -> tokio::runtime::Runtime {
    if generator_policy() == "batch" {
        // Threads inherit their creator's policy: set it before the runtime spawns its workers.
        if let Err(e) = set_policy(libc::SCHED_BATCH) {
            eprintln!("warning: the load generator keeps the default policy (SCHED_BATCH refused: {e})");
        }
    }
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

/// AUTHRIM_BENCH_GENERATOR_POLICY: `batch` (the default) or `other`.
pub fn generator_policy() -> String {
    env_or("AUTHRIM_BENCH_GENERATOR_POLICY", "batch".to_string())
}

/// Makes `cmd` start under the default policy rather than the load generator's (see
/// `load_generator_runtime`): what it starts is the system under test.
pub fn server_side(cmd: &mut Command) -> &mut Command {
    // SAFETY: between fork and exec the closure makes one async-signal-safe system call.
    // Best effort, like the generator's own policy: a refusal must not stop the bench.
    unsafe { cmd.pre_exec(|| set_policy(libc::SCHED_OTHER).or(Ok(()))) }
}

/// Sets the calling thread's scheduling policy (static priority 0, as both fair policies need).
fn set_policy(policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param for the duration of the call.
    match unsafe { libc::sched_setscheduler(0, policy, &param) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// A bench knob from the environment, or its default.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// POST a JSON body with the admin token; panics unless it succeeds (benches seed this way).
pub async fn admin_post(http: &reqwest::Client, base: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
    let res = http.post(format!("{base}{path}")).bearer_auth(ADMIN).json(&body).send().await.unwrap();
    assert!(res.status().is_success(), "{path}: {}", res.status());
    res.json().await.unwrap()
}

/// `name{labels}` sample value from a Prometheus text page (0 when absent).
pub fn sample(text: &str, name_and_labels: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name_and_labels))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

pub async fn metrics(http: &reqwest::Client, base: &str) -> String {
    http.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap()
}

/// Total CPU seconds (user + system) the process has used, from /proc.
pub fn process_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // After the command name: utime and stime are fields 14 and 15 of stat, 12 and 13 here.
    (ticks(11) + ticks(12)) / 100.0
}

pub struct Summary {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

pub fn summarise(mut latencies: Vec<Duration>) -> Summary {
    latencies.sort();
    let n = latencies.len();
    let at = |p: f64| latencies[((n as f64 * p) as usize).min(n.saturating_sub(1))].as_secs_f64() * 1e3;
    Summary { n, p50: at(0.50), p90: at(0.90), p99: at(0.99), max: latencies.last().map(|d| d.as_secs_f64() * 1e3).unwrap_or(0.0) }
}

/// Median cost of one RSA-2048 PKCS#1 v1.5 signature on this machine, now.
pub fn rsa_sign_cost() -> Duration {
    let (_, pkcs8) = authrim::keys::SigningKey::generate().unwrap();
    let pair = aws_lc_rs::rsa::KeyPair::from_pkcs8(&pkcs8).unwrap();
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let mut sig = vec![0u8; 256];
    let mut samples: Vec<Duration> = (0..9)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..100 {
                pair.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, b"bench message", &mut sig).unwrap();
            }
            t.elapsed() / 100
        })
        .collect();
    samples.sort();
    samples[4]
}

/// Median cost of one signature of `alg` (RS256, PS256, ES256 or EdDSA; aws-lc-rs, key parsed
/// once) on this machine, now: the quiet-loop baseline for servers that sign with it.
pub fn sign_cost(alg: &str) -> Duration {
    use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let sign: Box<dyn Fn()> = match alg {
        "RS256" | "PS256" => return if alg == "RS256" { rsa_sign_cost() } else { rsa_pss_sign_cost() },
        "ES256" => {
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
            let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
            Box::new(move || { std::hint::black_box(pair.sign(&rng, b"bench message").unwrap()); })
        }
        "EdDSA" => {
            let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
            let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
            Box::new(move || { std::hint::black_box(pair.sign(b"bench message")); })
        }
        other => panic!("no signing cost for {other}"),
    };
    let mut samples: Vec<Duration> = (0..9)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..500 {
                sign();
            }
            t.elapsed() / 500
        })
        .collect();
    samples.sort();
    samples[4]
}

fn rsa_pss_sign_cost() -> Duration {
    let (_, pkcs8) = authrim::keys::SigningKey::generate().unwrap();
    let pair = aws_lc_rs::rsa::KeyPair::from_pkcs8(&pkcs8).unwrap();
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let mut sig = vec![0u8; 256];
    let mut samples: Vec<Duration> = (0..9)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..100 {
                pair.sign(&aws_lc_rs::signature::RSA_PSS_SHA256, &rng, b"bench message", &mut sig).unwrap();
            }
            t.elapsed() / 100
        })
        .collect();
    samples.sort();
    samples[4]
}

pub const EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The reference's four requested scopes, widest first.
pub const EXCHANGE_SCOPES: [&str; 4] = ["openid profile email address phone", "openid profile email", "openid profile", "openid"];

/// The strings of a JSON list (`field` picks each item's string).
pub fn strings(list: &serde_json::Value, field: impl Fn(&serde_json::Value) -> &serde_json::Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| field(v).as_str().unwrap().to_string()).collect()
}

/// A client `bench` allowed to refresh, one user, and `n` refresh-token families (scope
/// `offline_access`) through the test-only bulk interface: (client secret, one token per family,
/// the bulk-users answer).
pub async fn seed_refresh_families(http: &reqwest::Client, base: &str, n: usize) -> (String, Vec<String>, serde_json::Value) {
    let client = admin_post(http, base, "/admin/clients", serde_json::json!({
        "client_id": "bench", "redirect_uris": ["https://rp.example/cb"], "grant_types": ["authorization_code", "refresh_token"],
    }))
    .await;
    let users = admin_post(http, base, "/test/bulk/users", serde_json::json!({"count": 1, "password": "bench-password-1"})).await;
    let tokens = admin_post(http, base, "/test/bulk/tokens", serde_json::json!({
        "client_id": "bench", "user_ids": [users["users"][0]["id"]], "per_user": n,
        "kind": "valid", "token_type": "refresh_token", "scope": "offline_access",
    }))
    .await;
    (client["client_secret"].as_str().unwrap().to_string(), strings(&tokens["tokens"], |t| t), users)
}

/// The token-exchange setup of the reference: the confidential client `exchanger` (20
/// audiences, 10 resources), the client `webapp` whose tokens are the subjects, and 100 users.
/// Returns (exchanger secret, user ids, bulk-users answer).
pub async fn seed_exchange_parties(http: &reqwest::Client, base: &str) -> (String, Vec<String>, serde_json::Value) {
    let audiences: Vec<String> = (0..20).map(|i| format!("https://api.example.com/service-{i}")).collect();
    let resources: Vec<String> = (0..10).map(|i| format!("https://resource.example.com/api/v{i}")).collect();
    let exchanger = admin_post(http, base, "/admin/clients", serde_json::json!({
        "client_id": "exchanger", "grant_types": [EXCHANGE_GRANT], "redirect_uris": [], "scope": EXCHANGE_SCOPES[0],
        "allowed_audiences": audiences, "allowed_resources": resources,
    }))
    .await;
    let webapp = serde_json::json!({"client_id": "webapp", "redirect_uris": ["https://rp.example/cb"], "scope": EXCHANGE_SCOPES[0]});
    admin_post(http, base, "/admin/clients", webapp).await;
    let users = admin_post(http, base, "/test/bulk/users", serde_json::json!({"count": 100, "password": "load-password-1"})).await;
    (exchanger["client_secret"].as_str().unwrap().to_string(), strings(&users["users"], |u| &u["id"]), users)
}
