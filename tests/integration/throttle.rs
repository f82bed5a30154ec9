//! The login throttle under attack: parallel guesses, several names for one account, and a
//! locked account that refuses even the right password.

use crate::harness::*;
use serde_json::json;

/// Post `n` sign-ins at once with the same form (a sealed form may be posted more than once),
/// returning each answer's status.
async fn parallel_logins(b: &Browser, base: &str, challenge: &str, attempts: Vec<(String, String)>) -> Vec<u16> {
    let tasks: Vec<_> = attempts
        .into_iter()
        .map(|(user, password)| {
            let client = b.client.clone();
            let url = format!("{base}/login");
            let form = vec![("challenge".to_string(), challenge.to_string()), ("username".into(), user), ("password".into(), password)];
            tokio::spawn(async move { client.post(url).form(&form).send().await.unwrap().status().as_u16() })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

async fn login_form(b: &Browser) -> String {
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid")];
    let page = Page::from(b.authorize(&q).await).await;
    assert!(page.is_login());
    page.challenge()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_guesses_are_counted_while_in_flight() {
    // Per-address limit out of the way: this is about the account's bucket.
    let s = TestServer::start_with(|c| c.login_max_failures_per_address = 10_000).await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let challenge = login_form(&b).await;
    let guesses: Vec<_> = (0..60).map(|i| ("alice".to_string(), format!("wrong-password-{i}"))).collect();
    let statuses = parallel_logins(&b, &s.url(""), &challenge, guesses).await;
    let checked = statuses.iter().filter(|&&st| st == 401).count();
    let throttled = statuses.iter().filter(|&&st| st == 429).count();
    assert!(checked <= 5, "{checked} of 60 parallel guesses had their password checked: {statuses:?}");
    assert_eq!(checked + throttled, 60, "{statuses:?}");
    // Locked: the right password is refused too, until the window has passed.
    let right = b.post("/login", &[("challenge", &challenge), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(right.status, 429, "{}", right.html);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_name_of_an_account_shares_one_bucket() {
    let s = TestServer::start_with(|c| c.login_max_failures_per_address = 10_000).await;
    s.client("rp", json!({})).await;
    s.user("bob", json!({"email": "bob@example.com"})).await;
    let b = s.browser();
    let challenge = login_form(&b).await;
    for name in ["bob", "BOB", "Bob@Example.com", "ｂｏｂ", "BOB@EXAMPLE.COM"] {
        let page = b.post("/login", &[("challenge", &challenge), ("username", name), ("password", "wrong-password")]).await;
        assert_eq!(page.status, 401, "{name}");
    }
    let page = b.post("/login", &[("challenge", &challenge), ("username", "bob"), ("password", PASSWORD)]).await;
    assert_eq!(page.status, 429, "five failures under five spellings lock the one account");
    // A name that is no account has its own bucket, and behaves the same.
    for _ in 0..5 {
        let page = b.post("/login", &[("challenge", &challenge), ("username", "nobody"), ("password", "wrong-password")]).await;
        assert_eq!(page.status, 401);
    }
    let page = b.post("/login", &[("challenge", &challenge), ("username", "NOBODY"), ("password", "wrong-password")]).await;
    assert_eq!(page.status, 429);
}
