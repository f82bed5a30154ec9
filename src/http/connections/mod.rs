//! Our own accept loop, so that slow or greedy clients cannot hold the server's sockets.
//!
//! Every accepted connection first passes the [`Gate`]: over the global cap or its address's
//! cap it is refused on the spot (plain HTTP gets a canned 503, TLS a bare close) and never
//! queued. An admitted connection runs in its own task: TLS handshake under a timeout, then
//! hyper (HTTP/1.1, or HTTP/2 when TLS negotiates it) with the deadlines of [`timeouts`]. On
//! shutdown the loop stops accepting, asks every connection to finish (idle ones close, in-flight
//! requests complete) and waits for them, at most [`SHUTDOWN_GRACE`].

mod client_verifier;
mod gate;
mod timeouts;

pub use gate::{default_max_connections, descriptor_budget};

use crate::config::Config;
use crate::error::OAuthError;
use axum::extract::ConnectInfo;
use axum::http;
use axum::response::IntoResponse;
use super::client_cert::TlsPeerCertificates;
use super::edge::Root;
use gate::{Gate, Permit};
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulConnection;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use timeouts::{Activity, DeadlineBody, Expiry, TrackedBody, Watched};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// How long shutdown waits for open connections before giving up on them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The slow-client and overload settings, resolved from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read: Duration,
    pub body_read: Duration,
    pub idle: Duration,
    pub tls_handshake: Duration,
    pub max_connections: usize,
    pub max_connections_per_address: usize,
}

impl Limits {
    pub fn from_config(c: &Config) -> Self {
        Self {
            header_read: Duration::from_secs(c.header_read_timeout),
            body_read: Duration::from_secs(c.body_read_timeout),
            idle: Duration::from_secs(c.idle_timeout),
            tls_handshake: Duration::from_secs(c.tls_handshake_timeout),
            max_connections: c.max_connections.unwrap_or_else(default_max_connections),
            max_connections_per_address: c.max_connections_per_address,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then drains the open connections.
pub struct Server {
    router: Root,
    tls: Option<TlsAcceptor>,
    limits: Limits,
    gate: Arc<Gate>,
    h1: http1::Builder,
    h2: http2::Builder<TokioExecutor>,
}

impl Server {
    pub fn new(router: Root, tls: Option<TlsAcceptor>, limits: Limits) -> Arc<Self> {
        let mut h1 = http1::Builder::new();
        // Off: hyper's header timer also runs while a kept-alive connection waits for its next
        // request, so it cannot tell a slow header from an idle connection. Ours can (timeouts.rs).
        h1.header_read_timeout(None);
        let gate = Gate::new(limits.max_connections, limits.max_connections_per_address);
        Arc::new(Self { router, tls, limits, gate, h1, h2: http2::Builder::new(TokioExecutor::new()) })
    }

    pub async fn serve(self: Arc<Self>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
        let (stop, stopping) = watch::channel(false);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => self.admit(stream, peer, &stopping),
                    Err(e) => accept_failed(e).await,
                },
            }
        }
        // Closing the listener makes the kernel refuse new connections from here on.
        drop(listener);
        let _ = stop.send(true);
        if tokio::time::timeout(SHUTDOWN_GRACE, self.gate.drained()).await.is_err() {
            tracing::warn!(open = self.gate.open(), "connections still open after the shutdown grace period; leaving them");
        }
    }

    fn admit(self: &Arc<Self>, stream: TcpStream, peer: SocketAddr, stopping: &watch::Receiver<bool>) {
        match self.gate.admit(peer.ip()) {
            Ok(permit) => {
                tokio::spawn(self.clone().connection(stream, peer, permit, stopping.clone()));
            }
            Err(refusal) => {
                gate::record_refusal(refusal);
                tracing::debug!(%peer, reason = refusal.label(), "connection refused: connection cap reached");
                refuse(stream, self.tls.is_none());
            }
        }
    }

