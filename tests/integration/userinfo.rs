//! /userinfo as an RFC 6750 protected resource.

use crate::harness::*;
use serde_json::json;

async fn token_for(s: &TestServer, scope: &str) -> String {
    let (id, secret) = match s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client("rp") {
        Some(_) => ("rp".to_string(), None),
        None => s.client("rp", json!({})).await,
    };
    let secret = secret.unwrap_or_else(|| panic!("call once per server"));
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[("scope", scope)]).await["code"].clone();
    let (_, tok, _) = s.token(Some((&id, &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    tok["access_token"].as_str().unwrap().to_string()
}

fn alice_claims() -> serde_json::Value {
    json!({
        "name": "Alice Liddell", "given_name": "Alice", "family_name": "Liddell",
        "email": "alice@example.com", "email_verified": true,
        "address": {"country": "JP", "locality": "Tokyo"},
        "phone_number": "+81 3 1234 5678", "phone_number_verified": false
    })
}

#[tokio::test]
async fn all_scopes_by_get_post_header_and_post_body() {
    let s = TestServer::start().await;
    let sub = s.user("alice", alice_claims()).await;
    let at = token_for(&s, "openid profile email address phone").await;
    let (st, info, _) = s.userinfo(&at).await;
    assert_eq!(st, 200);
    assert_eq!(info["sub"], sub.as_str());
    assert_eq!(info["name"], "Alice Liddell");
    assert_eq!(info["preferred_username"], "alice");
    assert_eq!(info["email_verified"], true);
    assert_eq!(info["address"]["locality"], "Tokyo");
    assert_eq!(info["phone_number_verified"], false);
    let post_header = s.http.post(s.url("/userinfo")).bearer_auth(&at).send().await.unwrap();
    assert_eq!(post_header.json::<serde_json::Value>().await.unwrap(), info);
    let post_body = s.http.post(s.url("/userinfo")).form(&[("access_token", &at)]).send().await.unwrap();
    assert_eq!(post_body.json::<serde_json::Value>().await.unwrap(), info);
}

#[tokio::test]
async fn claims_follow_the_granted_scopes() {
    let s = TestServer::start().await;
    s.user("alice", alice_claims()).await;
    let at = token_for(&s, "openid email").await;
    let (_, info, _) = s.userinfo(&at).await;
    let mut keys: Vec<_> = info.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, vec!["email", "email_verified", "sub"]);
}

#[tokio::test]
async fn bad_tokens_get_bearer_challenges() {
    let s = TestServer::start_with(|c| c.access_token_ttl = 1).await;
    s.user("alice", alice_claims()).await;
    let at = token_for(&s, "openid").await;

    let res = s.http.get(s.url("/userinfo")).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(res.headers()["www-authenticate"], "Bearer realm=\"authrim\"", "no error code without credentials");

    let (st, body, ch) = s.userinfo("not.a.jwt").await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_token")));
    assert!(ch.unwrap().contains("error=\"invalid_token\""));

    // Signed by a key we do not publish.
    let (stranger, _) = authrim::keys::SigningKey::generate().unwrap();
    let (_, claims) = jwt_parts(&at);
    let forged = stranger.sign_jwt("at+jwt", &claims).unwrap();
    assert_eq!(s.userinfo(&forged).await.0, 401);

    // Sent twice: header and body.
    let res = s.http.post(s.url("/userinfo")).bearer_auth(&at).form(&[("access_token", &at)]).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<serde_json::Value>().await.unwrap()["error"], "invalid_request");

    // Our ID token is not an access token (typ JWT, not at+jwt).
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (st, body, _) = s.userinfo(&at).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_token")), "expired");
}

#[tokio::test]
async fn id_token_is_not_accepted_as_access_token() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[]).await["code"].clone();
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(s.userinfo(tok["id_token"].as_str().unwrap()).await.0, 401);
}

#[tokio::test]
async fn without_openid_scope_is_insufficient_scope() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let at = token_for(&s, "email").await;
    let (st, body, ch) = s.userinfo(&at).await;
    assert_eq!((st, body["error"].as_str()), (403, Some("insufficient_scope")));
    assert!(ch.unwrap().contains("insufficient_scope"));
}

#[tokio::test]
async fn deleted_or_disabled_user_token_is_refused() {
    let s = TestServer::start().await;
    let sub = s.user("alice", json!({})).await;
    let at = token_for(&s, "openid").await;
    let (st, _) = s.admin(reqwest::Method::PATCH, &format!("/admin/users/{sub}"), Some(json!({"disabled": true}))).await;
    assert_eq!(st, 200);
    assert_eq!(s.userinfo(&at).await.0, 401);
}
