//! Deadlines for the slow phases of a connection, so that a client that stalls (or trickles
//! one byte at a time) loses its connection instead of holding it:
//!
//! - **header**: a request's headers must arrive within `header_read_timeout`, counted from
//!   the connection (after the TLS handshake) or, on a kept-alive HTTP/1 connection, from the
//!   first byte of the next request;
//! - **idle**: with no request in flight, a connection waits `idle_timeout` for the next one;
//!   the clock starts once a response is handed to hyper, so a client that does not read its
//!   response is also let go;
//! - **body**: a request's body must arrive within `body_read_timeout` of its headers
//!   ([`DeadlineBody`]).
//!
//! Why not hyper's own `header_read_timeout`: in hyper 1.12 that timer starts as soon as the
//! connection is ready for the next request, so it also bounds the keep-alive wait
//! (hyperium/hyper#3828) and a short header timeout would close every idle keep-alive
//! connection just as fast; hyper has no separate idle timeout, and no body timeout.
//!
//! The connection task (`connections::drive`) checks [`Activity::deadline`] when its timer
//! fires and closes the connection once it has passed; hyper's events move the deadline
//! through [`Activity`] without waking the task (a wake-up, a timer reset and a waiter
//! registration per request cost userinfo about a sixth of its throughput).

use crate::metrics::{TimeoutLabels, METRICS};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use parking_lot::Mutex;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// A timeout that cut a client off, as counted in `authrim_connection_timeouts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    TlsHandshake,
    Header,
    Body,
    Idle,
}

impl Expiry {
    pub fn record(self) {
        let phase = match self {
            Expiry::TlsHandshake => "tls_handshake",
            Expiry::Header => "header",
            Expiry::Body => "body",
            Expiry::Idle => "idle",
        };
        METRICS.connection_timeouts.get_or_create(&TimeoutLabels { phase }).inc();
    }
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for (the rest of) a request's headers.
    Head { deadline: Instant },
    /// Requests in flight: their bodies have their own deadline, handlers are ours.
    Busy { in_flight: usize },
    /// Between requests.
    Idle { deadline: Instant },
}

/// The phase of one connection and its deadline.
pub struct Activity {
    phase: Mutex<Phase>,
    header_timeout: Duration,
    idle_timeout: Duration,
    /// HTTP/1: the first byte read while idle starts the next request's header clock. Not for
    /// HTTP/2, where an idle client legitimately sends pings and window updates: there the
    /// idle deadline simply runs until a request arrives.
    bytes_start_a_request: bool,
}

impl Activity {
    pub fn new(header_timeout: Duration, idle_timeout: Duration, bytes_start_a_request: bool) -> Arc<Self> {
        Arc::new(Self {
            phase: Mutex::new(Phase::Head { deadline: Instant::now() + header_timeout }),
            header_timeout,
            idle_timeout,
            bytes_start_a_request,
        })
    }

    /// When the connection must be closed unless something happens first, and why.
    pub fn deadline(&self) -> Option<(Instant, Expiry)> {
        match *self.phase.lock() {
            Phase::Head { deadline } => Some((deadline, Expiry::Header)),
            Phase::Idle { deadline } => Some((deadline, Expiry::Idle)),
            Phase::Busy { .. } => None,
        }
    }

    /// The longest the connection task may sleep between two looks at the deadline: every
    /// deadline is set `header_timeout` or `idle_timeout` after the moment it is set, so one
    /// set after a look is never earlier than that look plus the shorter of the two. Sleeping
    /// until `next_check` therefore never oversleeps a deadline, with no wake-up per request.
    fn check_every(&self) -> Duration {
        self.header_timeout.min(self.idle_timeout)
    }

    /// When the connection task should next look, at `now`: the deadline if it is due sooner.
    pub fn next_check(&self, now: Instant) -> Instant {
        let latest = now + self.check_every();
        match self.deadline() {
            Some((at, _)) => at.min(latest),
            None => latest,
        }
    }

    fn bytes_read(&self) {
        if !self.bytes_start_a_request {
            return;
        }
        let mut phase = self.phase.lock();
        if let Phase::Idle { .. } = *phase {
            *phase = Phase::Head { deadline: Instant::now() + self.header_timeout };
        }
    }

    /// A request's headers are in and it goes to the router; the guard ends it.
    pub fn request_started(self: &Arc<Self>) -> InFlight {
        let mut phase = self.phase.lock();
        *phase = match *phase {
            Phase::Busy { in_flight } => Phase::Busy { in_flight: in_flight + 1 },
            Phase::Head { .. } | Phase::Idle { .. } => Phase::Busy { in_flight: 1 },
        };
        InFlight(self.clone())
    }

    fn request_finished(&self) {
        let mut phase = self.phase.lock();
        if let Phase::Busy { in_flight } = *phase {
            *phase = match in_flight {
                0 | 1 => Phase::Idle { deadline: Instant::now() + self.idle_timeout },
                n => Phase::Busy { in_flight: n - 1 },
            };
        }
    }
}

