//! POST /token with grant_type=authorization_code: client authentication, code handling,
//! PKCE, and the RFC 6749 §5.2 error for every bad input.

use crate::harness::*;
use authrim::util::{b64, sha256};
use serde_json::json;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

async fn setup(s: &TestServer) -> (String, String, Browser) {
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    (id, secret.unwrap(), s.browser())
}

fn redeem(code: &str) -> Vec<(&'static str, &str)> {
    vec![("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]
}

#[tokio::test]
async fn client_authentication_failures() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let (post_id, post_secret) = s.client("rp-post", json!({"token_endpoint_auth_method": "client_secret_post"})).await;
    let post_secret = post_secret.unwrap();
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let form = redeem(&code);

    let (st, body, h) = s.token(Some((&id, "wrong")), &form).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    assert!(h["www-authenticate"].to_str().unwrap().starts_with("Basic"));
    let (st, body, _) = s.token(Some(("nobody", "x")), &form).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    let (st, body, _) = s.token(None, &form).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    let mut with_id = form.clone();
    with_id.push(("client_id", &id));
    let (st, body, _) = s.token(None, &with_id).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "a confidential client may not skip authentication");
    // Registered for basic, tries post.
    let mut post = form.clone();
    post.extend([("client_id", id.as_str()), ("client_secret", secret.as_str())]);
    let (st, body, _) = s.token(None, &post).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    // Two methods at once.
    let (st, body, _) = s.token(Some((&id, &secret)), &post).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")));
    // Registered for post, tries basic.
    let (st, body, _) = s.token(Some((&post_id, &post_secret)), &form).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
    // None of that consumed the code: the right client still redeems it.
    let (st, body, _) = s.token(Some((&id, &secret)), &form).await;
    assert_eq!(st, 200, "{body}");
}

#[tokio::test]
async fn client_secret_post_works() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp-post", json!({"token_endpoint_auth_method": "client_secret_post"})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let mut form = redeem(&code);
    let secret = secret.unwrap();
    form.extend([("client_id", id.as_str()), ("client_secret", secret.as_str())]);
    let (st, body, _) = s.token(None, &form).await;
    assert_eq!(st, 200, "{body}");
}