    async fn connection(self: Arc<Self>, stream: TcpStream, peer: SocketAddr, _permit: Permit, stopping: watch::Receiver<bool>) {
        // Responses leave in one write; Nagle would only hold back the tail of a larger one.
        let _ = stream.set_nodelay(true);
        let Some(acceptor) = self.tls.clone() else {
            return self.http(stream, peer, false, None, stopping).await;
        };
        let mut stop = stopping.clone();
        let handshake = tokio::time::timeout(self.limits.tls_handshake, acceptor.accept(stream));
        let tls = tokio::select! {
            done = handshake => done,
            _ = stop.wait_for(|s| *s) => return,
        };
        match tls {
            Ok(Ok(tls)) => {
                let session = tls.get_ref().1;
                let h2 = session.alpn_protocol() == Some(b"h2".as_slice());
                // mTLS (RFC 8705): the chain is judged per client when it authenticates; the
                // handshake has only proven that the client holds the end-entity's key.
                let certs = session
                    .peer_certificates()
                    .filter(|c| !c.is_empty())
                    .map(|c| TlsPeerCertificates(c.iter().map(|c| c.clone().into_owned()).collect()));
                self.http(tls, peer, h2, certs, stopping).await
            }
            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
            Err(_) => {
                Expiry::TlsHandshake.record();
                tracing::debug!(%peer, "TLS handshake timed out");
            }
        }
    }

    async fn http<I>(&self, io: I, peer: SocketAddr, h2: bool, certs: Option<TlsPeerCertificates>, stopping: watch::Receiver<bool>)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let activity = Activity::new(self.limits.header_read, self.limits.idle, !h2);
        let io = TokioIo::new(Watched::new(io, activity.clone()));
        let service = ConnService { router: self.router.clone(), peer, certs, activity: activity.clone(), body_read: self.limits.body_read };
        if h2 {
            drive(self.h2.serve_connection(io, service), &activity, stopping, peer).await
        } else {
            drive(self.h1.serve_connection(io, service), &activity, stopping, peer).await
        }
    }
}

