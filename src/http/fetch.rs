//! Every outgoing HTTP request the server makes: GETs of documents a client names (its
//! `jwks_uri`, `sector_identifier_uri`, its Client ID Metadata Document; a trusted issuer's
//! keys), the logout tokens POSTed to a client's `backchannel_logout_uri`, and the requests to
//! upstream identity providers. Bounded in time and size, no redirects, no proxies, and
//! (unless `fetch_allow_private_addresses`) never to a loopback, private, link-local or
//! otherwise non-public address: the name is resolved by our own resolver, which drops such
//! addresses and hands the connector only the addresses it kept (so a name that resolves to a
//! public address when checked and a private one when connecting, DNS rebinding, gets
//! nowhere), and an address written in the URL is checked before anything is sent. These URLs
//! are chosen by whoever registers a client, so without this any visitor could make the
//! server probe, or POST into, the network it sits in (SSRF).
//!
//! No other module builds an HTTP client (`tests::outbound_requests_go_through_the_fetcher`
//! holds the list): a new outgoing request goes through a `Fetcher` and its address policy.

use bytes::BytesMut;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("fetch failed: {0}")]
    Transport(String),
    #[error("the server answered {0}")]
    Status(u16),
    #[error("the document is larger than {0} bytes")]
    TooLarge(usize),
    #[error("the document is not JSON: {0}")]
    NotJson(String),
    #[error("the URL is not allowed: {0}")]
    Forbidden(String),
    #[error("too many documents are being fetched; try again")]
    Busy,
}

/// A fetched JSON document and what its response said about caching it.
pub struct Fetched {
    pub json: serde_json::Value,
    /// `Cache-Control: max-age` (or `s-maxage`), if given; 0 for `no-store` / `no-cache`.
    pub max_age: Option<u64>,
}

pub struct Fetcher {
    http: reqwest::Client,
    max_bytes: usize,
    allow_private: bool,
    /// Fetches in flight at once (`max_concurrent_fetches`): a flood of requests naming new
    /// documents must not turn into a flood of outgoing connections.
    slots: tokio::sync::Semaphore,
}

impl Fetcher {
    pub fn new(timeout: Duration, max_bytes: usize, allow_private: bool, max_concurrent: usize) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // A redirect could lead anywhere, a private address included; the registered URL
            // is the document's address.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the name itself, past our resolver's checks.
            .no_proxy()
            .dns_resolver(Arc::new(PublicOnly { allow_private }))
            .user_agent(concat!("authrim/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { http, max_bytes, allow_private, slots: tokio::sync::Semaphore::new(max_concurrent) })
    }

    /// Whether non-public addresses may be fetched (tests, private deployments).
    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// A fetcher for the operator's own configuration (upstream identity providers): the
    /// same bounds, without the address policy, since an identity provider inside the
    /// operator's network is the operator's choice, not a client's input.
    pub fn for_operator(timeout: Duration, max_bytes: usize) -> anyhow::Result<Self> {
        Self::new(timeout, max_bytes, true, tokio::sync::Semaphore::MAX_PERMITS)
    }

    /// A request to `url` on this fetcher's client (bounds, no redirects, no proxy, the
    /// resolver), after the URL passed the address policy; for callers that need their own
    /// headers or body and read the answer themselves (upstream identity providers).
    pub fn request(&self, method: reqwest::Method, url: &str) -> Result<reqwest::RequestBuilder, FetchError> {
        let parsed = self.checked(url)?;
        Ok(self.http.request(method, parsed))
    }

    /// POST `form` (`application/x-www-form-urlencoded`) to `url`, waiting at most `timeout`
    /// for the answer, whose status alone matters (a notification: Back-Channel Logout 1.0
    /// §2.5). Not counted against `max_concurrent_fetches`: its callers bound their own
    /// deliveries (`backchannel_logout_concurrency`), off the request path.
    pub async fn post_form(&self, url: &str, form: &[(&str, &str)], timeout: Duration) -> Result<(), FetchError> {
        let parsed = self.checked(url)?;
        self.notify(self.http.post(parsed).timeout(timeout).form(form)).await
    }

    /// POST `body` as JSON, with `Authorization: Bearer {bearer}` if given, as `post_form` (a
    /// CIBA ping, CIBA Core §10.2; a notice to a push service).
    pub async fn post_json(&self, url: &str, body: &serde_json::Value, bearer: Option<&str>, timeout: Duration) -> Result<(), FetchError> {
        let parsed = self.checked(url)?;
        let mut request = self.http.post(parsed).timeout(timeout).json(body);
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        self.notify(request).await
    }

    /// POST `body` as `text/xml` with `SOAPAction: {action}` (SAML's SOAP binding, Bindings
    /// §3.2.2), as `post_form` does, and read the answer's body (at most `max_bytes`): the
    /// reply is a SOAP message of its own.
    pub async fn post_soap(&self, url: &str, action: &str, body: String, timeout: Duration) -> Result<bytes::Bytes, FetchError> {
        let parsed = self.checked(url)?;
        let request = self
            .http
            .post(parsed)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "text/xml; charset=utf-8")
            .header("SOAPAction", format!("\"{action}\""))
            .body(body);
        let res = request.send().await.map_err(|e| FetchError::Transport(transport_message(&e)))?;
        if !res.status().is_success() {
            return Err(FetchError::Status(res.status().as_u16()));
        }
        self.bounded_body(res).await
    }

