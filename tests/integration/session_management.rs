//! OpenID Connect Session Management 1.0: `check_session_iframe` in discovery, the iframe
//! embeddable by any page, and a `session_state` in every code response that hashes the
//! client, the redirect URI's origin and the browser-state cookie as the iframe's script does
//! (the script itself runs in Chromium: tests/e2e/test_session_management.py).

use crate::harness::*;
use authrim::util::{b64, sha256};
use serde_json::{json, Value};

fn cookie_value<'a>(page: &'a Page, name: &str) -> Option<&'a str> {
    page.set_cookie.iter().find_map(|c| c.strip_prefix(&format!("{name}="))).map(|rest| rest.split(';').next().unwrap())
}

#[tokio::test]
async fn session_state_hashes_client_origin_and_browser_state_and_the_iframe_is_embeddable() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;

    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["check_session_iframe"], s.url("/session/check"));
    let frame = s.http.get(s.url("/session/check")).send().await.unwrap();
    assert_eq!(frame.status(), 200);
    assert!(frame.headers().get("x-frame-options").is_none(), "any page may embed it");
    let csp = frame.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(!csp.contains("frame-ancestors") && csp.contains("script-src 'self'"), "{csp}");
    let html = frame.text().await.unwrap();
    assert!(html.contains("src=\"/assets/check_session.js\"") && html.contains("data-cookie=\"authrim_opbs\""), "{html}");
    let js = s.http.get(s.url("/assets/check_session.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert!(js.text().await.unwrap().contains("postMessage"));

    // Sign in: the browser-state cookie comes with the session cookie, readable by scripts.
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "st")];
    let login = Page::from(b.authorize(&q).await).await;
    let signed_in = b.post_no_follow("/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let opbs = cookie_value(&signed_in, "authrim_opbs").expect("the browser-state cookie").to_string();
    let line = signed_in.set_cookie.iter().find(|c| c.starts_with("authrim_opbs=")).unwrap();
    assert!(!line.contains("HttpOnly") && !opbs.is_empty(), "{line}");
    let mut page = Page::from(b.client.get(s.url(signed_in.location.as_deref().unwrap())).send().await.unwrap()).await;
    if page.is_consent() {
        page = b.post_no_follow("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    let p = page.redirect_params();
    assert!(p.contains_key("code"));
    let (hash, salt) = p["session_state"].split_once('.').expect("hash.salt");
    assert_eq!(hash, b64(&sha256(format!("rp https://rp.example {opbs} {salt}").as_bytes())), "§3's computation");

    // The next code response (prompt=none, same session) has a fresh salt, the same state.
    let mut again = q.to_vec();
    again.push(("prompt", "none"));
    let p2 = Page::from(b.authorize(&again).await).await.redirect_params();
    let (hash2, salt2) = p2["session_state"].split_once('.').unwrap();
    assert_ne!(salt2, salt);
    assert_eq!(hash2, b64(&sha256(format!("rp https://rp.example {opbs} {salt2}").as_bytes())));

    // A sign-out clears the cookie, so the iframe says "changed".
    let ask = Page::from(b.client.get(s.url("/logout")).send().await.unwrap()).await;
    assert!(ask.html.contains("action=\"/logout/confirm\""), "{}", ask.html);
    let out = b.post_no_follow("/logout/confirm", &[("challenge", &ask.challenge())]).await;
    assert_eq!(cookie_value(&out, "authrim_opbs"), Some(""), "an empty value: {:?}", out.set_cookie);
    assert!(out.set_cookie.iter().any(|c| c.starts_with("authrim_opbs=;") && c.contains("Max-Age=0")), "{:?}", out.set_cookie);
}
