//! Slow and greedy clients (hardening issue, defect 6): stalled or trickled headers and
//! bodies, idle keep-alive connections, a stalled TLS handshake, and the connection caps.
//! Each test sets timeouts of a second or two, opens a handful of raw sockets, and asserts
//! what the client sees (a status line, EOF or a reset) within a deadline.

use super::harness::TestServer;
use authrim::config::Config;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Slack over a configured timeout for scheduling on a busy two-core machine.
const SLACK: Duration = Duration::from_millis(2500);
/// A refusal must come at once: no timeout, no queueing.
const FAST: Duration = Duration::from_millis(500);

/// Short timeouts everywhere; each test lengthens what it does not exercise.
fn quick(c: &mut Config) {
    c.header_read_timeout = 1;
    c.body_read_timeout = 1;
    c.idle_timeout = 1;
    c.tls_handshake_timeout = 1;
}

/// A raw connection to the server from `local` (any 127.0.0.0/8 address is loopback on Linux,
/// so tests can be several clients).
async fn connect_from(server: &TestServer, local: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket.connect(server.server.addr).await.unwrap()
}

#[derive(Debug, PartialEq)]
enum End {
    /// The server closed the connection (EOF or reset), after this long.
    Closed(Duration),
    /// Still open at the limit.
    Open,
}

/// Read until the server closes the connection or `limit` passes; returns what was read.
async fn read_until_closed(stream: &mut (impl AsyncReadExt + Unpin), limit: Duration) -> (Vec<u8>, End) {
    read_until_closed_since(stream, Instant::now(), limit).await
}

/// The same, with times counted from `start` (when the connection was opened, say).
async fn read_until_closed_since(stream: &mut (impl AsyncReadExt + Unpin), start: Instant, limit: Duration) -> (Vec<u8>, End) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.saturating_sub(start.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return (got, End::Open),
            Ok(Ok(0)) | Ok(Err(_)) => return (got, End::Closed(start.elapsed())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Assert the server closed the connection between `timeout` (minus a little) and
/// `timeout + SLACK`: cut off by that timeout, not before and not much after.
fn assert_closed_by(end: &End, timeout: Duration, what: &str) {
    match end {
        End::Closed(after) => assert!(
            *after >= timeout.saturating_sub(Duration::from_millis(200)) && *after <= timeout + SLACK,
            "{what}: closed after {after:?}, expected about {timeout:?}"
        ),
        End::Open => panic!("{what}: still open after {:?}", timeout + SLACK),
    }
}

/// Send one keep-alive request and read its whole response (by Content-Length); returns the
/// status code.
async fn request(stream: &mut TcpStream, path: &str) -> u16 {
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await.expect("a response").unwrap();
        assert!(n > 0, "closed before the response: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let length: usize = head.lines().find_map(|l| l.strip_prefix("content-length: ")).map_or(0, |v| v.trim().parse().unwrap());
    while got.len() < head_end + length {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed mid-body");
        got.extend_from_slice(&buf[..n]);
    }
    head[9..12].parse().unwrap()
}

/// Keep writing `bytes` one at a time, every `every`, until the server stops taking them.
fn trickle(mut writer: tokio::net::tcp::OwnedWriteHalf, bytes: &'static [u8], every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for b in bytes.iter().cycle() {
            tokio::time::sleep(every).await;
            if writer.write_all(&[*b]).await.is_err() {
                return;
            }
        }
    })
}

#[tokio::test]
async fn stalled_and_trickled_headers_are_cut_off() {
    let server = TestServer::start_with(|c| {
        quick(c);
        c.idle_timeout = 30;
    })
    .await;
    let timeout = Duration::from_secs(1);

    let opened = Instant::now();
    let mut silent = connect_from(&server, "127.0.0.1").await;
    let mut half = connect_from(&server, "127.0.0.1").await;
    half.write_all(b"POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form").await.unwrap();
    // A header line a byte every 100 ms: bytes keep coming, but the headers never end.
    let (mut drip_read, drip_write) = connect_from(&server, "127.0.0.1").await.into_split();
    let dripping = trickle(drip_write, b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Duration::from_millis(100));

    let limit = timeout + SLACK + Duration::from_secs(1);
    let ((silent_got, silent_end), (half_got, half_end), (drip_got, drip_end)) = tokio::join!(
        read_until_closed_since(&mut silent, opened, limit),
        read_until_closed_since(&mut half, opened, limit),
        read_until_closed_since(&mut drip_read, opened, limit),
    );
    dripping.abort();
    assert_closed_by(&silent_end, timeout, "a connection that sends nothing");
    assert_closed_by(&half_end, timeout, "half a request head");
    assert_closed_by(&drip_end, timeout, "a head trickled a byte at a time");
    for got in [silent_got, half_got, drip_got] {
        assert!(!got.starts_with(b"HTTP/1.1 2"), "no request was served: {}", String::from_utf8_lossy(&got));
    }
    assert_eq!(server.http.get(server.url("/healthz")).send().await.unwrap().status(), 200, "the server still serves");
}

