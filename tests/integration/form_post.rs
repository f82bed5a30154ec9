//! `response_mode=form_post` (OAuth 2.0 Form Post Response Mode): the code, and every error
//! once the redirect URI is trusted, arrive as an auto-submitted form, never in a URL.

use crate::harness::*;
use serde_json::json;
use std::collections::HashMap;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn query<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut q = vec![
        ("response_type", "code"),
        ("client_id", "rp"),
        ("redirect_uri", REDIRECT),
        ("scope", "openid"),
        ("response_mode", "form_post"),
    ];
    for (k, v) in extra {
        q.retain(|(qk, _)| qk != k);
        q.push((k, v));
    }
    q
}

/// The page must post exactly to the redirect URI, run only the script its CSP allows, and
/// carry the values in hidden fields.
fn check_form_post_page(page: &Page) -> HashMap<String, String> {
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.location.is_none(), "a form_post response is not a redirect");
    let (action, fields) = page.form_post();
    assert_eq!(action, REDIRECT);
    assert!(page.html.contains("method=\"post\""));
    fields
}

#[tokio::test]
async fn the_code_and_state_arrive_as_a_posted_form_that_redeems() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let state = "st\"><script>alert(1)</script>";
    let res = b.authorize(&query(&[("state", state)])).await;
    let login = Page::from(res).await;
    let consent = b.post("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(consent.is_consent(), "{}", consent.html);
    let res = b.client.post(format!("{}/consent", b.base)).form(&[("challenge", consent.challenge().as_str()), ("decision", "allow")]).send().await.unwrap();
    let csp = res.headers()["content-security-policy"].to_str().unwrap().to_string();
    let cache = res.headers()["cache-control"].to_str().unwrap().to_string();
    let page = Page::from(res).await;
    let fields = check_form_post_page(&page);
    assert_eq!(fields["state"], state, "state round-trips, escaped in the page");
    assert!(!page.html.contains("<script>alert"), "state is escaped");
    assert_eq!(fields["iss"], s.issuer());
    assert_eq!(cache, "no-store");
    // The one script runs under the response's nonce; nothing else may.
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap();
    assert!(page.html.contains(&format!("<script nonce=\"{nonce}\">")));
    assert_eq!(page.html.matches("<script").count(), 1);
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{csp}");

    let (st, tok, _) = s
        .token(Some(("rp", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &fields["code"]), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!(st, 200, "{tok}");

    // Signed in and consented: the next request answers at once, still as a form.
    let page = Page::from(b.authorize(&query(&[("state", "again")])).await).await;
    let fields = check_form_post_page(&page);
    assert_eq!(fields["state"], "again");
    assert!(fields.contains_key("code"));
}

#[tokio::test]
async fn errors_after_the_redirect_uri_is_trusted_are_posted_too() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    s.client("pub", json!({"token_endpoint_auth_method": "none"})).await;
    let b = s.browser();
    // Not signed in, prompt=none.
    let page = Page::from(b.authorize(&query(&[("prompt", "none"), ("state", "s1")])).await).await;
    let fields = check_form_post_page(&page);
    assert_eq!((fields["error"].as_str(), fields["state"].as_str()), ("login_required", "s1"));
    // A bad request: a public client without PKCE.
    let page = Page::from(b.authorize(&query(&[("client_id", "pub"), ("state", "s2")])).await).await;
    let fields = check_form_post_page(&page);
    assert_eq!(fields["error"], "invalid_request");
    // PKCE present: the login page, as usual.
    let challenge = authrim::util::b64(&authrim::util::sha256(VERIFIER.as_bytes()));
    let page = Page::from(b.authorize(&query(&[("client_id", "pub"), ("code_challenge", &challenge), ("code_challenge_method", "S256")])).await).await;
    assert!(page.is_login());
    // The user denies: the refusal is posted.
    s.user("alice", json!({})).await;
    let consent = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let denied = b.post_no_follow("/consent", &[("challenge", &consent.challenge()), ("decision", "deny")]).await;
    assert_eq!(check_form_post_page(&denied)["error"], "access_denied");
}

#[tokio::test]
async fn unknown_response_modes_are_refused_in_the_default_mode_and_untrusted_uris_never_get_a_form() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    let b = s.browser();
    for mode in ["jwt.query", "JWT", "form_post.jws", "FORM_POST"] {
        let page = Page::from(b.authorize(&query(&[("response_mode", mode), ("state", "s")])).await).await;
        let p = page.redirect_params();
        assert_eq!((p["error"].as_str(), p["state"].as_str()), ("invalid_request", "s"), "{mode}");
    }
    // An unregistered redirect URI gets our error page, never a form posting to it.
    let page = Page::from(b.authorize(&query(&[("redirect_uri", "https://evil.example/cb")])).await).await;
    assert_eq!(page.status, 400);
    assert!(!page.html.contains("<form"), "{}", page.html);
    let d: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["response_modes_supported"], json!(["query", "fragment", "form_post", "jwt", "query.jwt", "fragment.jwt", "form_post.jwt"]));
}
