//! Back and expiry, and no dead ends (issue 36, items 5 and 10): a consent page already
//! answered says the request is complete (Back) and issues nothing more (its form posted
//! again); a sign-in page left open past its life says so and goes on in one step, from an
//! application and from the account page; the signed-out page offers a way back; a password
//! reset asked for from an application's sign-in page resumes that request.

use crate::harness::*;
use crate::mail::{link_in, mail_server, wait_for};
use crate::passkeys::{field, get, post};
use serde_json::json;

fn query(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    q.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    q.extend_from_slice(extra);
    q
}

async fn sign_ins(s: &TestServer) -> usize {
    let (_, audit) = s.admin(reqwest::Method::GET, "/admin/audit?event=login_success", None).await;
    audit["events"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn an_answered_consent_page_is_complete_on_back_and_on_a_repost() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({"client_name": "Photos", "client_uri": "https://photos.example/"})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let consent_redirect = b.post_no_follow("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let consent_url = consent_redirect.location.clone().expect("a redirect to the consent page");
    let consent = get(&b, &consent_url).await;
    assert!(consent.is_consent(), "{}", consent.html);
    let allowed = b.post("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    let code = allowed.redirect_params()["code"].clone();

    // Back: the consent page's URL again. The request is complete: no Allow button, where to go.
    let back = get(&b, &consent_url).await;
    assert_eq!(back.status, 200, "{}", back.html);
    assert!(!back.is_consent() && back.html.contains("This request is complete"), "{}", back.html);
    assert!(back.html.contains("Photos") && back.html.contains("href=\"https://photos.example/\""), "{}", back.html);
    assert!(back.html.contains("href=\"/account\""), "{}", back.html);
    // Allow pressed again on the old page: refused as complete, no second code.
    let again = b.post_no_follow("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    assert_eq!(again.status, 409, "{}", again.html);
    assert!(again.location.is_none() && again.html.contains("This request is complete"), "{}", again.html);
    let (st, _, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "the one code still redeems: the repost revoked nothing");

    // Deny answers once too.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[("scope", "openid email")])).await).await;
    let consent = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(consent.is_consent(), "{}", consent.html);
    let denied = b.post_no_follow("/consent", &[("challenge", &consent.challenge()), ("decision", "deny")]).await;
    assert_eq!(denied.redirect_params()["error"], "access_denied");
    let again = b.post_no_follow("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    assert_eq!(again.status, 409, "{}", again.html);

    // Two Allows racing: one code.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[("scope", "openid profile")])).await).await;
    let consent = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let c = consent.challenge();
    let form = [("challenge", c.as_str()), ("decision", "allow")];
    let (x, y) = tokio::join!(b.post_no_follow("/consent", &form), b.post_no_follow("/consent", &form));
    let mut statuses = [x.status, y.status];
    statuses.sort();
    assert_eq!(statuses, [303, 409], "{} / {}", x.html, y.html);
}

/// A sign-in page left open past `challenge_ttl` starts over only for a client that still
/// has the request's redirect URI (`pages::an_expired_form_starts_over` has the rest).
#[tokio::test]
async fn an_expired_sign_in_page_starts_over_only_while_its_redirect_uri_is_registered() {
    let s = TestServer::start_with(|c| c.challenge_ttl = 1).await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    s.admin(reqwest::Method::PATCH, "/admin/clients/rp", Some(json!({"redirect_uris": ["https://elsewhere.example/cb"]}))).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let gone = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(gone.status, 400, "{}", gone.html);
}

/// The account page's sign-in, its page left open too long: one more step, and the account
/// page (its own state lived through the restart), not "You are not signed in".
#[tokio::test]
async fn the_account_sign_in_survives_an_expired_page() {
    let s = TestServer::start_with(|c| c.challenge_ttl = 1).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let login = get(&b, "/account").await;
    assert!(login.is_login(), "{}", login.html);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let again = post(&b, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(again.is_login() && again.html.contains("open too long"), "{}", again.html);
    let page = post(&b, "/login", &[("challenge", &again.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(page.html.contains("<h1>Your account</h1>"), "{} {}", page.status, page.html);
    assert_eq!(sign_ins(&s).await, 1, "the expired page signed nobody in");
}

/// Signed out from the account page: a way to sign in again and to the start page.
#[tokio::test]
async fn the_signed_out_page_has_a_way_back() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    crate::passkeys::account(&b).await;
    let confirm = get(&b, "/logout").await;
    assert_eq!(confirm.status, 200, "{}", confirm.html);
    let out = post(&b, "/logout/confirm", &[("challenge", &confirm.challenge())]).await;
    assert!(out.html.contains("You are signed out"), "{}", out.html);
    assert!(out.html.contains("id=\"sign-in-again\" href=\"/account\"") && out.html.contains("href=\"/\""), "{}", out.html);
    let login = get(&b, "/account").await;
    assert!(login.is_login(), "the link leads to a sign-in: {}", login.html);
}

/// A reset from an application's sign-in page, finished in the same browser: signed in with
/// the new password and on to the application (the consent page); from elsewhere, or without
/// a request, the page that says it is done.
#[tokio::test]
async fn a_reset_from_a_sign_in_page_resumes_its_request() {
    let (smtp_url, mail) = mail_server().await;
    let s = TestServer::start_with(|c| c.smtp_url = Some(smtp_url)).await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[])).await).await;
    let forgot_link = format!("/login/forgot?challenge={}", url::form_urlencoded::byte_serialize(login.challenge().as_bytes()).collect::<String>());
    assert!(login.html.contains(&format!("href=\"{}\"", forgot_link.replace('&', "&amp;"))), "{}", login.html);
    let form = get(&b, &forgot_link).await;
    assert_eq!(field(&form, "challenge"), login.challenge());
    let sent = post(&b, "/login/forgot", &[("form", &field(&form, "form")), ("challenge", &field(&form, "challenge")), ("login", "alice")]).await;
    assert_eq!(sent.status, 200, "{}", sent.html);
    let link = link_in(&wait_for(&mail, 1).await[0]);
    let (path, token) = (link.trim_start_matches(&s.url("")).to_string(), link.split("token=").nth(1).unwrap().to_string());
    let reset = get(&b, &path).await;
    let set = [("form", field(&reset, "form")), ("token", token.clone()), ("new_password", "a new passphrase".into()), ("confirm_password", "a new passphrase".into())];
    let form: Vec<(&str, &str)> = set.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let consent = post(&b, "/login/reset", &form).await;
    assert!(consent.is_consent(), "on with the application's request: {} {}", consent.status, consent.html);
    let done = b.post("/consent", &[("challenge", &consent.challenge()), ("decision", "allow")]).await;
    assert!(done.redirect_params().contains_key("code"));

    // Another browser opening the link (the mail read on a phone): the password is set, and
    // the page says so; the request stays with the browser that made it.
    let b = s.browser();
    let login = Page::from(b.authorize(&query(&[("prompt", "login")])).await).await;
    let form = get(&b, &format!("/login/forgot?challenge={}", url::form_urlencoded::byte_serialize(login.challenge().as_bytes()).collect::<String>())).await;
    post(&b, "/login/forgot", &[("form", &field(&form, "form")), ("challenge", &field(&form, "challenge")), ("login", "alice")]).await;
    let link = link_in(&wait_for(&mail, 2).await[1]);
    let (path, token) = (link.trim_start_matches(&s.url("")).to_string(), link.split("token=").nth(1).unwrap().to_string());
    let phone = s.browser();
    let reset = get(&phone, &path).await;
    let done = post(&phone, "/login/reset", &[("form", &field(&reset, "form")), ("token", &token), ("new_password", "third passphrase"), ("confirm_password", "third passphrase")]).await;
    assert!(done.status == 200 && done.html.contains("Your password was changed") && done.html.contains("href=\"/account\""), "{}", done.html);
    // A forged challenge is not kept: the reset page of a request-less reset.
    let form = get(&b, "/login/forgot?challenge=forged").await;
    assert!(!form.html.contains("name=\"challenge\""), "{}", form.html);
}