    /// A response's body, at most `max_bytes` of it (the declared length may be absent or
    /// false: what arrives is counted).
    async fn bounded_body(&self, mut res: reqwest::Response) -> Result<bytes::Bytes, FetchError> {
        if res.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(FetchError::TooLarge(self.max_bytes));
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = res.chunk().await.map_err(|e| FetchError::Transport(transport_message(&e)))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(FetchError::TooLarge(self.max_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }

    /// Send a notification whose answer's status alone matters.
    async fn notify(&self, request: reqwest::RequestBuilder) -> Result<(), FetchError> {
        let res = request.send().await.map_err(|e| FetchError::Transport(transport_message(&e)))?;
        if !res.status().is_success() {
            return Err(FetchError::Status(res.status().as_u16()));
        }
        Ok(())
    }

    fn checked(&self, url: &str) -> Result<url::Url, FetchError> {
        let parsed = url::Url::parse(url).map_err(|_| FetchError::Forbidden("not an absolute URL".into()))?;
        self.check_url(&parsed)?;
        Ok(parsed)
    }

    /// GET `url` and parse the body as JSON, reading at most `max_bytes` of it.
    pub async fn get_json(&self, url: &str) -> Result<serde_json::Value, FetchError> {
        self.get(url).await.map(|f| f.json)
    }

    /// GET `url` as `get_json` does, with the response's caching directives.
    pub async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        let (body, max_age) = self.get_bytes(url, "application/json").await?;
        let json = serde_json::from_slice(&body).map_err(|e| FetchError::NotJson(e.to_string()))?;
        Ok(Fetched { json, max_age })
    }

    /// GET `url` asking for `accept`: the body (at most `max_bytes`) and the response's
    /// `max-age`, under the same address policy and limits as every fetch.
    pub async fn get_bytes(&self, url: &str, accept: &'static str) -> Result<(bytes::Bytes, Option<u64>), FetchError> {
        let parsed = self.checked(url)?;
        let _slot = self.slots.try_acquire().map_err(|_| FetchError::Busy)?;
        let res = self
            .http
            .get(parsed)
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .map_err(|e| FetchError::Transport(transport_message(&e)))?;
        if !res.status().is_success() {
            return Err(FetchError::Status(res.status().as_u16()));
        }
        let max_age = res.headers().get(reqwest::header::CACHE_CONTROL).and_then(|v| v.to_str().ok()).and_then(cache_max_age);
        Ok((self.bounded_body(res).await?, max_age))
    }

    /// The scheme, and an address written as the host (the resolver never sees those).
    fn check_url(&self, url: &url::Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "https" | "http") {
            return Err(FetchError::Forbidden(format!("scheme {:?}", url.scheme())));
        }
        check_host(url, self.allow_private).map_err(FetchError::Forbidden)
    }
}

