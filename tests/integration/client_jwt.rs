//! JWT client authentication (RFC 7523 §2.2/§3, OpenID Connect Core §9): `private_key_jwt`
//! with inline keys and with a `jwks_uri` served by the test, `client_secret_jwt`, and every
//! way an assertion must be refused.

use crate::harness::*;
use authrim::util::{b64, now, random_token};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use axum::routing::get;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A client's key pair: what signs, and the public JWK it registers.
pub struct Signer {
    pub alg: Algorithm,
    pub kid: String,
    key: EncodingKey,
    pub jwk: Value,
}

impl Signer {
    pub fn es256(kid: &str) -> Self {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new()).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
        let point = pair.public_key().as_ref(); // 0x04 ‖ x ‖ y
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..]), "kid": kid, "use": "sig"});
        Self { alg: Algorithm::ES256, kid: kid.into(), key: EncodingKey::from_ec_der(pkcs8.as_ref()), jwk }
    }

    pub fn ed25519(kid: &str) -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": b64(pair.public_key().as_ref()), "kid": kid});
        Self { alg: Algorithm::EdDSA, kid: kid.into(), key: EncodingKey::from_ed_der(pkcs8.as_ref()), jwk }
    }

    pub fn hmac(secret: &str) -> Self {
        Self { alg: Algorithm::HS256, kid: String::new(), key: EncodingKey::from_secret(secret.as_bytes()), jwk: Value::Null }
    }

    /// Sign `claims` under a header given as raw JSON (members jsonwebtoken's `Header` would
    /// drop, such as a private `jwk`).
    pub fn sign_raw(&self, header: &Value, claims: &Value) -> String {
        let input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
        let sig = jsonwebtoken::crypto::sign(input.as_bytes(), &self.key, self.alg).unwrap();
        format!("{input}.{sig}")
    }

    /// Sign `claims` under a header of the caller's making.
    pub fn sign_with_header(&self, header: Header, claims: &Value) -> String {
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }

    /// Sign `claims` as they are.
    pub fn sign(&self, claims: &Value) -> String {
        let mut h = Header::new(self.alg);
        h.kid = (!self.kid.is_empty()).then(|| self.kid.clone());
        jsonwebtoken::encode(&h, claims, &self.key).unwrap()
    }

    /// A good assertion for `client_id` to `aud`, with `changes` applied (`null` removes).
    pub fn assertion(&self, client_id: &str, aud: &str, changes: Value) -> String {
        let t = now();
        let mut c = json!({"iss": client_id, "sub": client_id, "aud": aud, "exp": t + 60, "iat": t, "jti": random_token()});
        apply(&mut c, changes);
        self.sign(&c)
    }
}

/// `changes` applied to the claims `c`: each member set, or removed where it is `null`.
pub fn apply(c: &mut Value, changes: Value) {
    for (k, v) in changes.as_object().cloned().unwrap_or_default() {
        if v.is_null() {
            c.as_object_mut().unwrap().remove(&k);
        } else {
            c[k] = v;
        }
    }
}

pub fn jwks(signers: &[&Signer]) -> Value {
    json!({"keys": signers.iter().map(|s| s.jwk.clone()).collect::<Vec<_>>()})
}

async fn client_credentials(s: &TestServer, assertion: &str, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut form = vec![("grant_type", "client_credentials"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion)];
    form.extend_from_slice(extra);
    let (st, body, _) = s.token(None, &form).await;
    (st, body)
}

fn machine_client(extra: Value) -> Value {
    let mut v = json!({"grant_types": ["client_credentials"], "redirect_uris": [], "scope": "api.read"});
    for (k, x) in extra.as_object().cloned().unwrap_or_default() {
        v[k] = x;
    }
    v
}

