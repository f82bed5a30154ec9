//! Demo mode: the demo client, running inside the server, signs in like a client (state,
//! nonce, PKCE), redeems its code at the token endpoint itself and shows the tokens' claims
//! and userinfo, never its secret; a callback it did not start is refused; its secret is the
//! same on every start; the banner tells the truth about the demo user's password.

use crate::harness::*;
use reqwest::redirect::Policy;

async fn demo_server() -> (TestServer, authrim::http::demo::Prepared) {
    let s = TestServer::start_with(|c| c.demo = true).await;
    let prepared = authrim::http::demo::prepare(&authrim::tenant::Issuer::default_of(&s.server.app)).await.unwrap();
    (s, prepared)
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder().redirect(Policy::none()).cookie_store(true).build().unwrap()
}

/// The demo user signs in through `/demo/start`; returns the callback URL the browser is sent to.
async fn sign_in(s: &TestServer, browser: &reqwest::Client) -> String {
    let res = browser.get(s.url("/demo/start")).send().await.unwrap();
    assert_eq!(res.status(), 303);
    let authorize = res.headers()["location"].to_str().unwrap().to_string();
    let q: std::collections::HashMap<String, String> = url::Url::parse(&s.url(&authorize)).unwrap().query_pairs().into_owned().collect();
    assert_eq!(q["code_challenge_method"], "S256");
    assert!(q.contains_key("state") && q.contains_key("nonce") && q.contains_key("code_challenge"), "{q:?}");
    let mut page = Page::from(browser.get(s.url(&authorize)).send().await.unwrap()).await;
    if page.is_login() {
        let form = [("challenge", page.challenge()), ("username", "demo".into()), ("password", "demo-password".into())];
        page = Page::from(browser.post(s.url("/login")).form(&form).send().await.unwrap()).await;
        if let Some(consent) = page.location.clone().filter(|l| l.starts_with("/consent")) {
            page = Page::from(browser.get(s.url(&consent)).send().await.unwrap()).await;
        }
    }
    if page.is_consent() {
        let form = [("challenge", page.challenge()), ("decision", "allow".into())];
        page = Page::from(browser.post(s.url("/consent")).form(&form).send().await.unwrap()).await;
    }
    let location = page.location.unwrap_or_else(|| panic!("no redirect: {}", page.html));
    assert!(location.starts_with(&format!("{}{}", s.server.app.tenants.default_tenant().issuer, "/demo/callback")), "{location}");
    location
}

#[tokio::test]
async fn the_callback_redeems_the_code_and_shows_claims_and_userinfo() {
    let (s, prepared) = demo_server().await;
    let browser = browser();
    let callback = sign_in(&s, &browser).await;
    let res = browser.get(&callback).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(!html.contains(&prepared.secret), "the page shows the client secret");
    assert!(html.contains("Demo User") && html.contains("demo@example.com"), "{html}");
    assert!(html.contains("at+jwt") || html.contains("client_id"), "no access token claims: {html}");
    assert!(html.contains("name=\"id_token_hint\"") && html.contains(&format!("value=\"{}\"", format!("{}{}", s.server.app.tenants.default_tenant().issuer, "/demo"))), "{html}");
    // The code is spent: the same callback again (its cookie gone too) is refused.
    let res = browser.get(&callback).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

#[tokio::test]
async fn a_callback_the_demo_did_not_start_is_refused() {
    let (s, prepared) = demo_server().await;
    // Someone else's browser: a genuine code and state, but not this browser's sign-in.
    let theirs = browser();
    let callback = sign_in(&s, &theirs).await;
    let res = browser().get(&callback).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = res.text().await.unwrap();
    assert!(!html.contains("Demo User") && !html.contains(&prepared.secret));
    // This browser's sign-in, with a state altered on the way: refused before the code is used.
    let mine = browser();
    let callback = sign_in(&s, &mine).await;
    let altered = callback.replace("state=", "state=x");
    assert_eq!(mine.get(&altered).send().await.unwrap().status(), 400);
    for query in ["", "?code=", "?code=1_a&code=1_b", "?error=%3Cscript%3Ealert(1)%3C/script%3E"] {
        let res = browser().get(s.url(&format!("/demo/callback{query}"))).send().await.unwrap();
        assert_eq!(res.status(), 400, "{query}");
        let html = res.text().await.unwrap();
        assert!(!html.contains("<script>alert"), "{query}: {html}");
    }
}

#[tokio::test]
async fn the_secret_is_stable_and_the_banner_tells_the_truth() {
    let (s, first) = demo_server().await;
    assert!(first.default_password);
    let again = authrim::http::demo::prepare(&authrim::tenant::Issuer::default_of(&s.server.app)).await.unwrap();
    assert_eq!(first.secret, again.secret, "the secret changed on a second start");
    // The client authenticates with it (stored hashed, checked as any client's).
    let res = s.http.post(s.url("/introspect")).basic_auth("demo-client", Some(&again.secret)).form(&[("token", "x")]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    // After a password change the banner no longer claims demo-password.
    let res = s
        .http
        .patch(s.url(&format!("/admin/users/{}", s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("demo").unwrap().id)))
        .bearer_auth(ADMIN)
        .json(&serde_json::json!({"password": "another password entirely"}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    let changed = authrim::http::demo::prepare(&authrim::tenant::Issuer::default_of(&s.server.app)).await.unwrap();
    assert!(!changed.default_password);
    assert_eq!(changed.secret, first.secret);
}
