//! Signed request objects (RFC 9101, OIDC Core §6.1) at `/authorize` and `/par`.

use crate::client_jwt::{jwks, Signer};
use crate::harness::*;
use serde_json::{json, Value};

pub fn object(s: &TestServer, client_id: &str, changes: Value) -> Value {
    let mut c = json!({
        "iss": client_id, "aud": s.issuer(), "exp": authrim::util::now() + 300, "iat": authrim::util::now(),
        "client_id": client_id, "response_type": "code", "redirect_uri": REDIRECT, "scope": "openid profile",
        "state": "signed-state", "nonce": "signed-nonce",
    });
    for (k, v) in changes.as_object().cloned().unwrap_or_default() {
        if v.is_null() {
            c.as_object_mut().unwrap().remove(&k);
        } else {
            c[k] = v;
        }
    }
    c
}

#[tokio::test]
async fn a_signed_request_object_is_the_request_and_the_query_is_ignored() {
    let s = TestServer::start().await;
    let key = Signer::es256("k1");
    let (_, secret) = s.client("rp", json!({"jwks": jwks(&[&key])})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let jwt = key.sign(&object(&s, "rp", json!({"claims": {"id_token": {"email": {"essential": true}}}})));
    let res = b
        .authorize(&[("client_id", "rp"), ("response_type", "code"), ("scope", "openid"), ("state", "evil"), ("redirect_uri", "https://evil.example/cb"), ("request", &jwt)])
        .await;
    let p = b.finish_login(res, "alice", PASSWORD).await;
    assert_eq!(p["state"], "signed-state", "the object's state, not the query's");
    let (st, tok, _) = s
        .token(Some(("rp", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(tok["scope"], "openid profile");
    let (_, id) = jwt_parts(tok["id_token"].as_str().unwrap());
    assert_eq!(id["nonce"], "signed-nonce");

    // max_age as a JSON number in the object is honoured: 0 forces a new login.
    let jwt = key.sign(&object(&s, "rp", json!({"max_age": 0})));
    let page = Page::from(b.authorize(&[("client_id", "rp"), ("request", &jwt)]).await).await;
    assert!(page.is_login(), "max_age=0 from the object: {}", page.html);

    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["request_parameter_supported"], true);
    assert!(d["request_object_signing_alg_values_supported"].as_array().unwrap().contains(&json!("ES256")));
    assert!(!d["request_object_signing_alg_values_supported"].as_array().unwrap().contains(&json!("none")));
}

#[tokio::test]
async fn bad_request_objects_are_refused_to_the_registered_redirect_uri_or_on_a_page() {
    let s = TestServer::start().await;
    let key = Signer::es256("k1");
    s.client("rp", json!({"jwks": jwks(&[&key])})).await;
    s.client("pinned", json!({"jwks": jwks(&[&key]), "request_object_signing_alg": "EdDSA"})).await;
    let b = s.browser();
    let t = authrim::util::now();
    let stranger = Signer::es256("k1");
    let unsigned = format!("{}.{}.", authrim::util::b64(br#"{"alg":"none"}"#), authrim::util::b64(object(&s, "rp", json!({})).to_string().as_bytes()));
    let cases: Vec<(&str, String)> = vec![
        ("unsigned", unsigned),
        ("another key", stranger.sign(&object(&s, "rp", json!({})))),
        ("another issuer", key.sign(&object(&s, "rp", json!({"iss": "someone"})))),
        ("no iss", key.sign(&object(&s, "rp", json!({"iss": null})))),
        ("another audience", key.sign(&object(&s, "rp", json!({"aud": "https://other.example"})))),
        ("expired", key.sign(&object(&s, "rp", json!({"exp": t - 600})))),
        ("not yet valid", key.sign(&object(&s, "rp", json!({"nbf": t + 600})))),
        ("another client_id inside", key.sign(&object(&s, "rp", json!({"client_id": "pinned"})))),
        ("a request_uri inside", key.sign(&object(&s, "rp", json!({"request_uri": "https://x.example/r"})))),
        ("an array where a string belongs", key.sign(&object(&s, "rp", json!({"scope": ["openid"]})))),
        ("HMAC by a client without a readable secret", Signer::hmac("guess").sign(&object(&s, "rp", json!({})))),
        ("not a JWT", "abc".into()),
    ];
    for (what, jwt) in cases {
        let q = [("client_id", "rp"), ("response_type", "code"), ("redirect_uri", REDIRECT), ("state", "q"), ("request", jwt.as_str())];
        let p = Page::from(b.authorize(&q).await).await.redirect_params();
        assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request_object", "q"), "{what}");
        // Without a registered redirect URI in the query, a page: never a redirect to the
        // object's unverified one.
        let page = Page::from(b.authorize(&[("client_id", "rp"), ("request", jwt.as_str())]).await).await;
        assert_eq!((page.status, page.location.is_none()), (400, true), "{what}");
    }
    // A verified object's own redirect URI is trusted: its errors go there.
    // (`token` asks for a token: refused in the fragment, never in the query.)
    let jwt = key.sign(&object(&s, "rp", json!({"response_type": "token"})));
    let p = Page::from(b.authorize(&[("client_id", "rp"), ("request", &jwt)]).await).await.fragment_params();
    assert_eq!((p["error"].as_str(), p["state"].as_str()), ("unsupported_response_type", "signed-state"));
    // A query response_type that the object contradicts.
    let jwt = key.sign(&object(&s, "rp", json!({})));
    let p = Page::from(b.authorize(&[("client_id", "rp"), ("response_type", "none"), ("redirect_uri", REDIRECT), ("request", &jwt)]).await).await.redirect_params();
    assert_eq!(p["error"], "invalid_request_object");
    // The pinned algorithm only.
    let jwt = key.sign(&object(&s, "pinned", json!({})));
    let p = Page::from(b.authorize(&[("client_id", "pinned"), ("redirect_uri", REDIRECT), ("request", &jwt)]).await).await.redirect_params();
    assert_eq!(p["error"], "invalid_request_object");
    // An unknown client: a page.
    let page = Page::from(b.authorize(&[("client_id", "nobody"), ("request", &jwt)]).await).await;
    assert_eq!(page.status, 400);
}

#[tokio::test]
async fn clients_can_require_signed_objects_which_also_travel_through_par_and_may_be_maced() {
    let s = TestServer::start().await;
    let key = Signer::ed25519("k");
    let (_, secret) = s.client("strict", json!({"jwks": jwks(&[&key]), "require_signed_request_object": true})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    let plain = [("client_id", "strict"), ("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "p")];
    let p = Page::from(b.authorize(&plain).await).await.redirect_params();
    assert_eq!(p["error"], "invalid_request", "a plain request from a client that must sign");
    let res = b.authorize(&[("client_id", "strict"), ("request", &key.sign(&object(&s, "strict", json!({}))))]).await;
    assert!(b.finish_login(res, "alice", PASSWORD).await.contains_key("code"));

    // Through PAR: the object in the pushed body.
    let push = |form: Vec<(&'static str, String)>| {
        let req = s.http.post(s.url("/par")).basic_auth("strict", Some(&secret)).form(&form);
        async move {
            let res = req.send().await.unwrap();
            (res.status().as_u16(), res.json::<Value>().await.unwrap())
        }
    };
    let (st, body) = push(plain.iter().map(|(k, v)| (*k, v.to_string())).collect()).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    let (st, body) = push(vec![("request", key.sign(&object(&s, "strict", json!({"state": "via-par"}))))]).await;
    assert_eq!(st, 201, "{body}");
    let res = b.authorize(&[("client_id", "strict"), ("request_uri", body["request_uri"].as_str().unwrap())]).await;
    assert_eq!(b.finish_login(res, "alice", PASSWORD).await["state"], "via-par");
    let (st, body) = push(vec![("request", Signer::es256("k").sign(&object(&s, "strict", json!({}))))]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request_object")), "{body}");

    // A client_secret_jwt client may MAC its objects with its secret.
    let (_, mac_secret) = s.client("mac", json!({"token_endpoint_auth_method": "client_secret_jwt"})).await;
    let jwt = Signer::hmac(mac_secret.as_deref().unwrap()).sign(&object(&s, "mac", json!({})));
    let res = b.authorize(&[("client_id", "mac"), ("request", &jwt)]).await;
    assert!(b.finish_login(res, "alice", PASSWORD).await.contains_key("code"));
}

/// Where a client publishes request objects (its `request_uris`): each path a body set by
/// the test, and how often each was fetched.
struct Published {
    base: String,
    bodies: std::sync::Arc<parking_lot::Mutex<std::collections::HashMap<String, String>>>,
    fetches: std::sync::Arc<parking_lot::Mutex<std::collections::HashMap<String, usize>>>,
}

impl Published {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let bodies: std::sync::Arc<parking_lot::Mutex<std::collections::HashMap<String, String>>> = Default::default();
        let fetches: std::sync::Arc<parking_lot::Mutex<std::collections::HashMap<String, usize>>> = Default::default();
        let (b, f) = (bodies.clone(), fetches.clone());
        let app = axum::Router::new().route(
            "/{name}",
            axum::routing::get(move |axum::extract::Path(name): axum::extract::Path<String>| {
                let (bodies, fetches) = (b.clone(), f.clone());
                async move {
                    use axum::response::IntoResponse;
                    *fetches.lock().entry(name.clone()).or_default() += 1;
                    if name.starts_with("slow") {
                        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
                    }
                    let body = bodies.lock().get(&name).cloned();
                    match body {
                        Some(jwt) => ([(axum::http::header::CONTENT_TYPE, "application/oauth-authz-req+jwt")], jwt).into_response(),
                        None => axum::http::StatusCode::NOT_FOUND.into_response(),
                    }
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, bodies, fetches }
    }

    fn publish(&self, name: &str, jwt: &str) -> String {
        self.bodies.lock().insert(name.to_string(), jwt.to_string());
        format!("{}/{name}", self.base)
    }

    fn fetched(&self, name: &str) -> usize {
        self.fetches.lock().get(name).copied().unwrap_or(0)
    }
}

/// OpenID Connect Core §6.2: a request object passed by reference, from one of the client's
/// registered `request_uris` (its fragment aside), is the request, as one passed by value; it
/// is fetched once for a burst of sign-ins. An unregistered URI, one that does not answer a
/// JWT or a forged object behind a registered URI are refused as `invalid_request_uri` /
/// `invalid_request_object` to the registered redirect URI; `request` and `request_uri`
/// together as `invalid_request`.
#[tokio::test]
async fn a_request_object_by_reference_from_a_registered_request_uri_is_the_request() {
    let s = TestServer::start().await;
    let docs = Published::start().await;
    let key = Signer::es256("k1");
    let good = docs.publish("good", &key.sign(&object(&s, "rp", json!({"scope": "openid email"}))));
    let forged = docs.publish("forged", &Signer::es256("k1").sign(&object(&s, "rp", json!({}))));
    let not_jwt = docs.publish("not-jwt", "<html>hello</html>");
    let missing = format!("{}/missing", docs.base);
    let (_, secret) = s
        .client("rp", json!({"jwks": jwks(&[&key]), "request_uris": [format!("{good}#v1"), forged.clone(), not_jwt.clone(), missing.clone()]}))
        .await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let res = b.authorize(&[("client_id", "rp"), ("request_uri", &format!("{good}#v2")), ("state", "ignored")]).await;
    let p = b.finish_login(res, "alice", PASSWORD).await;
    assert_eq!(p["state"], "signed-state", "the object's parameters are the request");
    let (st, tok, _) = s
        .token(Some(("rp", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!((st, tok["scope"].as_str()), (200, Some("openid email")), "{tok}");
    // A burst naming the same URL: fetched once (request_uri_cache_ttl).
    for _ in 0..3 {
        let res = b.authorize(&[("client_id", "rp"), ("request_uri", &format!("{good}#v2"))]).await;
        assert!(Page::from(res).await.redirect_params().contains_key("code"));
    }
    assert_eq!(docs.fetched("good"), 1);

    let refused = |q: Vec<(&'static str, String)>| {
        let b = s.browser();
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            Page::from(b.authorize(&q).await).await
        }
    };
    let base = |uri: &str| vec![("client_id", "rp".to_string()), ("redirect_uri", REDIRECT.to_string()), ("state", "q".to_string()), ("request_uri", uri.to_string())];
    for (what, uri, code) in [
        ("not registered", format!("{}/good-but-elsewhere", docs.base), "invalid_request_uri"),
        ("registered, not a JWT", not_jwt.clone(), "invalid_request_uri"),
        ("registered, 404", missing.clone(), "invalid_request_uri"),
        ("registered, another key's object", forged.clone(), "invalid_request_object"),
    ] {
        let page = refused(base(&uri)).await;
        let p = page.redirect_params();
        assert_eq!((p["error"].as_str(), p["state"].as_str()), (code, "q"), "{what}: {p:?}");
    }
    let mut both = base(&good);
    both.push(("request", key.sign(&object(&s, "rp", json!({})))));
    assert_eq!(refused(both).await.redirect_params()["error"], "invalid_request", "RFC 9101 §5: not both");
    // No registered redirect URI in the query: a page, never a redirect.
    let page = refused(vec![("client_id", "rp".into()), ("request_uri", format!("{}/x", docs.base))]).await;
    assert_eq!((page.status, page.location.is_none()), (400, true), "{}", page.html);

    // Discovery says so; registration takes request_uris (https, or loopback http) and
    // refuses what would never be fetched.
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!((d["request_uri_parameter_supported"].as_bool(), d["require_request_uri_registration"].as_bool()), (Some(true), Some(true)));
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "bad", "redirect_uris": [REDIRECT], "request_uris": ["ftp://x.example/r"]}))).await;
    assert_eq!(st, 400, "{body}");
    let long = format!("https://x.example/{}", "a".repeat(600));
    let (st, body) = s.admin(reqwest::Method::POST, "/admin/clients", Some(json!({"client_id": "bad2", "redirect_uris": [REDIRECT], "request_uris": [long]}))).await;
    assert_eq!(st, 400, "{body}");
    let (_, t) = s.admin(reqwest::Method::POST, "/admin/registration-tokens", Some(json!({"max_uses": 1}))).await;
    let reg: Value = s
        .http
        .post(s.url("/register"))
        .bearer_auth(t["initial_access_token"].as_str().unwrap())
        .json(&json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt", "jwks": jwks(&[&key]), "request_uris": [good.clone()]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reg["request_uris"], json!([good]), "{reg}");
}

/// One client has at most `request_uri_max_fetches_per_client` fetches in flight: the rest of
/// a burst of new request URIs (each fragment a new object) is refused at once, and the
/// fetches that were let through complete.
#[tokio::test]
async fn one_client_cannot_hold_more_than_its_share_of_fetches() {
    let s = TestServer::start_with(|c| c.request_uri_max_fetches_per_client = 2).await;
    let docs = Published::start().await;
    let key = Signer::es256("k1");
    let slow = docs.publish("slow", &key.sign(&object(&s, "rp", json!({}))));
    s.client("rp", json!({"jwks": jwks(&[&key]), "request_uris": [slow.clone()]})).await;
    let mut set = tokio::task::JoinSet::new();
    for i in 0..6 {
        let (b, uri) = (s.browser(), format!("{slow}#{i}"));
        set.spawn(async move { Page::from(b.authorize(&[("client_id", "rp"), ("redirect_uri", REDIRECT), ("state", "q"), ("request_uri", &uri)]).await).await });
    }
    let pages = set.join_all().await;
    let refused: Vec<String> = pages.iter().filter_map(|p| p.location.as_deref().filter(|l| l.contains("error=")).map(str::to_string)).collect();
    let served = pages.iter().filter(|p| p.status == 200 && p.is_login()).count();
    assert_eq!((served, refused.len()), (2, 4), "{refused:?}");
    assert!(refused.iter().all(|l| l.contains("error=invalid_request_uri") && l.contains("too+many")), "{refused:?}");
    assert_eq!(docs.fetched("slow"), 2);
}

/// `jws` encrypted to the server's published encryption key for `alg` (from `/jwks`, as a
/// client finds it: `use: enc`, the key type `alg` needs).
pub async fn encrypt_to_server(s: &TestServer, alg: &str, enc: &str, jws: &str) -> String {
    use authrim::keys::jwe;
    let jwks: Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let kty = if alg.starts_with("RSA") { "RSA" } else { "EC" };
    let mut jwk = jwks["keys"].as_array().unwrap().iter().find(|k| k["use"] == "enc" && k["kty"] == kty).expect("an encryption key is published").clone();
    // The EC key is published for ECDH-ES and takes its key-wrapping variants too.
    jwk.as_object_mut().unwrap().remove("alg");
    let key = jwe::RecipientKey::from_jwk(&jwk).unwrap().unwrap();
    jwe::encrypt(&key, alg, enc, Some("JWT"), jws.as_bytes()).unwrap()
}

#[tokio::test]
async fn encrypted_request_objects_are_decrypted_with_the_servers_keys() {
    encrypted_request_objects(false).await;
}

#[tokio::test]
async fn encrypted_request_objects_are_decrypted_with_the_servers_keys_on_postgres() {
    encrypted_request_objects(true).await;
}

async fn encrypted_request_objects(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let key = Signer::es256("k1");
    let (_, secret) = s.client("rp", json!({"jwks": jwks(&[&key])})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    for alg in ["RSA-OAEP-256", "ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW"] {
        assert!(d["request_object_encryption_alg_values_supported"].as_array().unwrap().contains(&json!(alg)), "{d}");
    }
    assert!(d["request_object_encryption_enc_values_supported"].as_array().unwrap().contains(&json!("A128CBC-HS256")));

    // By value at /authorize, with each kind of key and several algs: the signed object inside is the request.
    for (alg, enc) in [("RSA-OAEP-256", "A256GCM"), ("RSA-OAEP", "A128CBC-HS256"), ("ECDH-ES", "A128GCM"), ("ECDH-ES+A256KW", "A256CBC-HS512")] {
        let jwe = encrypt_to_server(&s, alg, enc, &key.sign(&object(&s, "rp", json!({"state": alg})))).await;
        let page = crate::hybrid::sign_in(&b, &[("client_id", "rp"), ("request", &jwe)]).await;
        let p = page.redirect_params();
        assert_eq!(p.get("state").map(String::as_str), Some(alg), "{alg} {enc}: {p:?}");
        assert!(p.contains_key("code"), "{alg}: {p:?}");
    }
    // Pushed (RFC 9126): decrypted at /par, the request_uri then used.
    let jwe = encrypt_to_server(&s, "ECDH-ES+A128KW", "A128GCM", &key.sign(&object(&s, "rp", json!({"state": "pushed"})))).await;
    let res = s.http.post(s.url("/par")).basic_auth("rp", Some(&secret)).form(&[("client_id", "rp"), ("request", jwe.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let uri = res.json::<Value>().await.unwrap()["request_uri"].as_str().unwrap().to_string();
    let p = crate::hybrid::sign_in(&b, &[("client_id", "rp"), ("request_uri", &uri)]).await.redirect_params();
    assert_eq!(p["state"], "pushed");

    // Refusals, as invalid_request_object to the registered redirect URI (and at /par as JSON, 400).
    let signed = key.sign(&object(&s, "rp", json!({})));
    let (_, stranger) = authrim::keys::jwe::DecryptionKey::generate("P-256").unwrap();
    let stranger = authrim::keys::jwe::RecipientKey::from_jwk(&stranger).unwrap().unwrap();
    let to_stranger = authrim::keys::jwe::encrypt(&stranger, "ECDH-ES", "A128GCM", Some("JWT"), signed.as_bytes()).unwrap();
    let unsigned = encrypt_to_server(&s, "ECDH-ES", "A128GCM", &object(&s, "rp", json!({})).to_string()).await;
    let none = format!("{}.{}.", authrim::util::b64(br#"{"alg":"none"}"#), authrim::util::b64(object(&s, "rp", json!({})).to_string().as_bytes()));
    let unsigned_jwt = encrypt_to_server(&s, "RSA-OAEP-256", "A128GCM", &none).await;
    let valid = encrypt_to_server(&s, "ECDH-ES", "A128GCM", &signed).await;
    let mut parts: Vec<String> = valid.split('.').map(String::from).collect();
    let mut header: Value = serde_json::from_slice(&authrim::util::b64_decode(&parts[0]).unwrap()).unwrap();
    header["zip"] = "DEF".into();
    parts[0] = authrim::util::b64(header.to_string().as_bytes());
    let zipped = parts.join(".");
    let mut tampered: Vec<String> = valid.split('.').map(String::from).collect();
    tampered[3] = authrim::util::b64(b"not the ciphertext");
    let cases = [
        ("to another key", to_stranger),
        ("plain JSON inside", unsigned),
        ("alg none inside", unsigned_jwt),
        ("compressed", zipped),
        ("altered", tampered.join(".")),
        ("five parts of nothing", "a.b.c.d.e".to_string()),
    ];
    for (what, jwe) in &cases {
        let q = [("client_id", "rp"), ("response_type", "code"), ("redirect_uri", REDIRECT), ("state", "q"), ("request", jwe.as_str())];
        let p = Page::from(b.authorize(&q).await).await.redirect_params();
        assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request_object", "q"), "{what}: {p:?}");
        let res = s.http.post(s.url("/par")).basic_auth("rp", Some(&secret)).form(&[("client_id", "rp"), ("request", jwe.as_str())]).send().await.unwrap();
        assert_eq!(res.status(), 400, "{what} at /par");
        assert_eq!(res.json::<Value>().await.unwrap()["error"], "invalid_request_object", "{what} at /par");
    }

    // A client that registered encryption: a plain object is refused, and so is another alg or enc.
    let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(json!({"request_object_encryption_alg": "ECDH-ES+A256KW"}))).await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["request_object_encryption_enc"], "A128CBC-HS256", "the default enc is said");
    let q = |jwt: &str| vec![("client_id", "rp".to_string()), ("response_type", "code".into()), ("redirect_uri", REDIRECT.into()), ("state", "q".into()), ("request", jwt.to_string())];
    for (what, jwt) in [
        ("plain", signed.clone()),
        ("another alg", encrypt_to_server(&s, "ECDH-ES", "A128CBC-HS256", &signed).await),
        ("another enc", encrypt_to_server(&s, "ECDH-ES+A256KW", "A128GCM", &signed).await),
    ] {
        let q = q(&jwt);
        let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let p = Page::from(b.authorize(&q).await).await.redirect_params();
        assert_eq!(p["error"], "invalid_request_object", "{what}: {p:?}");
    }
    let jwe = encrypt_to_server(&s, "ECDH-ES+A256KW", "A128CBC-HS256", &signed).await;
    let p = crate::hybrid::sign_in(&b, &[("client_id", "rp"), ("request", &jwe)]).await.redirect_params();
    assert!(p.contains_key("code"), "{p:?}");
    // What cannot be decrypted is refused at registration.
    for bad in [json!({"request_object_encryption_alg": "RSA1_5"}), json!({"request_object_encryption_alg": "dir"}), json!({"request_object_encryption_enc": "A128GCM", "request_object_encryption_alg": ""}), json!({"request_object_encryption_enc": "A1GCM"})] {
        let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(bad.clone())).await;
        assert_eq!(st, 400, "{bad}: {body}");
    }
    let (st, _) = s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(json!({"request_object_encryption_alg": "", "request_object_encryption_enc": ""}))).await;
    assert_eq!(st, 200);
    let p = crate::hybrid::sign_in(&b, &[("client_id", "rp"), ("request", &signed)]).await.redirect_params();
    assert!(p.contains_key("code"), "cleared: plain objects again: {p:?}");
}