/// Run one connection until it ends, its deadline passes (then it is dropped, which closes
/// the socket), or shutdown asks it to finish its in-flight requests.
async fn drive<C>(conn: C, activity: &Activity, mut stopping: watch::Receiver<bool>, peer: SocketAddr)
where
    C: GracefulConnection,
    C::Error: std::fmt::Display,
{
    tokio::pin!(conn);
    // The deadline is checked when this timer fires, never on each request: a request moves
    // the deadline without waking anyone (see `Activity::check_every` for why none is missed).
    let timer = tokio::time::sleep_until(activity.next_check(tokio::time::Instant::now()));
    tokio::pin!(timer);
    // Built once: a future made anew on each pass would register and deregister a waiter
    // every time the connection makes progress.
    let stop = stopping.wait_for(|s| *s);
    tokio::pin!(stop);
    let mut stopped = false;
    loop {
        // Biased: a connection that can make progress does so before its deadline is checked.
        tokio::select! {
            biased;
            done = conn.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            _ = &mut timer => {
                let now = tokio::time::Instant::now();
                if let Some((at, why)) = activity.deadline() {
                    if at <= now {
                        why.record();
                        tracing::debug!(%peer, timeout = ?why, "slow client cut off");
                        return;
                    }
                }
                timer.as_mut().reset(activity.next_check(now));
            }
            _ = &mut stop, if !stopped => {
                stopped = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The per-connection service: hands each request to the router with the peer address
/// (`ConnectInfo`, for the login rate limits), the body deadline, and in-flight tracking.
#[derive(Clone)]
struct ConnService {
    router: Root,
    peer: SocketAddr,
    /// The client certificate of a TLS connection, put on each of its requests.
    certs: Option<TlsPeerCertificates>,
    activity: Arc<Activity>,
    body_read: Duration,
}

type ResponseFuture = Pin<Box<dyn Future<Output = Result<http::Response<TrackedBody>, Infallible>> + Send>>;

impl hyper::service::Service<http::Request<Incoming>> for ConnService {
    type Response = http::Response<TrackedBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: http::Request<Incoming>) -> Self::Future {
        let in_flight = self.activity.request_started();
        let version = req.version();
        let (mut req, body_expired) = with_body_deadline(req, self.body_read);
        req.extensions_mut().insert(ConnectInfo(self.peer));
        if let Some(certs) = &self.certs {
            req.extensions_mut().insert(certs.clone());
        }
        let router = self.router.clone();
        Box::pin(async move {
            let res = match router.oneshot(req).await {
                Ok(res) => res,
                Err(never) => match never {},
            };
            let res = if body_expired.is_some_and(|e| e.load(Ordering::Relaxed)) { body_timeout_response(version) } else { res };
            Ok(res.map(|body| TrackedBody::new(body, in_flight)))
        })
    }
}

/// The request with its body under the body deadline, and the flag that says it expired.
/// A body that is already complete (no body, or `Content-Length: 0`) needs neither.
fn with_body_deadline(req: http::Request<Incoming>, timeout: Duration) -> (http::Request<axum::body::Body>, Option<Arc<AtomicBool>>) {
    use http_body::Body as _;
    if req.body().is_end_stream() {
        return (req.map(axum::body::Body::new), None);
    }
    let (parts, body) = req.into_parts();
    let (body, expired) = DeadlineBody::new(body, timeout);
    (http::Request::from_parts(parts, axum::body::Body::new(body)), Some(expired))
}

/// 408 for a request whose body did not arrive in time, whatever the handler answered to the
/// failed read. HTTP/1 also closes the connection: the rest of the body is still on the wire.
fn body_timeout_response(version: http::Version) -> axum::response::Response {
    let mut res = OAuthError::invalid_request("the request body did not arrive in time")
        .with_status(http::StatusCode::REQUEST_TIMEOUT)
        .into_response();
    if version < http::Version::HTTP_2 {
        res.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
    res
}

/// The whole answer to a connection over a cap, sent without reading the request. The body is
/// an OAuth error so that clients that parse errors get one they know.
static REFUSAL: LazyLock<String> = LazyLock::new(|| {
    let body = r#"{"error":"temporarily_unavailable","error_description":"the server has too many open connections; retry shortly"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncache-control: no-store\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
});

/// Refuse without waiting on the client: one non-blocking write into the fresh socket's empty
/// send buffer (a few hundred bytes always fit; if not, the client just sees the close), then
/// close. Over TLS we cannot speak HTTP before a handshake, and a handshake costs the CPU we are
/// shedding, so the connection is only closed.
fn refuse(stream: TcpStream, plain: bool) {
    if plain {
        let _ = stream.try_write(REFUSAL.as_bytes());
    }
    drop(stream);
}

/// After a failed accept. Out of file descriptors (EMFILE/ENFILE) or memory, accepting again at
/// once would spin; pausing briefly lets connections close (the kernel keeps the backlog). Errors
/// of one connection (reset or aborted before we took it) need no pause.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(error = %e, "accept failed; pausing 100 ms (out of file descriptors? see max_connections)");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// The TLS 1.2 cipher suites the acceptor offers (see `tls_acceptor`).
pub const TLS12_SUITES: [rustls::CipherSuite; 4] = [
    rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    rustls::CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
];

/// The TLS acceptor for a PEM certificate chain and key, offering HTTP/2 and HTTP/1.1 by ALPN;
/// with `client_certs` (mTLS), asking clients for a certificate. With TLS 1.2 only the ECDHE
/// AES-GCM suites are offered (BCP 195, RFC 9325 §4.2; FAPI 1.0 Advanced §8.5 permits no
/// other with an RSA certificate): rustls' defaults add ChaCha20-Poly1305. TLS 1.3 keeps all
/// of its suites.
pub fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path, client_certs: bool) -> anyhow::Result<TlsAcceptor> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("cannot read TLS certificate {}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| anyhow::anyhow!("cannot read TLS key {}: {e}", key.display()))?;
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.cipher_suites.retain(|s| s.tls13().is_some() || TLS12_SUITES.contains(&s.suite()));
    let provider = Arc::new(provider);
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("TLS: {e}"))?;
    let builder = match client_certs {
        true => builder.with_client_cert_verifier(Arc::new(client_verifier::AnyClientCertificate::new(provider))),
        false => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| anyhow::anyhow!("cannot use TLS certificate or key: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_complete_http_response() {
        let (head, body) = REFUSAL.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length: ")).unwrap().parse().unwrap();
        assert_eq!(length, body.len());
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["error"], "temporarily_unavailable");
    }
}
