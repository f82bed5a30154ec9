//! The client's TLS certificate (RFC 8705), wherever TLS ended: in Authrim's own handshake
//! (`connections` puts the peer's chain on each request as [`TlsPeerCertificates`]), or at a
//! proxy that forwards it in `mtls_client_cert_header` (believed only from the addresses in
//! `mtls_trusted_proxies`). Nothing here judges the certificate: the TLS layer accepts any
//! chain whose key the client proved it holds, and the client's authentication method decides
//! (`client_auth::tls`), as does a bound token's thumbprint.
//!
//! A header that is not a URL-encoded PEM certificate counts as no certificate (logged): the
//! proxy, not the client, wrote it, so the client can do nothing about it, and a request that
//! needed a certificate is refused for lacking one in the protocol's own terms.

use crate::app::AppState;
use crate::config::Config;
use crate::util::{b64, sha256, split_list};
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use rustls_pki_types::CertificateDer;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The certificates a client presented in Authrim's own TLS handshake, end-entity first.
#[derive(Clone, Debug)]
pub struct TlsPeerCertificates(pub Arc<[CertificateDer<'static>]>);

/// A client certificate, end-entity first, then whatever intermediates came with it.
#[derive(Clone, Debug)]
pub struct ClientCertificate {
    chain: Arc<[CertificateDer<'static>]>,
}

impl ClientCertificate {
    /// `None` for an empty chain.
    pub fn new(chain: Arc<[CertificateDer<'static>]>) -> Option<Self> {
        (!chain.is_empty()).then_some(Self { chain })
    }

    pub fn end_entity(&self) -> &CertificateDer<'static> {
        &self.chain[0]
    }

    pub fn intermediates(&self) -> &[CertificateDer<'static>] {
        &self.chain[1..]
    }

    /// RFC 8705 §3.1: `x5t#S256`, the base64url SHA-256 of the DER certificate.
    pub fn thumbprint(&self) -> String {
        b64(&sha256(self.end_entity()))
    }
}

/// Extractor: the certificate the request comes with, if mTLS is on and there is one.
pub struct PresentedCertificate(pub Option<ClientCertificate>);

impl FromRequestParts<AppState> for PresentedCertificate {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Infallible> {
        Ok(Self(presented(parts, &app.config)))
    }
}

fn presented(parts: &Parts, config: &Config) -> Option<ClientCertificate> {
    if !config.mtls {
        return None;
    }
    if let Some(name) = &config.mtls_client_cert_header {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
        // From a trusted proxy the header is the whole truth: a TLS certificate on that
        // connection would be the proxy's own, not the client's.
        if peer.is_some_and(|ip| trusted_proxy(config, ip)) {
            let value = parts.headers.get(name.as_str())?;
            let cert = from_header(value.as_bytes());
            if cert.is_none() && !value.is_empty() {
                tracing::debug!(header = %name, "the proxy's client certificate header is not a URL-encoded PEM certificate; ignored");
            }
            return cert;
        }
    }
    parts.extensions.get::<TlsPeerCertificates>().and_then(|c| ClientCertificate::new(c.0.clone()))
}

/// Whether `ip` is one of `mtls_trusted_proxies`.
fn trusted_proxy(config: &Config, ip: IpAddr) -> bool {
    split_list(&config.mtls_trusted_proxies).filter_map(ProxyNet::parse).any(|n| n.contains(ip))
}

/// At most this many certificates in a forwarded chain.
const MAX_CHAIN: usize = 8;

/// A URL-encoded PEM certificate chain (nginx's `$ssl_client_escaped_cert`); empty (no
/// certificate) or unreadable: `None`.
pub fn from_header(value: &[u8]) -> Option<ClientCertificate> {
    use rustls_pki_types::pem::PemObject;
    let pem = crate::util::percent_decode(std::str::from_utf8(value).ok()?)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem.as_bytes()).take(MAX_CHAIN + 1).collect::<Result<_, _>>().ok()?;
    // PEM that holds no X.509 certificate is no certificate (not one that fails later).
    if chain.len() > MAX_CHAIN || chain.iter().any(|c| crate::client_auth::x509::parse(c).is_err()) {
        return None;
    }
    ClientCertificate::new(chain.into())
}

/// One entry of `mtls_trusted_proxies`: an address, or a CIDR block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxyNet {
    addr: IpAddr,
    prefix: u8,
}

impl ProxyNet {
    pub fn parse(s: &str) -> Option<Self> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a.parse::<IpAddr>().ok()?, p.parse::<u8>().ok()?),
            None => {
                let a = s.parse::<IpAddr>().ok()?;
                (a, if a.is_ipv4() { 32 } else { 128 })
            }
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(Self { addr, prefix })
    }

    /// Whether `ip` is in the block (an IPv4-mapped IPv6 peer counts as its IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = |a: IpAddr| -> u128 {
            match a {
                IpAddr::V4(v4) => u128::from(u32::from(v4)) << 96,
                IpAddr::V6(v6) => u128::from(v6),
            }
        };
        let ip = ip.to_canonical();
        if ip.is_ipv4() != self.addr.is_ipv4() {
            return false;
        }
        let mask = if self.prefix == 0 { 0 } else { u128::MAX << (128 - u32::from(self.prefix)) };
        bits(ip) & mask == bits(self.addr) & mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_blocks_match_what_they_cover_only() {
        let net = ProxyNet::parse("10.1.0.0/16").unwrap();
        assert!(net.contains("10.1.200.3".parse().unwrap()));
        assert!(!net.contains("10.2.0.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.1.0.9".parse().unwrap()), "an IPv4-mapped peer");
        let one = ProxyNet::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = ProxyNet::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "::/129", "nonsense", "10.0.0.1/x", ""] {
            assert!(ProxyNet::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_forwarded_header_is_url_encoded_pem_or_nothing() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["client.example".into()]).unwrap().self_signed(&key).unwrap();
        let escaped: String = cert.pem().bytes().map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        }).collect();
        let got = from_header(escaped.as_bytes()).expect("read");
        assert_eq!(got.end_entity().as_ref(), cert.der().as_ref());
        assert_eq!(got.thumbprint(), b64(&sha256(cert.der())));
        // What a proxy sends without a certificate, and what it should never send.
        for bad in ["", "%", "not a certificate", "-----BEGIN CERTIFICATE-----%0Azzz%0A-----END CERTIFICATE-----"] {
            assert!(from_header(bad.as_bytes()).is_none(), "{bad}");
        }
    }
}
