//! What the OpenID Foundation's FAPI-CIBA plan (`fapi-ciba-id1-test-plan`) found beyond CIBA
//! itself: the protected resource's `x-fapi-interaction-id` (FAPI 1.0 Part 1 §6.2.1 item 11).

use crate::harness::*;
use serde_json::json;

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