#[tokio::test]
async fn private_key_jwt_with_inline_keys_and_every_bad_assertion_refused() {
    let s = TestServer::start().await;
    let (es, ed) = (Signer::es256("k-es"), Signer::ed25519("k-ed"));
    let id = "svc";
    s.client(id, machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&es, &ed])}))).await;
    let token_url = s.url("/token");
    let issuer = s.issuer();

    // Both key types, and every audience the specs allow.
    for (signer, aud) in [(&es, json!(token_url)), (&ed, json!(issuer)), (&es, json!(["https://elsewhere.example", issuer]))] {
        let a = signer.assertion(id, "", json!({"aud": aud}));
        let (st, body) = client_credentials(&s, &a, &[]).await;
        assert_eq!(st, 200, "{aud}: {body}");
        assert_eq!(body["token_type"], "Bearer");
    }

    // The same assertion twice: the jti is spent.
    let a = es.assertion(id, &token_url, json!({}));
    assert_eq!(client_credentials(&s, &a, &[]).await.0, 200);
    let (st, body) = client_credentials(&s, &a, &[]).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "replay: {body}");
    assert!(body["error_description"].as_str().unwrap().contains("already used"), "{body}");

    let t = now();
    let stranger = Signer::es256("k-es"); // the registered kid, another key
    let mut alg_none = format!("{}.{}.", b64(br#"{"alg":"none"}"#), b64(json!({"iss": id, "sub": id, "aud": token_url, "exp": t + 60, "jti": "n"}).to_string().as_bytes()));
    let hs_with_public_key = {
        // Algorithm confusion: an HMAC keyed with the public key's bytes.
        let key = EncodingKey::from_secret(es.jwk.to_string().as_bytes());
        let mut h = Header::new(Algorithm::HS256);
        h.kid = Some("k-es".into());
        jsonwebtoken::encode(&h, &json!({"iss": id, "sub": id, "aud": token_url, "exp": t + 60, "jti": "c"}), &key).unwrap()
    };
    let cases: Vec<(&str, String)> = vec![
        ("expired", es.assertion(id, &token_url, json!({"exp": t - 120}))),
        ("lives too long", es.assertion(id, &token_url, json!({"exp": t + 7200}))),
        ("no exp", es.assertion(id, &token_url, json!({"exp": null}))),
        ("no jti", es.assertion(id, &token_url, json!({"jti": null}))),
        ("not yet valid", es.assertion(id, &token_url, json!({"nbf": t + 600}))),
        ("issued in the future", es.assertion(id, &token_url, json!({"iat": t + 600}))),
        ("another audience", es.assertion(id, "https://elsewhere.example/token", json!({}))),
        ("no aud", es.assertion(id, &token_url, json!({"aud": null}))),
        ("another key under the kid", stranger.assertion(id, &token_url, json!({}))),
        ("alg none", std::mem::take(&mut alg_none)),
        ("HS256 with the public key", hs_with_public_key),
        ("iss differs from sub", es.assertion(id, &token_url, json!({"iss": "someone-else"}))),
        ("another client's name", es.assertion("nobody", &token_url, json!({}))),
        ("not a JWT", "not.a.jwt".into()),
    ];
    for (what, a) in cases {
        let (st, body) = client_credentials(&s, &a, &[]).await;
        assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{what}: {body}");
    }

    // Request shape: one method only, the right type, a matching client_id.
    let a = es.assertion(id, &token_url, json!({}));
    for (what, extra, status, code) in [
        ("with a secret too", vec![("client_secret", "x"), ("client_id", id)], 400, "invalid_request"),
        ("another client_id", vec![("client_id", "other")], 400, "invalid_request"),
    ] {
        let (st, body) = client_credentials(&s, &a, &extra).await;
        assert_eq!((st, body["error"].as_str()), (status, Some(code)), "{what}: {body}");
    }
    let form = [("grant_type", "client_credentials"), ("client_assertion_type", "urn:example:saml"), ("client_assertion", a.as_str())];
    assert_eq!(s.token(None, &form).await.1["error"], "invalid_request");
    let form = [("grant_type", "client_credentials"), ("client_assertion", a.as_str())];
    assert_eq!(s.token(None, &form).await.1["error"], "invalid_request");
    // With Basic as well: two methods.
    let form = [("grant_type", "client_credentials"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", a.as_str())];
    assert_eq!(s.token(Some((id, "x")), &form).await.0, 400);
    // The client may not fall back to nothing, nor to a secret it does not have.
    assert_eq!(s.token(None, &[("grant_type", "client_credentials"), ("client_id", id)]).await.0, 401);
    assert_eq!(s.token(Some((id, "")), &[("grant_type", "client_credentials")]).await.0, 401);

    // A client registered for a secret cannot authenticate with an assertion instead.
    s.client("basic-svc", machine_client(json!({}))).await;
    let (st, body) = client_credentials(&s, &es.assertion("basic-svc", &token_url, json!({})), &[]).await;
    assert_eq!(st, 401, "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("client_secret_basic"), "{body}");

    // A registered signing algorithm is the only one accepted.
    s.client("es-only", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&es, &ed]), "token_endpoint_auth_signing_alg": "ES256"}))).await;
    assert_eq!(client_credentials(&s, &es.assertion("es-only", &token_url, json!({})), &[]).await.0, 200);
    assert_eq!(client_credentials(&s, &ed.assertion("es-only", &token_url, json!({})), &[]).await.0, 401);

    // The same method at introspection and revocation, with their own URLs as aud.
    let access = client_credentials(&s, &es.assertion(id, &token_url, json!({})), &[]).await.1["access_token"].as_str().unwrap().to_string();
    let introspect = |aud: String| {
        let a = es.assertion(id, &aud, json!({}));
        let http = s.http.clone();
        let url = s.url("/introspect");
        let token = access.clone();
        async move {
            let form = [("token", token.as_str()), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", a.as_str())];
            let res = http.post(url).form(&form).send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let (st, body) = introspect(s.url("/introspect")).await;
    assert_eq!((st, body["active"].as_bool()), (200, Some(true)), "{body}");
    assert_eq!(introspect(s.url("/revoke")).await.0, 401, "the revocation URL is not introspection's audience");
    let a = es.assertion(id, &s.url("/revoke"), json!({}));
    let form = [("token", access.as_str()), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", a.as_str())];
    assert_eq!(s.http.post(s.url("/revoke")).form(&form).send().await.unwrap().status(), 200);
    let (_, body) = introspect(s.issuer()).await;
    assert_eq!(body["active"], false, "revoked through a private_key_jwt-authenticated /revoke");

    // Registration rules.
    for (what, meta) in [
        ("no keys", json!({"token_endpoint_auth_method": "private_key_jwt"})),
        ("both jwks and jwks_uri", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&es]), "jwks_uri": "https://keys.example/jwks"})),
        ("a private key", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [{"kty": "EC", "crv": "P-256", "x": es.jwk["x"], "y": es.jwk["y"], "d": "870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"}]}})),
        ("an http jwks_uri", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "http://keys.example/jwks"})),
        ("an HMAC alg for private_key_jwt", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&es]), "token_endpoint_auth_signing_alg": "HS256"})),
        ("alg none", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&es]), "token_endpoint_auth_signing_alg": "none"})),
    ] {
        let mut body = machine_client(meta);
        body["client_id"] = json!("bad");
        let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
        assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{what}: {v}");
    }
    // A private_key_jwt client is issued no secret.
    let (_, secret) = s.client("keyed", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&ed])}))).await;
    assert!(secret.is_none());
}