#[tokio::test]
async fn a_trickled_body_is_cut_off_with_408() {
    let server = TestServer::start_with(|c| {
        quick(c);
        c.header_read_timeout = 5;
        c.idle_timeout = 30;
    })
    .await;
    let (mut read, mut write) = connect_from(&server, "127.0.0.1").await.into_split();
    let head = "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=";
    write.write_all(head.as_bytes()).await.unwrap();
    // 10 bytes a second: a thousand would take 100 s.
    let dripping = trickle(write, b"a", Duration::from_millis(100));

    let timeout = Duration::from_secs(1);
    let (got, end) = read_until_closed(&mut read, timeout + SLACK + Duration::from_secs(1)).await;
    dripping.abort();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408 "), "{text}");
    assert!(text.to_ascii_lowercase().contains("connection: close"), "{text}");
    assert!(text.contains(r#""error":"invalid_request""#), "{text}");
    assert_closed_by(&end, timeout, "a body trickled a byte every 100 ms");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout_not_the_header_timeout() {
    let server = TestServer::start_with(|c| {
        quick(c);
        c.idle_timeout = 2;
    })
    .await;
    let mut conn = connect_from(&server, "127.0.0.1").await;
    assert_eq!(request(&mut conn, "/healthz").await, 200);
    // Longer than the header timeout: waiting between requests is not reading headers.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(request(&mut conn, "/healthz").await, 200, "the kept-alive connection outlived the header timeout");
    let (got, end) = read_until_closed(&mut conn, Duration::from_secs(2) + SLACK + Duration::from_secs(1)).await;
    assert!(got.is_empty(), "{}", String::from_utf8_lossy(&got));
    assert_closed_by(&end, Duration::from_secs(2), "an idle keep-alive connection");
}

/// A refused connection: the canned 503 and a close, at once, without our sending anything.
async fn assert_refused_fast(stream: &mut TcpStream, what: &str) {
    let (got, end) = read_until_closed(stream, Duration::from_secs(3)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 503 "), "{what}: {text}");
    assert!(text.contains(r#""error":"temporarily_unavailable""#), "{what}: {text}");
    match end {
        End::Closed(after) => assert!(after <= FAST, "{what}: refused only after {after:?}"),
        End::Open => panic!("{what}: the refused connection stayed open"),
    }
}

/// Open `n` connections from `local` and put one request through each, so that each is
/// surely admitted and held (idle, kept alive).
async fn hold(server: &TestServer, local: &str, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut conn = connect_from(server, local).await;
        assert_eq!(request(&mut conn, "/healthz").await, 200, "connection {} from {local} is admitted", held.len() + 1);
        held.push(conn);
    }
    held
}

/// After the held connections are gone, an ordinary request succeeds again (the server sees
/// the closes within moments).
async fn assert_serves_again(server: &TestServer) {
    let start = Instant::now();
    loop {
        let status = server.http.get(server.url("/healthz")).send().await.map(|r| r.status().as_u16());
        if matches!(status, Ok(200)) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(3), "still refused after the slow clients left: {status:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn refused_count(metrics: &str, reason: &str) -> f64 {
    let name = format!("authrim_connections_refused_total{{reason=\"{reason}\"}} ");
    metrics.lines().find_map(|l| l.strip_prefix(&name)).map_or(0.0, |v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn over_the_per_address_cap_a_connection_is_refused_fast() {
    let server = TestServer::start_with(|c| {
        c.max_connections = Some(64);
        c.max_connections_per_address = 4;
    })
    .await;
    let held = hold(&server, "127.0.0.1", 4).await;
    let mut fifth = connect_from(&server, "127.0.0.1").await;
    assert_refused_fast(&mut fifth, "the fifth connection from one address").await;
    let mut other = connect_from(&server, "127.0.0.2").await;
    assert_eq!(request(&mut other, "/healthz").await, 200, "another address is not capped");
    let metrics = { let mut m = connect_from(&server, "127.0.0.3").await; metrics_text(&mut m).await };
    assert!(refused_count(&metrics, "address_limit") >= 1.0, "{metrics}");
    drop((held, other));
    assert_serves_again(&server).await;
}

#[tokio::test]
async fn over_the_global_cap_a_connection_is_refused_fast() {
    let server = TestServer::start_with(|c| {
        c.max_connections = Some(4);
        c.max_connections_per_address = 2;
    })
    .await;
    let held = [hold(&server, "127.0.0.1", 2).await, hold(&server, "127.0.0.2", 2).await];
    // This address holds nothing: only the global cap can refuse it.
    let mut fresh = connect_from(&server, "127.0.0.3").await;
    assert_refused_fast(&mut fresh, "a connection past the global cap").await;
    drop(held);
    assert_serves_again(&server).await;
    let metrics = server.http.get(server.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(refused_count(&metrics, "global_limit") >= 1.0, "{metrics}");
}

/// `/metrics` over a raw connection (the response is small; read to its end).
async fn metrics_text(conn: &mut TcpStream) -> String {
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").await.unwrap();
    let (got, _) = read_until_closed(conn, Duration::from_secs(5)).await;
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn over_tls_a_stalled_handshake_is_cut_off_and_over_the_cap_the_close_is_immediate() {
    let server = TestServer::start_tls_with(|c| {
        quick(c);
        c.max_connections_per_address = 2;
    })
    .await;
    let opened = Instant::now();
    let mut silent = connect_from(&server, "127.0.0.1").await;
    let mut partial = connect_from(&server, "127.0.0.1").await;
    // The start of a TLS record header (handshake, TLS 1.0 record version), then nothing.
    partial.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut third = connect_from(&server, "127.0.0.1").await;
    let (got, end) = read_until_closed(&mut third, Duration::from_secs(3)).await;
    assert!(got.is_empty(), "no plaintext on a TLS port: {}", String::from_utf8_lossy(&got));
    assert!(matches!(end, End::Closed(after) if after <= FAST), "the connection over the cap is closed at once: {end:?}");

    let timeout = Duration::from_secs(1);
    let limit = timeout + SLACK + Duration::from_secs(1);
    let ((_, silent_end), (_, partial_end)) =
        tokio::join!(read_until_closed_since(&mut silent, opened, limit), read_until_closed_since(&mut partial, opened, limit));
    assert_closed_by(&silent_end, timeout, "a TLS connection that sends nothing");
    assert_closed_by(&partial_end, timeout, "a stalled TLS handshake");
    drop((silent, partial));
    assert_serves_again(&server).await;
}

#[tokio::test]
async fn shutdown_closes_idle_connections_and_lets_an_in_flight_request_finish() {
    let TestServer { server, dir: _dir, .. } = TestServer::start_with(|c| {
        c.header_read_timeout = 5;
        c.body_read_timeout = 5;
        c.idle_timeout = 30;
    })
    .await;
    let addr = server.addr;
    let mut idle = TcpStream::connect(addr).await.unwrap();
    assert_eq!(request(&mut idle, "/healthz").await, 200);
    // In flight: headers and half the body are in, the handler is reading the rest.
    let mut busy = TcpStream::connect(addr).await.unwrap();
    let body = "grant_type=client_credentials";
    let head = format!(
        "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    busy.write_all(head.as_bytes()).await.unwrap();
    busy.write_all(&body.as_bytes()[..11]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;

    let stopping = tokio::spawn(server.stop());
    let (got, end) = read_until_closed(&mut idle, Duration::from_secs(2)).await;
    assert!(got.is_empty() && matches!(end, End::Closed(after) if after <= FAST), "the idle connection is closed at once: {end:?}");
    assert!(!stopping.is_finished(), "shutdown waits for the request in flight");
    assert!(TcpStream::connect(addr).await.is_err(), "no new connections once shutdown began");

    busy.write_all(&body.as_bytes()[11..]).await.unwrap();
    let (got, _) = read_until_closed(&mut busy, Duration::from_secs(3)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 401 "), "the in-flight request is answered (no client authentication): {text}");
    tokio::time::timeout(Duration::from_secs(3), stopping).await.expect("shutdown completes").unwrap().unwrap();
}
