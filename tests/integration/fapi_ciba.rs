//! What the OpenID Foundation's FAPI-CIBA plan (`fapi-ciba-id1-test-plan`) found beyond CIBA
//! itself: the protected resource's `x-fapi-interaction-id` (FAPI 1.0 Part 1 §6.2.1 item 11)
//! and the TLS 1.2 cipher suites Authrim's own TLS offers (FAPI 1.0 Part 2 §8.5, BCP 195).

use crate::harness::*;
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn userinfo_answers_with_the_fapi_interaction_id() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let p = s.code_for(&s.browser(), &id, "alice", &[("scope", "openid")]).await;
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let at = tok["access_token"].as_str().unwrap();
    let header = |r: &reqwest::Response| r.headers().get("x-fapi-interaction-id").map(|v| v.to_str().unwrap().to_string());

    // The client's own value comes back.
    let sent = "c770aef3-6784-41f7-8e0e-ff5f97bddb3a";
    let r = s.http.get(s.url("/userinfo")).bearer_auth(at).header("x-fapi-interaction-id", sent).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r).as_deref(), Some(sent));

    // None sent: a fresh version 4 UUID, another each time.
    let r = s.http.get(s.url("/userinfo")).bearer_auth(at).send().await.unwrap();
    let made = header(&r).expect("a UUID when the client sent none");
    let parts: Vec<&str> = made.split('-').collect();
    assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{made}");
    assert!(made.chars().all(|c| c == '-' || c.is_ascii_hexdigit()) && parts[2].starts_with('4'), "{made}");
    let again = header(&s.http.get(s.url("/userinfo")).bearer_auth(at).send().await.unwrap()).unwrap();
    assert_ne!(made, again);

    // Errors carry it too (the client correlates its failures as well).
    let r = s.http.get(s.url("/userinfo")).bearer_auth("not-a-token").header("x-fapi-interaction-id", sent).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(header(&r).as_deref(), Some(sent));
}

/// A TLS 1.2 handshake with Authrim's acceptor offering only `suite`: whether it succeeds.
async fn tls12_with(suite: rustls::SupportedCipherSuite) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    let acceptor = authrim::http::connections::tls_acceptor(&cert_path, &key_path, false).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        acceptor.accept(tcp).await.is_ok()
    });
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.cipher_suites = vec![suite];
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.cert.der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let client = tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp).await.is_ok();
    let server = server.await.unwrap();
    client && server
}

#[tokio::test]
async fn tls12_offers_only_the_ecdhe_aes_gcm_suites() {
    use rustls::crypto::aws_lc_rs::cipher_suite::*;
    // The test certificate is ECDSA (rcgen's default key).
    assert!(tls12_with(TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256).await);
    assert!(tls12_with(TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384).await);
    assert!(!tls12_with(TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256).await, "ChaCha20 is not among FAPI's TLS 1.2 suites");
}
