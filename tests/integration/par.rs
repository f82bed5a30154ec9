//! Pushed authorization requests (RFC 9126): `/par` checks and keeps the request, `/authorize`
//! takes it once by its `request_uri`, and clients (or the server) can require it.

use crate::client_jwt::{Signer, ASSERTION_TYPE};
use crate::harness::*;
use serde_json::{json, Value};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn challenge() -> String {
    authrim::util::b64(&authrim::util::sha256(VERIFIER.as_bytes()))
}

async fn push(s: &TestServer, auth: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = s.http.post(s.url("/par")).form(form);
    if let Some((id, secret)) = auth {
        req = req.basic_auth(id, Some(secret));
    }
    let res = req.send().await.unwrap();
    let (status, headers) = (res.status().as_u16(), res.headers().clone());
    (status, res.json().await.unwrap_or(Value::Null), headers)
}

fn request<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut q = vec![("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid profile"), ("state", "pushed-state"), ("nonce", "n")];
    for (k, v) in extra {
        q.retain(|(qk, _)| qk != k);
        q.push((k, v));
    }
    q
}

#[tokio::test]
async fn a_pushed_request_is_used_once_and_only_its_own_parameters_count() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let (st, body, h) = push(&s, Some(("rp", &secret)), &request(&[])).await;
    assert_eq!(st, 201, "{body}");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(body["expires_in"], 90);
    let uri = body["request_uri"].as_str().unwrap().to_string();
    assert!(uri.starts_with("urn:ietf:params:oauth:request_uri:"), "{uri}");

    // Loading the page again before signing in is fine: the request_uri is used when its code
    // is issued, not when a page is shown (a reload, Back).
    let early = s.browser();
    assert!(Page::from(early.authorize(&[("client_id", "rp"), ("request_uri", &uri)]).await).await.is_login());
    // Parameters beside client_id and request_uri are ignored: the code goes where the pushed
    // request said, with its state and scope.
    let b = s.browser();
    let res = b
        .authorize(&[("client_id", "rp"), ("request_uri", &uri), ("redirect_uri", "https://evil.example/cb"), ("state", "evil"), ("scope", "openid email")])
        .await;
    let p = b.finish_login(res, "alice", PASSWORD).await;
    assert_eq!(p["state"], "pushed-state");
    let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(tok["scope"], "openid profile");

    // Used: no second code for it, in this browser (signed in: refused at once) or in the
    // one that loaded the page before (refused when its sign-in would issue the code).
    let p = Page::from(b.authorize(&[("client_id", "rp"), ("request_uri", &uri)]).await).await.redirect_params();
    assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request_uri", "pushed-state"), "{p:?}");
    assert!(!p.contains_key("code"));
    let page = Page::from(early.authorize(&[("client_id", "rp"), ("request_uri", &uri)]).await).await;
    let p = early.finish_login(early.authorize(&[("client_id", "rp"), ("request_uri", &uri)]).await, "alice", PASSWORD).await;
    assert!(page.is_login() && p["error"] == "invalid_request_uri" && !p.contains_key("code"), "{p:?}");
    // Nor is one we never issued, or one without client_id.
    for q in [vec![("client_id", "rp"), ("request_uri", "urn:ietf:params:oauth:request_uri:1_nope")], vec![("client_id", "rp"), ("request_uri", "https://rp.example/req.jwt")]] {
        assert_eq!(Page::from(b.authorize(&q).await).await.status, 400);
    }
    let (_, body, _) = push(&s, Some(("rp", &secret)), &request(&[])).await;
    let uri = body["request_uri"].as_str().unwrap().to_string();
    assert_eq!(Page::from(b.authorize(&[("request_uri", uri.as_str())]).await).await.status, 400);

    // Another client presenting it: refused (the request is sealed to the client that pushed
    // it). Nothing is written for the refusal, so the rightful client can still use it.
    s.client("rp2", json!({})).await;
    let (_, body, _) = push(&s, Some(("rp", &secret)), &request(&[])).await;
    let uri = body["request_uri"].as_str().unwrap().to_string();
    assert_eq!(Page::from(b.authorize(&[("client_id", "rp2"), ("request_uri", &uri)]).await).await.status, 400);
    assert!(Page::from(s.browser().authorize(&[("client_id", "rp"), ("request_uri", &uri)]).await).await.is_login());
    // Any altered character: refused.
    let mut altered = uri.clone().into_bytes();
    let i = altered.len() - 5;
    altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    assert_eq!(Page::from(b.authorize(&[("client_id", "rp"), ("request_uri", &altered)]).await).await.status, 400);
}

#[tokio::test]
async fn the_par_endpoint_checks_the_request_and_answers_errors_as_json() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.client("pub", json!({"token_endpoint_auth_method": "none"})).await;
    let auth = Some(("rp", secret.as_str()));
    let c = challenge();
    for (what, auth, form, status, code) in [
        ("no client authentication", None, request(&[]), 401, "invalid_client"),
        ("a wrong secret", Some(("rp", "wrong")), request(&[]), 401, "invalid_client"),
        ("an unregistered redirect_uri", auth, request(&[("redirect_uri", "https://evil.example/cb")]), 400, "invalid_request"),
        ("a request_uri inside", auth, request(&[("request_uri", "urn:ietf:params:oauth:request_uri:x")]), 400, "invalid_request"),
        ("another response_type", auth, request(&[("response_type", "token")]), 400, "unsupported_response_type"),
        ("no scope we know", auth, request(&[("scope", "admin")]), 400, "invalid_scope"),
        ("plain PKCE", auth, request(&[("code_challenge", &c), ("code_challenge_method", "plain")]), 400, "invalid_request"),
        ("another client's id", auth, request(&[("client_id", "pub")]), 400, "invalid_request"),
    ] {
        let (st, body, _) = push(&s, auth, &form).await;
        assert_eq!((st, body["error"].as_str()), (status, Some(code)), "{what}: {body}");
    }
    // A public client pushes too, with PKCE, naming itself.
    let (st, body, _) = push(&s, None, &request(&[("client_id", "pub")])).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "public clients need PKCE: {body}");
    let (st, body, _) = push(&s, None, &request(&[("client_id", "pub"), ("code_challenge", &c), ("code_challenge_method", "S256")])).await;
    assert_eq!(st, 201, "{body}");
    // GET is not the way.
    assert_eq!(s.http.get(s.url("/par")).send().await.unwrap().status(), 405);
}

