//! Signed request objects (RFC 9101, OIDC Core §6.1) at `/authorize` and `/par`.

use crate::client_jwt::{jwks, Signer};
use crate::harness::*;
use serde_json::{json, Value};

fn object(s: &TestServer, client_id: &str, changes: Value) -> Value {
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
    let jwt = key.sign(&object(&s, "rp", json!({"response_type": "token"})));
    let p = Page::from(b.authorize(&[("client_id", "rp"), ("request", &jwt)]).await).await.redirect_params();
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