/// Whether `uri` may be a target of the server's requests (or of a page's iframes) under the
/// address policy, judged from the URL alone: an http(s) URL whose host is not an address
/// outside the public internet (loopback, private, link-local, unique-local, shared/CGNAT,
/// multicast, unspecified...) nor a name that is local by definition (`localhost`, `.local`,
/// a name of one label...). Registration and the admin API refuse a client's URIs that fail
/// it, so that the refusal comes when the URI is given rather than when it is used; a name
/// that resolves to a private address passes here and is stopped by the resolver.
pub fn check_target(uri: &str, allow_private: bool) -> Result<(), String> {
    let url = url::Url::parse(uri).map_err(|_| format!("{uri:?} is not an absolute URL"))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(format!("{uri:?}: scheme {:?}", url.scheme()));
    }
    check_host(&url, allow_private)
}

fn check_host(url: &url::Url, allow_private: bool) -> Result<(), String> {
    match url.host() {
        None => Err("no host".into()),
        _ if allow_private => Ok(()),
        Some(url::Host::Ipv4(a)) if !is_public(IpAddr::V4(a)) => Err(format!("{a} is not a public address")),
        Some(url::Host::Ipv6(a)) if !is_public(IpAddr::V6(a)) => Err(format!("{a} is not a public address")),
        Some(url::Host::Domain(name)) if is_local_name(name) => Err(format!("{name} is not a public name")),
        Some(_) => Ok(()),
    }
}

/// Names that never lead to the public internet: `localhost` (RFC 6761 §6.3), mDNS `.local`
/// (RFC 6762), `.home.arpa` (RFC 8375), `.internal` (reserved for private use), the common
/// `.localdomain`, and a single label (completed by the resolver's search list to an
/// internal host).
fn is_local_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    !name.contains('.')
        || ["localhost", "local", "home.arpa", "internal", "localdomain"]
            .iter()
            .any(|suffix| name == *suffix || name.ends_with(&format!(".{suffix}")))
}

/// The innermost cause's text, without the URL (which may carry a client's path).
pub(crate) fn transport_message(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    if e.is_timeout() { "timed out".into() } else { source.to_string() }
}

/// RFC 9111 §5.2.2: the lifetime a response allows, in seconds.
fn cache_max_age(value: &str) -> Option<u64> {
    let mut max_age = None;
    for directive in value.split(',').map(str::trim) {
        let (name, arg) = directive.split_once('=').map_or((directive, None), |(n, a)| (n.trim(), Some(a.trim().trim_matches('"'))));
        match name.to_ascii_lowercase().as_str() {
            "no-store" | "no-cache" => return Some(0),
            "s-maxage" | "max-age" => {
                if let Some(n) = arg.and_then(|a| a.parse::<u64>().ok()) {
                    max_age = Some(max_age.map_or(n, |m: u64| m.min(n)));
                }
            }
            _ => {}
        }
    }
    max_age
}

/// Resolves names as the system does, then keeps public addresses only.
struct PublicOnly {
    allow_private: bool,
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found.into_iter().filter(|a| allow_private || is_public(a.ip())).collect();
            if kept.is_empty() {
                return Err(format!("{host} has no public address").into());
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// Whether `ip` is an ordinary public unicast address: not loopback, private (RFC 1918, RFC
/// 4193), link-local, shared (RFC 6598), documentation, benchmarking, multicast, reserved or
/// unspecified. IPv6 forms that carry an IPv4 address (mapped, NAT64) are judged by it.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => is_public_v4(a),
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = a.segments();
            // 64:ff9b::/96 (RFC 6052 NAT64) and 64:ff9b:1::/48 (RFC 8215): the embedded IPv4.
            if s[0] == 0x64 && s[1] == 0xff9b {
                let [.., a1, a2, a3, a4] = a.octets();
                return s[2] == 0 && is_public_v4(Ipv4Addr::new(a1, a2, a3, a4));
            }
            !(a.is_unspecified()
                || a.is_loopback()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x2001 && s[1] < 0x0200) // IETF protocol assignments (Teredo, ORCHID...)
                || s[0..6] == [0; 6] && a != Ipv6Addr::UNSPECIFIED) // IPv4-compatible ::a.b.c.d
        }
    }
}