#[tokio::test]
async fn private_key_jwt_clients_push_with_an_assertion_for_the_par_url() {
    let s = TestServer::start().await;
    let key = Signer::es256("k");
    s.client("keyed", json!({"token_endpoint_auth_method": "private_key_jwt", "jwks": crate::client_jwt::jwks(&[&key])})).await;
    for (aud, status) in [(s.url("/par"), 201), (s.issuer(), 201), (s.url("/introspect"), 401)] {
        let a = key.assertion("keyed", &aud, json!({}));
        let mut form = request(&[]);
        form.extend([("client_assertion_type", ASSERTION_TYPE), ("client_assertion", a.as_str())]);
        let (st, body, _) = push(&s, None, &form).await;
        assert_eq!(st, status, "aud {aud}: {body}");
    }
}

#[tokio::test]
async fn a_client_or_the_server_can_require_pushed_requests() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("strict", json!({"require_pushed_authorization_requests": true})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let mut q = request(&[]);
    q.push(("client_id", "strict"));
    let p = Page::from(b.authorize(&q).await).await.redirect_params();
    assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request", "pushed-state"));
    let (st, body, _) = push(&s, Some(("strict", secret.as_deref().unwrap())), &request(&[])).await;
    assert_eq!(st, 201, "{body}");
    let res = b.authorize(&[("client_id", "strict"), ("request_uri", body["request_uri"].as_str().unwrap())]).await;
    assert!(b.finish_login(res, "alice", PASSWORD).await.contains_key("code"));

    let s = TestServer::start_with(|c| c.require_pushed_authorization_requests = true).await;
    s.client("rp", json!({})).await;
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["require_pushed_authorization_requests"], true);
    assert_eq!(d["pushed_authorization_request_endpoint"], s.url("/par"));
    let mut q = request(&[]);
    q.push(("client_id", "rp"));
    let p = Page::from(s.browser().authorize(&q).await).await.redirect_params();
    assert_eq!(p["error"], "invalid_request");
}

#[tokio::test]
async fn pushed_requests_expire_and_nothing_is_stored_for_them() {
    let s = TestServer::start_with(|c| c.pushed_request_ttl = 2).await;
    s.client("pub", json!({"token_endpoint_auth_method": "none"})).await;
    let c = challenge();
    let form = request(&[("client_id", "pub"), ("code_challenge", &c), ("code_challenge_method", "S256")]);
    let held = || s.server.app.stores.challenges.shard_lens().iter().sum::<usize>();
    let before = held();
    let mut uris = Vec::new();
    for _ in 0..50 {
        let (st, body, _) = push(&s, None, &form).await;
        assert_eq!(st, 201, "{body}");
        uris.push(body["request_uri"].as_str().unwrap().to_string());
    }
    assert_eq!(held(), before, "a push stores nothing");
    // The newest: fifty pushes take a while on a loaded machine, and lifetimes are whole seconds.
    let newest = uris.last().unwrap();
    assert!(Page::from(s.browser().authorize(&[("client_id", "pub"), ("request_uri", newest)]).await).await.is_login());
    tokio::time::sleep(std::time::Duration::from_millis(3100)).await;
    let page = Page::from(s.browser().authorize(&[("client_id", "pub"), ("request_uri", newest)]).await).await;
    assert_eq!(page.status, 400, "expired");
}

/// The request pushed is bounded as /authorize's is (`max_authorization_request_bytes`,
/// client authentication not counted), with 413 beyond (RFC 9126 §2.3).
#[tokio::test]
async fn a_pushed_request_is_bounded_in_size() {
    let s = TestServer::start_with(|c| c.max_authorization_request_bytes = 2_048).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let big = "s".repeat(2_100);
    let (st, body, _) = push(&s, Some(("rp", &secret)), &request(&[("state", &big)])).await;
    assert_eq!((st, body["error"].as_str()), (413, Some("invalid_request")), "{body}");
    // Client authentication in the form does not count toward it: a request of exactly the
    // bound, with a client_secret beside it.
    let (_, post_secret) = s.client("post", json!({"token_endpoint_auth_method": "client_secret_post"})).await;
    let post_secret = post_secret.unwrap();
    let without_state = serde_urlencoded::to_string(request(&[("client_id", "post"), ("state", "")])).unwrap().len();
    let fits = "s".repeat(2_048 - without_state);
    let mut form = request(&[("client_id", "post"), ("state", &fits)]);
    assert_eq!(serde_urlencoded::to_string(&form).unwrap().len(), 2_048);
    form.push(("client_secret", post_secret.as_str()));
    let (st, body, _) = push(&s, None, &form).await;
    assert_eq!(st, 201, "{body}");
}