/// A client's key host, run by the test: serves `keys`, counts fetches, and can misbehave.
#[derive(Clone, Default)]
struct KeyHost {
    keys: Arc<parking_lot::Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
}

impl KeyHost {
    async fn start(&self) -> String {
        let host = self.clone();
        let big = json!({"keys": [], "padding": "x".repeat(4096)});
        let app = axum::Router::new()
            .route("/jwks", get(move || {
                let host = host.clone();
                async move {
                    host.fetches.fetch_add(1, Ordering::SeqCst);
                    axum::Json(host.keys.lock().clone())
                }
            }))
            .route("/big", get(move || { let big = big.clone(); async move { axum::Json(big) } }))
            .route("/slow", get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                axum::Json(json!({"keys": []}))
            }))
            .route("/moved", get(|| async { axum::response::Redirect::temporary("/jwks") }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }
}

#[tokio::test]
async fn jwks_uri_keys_are_cached_refetched_for_a_new_kid_and_fetched_within_bounds() {
    let s = TestServer::start_with(|c| {
        c.client_jwks_min_refetch = 0;
        c.fetch_timeout = 1;
        c.fetch_max_bytes = 2048;
    })
    .await;
    let token_url = s.url("/token");
    let (a, b) = (Signer::es256("a"), Signer::ed25519("b"));
    let host = KeyHost::default();
    *host.keys.lock() = jwks(&[&a]);
    let base = host.start().await;
    s.client("svc", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": format!("{base}/jwks")}))).await;

    for _ in 0..3 {
        assert_eq!(client_credentials(&s, &a.assertion("svc", &token_url, json!({})), &[]).await.0, 200);
    }
    assert_eq!(host.fetches.load(Ordering::SeqCst), 1, "the set is fetched once, then cached");

    // The client rotates: a JWT under the new kid fetches the set again.
    *host.keys.lock() = jwks(&[&b]);
    assert_eq!(client_credentials(&s, &b.assertion("svc", &token_url, json!({})), &[]).await.0, 200);
    assert_eq!(host.fetches.load(Ordering::SeqCst), 2);
    // The old key is gone from the set the server now holds.
    assert_eq!(client_credentials(&s, &a.assertion("svc", &token_url, json!({})), &[]).await.0, 401);

    // Oversized, slow and redirecting key hosts: the client cannot authenticate, quickly.
    for (path, what) in [("/big", "larger than"), ("/slow", "fetch failed"), ("/moved", "answered 307")] {
        let id = format!("svc{}", path.replace('/', "-"));
        s.client(&id, machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": format!("{base}{path}")}))).await;
        let started = std::time::Instant::now();
        let (st, body) = client_credentials(&s, &a.assertion(&id, &token_url, json!({})), &[]).await;
        assert_eq!(st, 401, "{path}: {body}");
        assert!(body["error_description"].as_str().unwrap().contains(what), "{path}: {body}");
        assert!(started.elapsed() < std::time::Duration::from_secs(4), "{path} took {:?}", started.elapsed());
    }
}

#[tokio::test]
async fn made_up_kids_do_not_make_the_server_fetch_again_within_the_refetch_interval() {
    let s = TestServer::start_with(|c| c.client_jwks_min_refetch = 3600).await;
    let token_url = s.url("/token");
    let a = Signer::es256("a");
    let host = KeyHost::default();
    *host.keys.lock() = jwks(&[&a]);
    let base = host.start().await;
    s.client("svc", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": format!("{base}/jwks")}))).await;
    assert_eq!(client_credentials(&s, &a.assertion("svc", &token_url, json!({})), &[]).await.0, 200);
    for i in 0..20 {
        let made_up = Signer::es256(&format!("made-up-{i}"));
        assert_eq!(client_credentials(&s, &made_up.assertion("svc", &token_url, json!({})), &[]).await.0, 401);
    }
    assert_eq!(host.fetches.load(Ordering::SeqCst), 1);
}

/// Found by the dynamic-registration conformance plan: two clients share one `jwks_uri` (the
/// suite publishes every client's keys at one URL). The set fetched for the first said nothing
/// of the key the second had just published there, yet the second was refused its first
/// assertion, because the refetch interval was counted per URI. It is counted per client now:
/// each client's unknown kid fetches the set once per interval, made-up kids included.
#[tokio::test]
async fn a_shared_jwks_uri_is_fetched_again_for_a_client_it_was_not_fetched_for() {
    let s = TestServer::start_with(|c| c.client_jwks_min_refetch = 3600).await;
    let token_url = s.url("/token");
    let (a, b) = (Signer::es256("a"), Signer::es256("b"));
    let host = KeyHost::default();
    *host.keys.lock() = jwks(&[&a]);
    let base = host.start().await;
    let uri = format!("{base}/jwks");
    s.client("first", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": uri}))).await;
    assert_eq!(client_credentials(&s, &a.assertion("first", &token_url, json!({})), &[]).await.0, 200);
    // A second client publishes its key at the same URL and registers.
    *host.keys.lock() = jwks(&[&a, &b]);
    s.client("second", machine_client(json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": uri}))).await;
    let (st, body) = client_credentials(&s, &b.assertion("second", &token_url, json!({})), &[]).await;
    assert_eq!(st, 200, "the second client's first assertion: {body}");
    assert_eq!(host.fetches.load(Ordering::SeqCst), 2);
    // Each client's made-up kids still fetch nothing more within the interval.
    for (i, client) in ["first", "second", "first", "second"].iter().enumerate() {
        let made_up = Signer::es256(&format!("made-up-{i}"));
        assert_eq!(client_credentials(&s, &made_up.assertion(client, &token_url, json!({})), &[]).await.0, 401);
    }
    assert_eq!(host.fetches.load(Ordering::SeqCst), 2, "each client has made its one fetch of the interval");
    assert_eq!(client_credentials(&s, &b.assertion("second", &token_url, json!({})), &[]).await.0, 200);
}

#[tokio::test]
async fn client_secret_jwt_uses_a_sealed_secret_that_rotates_and_survives_a_restart() {
    let s = TestServer::start().await;
    let token_url = s.url("/token");
    let (_, secret) = s.client("mac", machine_client(json!({"token_endpoint_auth_method": "client_secret_jwt"}))).await;
    let secret = secret.expect("a client_secret_jwt client gets a secret");
    let good = Signer::hmac(&secret);
    assert_eq!(client_credentials(&s, &good.assertion("mac", &token_url, json!({})), &[]).await.0, 200);
    assert_eq!(client_credentials(&s, &Signer::hmac("wrong").assertion("mac", &token_url, json!({})), &[]).await.0, 401);
    // The secret does not work as a plain secret for this client.
    assert_eq!(s.token(Some(("mac", &secret)), &[("grant_type", "client_credentials")]).await.0, 401);
    // An asymmetric signature is not this method's.
    let es = Signer::es256("x");
    assert_eq!(client_credentials(&s, &es.assertion("mac", &token_url, json!({})), &[]).await.0, 401);

    // A client_secret_basic client moved to client_secret_jwt gets a new secret (the old one
    // was only ever stored hashed).
    let (_, old) = s.client("moving", machine_client(json!({}))).await;
    let (st, v) = s.admin(reqwest::Method::PATCH, "/admin/clients/moving", Some(json!({"token_endpoint_auth_method": "client_secret_jwt"}))).await;
    assert_eq!(st, 200, "{v}");
    let new = v["client_secret"].as_str().expect("a new secret").to_string();
    assert_ne!(Some(new.clone()), old);
    assert_eq!(client_credentials(&s, &Signer::hmac(&new).assertion("moving", &token_url, json!({})), &[]).await.0, 200);

    // Rotation: the old secret stops working.
    let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients/mac/secret", None).await;
    assert_eq!(st, 200, "{v}");
    let rotated = v["client_secret"].as_str().unwrap().to_string();
    assert_eq!(client_credentials(&s, &good.assertion("mac", &token_url, json!({})), &[]).await.0, 401);
    assert_eq!(client_credentials(&s, &Signer::hmac(&rotated).assertion("mac", &token_url, json!({})), &[]).await.0, 200);

    // After a restart the sealed secret opens again; the database holds no plain secret.
    let TestServer { server, dir, .. } = s;
    server.stop().await.unwrap();
    let path = authrim::db::db_path(dir.path());
    let file = std::fs::read(&path).unwrap();
    let wal = std::fs::read(format!("{}-wal", path.display())).unwrap_or_default();
    for bytes in [&file, &wal] {
        assert!(!bytes.windows(rotated.len()).any(|w| w == rotated.as_bytes()), "the secret is stored in the clear");
    }
    let config = test_config(dir.path());
    let s = TestServer::start_in(dir, config).await;
    let token_url = s.url("/token");
    assert_eq!(client_credentials(&s, &Signer::hmac(&rotated).assertion("mac", &token_url, json!({})), &[]).await.0, 200);
}

#[tokio::test]
async fn discovery_lists_the_jwt_methods_and_their_algorithms() {
    let s = TestServer::start().await;
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    for key in ["token_endpoint_auth_methods_supported", "revocation_endpoint_auth_methods_supported", "introspection_endpoint_auth_methods_supported"] {
        let methods = d[key].as_array().unwrap();
        for m in ["private_key_jwt", "client_secret_jwt", "client_secret_basic"] {
            assert!(methods.contains(&json!(m)), "{key} lacks {m}");
        }
    }
    assert!(!d["introspection_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("none")));
    let algs = d["token_endpoint_auth_signing_alg_values_supported"].as_array().unwrap();
    for a in ["RS256", "PS256", "ES256", "EdDSA", "HS256"] {
        assert!(algs.contains(&json!(a)), "{a}");
    }
    assert!(!algs.contains(&json!("none")));
}