fn is_public_v4(a: Ipv4Addr) -> bool {
    let [o1, o2, o3, _] = a.octets();
    !(a.is_unspecified()
        || a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_broadcast()
        || a.is_multicast()
        || a.is_documentation()
        || o1 == 0 // "this network"
        || (o1 == 100 && (o2 & 0xc0) == 64) // shared address space 100.64/10
        || (o1 == 192 && o2 == 0 && o3 == 0) // IETF protocol assignments 192.0.0/24
        || (o1 == 198 && (o2 & 0xfe) == 18) // benchmarking 198.18/15
        || o1 >= 240) // reserved 240/4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_pass() {
        for private in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "192.0.2.1", "198.18.0.1", "240.0.0.1", "192.0.0.8",
            "::1", "::", "fc00::1", "fd12::1", "fe80::1", "ff02::1", "2001:db8::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe", "::127.0.0.1", "fec0::1", "2001::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private} must be refused");
        }
        for public in ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"] {
            assert!(is_public(public.parse().unwrap()), "{public} is public");
        }
    }

    #[test]
    fn cache_control_lifetimes() {
        assert_eq!(cache_max_age("public, max-age=600"), Some(600));
        assert_eq!(cache_max_age("max-age=600, s-maxage=60"), Some(60));
        assert_eq!(cache_max_age("no-store"), Some(0));
        assert_eq!(cache_max_age("max-age=60, no-cache"), Some(0));
        assert_eq!(cache_max_age("private"), None);
        assert_eq!(cache_max_age("max-age=abc"), None);
    }

    #[tokio::test]
    async fn private_literals_and_names_are_refused_unless_allowed() {
        let f = Fetcher::new(Duration::from_secs(2), 1024, false, 4).unwrap();
        for url in ["http://127.0.0.1:9/x", "https://[::1]/x", "http://169.254.169.254/latest/meta-data", "http://localhost:9/x"] {
            let e = f.get_json(url).await.unwrap_err();
            assert!(
                matches!(&e, FetchError::Forbidden(_)) || e.to_string().contains("no public address"),
                "{url}: {e}"
            );
        }
        assert!(matches!(f.get_json("file:///etc/passwd").await, Err(FetchError::Forbidden(_))));
    }

    #[test]
    fn targets_outside_the_public_internet_are_refused_from_the_url() {
        for bad in [
            "http://127.0.0.1:8080/internal-admin/x", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data",
            "https://[fd00::1]/", "https://192.168.0.1/", "https://100.64.0.1/", "https://[fe80::1]/", "https://224.0.0.1/",
            "https://0.0.0.0/", "https://[::]/", "https://[::ffff:10.0.0.1]/", "https://2130706433/", "https://0x7f.1/",
            "https://localhost/", "https://LOCALHOST./x", "https://a.localhost/", "https://printer.local/", "https://intranet/",
            "https://svc.internal/", "https://nas.home.arpa/", "file:///etc/passwd", "ftp://rp.example/",
        ] {
            assert!(check_target(bad, false).is_err(), "{bad} accepted");
        }
        for good in ["https://rp.example/logout", "https://8.8.8.8/", "https://[2606:4700::1111]/", "http://rp.example:8080/x"] {
            assert!(check_target(good, false).is_ok(), "{good} refused");
        }
        assert!(check_target("http://127.0.0.1:8080/x", true).is_ok(), "fetch_allow_private_addresses lifts the rule");
    }

    /// A form POST (back-channel logout) obeys the same policy: nothing reaches a loopback
    /// receiver unless private addresses are allowed, and then the form arrives.
    #[tokio::test]
    async fn a_form_post_to_a_private_address_is_refused_unless_allowed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (got_tx, mut got) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                let (mut sock, _) = listener.accept().await.unwrap();
                let mut buf = vec![0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let _ = got_tx.send(String::from_utf8_lossy(&buf[..n]).to_string());
                let _ = sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            }
        });
        let form = [("logout_token", "t")];
        let refused = Fetcher::new(Duration::from_secs(2), 1024, false, 4).unwrap();
        for url in [format!("http://{addr}/bc"), format!("http://localhost:{}/bc", addr.port())] {
            assert!(refused.post_form(&url, &form, Duration::from_secs(2)).await.is_err(), "{url}");
        }
        assert!(got.try_recv().is_err(), "nothing reached the receiver");
        let allowed = Fetcher::new(Duration::from_secs(2), 1024, true, 4).unwrap();
        allowed.post_form(&format!("http://{addr}/bc"), &form, Duration::from_secs(2)).await.unwrap();
        let request = got.recv().await.unwrap();
        assert!(request.starts_with("POST /bc ") && request.contains("application/x-www-form-urlencoded"), "{request}");
    }

    /// Every place in `src/` that could open a connection of its own: a client built, a
    /// socket connected, an SMTP transport. Only the files listed may, each for its reason; a
    /// new call site fails here, naming its file, until it goes through a `Fetcher` (and its
    /// address policy) or is listed with a reason that it never reaches a URL a client or
    /// user chose.
    #[test]
    fn outbound_requests_go_through_the_fetcher() {
        const CALLS: &[&str] = &[
            "reqwest::Client", "reqwest::{", "Client::builder", "ClientBuilder", "reqwest::get", "reqwest::blocking",
            "reqwest::Request::new", "hyper::client", "hyper_util::client", "TcpStream::connect", "TcpSocket", "UdpSocket",
            "SmtpTransport", "lettre::transport", "ureq::", "isahc::", "surf::", "LdapConnAsync", "ldap3::",
        ];
        const ALLOWED: &[(&str, &str)] = &[
            ("src/http/fetch.rs", "the fetcher itself"),
            ("src/mail.rs", "SMTP to the operator's relay (mail_smtp_url), never an address a client or user names"),
            ("src/cli.rs", "the CLI calling its own server's admin API, at the address of the operator's configuration"),
            ("src/identity/ldap/client.rs", "LDAP to the directories of the operator's configuration (or a tenant's, which an operator sets), not HTTP, often on private addresses by design"),
            ("src/identity/ldap/groups.rs", "group searches on client.rs's connections to those directories"),
            ("src/identity/ldap/listing.rs", "a sync round's paged search on client.rs's connections to those directories"),
        ];
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        walk(&root.join("src"), &mut files);
        assert!(files.len() > 50, "the scan sees the source tree");
        let mut bypassing = Vec::new();
        let mut seen_allowed = std::collections::HashSet::new();
        for file in files {
            let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(&file).unwrap();
            let found: Vec<&str> = CALLS.iter().copied().filter(|c| text.contains(c)).collect();
            if found.is_empty() {
                continue;
            }
            if ALLOWED.iter().any(|(f, _)| *f == rel) {
                seen_allowed.insert(rel);
            } else {
                bypassing.push(format!("{rel}: {}", found.join(", ")));
            }
        }
        assert!(bypassing.is_empty(), "outgoing requests that bypass the fetcher (src/http/fetch.rs): {bypassing:?}");
        // A listed file that no longer makes requests comes off the list.
        for (f, why) in ALLOWED {
            assert!(seen_allowed.contains(*f), "{f} is allowed ({why}) but makes no outgoing connection: remove it from the list");
        }
    }

    /// `max_concurrent_fetches`: with two fetches held open by a slow server, a third is
    /// refused at once (`Busy`), and once they finish the next one goes through.
    #[tokio::test]
    async fn fetches_beyond_the_bound_are_refused_at_once() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/doc", listener.local_addr().unwrap());
        let (release, hold) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            loop {
                let (mut sock, _) = listener.accept().await.unwrap();
                let mut hold = hold.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = sock.read(&mut buf).await;
                    let _ = hold.wait_for(|go| *go).await;
                    let _ = sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}").await;
                });
            }
        });
        let f = Arc::new(Fetcher::new(Duration::from_secs(5), 1024, true, 2).unwrap());
        let held: Vec<_> = (0..2).map(|_| tokio::spawn({
            let (f, url) = (f.clone(), url.clone());
            async move { f.get_json(&url).await }
        })).collect();
        // Both slots taken once their requests reached the server.
        while f.slots.available_permits() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(matches!(f.get_json(&url).await, Err(FetchError::Busy)), "a third fetch waits for nothing");
        release.send(true).unwrap();
        for h in held {
            assert!(h.await.unwrap().is_ok());
        }
        assert!(f.get_json(&url).await.is_ok(), "a slot is free again");
    }
}
