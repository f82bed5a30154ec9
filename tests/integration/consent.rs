//! Taking a consent back: by an operator (admin API), or by the user pressing Deny on a
//! consent page for an application they had allowed before.

use crate::harness::*;
use serde_json::json;

/// `rp` with refresh tokens, `alice` signed in with offline access; returns (browser, secret,
/// tokens).
async fn offline_grant(s: &TestServer) -> (Browser, String, serde_json::Value) {
    s.user("alice", json!({})).await;
    let (id, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[("scope", "openid offline_access")]).await["code"].clone();
    let secret = secret.unwrap();
    let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    assert!(tok["refresh_token"].is_string());
    (b, secret, tok)
}

async fn authorize_page(b: &Browser, extra: &[(&str, &str)]) -> Page {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid offline_access"), ("state", "s")];
    q.extend_from_slice(extra);
    Page::from(b.authorize(&q).await).await
}

#[tokio::test]
async fn an_operator_withdraws_a_consent_and_the_refresh_tokens_with_it() {
    let s = TestServer::start().await;
    let (b, secret, tok) = offline_grant(&s).await;
    let alice = jwt_parts(tok["id_token"].as_str().unwrap()).1["sub"].as_str().unwrap().to_string();
    assert!(authorize_page(&b, &[]).await.redirect_params().contains_key("code"), "consented: no page");

    let (st, v) = s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/consents/rp"), None).await;
    assert_eq!((st, v), (200, json!({"consent_forgotten": true, "families_revoked": 1})));
    let (st, e, _) = s.token(Some(("rp", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", tok["refresh_token"].as_str().unwrap())]).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 401, "the grant's access token too");
    assert!(authorize_page(&b, &[]).await.is_consent(), "the application must ask again");
    assert_eq!(s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/consents/rp"), None).await.0, 404);
    let audit = s.admin(reqwest::Method::GET, "/admin/audit?event=consent_withdrawn", None).await.1;
    assert_eq!(audit["events"][0]["detail"]["reason"], "operator");
}

#[tokio::test]
async fn deny_takes_back_an_earlier_consent() {
    let s = TestServer::start().await;
    let (b, secret, tok) = offline_grant(&s).await;
    let page = authorize_page(&b, &[("prompt", "consent")]).await;
    assert!(page.is_consent());
    let denied = b.post("/consent", &[("challenge", &page.challenge()), ("decision", "deny")]).await;
    assert_eq!(denied.redirect_params()["error"], "access_denied");
    let (st, _, _) = s.token(Some(("rp", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", tok["refresh_token"].as_str().unwrap())]).await;
    assert_eq!(st, 400, "the refresh token of the earlier consent is revoked");
    assert!(authorize_page(&b, &[]).await.is_consent(), "no code without asking again");
}

/// OpenID Connect Dynamic Client Registration §2: the consent page shows what the client
/// registered to be shown (its logo, home page, policy and terms), https URLs only, and its
/// CSP lets the logo's origin, and no other, serve the image.
#[tokio::test]
async fn the_consent_page_shows_the_clients_logo_and_links() {
    let s = TestServer::start().await;
    s.client(
        "shown",
        serde_json::json!({"logo_uri": "https://cdn.rp.example/logo.png", "client_uri": "https://rp.example/", "policy_uri": "https://rp.example/privacy", "tos_uri": "https://rp.example/terms"}),
    )
    .await;
    s.client("plain", serde_json::json!({"logo_uri": "http://rp.example/logo.png"})).await;
    s.user("alice", serde_json::json!({})).await;
    let consent_of = |client: &'static str| {
        let s = &s;
        async move {
            let b = s.browser();
            let q = [("response_type", "code"), ("client_id", client), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "st")];
            let login = Page::from(b.authorize(&q).await).await;
            let next = b.post_no_follow("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
            b.client.get(s.url(next.location.as_deref().unwrap())).send().await.unwrap()
        }
    };
    let res = consent_of("shown").await;
    let csp = res.headers()["content-security-policy"].to_str().unwrap().to_string();
    let page = Page::from(res).await;
    assert!(page.is_consent(), "{}", page.html);
    assert!(page.html.contains("src=\"https://cdn.rp.example/logo.png\""), "{}", page.html);
    for link in ["https://rp.example/", "https://rp.example/privacy", "https://rp.example/terms"] {
        assert!(page.html.contains(&format!("href=\"{link}\"")), "{link}: {}", page.html);
    }
    assert!(csp.contains("img-src 'self' https://cdn.rp.example;"), "{csp}");

    let res = consent_of("plain").await;
    let csp = res.headers()["content-security-policy"].to_str().unwrap().to_string();
    let page = Page::from(res).await;
    assert!(!page.html.contains("rp.example/logo.png"), "an http logo is not shown: {}", page.html);
    assert!(csp.contains("img-src 'self';"), "{csp}");
    assert!(!page.html.contains("registered itself"), "an operator's client gets no warning: {}", page.html);
}

/// RFC 7591 §5: a client that registered itself chooses its own name and logo, which can
/// imitate another's; its consent page says that nobody here checked them.
#[tokio::test]
async fn a_self_registered_clients_consent_page_says_its_name_and_logo_are_unchecked() {
    let s = TestServer::start_with(|c| c.open_registration = true).await;
    s.user("alice", serde_json::json!({})).await;
    let meta = serde_json::json!({"redirect_uris": [REDIRECT], "client_name": "Trusted Bank", "logo_uri": "https://cdn.rp.example/bank.png"});
    let reg: serde_json::Value = s.http.post(s.url("/register")).json(&meta).send().await.unwrap().json().await.unwrap();
    let client_id = reg["client_id"].as_str().expect("registered").to_string();
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", client_id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "st")];
    let login = Page::from(b.authorize(&q).await).await;
    let next = b.post_no_follow("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let page = Page::from(b.client.get(s.url(next.location.as_deref().unwrap())).send().await.unwrap()).await;
    assert!(page.is_consent(), "{}", page.html);
    assert!(page.html.contains("src=\"https://cdn.rp.example/bank.png\""), "{}", page.html);
    assert!(page.html.contains("“Trusted Bank” registered itself with this service"), "{}", page.html);
}
