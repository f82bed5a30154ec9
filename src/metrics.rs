//! Prometheus metrics at `/metrics`, standing where the reference used Cloudflare analytics:
//! request duration per endpoint and grant type, CPU time per request, store wall time per
//! store and shard, CPU time per token signature, database reads/writes/commits, and errors
//! by OAuth error code.
//!
//! Metrics are process-global (the Prometheus convention): stores, the journal and the HTTP
//! layer record into them without plumbing. Recording costs a label lookup and an atomic
//! add.
//!
//! The two CPU-time histograms (per request, per signature) are *sampled*: the thread-CPU
//! clock is a real system call (not vDSO), and reading it around every poll and every
//! signature was 4.4 system calls per ES256 issuance, more than any other. A worker thread
//! times at most one request and one signature per `CPU_SAMPLE_INTERVAL`: on a quiet node
//! every request is timed, under load about a thousand a second per thread. The histograms'
//! `_sum / _count` stays the mean; counts of requests and signatures are in
//! `http_request_duration_seconds` and `token_signatures`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub endpoint: &'static str,
    pub grant_type: &'static str,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub endpoint: &'static str,
    pub error: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreLabels {
    pub store: &'static str,
    pub shard: u32,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreNameLabels {
    pub store: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EndpointLabels {
    pub endpoint: &'static str,
    pub grant_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusalLabels {
    /// `global_limit` or `address_limit`.
    pub reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TimeoutLabels {
    /// `tls_handshake`, `header`, `body` or `idle`.
    pub phase: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// Back-channel logout: `delivered`, `retry` or `abandoned`.
    pub outcome: &'static str,
}

pub struct Metrics {
    pub request_duration: Family<RequestLabels, Histogram>,
    pub request_cpu: Family<EndpointLabels, Histogram>,
    pub errors: Family<ErrorLabels, Counter>,
    pub store_wall: Family<StoreLabels, Histogram>,
    /// The subset of `store_wall` that waited for a group commit: a store's figure over all
    /// its operations mixes these with answers from memory (a refresh makes one of each).
    pub store_durable: Family<StoreNameLabels, Histogram>,
    pub signing_cpu: Histogram,
    /// Every token signature (`signing_cpu` times a sample of them).
    pub signatures: Counter,
    pub store_entries: Family<StoreLabels, Gauge>,
    pub db_reads: Counter,
    pub db_writes: Counter,
    pub db_commits: Counter,
    /// Client connections open now (admitted, TLS handshakes included).
    pub connections_open: Gauge,
    /// Connections refused at accept because a connection cap was reached.
    pub connections_refused: Family<RefusalLabels, Counter>,
    /// Connections (or, for `body`, requests) cut off by a slow-client timeout.
    pub connection_timeouts: Family<TimeoutLabels, Counter>,
    /// Back-channel logout deliveries by outcome.
    pub backchannel_logouts: Family<OutcomeLabels, Counter>,
    /// Logout tokens waiting in the outbox (as last counted by this node's deliverer).
    pub backchannel_pending: Gauge,
}

fn latency_buckets() -> impl Iterator<Item = f64> {
    // 10 µs … ~30 s, in steps of √2: resolves a 50 µs userinfo and a fsync-bound commit, and
    // a p99 near a 1 ms target to within 41 %, not 100 %.
    prometheus_client::metrics::histogram::exponential_buckets(0.000_01, std::f64::consts::SQRT_2, 44)
}

pub static METRICS: LazyLock<Metrics> = LazyLock::new(|| Metrics {
    request_duration: Family::new_with_constructor(|| Histogram::new(latency_buckets())),
    request_cpu: Family::new_with_constructor(|| Histogram::new(latency_buckets())),
    errors: Family::default(),
    store_wall: Family::new_with_constructor(|| Histogram::new(latency_buckets())),
    store_durable: Family::new_with_constructor(|| Histogram::new(latency_buckets())),
    signing_cpu: Histogram::new(latency_buckets()),
    signatures: Counter::default(),
    store_entries: Family::default(),
    db_reads: Counter::default(),
    db_writes: Counter::default(),
    db_commits: Counter::default(),
    connections_open: Gauge::default(),
    connections_refused: Family::default(),
    connection_timeouts: Family::default(),
    backchannel_logouts: Family::default(),
    backchannel_pending: Gauge::default(),
});

/// Render every metric in the Prometheus text format.
pub fn render() -> String {
    let m = &*METRICS;
    let mut r = Registry::with_prefix("authrim");
    r.register("http_request_duration_seconds", "Server-side request duration", m.request_duration.clone());
    r.register(
        "http_request_cpu_seconds",
        "CPU time spent on a request (its own task); sampled: at most one request per worker thread per millisecond",
        m.request_cpu.clone(),
    );
    r.register("oauth_errors", "Error responses by OAuth error code", m.errors.clone());
    r.register("store_operation_seconds", "Store wall time per operation, by store and shard", m.store_wall.clone());
    r.register(
        "store_durable_write_seconds",
        "Store wall time of the operations that waited for a durable commit (embedded store), by store",
        m.store_durable.clone(),
    );
    r.register(
        "token_signing_cpu_seconds",
        "CPU time of token signatures, as made under the running load (the denominator of CPU per issuance); sampled: at most one signature per worker thread per millisecond",
        m.signing_cpu.clone(),
    );
    r.register("token_signatures", "Token signatures made (all of them)", m.signatures.clone());
    r.register("store_entries", "Entries held per store shard", m.store_entries.clone());
    r.register("db_reads", "Database read queries", m.db_reads.clone());
    r.register("db_writes", "Database writes (statements committed)", m.db_writes.clone());
    r.register("db_commits", "Database transactions committed (group commits)", m.db_commits.clone());
    r.register("connections_open", "Client connections open now", m.connections_open.clone());
    r.register("connections_refused", "Connections refused at once because a connection cap was reached, by cap", m.connections_refused.clone());
    r.register(
        "connection_timeouts",
        "Slow clients cut off, by phase: TLS handshake, request headers, request body, idle keep-alive",
        m.connection_timeouts.clone(),
    );
    r.register(
        "backchannel_logouts",
        "Back-channel logout token deliveries, by outcome: delivered, retry (failed, will be retried), abandoned (out of attempts)",
        m.backchannel_logouts.clone(),
    );
    r.register("backchannel_logout_pending", "Logout tokens waiting in the outbox", m.backchannel_pending.clone());
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &r).expect("encoding to a String");
    out
}

/// Time a store operation on `shard`; recorded when dropped. Like a Durable Object's wall
/// time, it ends when the store has its answer: for a write that waits on a group commit,
/// when the commit landed (`answered_at`), not when the caller's task next gets a thread.
pub struct StoreTimer {
    store: &'static str,
    shard: u32,
    start: std::time::Instant,
    end: Option<std::time::Instant>,
}

impl StoreTimer {
    pub fn start(store: &'static str, shard: usize) -> Self {
        Self { store, shard: shard as u32, start: std::time::Instant::now(), end: None }
    }

    /// The store had its answer at `at` (a durable write's commit); `None` for an answer
    /// that needed no write.
    pub fn answered_at(&mut self, at: impl Into<Option<std::time::Instant>>) {
        self.end = at.into();
    }
}

impl Drop for StoreTimer {
    fn drop(&mut self) {
        let wall = self.end.unwrap_or_else(std::time::Instant::now).saturating_duration_since(self.start).as_secs_f64();
        METRICS.store_wall.get_or_create(&StoreLabels { store: self.store, shard: self.shard }).observe(wall);
        if self.end.is_some() {
            METRICS.store_durable.get_or_create(&StoreNameLabels { store: self.store }).observe(wall);
        }
    }
}

/// The value of the sample `name{labels}` in the current rendering (tests read metrics back).
#[cfg(test)]
pub fn rendered_sample(name_and_labels: &str) -> Option<f64> {
    render().lines().find_map(|l| l.strip_prefix(name_and_labels)?.strip_prefix(' ')?.trim().parse().ok())
}

/// CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the valid pointer we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The least time between two CPU-time samples of one kind on one worker thread: bounds the
/// clock's system calls to about two thousand a second per thread and kind, whatever the load.
pub const CPU_SAMPLE_INTERVAL: Duration = Duration::from_millis(1);

/// When a thread may next sample (`None`: at once).
type SampleGate = std::thread::LocalKey<std::cell::Cell<Option<std::time::Instant>>>;

thread_local! {
    static NEXT_REQUEST_SAMPLE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
    static NEXT_SIGNATURE_SAMPLE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Whether the calling thread's gate is open at `now`; if so, it closes for `CPU_SAMPLE_INTERVAL`.
/// `Instant` is the monotonic clock, read through the vDSO without a system call.
fn sample_due(gate: &'static SampleGate, now: std::time::Instant) -> bool {
    gate.with(|next| match next.get() {
        Some(at) if now < at => false,
        _ => {
            next.set(Some(now + CPU_SAMPLE_INTERVAL));
            true
        }
    })
}

/// Whether to time the CPU of a request that starts at `now` on this thread.
pub fn request_cpu_sample_due(now: std::time::Instant) -> bool {
    sample_due(&NEXT_REQUEST_SAMPLE, now)
}

/// Run `sign`, timing its thread CPU into `signing_cpu` if this thread's sample is due, and
/// count the signature.
pub fn timed_signature<T>(sign: impl FnOnce() -> T) -> T {
    METRICS.signatures.inc();
    if !sample_due(&NEXT_SIGNATURE_SAMPLE, std::time::Instant::now()) {
        return sign();
    }
    let before = thread_cpu_time();
    let r = sign();
    METRICS.signing_cpu.observe(thread_cpu_time().saturating_sub(before).as_secs_f64());
    r
}

pin_project_lite::pin_project! {
    /// A future that adds up the thread CPU time of each of its polls, wherever it runs; or,
    /// made with `timed: false`, only runs its inner future (a request not sampled).
    pub struct CpuTimed<F> {
        #[pin]
        inner: F,
        spent: Option<Duration>,
    }
}

impl<F> CpuTimed<F> {
    pub fn new(inner: F, timed: bool) -> Self {
        Self { inner, spent: timed.then_some(Duration::ZERO) }
    }
}

impl<F: Future> Future for CpuTimed<F> {
    /// The inner output, and its CPU time if timed.
    type Output = (F::Output, Option<Duration>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(spent) = this.spent.as_mut() else {
            return this.inner.poll(cx).map(|v| (v, None));
        };
        let before = thread_cpu_time();
        let r = this.inner.poll(cx);
        *spent += thread_cpu_time().saturating_sub(before);
        r.map(|v| (v, Some(*spent)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_advances_with_work() {
        let a = thread_cpu_time();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time() > a);
    }

    #[test]
    fn a_thread_samples_at_most_once_per_interval() {
        // A fresh thread, so that no other test's sample closes its gate.
        std::thread::spawn(|| {
            let t0 = std::time::Instant::now();
            assert!(request_cpu_sample_due(t0), "the first request on a thread is timed");
            assert!(!request_cpu_sample_due(t0 + CPU_SAMPLE_INTERVAL / 2));
            assert!(request_cpu_sample_due(t0 + CPU_SAMPLE_INTERVAL));
            // The signature's gate is its own.
            assert!(sample_due(&NEXT_SIGNATURE_SAMPLE, t0));
        })
        .join()
        .unwrap();
    }

    #[tokio::test]
    async fn an_untimed_future_reports_no_cpu_and_a_timed_one_does() {
        assert_eq!(CpuTimed::new(async { 7 }, false).await, (7, None));
        assert!(matches!(CpuTimed::new(async { 7 }, true).await, (7, Some(_))));
    }

    #[test]
    fn every_signature_is_counted() {
        let before = METRICS.signatures.get();
        for _ in 0..3 {
            timed_signature(|| ());
        }
        // Other tests may sign at the same time: at least ours.
        assert!(METRICS.signatures.get() >= before + 3);
    }

    #[test]
    fn rendering_names_store_shards() {
        drop(StoreTimer::start("test_store", 3));
        let text = render();
        assert!(text.contains("authrim_store_operation_seconds_count{store=\"test_store\",shard=\"3\"} 1"), "{text}");
    }

    #[test]
    fn a_store_timer_ends_when_the_store_answered_not_when_dropped() {
        let mut timer = StoreTimer::start("answered_store", 0);
        timer.answered_at(std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        drop(timer);
        let seconds = rendered_sample("authrim_store_operation_seconds_sum{store=\"answered_store\",shard=\"0\"}").expect("the observation is rendered");
        assert!(seconds < 0.05, "recorded {seconds} s: the caller's wait after the answer was counted");
    }

    #[test]
    fn only_operations_that_waited_for_a_commit_count_as_durable_writes() {
        let mut write = StoreTimer::start("durable_split_store", 0);
        write.answered_at(std::time::Instant::now());
        drop(write);
        drop(StoreTimer::start("durable_split_store", 1));
        let all: f64 = (0..2)
            .map(|shard| rendered_sample(&format!("authrim_store_operation_seconds_count{{store=\"durable_split_store\",shard=\"{shard}\"}}")).unwrap())
            .sum();
        assert_eq!(all, 2.0);
        assert_eq!(rendered_sample("authrim_store_durable_write_seconds_count{store=\"durable_split_store\"}"), Some(1.0));
    }
}