/// One request in flight on a connection, until its response body is done with (or the
/// request is abandoned): hyper drops the response body once it has taken all of it.
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// The response body, holding its request's [`InFlight`].
pub struct TrackedBody {
    inner: axum::body::Body,
    _in_flight: InFlight,
}

impl TrackedBody {
    pub fn new(inner: axum::body::Body, in_flight: InFlight) -> Self {
        Self { inner, _in_flight: in_flight }
    }
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    // Forwarded so that hyper still sends Content-Length rather than chunked encoding.
    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The connection's byte stream, telling [`Activity`] when bytes arrive.
pub struct Watched<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> Watched<T> {
    pub fn new(inner: T, activity: Arc<Activity>) -> Self {
        Self { inner, activity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.bytes_read();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The error a request body yields when its deadline passes.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within the body read timeout")]
pub struct BodyTimeout;

/// A request body that fails once `body_read_timeout` has passed since its headers, however
/// steadily it trickles: the deadline is for the whole body, not between chunks (a per-chunk
/// timeout, like tower-http's, lets one byte every few seconds through forever). With the
/// default 64 KiB body limit and 10 s, a client needs about 6.5 KB/s; OAuth bodies are far
/// smaller than the limit.
pub struct DeadlineBody<B> {
    inner: B,
    deadline: Instant,
    /// Created only when the body first has to wait: most bodies arrive with their headers.
    timer: Option<Pin<Box<Sleep>>>,
    /// Set on expiry, so that the response can say so (408) whatever the handler made of it.
    expired: Arc<AtomicBool>,
}

impl<B> DeadlineBody<B> {
    pub fn new(inner: B, timeout: Duration) -> (Self, Arc<AtomicBool>) {
        let expired = Arc::new(AtomicBool::new(false));
        (Self { inner, deadline: Instant::now() + timeout, timer: None, expired: expired.clone() }, expired)
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.expired.load(Ordering::Relaxed) {
            return Poll::Ready(Some(Err(BodyTimeout.into())));
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let deadline = self.deadline;
        let timer = self.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.expired.store(true, Ordering::Relaxed);
        Expiry::Body.record();
        Poll::Ready(Some(Err(BodyTimeout.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real time (tokio's paused clock needs its `test-util` feature, which would rebuild the
    // dependency tree for tests): durations long enough that a test never reaches them.
    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    /// The deadline's distance from now, to the nearest second, and why.
    fn deadline_in(a: &Activity) -> Option<(u64, Expiry)> {
        a.deadline().map(|(at, why)| ((at - Instant::now()).as_secs_f64().round() as u64, why))
    }

    #[tokio::test]
    async fn a_connection_moves_from_headers_to_busy_to_idle_to_headers() {
        let a = Activity::new(HEADER, IDLE, true);
        assert_eq!(deadline_in(&a), Some((10, Expiry::Header)));
        let req = a.request_started();
        assert_eq!(a.deadline(), None, "no connection deadline while a request is handled");
        a.bytes_read();
        assert_eq!(a.deadline(), None, "body bytes do not start a request");
        drop(req);
        assert_eq!(deadline_in(&a), Some((60, Expiry::Idle)));
        a.bytes_read();
        assert_eq!(deadline_in(&a), Some((10, Expiry::Header)), "the next request's header clock starts at its first byte");
        let first = a.deadline();
        tokio::time::sleep(Duration::from_millis(20)).await;
        a.bytes_read();
        assert_eq!(a.deadline(), first, "more bytes do not restart it");
    }

    #[tokio::test]
    async fn http2_goes_idle_only_when_its_last_stream_ends() {
        let a = Activity::new(HEADER, IDLE, false);
        let (one, two) = (a.request_started(), a.request_started());
        drop(one);
        assert_eq!(a.deadline(), None);
        drop(two);
        assert_eq!(deadline_in(&a), Some((60, Expiry::Idle)));
        a.bytes_read();
        assert_eq!(deadline_in(&a), Some((60, Expiry::Idle)), "pings and window updates do not start a request");
    }

    /// A body that yields one byte every `.1`, forever.
    struct Trickle(Pin<Box<Sleep>>, Duration);

    impl Body for Trickle {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if self.0.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let next = Instant::now() + self.1;
            self.0.as_mut().reset(next);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
        }
    }

    #[tokio::test]
    async fn a_trickling_body_fails_at_its_deadline() {
        let every = Duration::from_millis(20);
        let trickle = Trickle(Box::pin(tokio::time::sleep(every)), every);
        let timeout = Duration::from_millis(250);
        let (mut body, expired) = DeadlineBody::new(trickle, timeout);
        let start = Instant::now();
        let mut received = 0;
        let err = loop {
            match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                Some(Ok(_)) => received += 1,
                Some(Err(e)) => break e,
                None => panic!("the trickle never ends"),
            }
        };
        assert!(err.is::<BodyTimeout>());
        assert!(expired.load(Ordering::Relaxed));
        assert!(start.elapsed() >= timeout && start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        assert!(received >= 1, "the bytes before the deadline got through");
        assert!(std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await.is_some_and(|f| f.is_err()), "it stays failed");
    }
}
