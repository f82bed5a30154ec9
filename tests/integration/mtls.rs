//! Mutual TLS for OAuth (RFC 8705): client authentication by certificate (`tls_client_auth`,
//! `self_signed_tls_client_auth`) and certificate-bound access tokens, with the certificate
//! from Authrim's own TLS handshake and from a trusted proxy's header.

use crate::harness::*;
use authrim::util::{b64, sha256};
use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
use serde_json::{json, Value};

/// A client's certificate and key, and what the client presents.
pub(crate) struct ClientCert {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl ClientCert {
    fn params(cn: &str) -> CertificateParams {
        let mut p = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::OrganizationName, "Example");
        dn.push(DnType::CommonName, cn);
        p.distinguished_name = dn;
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        p
    }

    pub(crate) fn self_signed(cn: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        Self { cert: Self::params(cn).self_signed(&key).unwrap(), key }
    }

    fn issued_by(cn: &str, ca: &Ca) -> Self {
        let key = KeyPair::generate().unwrap();
        Self { cert: Self::params(cn).signed_by(&key, &ca.issuer).unwrap(), key }
    }

    pub(crate) fn thumbprint(&self) -> String {
        b64(&sha256(self.cert.der()))
    }

    /// The certificate's key as a JWK Set (what a self-signed client registers).
    pub(crate) fn jwks(&self) -> Value {
        let point = self.key.public_key_raw();
        json!({"keys": [{"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..]), "use": "sig"}]})
    }

    /// An HTTP client that presents the certificate (and trusts the test server's own).
    pub(crate) fn http(&self) -> reqwest::Client {
        let pem = format!("{}{}", self.cert.pem(), self.key.serialize_pem());
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .danger_accept_invalid_certs(true)
            .identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    }

    /// As nginx's `$ssl_client_escaped_cert` forwards it.
    fn escaped(&self) -> String {
        self.cert.pem().bytes().map(|b| if b.is_ascii_alphanumeric() || b"-._~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
    }
}

struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

fn ca() -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::default();
    p.distinguished_name.push(DnType::CommonName, "Test client CA");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let pem = p.self_signed(&key).unwrap().pem();
    Ca { issuer: Issuer::new(p, key), pem }
}

/// Authrim serving TLS itself with mTLS on, on SQLite or a fresh PostgreSQL database.
pub(crate) async fn tls_server(postgres: bool, tweak: impl FnOnce(&mut authrim::config::Config)) -> TestServer {
    let url = match postgres {
        true => crate::pg_cluster::fresh_database().await,
        false => None,
    };
    TestServer::start_tls_with(move |c| {
        c.mtls = true;
        if let Some(url) = url {
            c.database_url = Some(url);
            c.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
        }
        tweak(c);
    })
    .await
}

pub(crate) async fn post(http: &reqwest::Client, url: String, form: &[(&str, &str)]) -> (u16, Value) {
    let res = http.post(url).form(form).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null))
}

async fn userinfo(http: &reqwest::Client, s: &TestServer, token: &str) -> (u16, Value, Option<String>) {
    let res = http.get(s.url("/userinfo")).bearer_auth(token).send().await.unwrap();
    let challenge = res.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
    (res.status().as_u16(), res.json().await.unwrap_or(Value::Null), challenge)
}

/// What `token`'s introspection says, asked by a resource server of its own.
async fn introspect(s: &TestServer, token: &str) -> Value {
    let (rs, secret) = s.client("rs", json!({"grant_types": ["client_credentials"], "redirect_uris": []})).await;
    let res = s.http.post(s.url("/introspect")).basic_auth(rs, secret).form(&[("token", token)]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

#[tokio::test]
async fn a_certificate_bound_token_works_only_with_its_certificate() {
    for postgres in [false, true] {
        let s = tls_server(postgres, |_| {}).await;
        let mine = ClientCert::self_signed("rp");
        s.client("rp", json!({
            "token_endpoint_auth_method": "self_signed_tls_client_auth",
            "jwks": mine.jwks(),
            "tls_client_certificate_bound_access_tokens": true,
            "grant_types": ["authorization_code", "refresh_token"],
        }))
        .await;
        s.user("alice", json!({"email": "alice@example.com"})).await;
        let code = s.code_for(&s.browser(), "rp", "alice", &[("scope", "openid email offline_access")]).await["code"].clone();
        let (st, tok) = post(&mine.http(), s.url("/token"), &[("grant_type", "authorization_code"), ("client_id", "rp"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
        assert_eq!(st, 200, "postgres={postgres}: {tok}");
        // RFC 8705 §3: still a bearer token, with the certificate's thumbprint in cnf.
        assert_eq!(tok["token_type"], "Bearer");
        let at = tok["access_token"].as_str().unwrap();
        assert_eq!(jwt_parts(at).1["cnf"], json!({"x5t#S256": mine.thumbprint()}));
        assert_eq!(introspect(&s, at).await["cnf"], json!({"x5t#S256": mine.thumbprint()}));

        let (st, claims, _) = userinfo(&mine.http(), &s, at).await;
        assert_eq!((st, claims["email"].as_str()), (200, Some("alice@example.com")), "the same certificate");
        let other = ClientCert::self_signed("rp");
        for (who, http) in [("another certificate", other.http()), ("no certificate", s.http.clone())] {
            let (st, body, challenge) = userinfo(&http, &s, at).await;
            assert_eq!((st, body["error"].as_str()), (401, Some("invalid_token")), "{who}");
            assert!(challenge.is_some_and(|c| c.starts_with("Bearer")), "{who}");
        }

        // The refresh gives tokens bound to the certificate again; another certificate
        // cannot even authenticate as the client.
        let rt = tok["refresh_token"].as_str().unwrap();
        let (st, body) = post(&other.http(), s.url("/token"), &[("grant_type", "refresh_token"), ("client_id", "rp"), ("refresh_token", rt)]).await;
        assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
        let (st, again) = post(&mine.http(), s.url("/token"), &[("grant_type", "refresh_token"), ("client_id", "rp"), ("refresh_token", rt)]).await;
        assert_eq!(st, 200, "{again}");
        assert_eq!(jwt_parts(again["access_token"].as_str().unwrap()).1["cnf"]["x5t#S256"], mine.thumbprint().as_str());
        s.server.stop().await.unwrap();
    }
}

#[tokio::test]
async fn a_public_clients_refresh_tokens_are_bound_to_its_certificate() {
    for postgres in [false, true] {
        let s = tls_server(postgres, |_| {}).await;
        let device = ClientCert::self_signed("app");
        s.client("app", json!({
            "token_endpoint_auth_method": "none",
            "tls_client_certificate_bound_access_tokens": true,
            "grant_types": ["authorization_code", "refresh_token"],
        }))
        .await;
        s.user("alice", json!({})).await;
        let verifier = "a-code-verifier-long-enough-for-pkce-0123456789abcdef";
        let challenge = b64(&sha256(verifier.as_bytes()));
        let extra = [("scope", "openid offline_access"), ("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
        let code = s.code_for(&s.browser(), "app", "alice", &extra).await["code"].clone();
        let form = [("grant_type", "authorization_code"), ("client_id", "app"), ("code", &code), ("redirect_uri", REDIRECT), ("code_verifier", verifier)];
        let (st, tok) = post(&device.http(), s.url("/token"), &form).await;
        assert_eq!(st, 200, "postgres={postgres}: {tok}");
        let rt = tok["refresh_token"].as_str().unwrap();
        let refresh = [("grant_type", "refresh_token"), ("client_id", "app"), ("refresh_token", rt)];
        // A public client authenticates with nothing: the certificate is what holds the token.
        let (st, body) = post(&ClientCert::self_signed("app").http(), s.url("/token"), &refresh).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "another certificate");
        let (st, body) = post(&device.http(), s.url("/token"), &refresh).await;
        assert_eq!(st, 200, "{body}");
        s.server.stop().await.unwrap();
    }
}

#[tokio::test]
async fn tls_client_auth_needs_a_trusted_chain_and_the_registered_subject() {
    let authority = ca();
    let dir = tempfile::tempdir().unwrap();
    let anchors = dir.path().join("ca.pem");
    std::fs::write(&anchors, &authority.pem).unwrap();
    let s = tls_server(false, |c| c.mtls_trust_anchors = Some(anchors)).await;
    s.client("svc", json!({
        "token_endpoint_auth_method": "tls_client_auth",
        "tls_client_auth_subject_dn": "CN=svc,O=Example",
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
    }))
    .await;
    let cc = [("grant_type", "client_credentials"), ("client_id", "svc")];
    let (st, tok) = post(&ClientCert::issued_by("svc", &authority).http(), s.url("/token"), &cc).await;
    assert_eq!(st, 200, "{tok}");
    assert!(jwt_parts(tok["access_token"].as_str().unwrap()).1.get("cnf").is_none(), "not registered for bound tokens");
    for (why, http) in [
        ("another subject from the same CA", ClientCert::issued_by("other", &authority).http()),
        ("the right subject, self-signed", ClientCert::self_signed("svc").http()),
        ("no certificate", s.http.clone()),
    ] {
        let (st, body) = post(&http, s.url("/token"), &cc).await;
        assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{why}: {body}");
    }
    // Discovery says what a client can use.
    let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    let methods = meta["token_endpoint_auth_methods_supported"].as_array().unwrap();
    assert!(methods.contains(&json!("tls_client_auth")) && methods.contains(&json!("self_signed_tls_client_auth")));
    assert_eq!(meta["tls_client_certificate_bound_access_tokens"], true);
    assert_eq!(meta["mtls_endpoint_aliases"]["token_endpoint"], s.url("/token"));
}

#[tokio::test]
async fn a_self_signed_certificate_must_hold_a_registered_key() {
    let s = tls_server(false, |_| {}).await;
    let registered = ClientCert::self_signed("svc");
    s.client("svc", json!({
        "token_endpoint_auth_method": "self_signed_tls_client_auth",
        "jwks": registered.jwks(),
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
    }))
    .await;
    let cc = [("grant_type", "client_credentials"), ("client_id", "svc")];
    assert_eq!(post(&registered.http(), s.url("/token"), &cc).await.0, 200);
    let (st, body) = post(&ClientCert::self_signed("svc").http(), s.url("/token"), &cc).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("registered keys"), "{body}");
}

#[tokio::test]
async fn mtls_metadata_is_validated_at_registration() {
    let s = TestServer::start_with(|c| {
        c.mtls = true;
        c.open_registration = true;
        c.registration_auth_methods = "client_secret_basic tls_client_auth self_signed_tls_client_auth".into();
        c.registration_grant_types = "authorization_code client_credentials".into();
    })
    .await;
    let register = |body: Value| {
        let http = s.http.clone();
        let url = s.url("/register");
        async move {
            let res = http.post(url).json(&body).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let base = json!({"token_endpoint_auth_method": "tls_client_auth", "grant_types": ["client_credentials"], "response_types": []});
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    let (st, body) = register(with(json!({"tls_client_auth_san_dns": "svc.example", "tls_client_certificate_bound_access_tokens": true}))).await;
    assert_eq!(st, 201, "{body}");
    assert_eq!((body["tls_client_auth_san_dns"].as_str(), body["tls_client_certificate_bound_access_tokens"].as_bool()), (Some("svc.example"), Some(true)));
    assert!(body.get("client_secret").is_none(), "a certificate client has no secret");
    for (why, extra) in [
        ("no subject field", json!({})),
        ("two subject fields", json!({"tls_client_auth_san_dns": "a.example", "tls_client_auth_san_ip": "10.0.0.1"})),
        ("a bad DN", json!({"tls_client_auth_subject_dn": "nonsense"})),
    ] {
        let (st, body) = register(with(extra)).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_client_metadata")), "{why}: {body}");
    }
    let (st, body) = register(json!({"token_endpoint_auth_method": "self_signed_tls_client_auth", "grant_types": ["client_credentials"], "response_types": []})).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_client_metadata")), "self-signed without keys: {body}");
}

/// Behind a TLS-terminating proxy: the certificate arrives in a header, believed only from
/// the proxies named in `mtls_trusted_proxies`.
#[tokio::test]
async fn the_proxy_header_counts_only_from_a_trusted_proxy() {
    for postgres in [false, true] {
        for (trusted, proxies) in [(true, "127.0.0.1/32"), (false, "10.9.9.9 192.0.2.0/24")] {
            let s = TestServer::start_on(postgres, |c| {
                c.mtls = true;
                c.mtls_client_cert_header = Some("x-client-cert".into());
                c.mtls_trusted_proxies = proxies.into();
            })
            .await;
            let cert = ClientCert::self_signed("svc");
            s.client("svc", json!({
                "token_endpoint_auth_method": "self_signed_tls_client_auth",
                "jwks": cert.jwks(),
                "tls_client_certificate_bound_access_tokens": true,
                "grant_types": ["client_credentials"],
                "redirect_uris": [],
            }))
            .await;
            let res = s.http.post(s.url("/token")).header("x-client-cert", cert.escaped()).form(&[("grant_type", "client_credentials"), ("client_id", "svc")]).send().await.unwrap();
            let (st, body) = (res.status().as_u16(), res.json::<Value>().await.unwrap());
            if !trusted {
                assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "an untrusted address's header is ignored: {body}");
                continue;
            }
            assert_eq!(st, 200, "postgres={postgres}: {body}");
            let at = body["access_token"].as_str().unwrap();
            assert_eq!(introspect(&s, at).await["cnf"]["x5t#S256"], cert.thumbprint().as_str());
            // A header that is not a certificate is no certificate (never a 500).
            let res = s.http.post(s.url("/token")).header("x-client-cert", "%ZZnot-pem").form(&[("grant_type", "client_credentials"), ("client_id", "svc")]).send().await.unwrap();
            assert_eq!(res.status(), 401);
            s.server.stop().await.unwrap();
        }
    }
}