#[tokio::test]
async fn malformed_requests() {
    let s = TestServer::start().await;
    let (id, secret, _) = setup(&s).await;
    let auth = Some((id.as_str(), secret.as_str()));
    let (st, body, _) = s.token(auth, &[("code", "x")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "missing grant_type");
    let (st, body, _) = s.token(auth, &[("grant_type", "password"), ("username", "a")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unsupported_grant_type")));
    let (st, body, _) = s.token(auth, &[("grant_type", "authorization_code"), ("redirect_uri", REDIRECT)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "missing code");
    let (st, body, _) = s.token(auth, &[("grant_type", "authorization_code"), ("code", "1_x")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "missing redirect_uri");
    let (st, body, _) = s.token(auth, &redeem("garbage")).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    let (st, body, _) = s.token(auth, &[("grant_type", "authorization_code"), ("grant_type", "authorization_code"), ("code", "x")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "repeated parameter");

    let raw = |body: String, ctype: &'static str| {
        s.http.post(s.url("/token")).basic_auth(&id, Some(&secret)).header("content-type", ctype).body(body).send()
    };
    let res = raw(r#"{"grant_type":"authorization_code"}"#.into(), "application/json").await.unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "invalid_request");
    let res = raw(format!("grant_type=authorization_code&code={}", "a".repeat(200_000)), "application/x-www-form-urlencoded").await.unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "invalid_request");
    let res = s.http.get(s.url("/token")).send().await.unwrap();
    assert_eq!(res.status(), 405);
}

#[tokio::test]
async fn code_is_bound_to_client_and_redirect_uri() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let (other, other_secret) = s.client("other", json!({})).await;
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (st, body, _) = s.token(Some((&other, other_secret.as_deref().unwrap())), &redeem(&code)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (st, body, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", "https://rp.example/other")]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
}

#[tokio::test]
async fn reused_code_fails_and_revokes_the_first_tokens() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (st, first, _) = s.token(Some((&id, &secret)), &redeem(&code)).await;
    assert_eq!(st, 200);
    let at = first["access_token"].as_str().unwrap();
    assert_eq!(s.userinfo(at).await.0, 200);
    let (st, body, _) = s.token(Some((&id, &secret)), &redeem(&code)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
    let (st, body, challenge) = s.userinfo(at).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_token")));
    assert!(challenge.unwrap().contains("invalid_token"));
}

#[tokio::test]
async fn concurrent_redemptions_issue_tokens_once() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (http, url, id, secret, code) = (s.http.clone(), s.url("/token"), id.clone(), secret.clone(), code.clone());
        set.spawn(async move {
            let res = http
                .post(url)
                .basic_auth(id, Some(secret))
                .form(&[("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)])
                .send()
                .await
                .unwrap();
            (res.status().as_u16(), res.json::<serde_json::Value>().await.unwrap())
        });
    }
    let results = set.join_all().await;
    assert_eq!(results.iter().filter(|(st, _)| *st == 200).count(), 1);
    assert!(results.iter().filter(|(st, _)| *st != 200).all(|(st, b)| *st == 400 && b["error"] == "invalid_grant"));
}

#[tokio::test]
async fn expired_code_is_invalid_grant() {
    let s = TestServer::start_with(|c| c.code_expiry = 1).await;
    let (id, secret, b) = setup(&s).await;
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (st, body, _) = s.token(Some((&id, &secret)), &redeem(&code)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
}

#[tokio::test]
async fn pkce_is_checked() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let pkce = [("code_challenge", challenge.as_str()), ("code_challenge_method", "S256")];
    let wrong = "x".repeat(43);
    for verifier in [Some(wrong.as_str()), None, Some("too-short")] {
        let code = s.code_for(&b, &id, "alice", &pkce).await["code"].clone();
        let mut form = redeem(&code);
        if let Some(v) = verifier {
            form.push(("code_verifier", v));
        }
        let (st, body, _) = s.token(Some((&id, &secret)), &form).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "verifier {verifier:?}");
    }
    // A verifier for a code issued without a challenge (downgrade).
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let mut form = redeem(&code);
    form.push(("code_verifier", VERIFIER));
    let (st, body, _) = s.token(Some((&id, &secret)), &form).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
}

#[tokio::test]
async fn public_client_with_pkce() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("spa", json!({"token_endpoint_auth_method": "none"})).await;
    assert!(secret.is_none());
    s.user("alice", json!({})).await;
    let b = s.browser();
    let challenge = b64(&sha256(VERIFIER.as_bytes()));
    let code = s.code_for(&b, &id, "alice", &[("code_challenge", &challenge), ("code_challenge_method", "S256")]).await["code"].clone();
    let mut form = redeem(&code);
    form.extend([("client_id", id.as_str()), ("code_verifier", VERIFIER)]);
    let (st, body, _) = s.token(None, &form).await;
    assert_eq!(st, 200, "{body}");
    // A public client that sends a secret is not authenticated by it.
    let (st, body, _) = s.token(None, &[("grant_type", "authorization_code"), ("code", "1_x"), ("client_id", &id), ("client_secret", "anything")]).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")));
}

#[tokio::test]
async fn deleted_user_cannot_redeem() {
    let s = TestServer::start().await;
    let (id, secret, b) = setup(&s).await;
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let users = s.admin(reqwest::Method::GET, "/admin/users", None).await.1;
    let uid = users["users"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(s.admin(reqwest::Method::DELETE, &format!("/admin/users/{uid}"), None).await.0, 204);
    let (st, body, _) = s.token(Some((&id, &secret)), &redeem(&code)).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")));
}

/// RFC 6749 §2.3.1: the Basic value is `urlencode(id):urlencode(secret)`. Split at the first
/// ':' and percent-decode; no form parsing (a secret must not end at an '&').
#[tokio::test]
async fn basic_credentials_are_percent_decoded_not_form_parsed() {
    use base64::{engine::general_purpose::STANDARD, Engine};
    let s = TestServer::start().await;
    let (id, secret) = s.client("svc&x=1+y", json!({"grant_types": ["client_credentials"], "scope": "orders:read"})).await;
    let secret = secret.unwrap();
    let send = |raw: String| {
        s.http
            .post(s.url("/token"))
            .header("authorization", format!("Basic {}", STANDARD.encode(raw)))
            .form(&[("grant_type", "client_credentials")])
            .send()
    };
    // Sent as is (most clients do not encode) and percent-encoded: the same client.
    for raw in [format!("{id}:{secret}"), format!("svc%26x%3D1%2By:{secret}")] {
        let res = send(raw.clone()).await.unwrap();
        assert_eq!(res.status(), 200, "{raw}: {}", res.text().await.unwrap());
    }
    // What a form parser would have cut down to the secret, or to another client id.
    let refused = [
        format!("{id}:{secret}&anything"),
        format!("{id}:{secret}%26anything"),
        format!("{id}:{secret}+"),
        format!("svc:{secret}"),
        // Invalid percent-encoding or not UTF-8 once decoded: refused, never a 500.
        format!("{id}:{secret}%"),
        format!("{id}:%zz{secret}"),
        format!("{id}:{secret}%FF"),
        format!("svc%C3:{secret}"),
    ];
    for raw in refused {
        let res = send(raw.clone()).await.unwrap();
        assert_eq!(res.status(), 401, "{raw}");
        assert_eq!(res.headers()["content-type"], "application/json", "{raw}");
        assert!(res.headers()["www-authenticate"].to_str().unwrap().starts_with("Basic"), "{raw}");
        assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "invalid_client", "{raw}");
    }
}
