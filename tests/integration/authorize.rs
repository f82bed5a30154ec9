//! /authorize, login and consent: the happy path and every rejection.

use crate::harness::*;
use authrim::util::{b64, sha256};
use serde_json::json;

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn challenge() -> String {
    b64(&sha256(VERIFIER.as_bytes()))
}

#[tokio::test]
async fn code_flow_issues_rfc9068_access_token_and_complete_id_token() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    let sub = s.user("alice", json!({"email": "alice@example.com", "name": "Alice"})).await;
    let b = s.browser();
    let ch = challenge();
    let p = s.code_for(&b, &id, "alice", &[("code_challenge", &ch), ("code_challenge_method", "S256")]).await;
    assert_eq!(p["state"], "st-1");
    assert_eq!(p["iss"], s.issuer());
    let code = &p["code"];
    let (shard, _) = code.split_once('_').expect("codes are {shard}_{random}");
    assert!(shard.parse::<usize>().unwrap() < 8);

    let (status, tok, headers) = s
        .token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT), ("code_verifier", VERIFIER)])
        .await;
    assert_eq!(status, 200, "{tok}");
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(tok["token_type"], "Bearer");
    assert_eq!(tok["scope"], "openid profile email");
    assert_eq!(tok["expires_in"], 3600);

    let (h, at) = jwt_parts(tok["access_token"].as_str().unwrap());
    assert_eq!(h["typ"], "at+jwt");
    assert_eq!(h["alg"], "RS256");
    for claim in ["iss", "sub", "aud", "exp", "iat", "jti", "client_id", "scope", "auth_time"] {
        assert!(at.get(claim).is_some(), "access token lacks {claim}: {at}");
    }
    assert_eq!(at["sub"], sub.as_str());
    assert_eq!(at["client_id"], "rp");

    let (h, idt) = jwt_parts(tok["id_token"].as_str().unwrap());
    assert_eq!(h["alg"], "RS256");
    let jwks: serde_json::Value = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    assert_eq!(h["kid"], jwks["keys"][0]["kid"]);
    for claim in ["iss", "sub", "aud", "azp", "exp", "iat", "auth_time", "nonce", "at_hash", "sid", "acr"] {
        assert!(idt.get(claim).is_some(), "ID token lacks {claim}: {idt}");
    }
    assert_eq!(idt["iss"], s.issuer());
    assert_eq!(idt["aud"], "rp");
    assert_eq!(idt["nonce"], "n-1");
    assert_eq!(idt["sub"], sub.as_str());
    assert_eq!(idt["at_hash"], authrim::tokens::left_half_hash(tok["access_token"].as_str().unwrap()));
}

#[tokio::test]
async fn session_cookie_is_httponly_and_samesite_lax() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let res = b.authorize(&[("response_type", "code"), ("client_id", &id), ("redirect_uri", REDIRECT), ("scope", "openid")]).await;
    let page = Page::from(res).await;
    assert!(page.set_cookie.iter().any(|c| c.starts_with("authrim_browser=") && c.contains("HttpOnly") && c.contains("SameSite=Lax")));
    let page = b.post_no_follow("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let session = page.set_cookie.iter().find(|c| c.starts_with("authrim_session=")).expect("session cookie");
    assert!(session.contains("HttpOnly") && session.contains("SameSite=Lax") && !session.contains("Secure"));
}

#[tokio::test]
async fn consent_is_remembered_and_prompt_consent_asks_again() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    s.code_for(&b, &id, "alice", &[]).await;
    let q = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid profile"), ("state", "x")];
    let again = Page::from(b.authorize(&q).await).await;
    assert_eq!(again.status, 302, "a remembered consent goes straight back");
    assert!(again.redirect_params().contains_key("code"));
    let mut forced = q.to_vec();
    forced.push(("prompt", "consent"));
    assert!(Page::from(b.authorize(&forced).await).await.is_consent());
    // A wider scope than consented asks again.
    let mut wider = q.to_vec();
    wider[3] = ("scope", "openid phone");
    assert!(Page::from(b.authorize(&wider).await).await.is_consent());
}

#[tokio::test]
async fn prompt_none_login_and_max_age() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let base = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    // Not signed in: prompt=none fails with login_required, state echoed.
    let p = Page::from(b.authorize(&with(&[("prompt", "none")])).await).await.redirect_params();
    assert_eq!(p["error"], "login_required");
    assert_eq!(p["state"], "s");
    s.code_for(&b, &id, "alice", &[("scope", "openid")]).await;
    // Signed in and consented: silent authentication.
    let p = Page::from(b.authorize(&with(&[("prompt", "none")])).await).await.redirect_params();
    assert!(p.contains_key("code"), "{p:?}");
    // Signed in but this scope was never consented: consent_required.
    let mut other = with(&[("prompt", "none")]);
    other[3] = ("scope", "openid phone");
    assert_eq!(Page::from(b.authorize(&other).await).await.redirect_params()["error"], "consent_required");
    // prompt=login shows the login page despite the session.
    assert!(Page::from(b.authorize(&with(&[("prompt", "login")])).await).await.is_login());
    // max_age: a generous one passes, an exceeded one forces login (and prompt=none then fails).
    assert!(Page::from(b.authorize(&with(&[("max_age", "10000")])).await).await.redirect_params().contains_key("code"));
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert!(Page::from(b.authorize(&with(&[("max_age", "1")])).await).await.is_login());
    let p = Page::from(b.authorize(&with(&[("max_age", "1"), ("prompt", "none")])).await).await.redirect_params();
    assert_eq!(p["error"], "login_required");
}

#[tokio::test]
async fn max_age_zero_forces_a_login_even_within_the_same_second() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    s.code_for(&b, &id, "alice", &[]).await;
    let q = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid"), ("max_age", "0")];
    // Straight after the sign-in, in the same second: still a login (OIDC Core §3.1.2.1).
    let page = Page::from(b.authorize(&q).await).await;
    assert!(page.is_login(), "max_age=0 let the session through: {:?}", page.location);
    let mut none = q.to_vec();
    none.push(("prompt", "none"));
    assert_eq!(Page::from(b.authorize(&none).await).await.redirect_params()["error"], "login_required");
    // The login it asks for completes the request.
    let page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(page.redirect_params().contains_key("code"));
}

#[tokio::test]
async fn fresh_login_after_max_age_gives_new_auth_time() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    s.code_for(&b, &id, "alice", &[]).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let before = authrim::util::now();
    let p = s.code_for(&b, &id, "alice", &[("max_age", "1")]).await;
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let (_, idt) = jwt_parts(tok["id_token"].as_str().unwrap());
    assert!(idt["auth_time"].as_u64().unwrap() >= before);
}

#[tokio::test]
async fn id_token_hint_and_login_hint() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    s.user("bob", json!({})).await;
    let b = s.browser();
    let p = s.code_for(&b, &id, "alice", &[]).await;
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let alice_hint = tok["id_token"].as_str().unwrap().to_string();
    let q = |hint: &str| {
        vec![
            ("response_type", "code".to_string()), ("client_id", id.clone()), ("redirect_uri", REDIRECT.to_string()),
            ("scope", "openid profile email".to_string()), ("prompt", "none".to_string()), ("id_token_hint", hint.to_string()),
        ]
    };
    let query = |v: Vec<(&'static str, String)>| v;
    let get = |v: Vec<(&'static str, String)>| {
        let b = &b;
        async move {
            let pairs: Vec<(&str, &str)> = v.iter().map(|(k, v)| (*k, v.as_str())).collect();
            Page::from(b.authorize(&pairs).await).await
        }
    };
    // The hint names the signed-in user: silent success.
    assert!(get(query(q(&alice_hint))).await.redirect_params().contains_key("code"));
    // Bob signs in on another browser; his hint in Alice's browser means login_required.
    let bob = s.browser();
    let p = s.code_for(&bob, &id, "bob", &[]).await;
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(get(query(q(tok["id_token"].as_str().unwrap()))).await.redirect_params()["error"], "login_required");
    // A hint we did not sign is invalid_request.
    assert_eq!(get(query(q("eyJhbGciOiJub25lIn0.e30."))).await.redirect_params()["error"], "invalid_request");
    // login_hint pre-fills the login form.
    let fresh = s.browser();
    let page = Page::from(fresh.authorize(&[("response_type", "code"), ("client_id", &id), ("redirect_uri", REDIRECT), ("scope", "openid"), ("login_hint", "alice@example.com")]).await).await;
    assert!(page.html.contains("value=\"alice@example.com\""));
}

#[tokio::test]
async fn claims_parameter_and_locales_and_acr_values() {
    let s = TestServer::start().await;
    let (id, secret) = s.client("rp", json!({})).await;
    s.user("alice", json!({"email": "alice@example.com", "name": "Alice A."})).await;
    let b = s.browser();
    let claims = r#"{"userinfo":{"email":{"essential":true}},"id_token":{"name":{"essential":true}}}"#;
    let p = s
        .code_for(&b, &id, "alice", &[("scope", "openid"), ("claims", claims), ("ui_locales", "ja en"), ("claims_locales", "ja"), ("acr_values", "urn:authrim:acr:password"), ("foo", "ignored")])
        .await;
    let (_, tok, _) = s.token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &p["code"]), ("redirect_uri", REDIRECT)]).await;
    let (_, idt) = jwt_parts(tok["id_token"].as_str().unwrap());
    assert_eq!(idt["name"], "Alice A.");
    assert_eq!(idt["acr"], "urn:authrim:acr:password");
    let (status, info, _) = s.userinfo(tok["access_token"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(info["email"], "alice@example.com", "essential userinfo claim returned with scope openid only");
    assert!(info.get("name").is_none(), "profile claims need the profile scope: {info}");
}

#[tokio::test]
async fn post_authorization_request_works() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let res = b
        .client
        .post(s.url("/authorize"))
        .form(&[("response_type", "code"), ("client_id", &id), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "p")])
        .send()
        .await
        .unwrap();
    let p = b.finish_login(res, "alice", PASSWORD).await;
    assert_eq!(p["state"], "p");
    assert!(p.contains_key("code"));
}

#[tokio::test]
async fn untrusted_client_or_redirect_uri_gets_a_page_never_a_redirect() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    let b = s.browser();
    for q in [
        vec![("response_type", "code"), ("redirect_uri", REDIRECT), ("scope", "openid")],
        vec![("response_type", "code"), ("client_id", "nobody"), ("redirect_uri", REDIRECT), ("scope", "openid")],
        vec![("response_type", "code"), ("client_id", id.as_str()), ("scope", "openid")],
        vec![("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", "https://evil.example/cb"), ("scope", "openid")],
        vec![("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", "https://rp.example/cb/"), ("scope", "openid")],
        vec![("response_type", "code"), ("client_id", id.as_str()), ("client_id", id.as_str()), ("redirect_uri", REDIRECT)],
    ] {
        let page = Page::from(b.authorize(&q).await).await;
        assert_eq!(page.status, 400, "{q:?}");
        assert!(page.location.is_none(), "redirected for {q:?}");
        assert!(page.html.contains("cannot be completed"), "{}", page.html);
    }
}

#[tokio::test]
async fn invalid_requests_from_a_known_client_are_redirected_with_the_error() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    let (public, _) = s.client("spa", json!({"token_endpoint_auth_method": "none"})).await;
    let b = s.browser();
    let ch = challenge();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("scope", "openid")], "invalid_request"), // no response_type
        (vec![("response_type", "none"), ("scope", "openid")], "unsupported_response_type"),
        (vec![("response_type", "code")], "invalid_scope"),
        (vec![("response_type", "code"), ("scope", "admin")], "invalid_scope"),
        (vec![("response_type", "code"), ("scope", "openid"), ("request", "eyJ")], "invalid_request_object"),
        (vec![("response_type", "code"), ("scope", "openid"), ("request_uri", "https://rp.example/r")], "invalid_request_uri"), // not registered
        (vec![("response_type", "code"), ("scope", "openid"), ("code_challenge", &ch), ("code_challenge_method", "plain")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("code_challenge", &ch)], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("code_challenge", "short"), ("code_challenge_method", "S256")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("prompt", "none login")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("prompt", "bogus")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("max_age", "-1")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("claims", "{not json")], "invalid_request"),
        (vec![("response_type", "code"), ("scope", "openid"), ("response_mode", "jwt.query")], "invalid_request"),
    ];
    for (extra, expected) in cases {
        let mut q = vec![("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("state", "keep")];
        q.extend(extra.iter().copied());
        let p = Page::from(b.authorize(&q).await).await.redirect_params();
        assert_eq!(p["error"], expected, "{extra:?}");
        assert_eq!(p["state"], "keep");
        assert_eq!(p["iss"], s.issuer());
    }
    // A public client must use PKCE.
    let p = Page::from(b.authorize(&[("client_id", &public), ("redirect_uri", REDIRECT), ("response_type", "code"), ("scope", "openid")]).await)
        .await
        .redirect_params();
    assert_eq!(p["error"], "invalid_request");
    assert!(p["error_description"].contains("PKCE"));
}

#[tokio::test]
async fn failed_logins_say_the_same_thing_and_are_rate_limited() {
    let s = TestServer::start_with(|c| c.login_max_failures_per_account = 3).await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid")];
    let mut page = Page::from(b.authorize(&q).await).await;
    let mut messages = Vec::new();
    for (user, pw) in [("alice", "wrong password"), ("nobody", "wrong password"), ("alice", "wrong again!"), ("alice", "third time!")] {
        page = b.post("/login", &[("challenge", &page.challenge()), ("username", user), ("password", pw)]).await;
        assert_eq!(page.status, 401);
        assert!(page.is_login(), "the form is shown again");
        assert!(page.html.contains(&format!("value=\"{user}\"")), "the typed username is kept");
        messages.push(page.html.split("role=\"alert\">").nth(1).unwrap().split('<').next().unwrap().to_string());
    }
    assert_eq!(messages[0], messages[1], "an unknown user must not be distinguishable");
    // Fourth attempt on the account, even with the right password: throttled.
    page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(page.status, 429);
    assert!(page.html.contains("Too many"));
}

#[tokio::test]
async fn login_form_replay_and_forgery_are_refused() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid")];
    let page = Page::from(b.authorize(&q).await).await;
    let ch = page.challenge();
    // The same challenge posted from a browser without the login cookie (login CSRF).
    let stranger = s.browser();
    let forged = stranger.post("/login", &[("challenge", &ch), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(forged.status, 400);
    assert!(forged.location.is_none());
    // The stranger's attempt spent nothing: the browser the form was rendered for signs in.
    // (Nothing is stored for a pending sign-in, so there is nothing a stranger could burn.)
    let mut altered = ch.clone().into_bytes();
    altered[20] = if altered[20] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let tampered = b.post("/login", &[("challenge", &altered), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(tampered.status, 400, "an altered form state is refused");
    let as_consent = b.post("/consent", &[("challenge", &ch), ("decision", "allow")]).await;
    assert_eq!(as_consent.status, 400, "a login form's state is not a consent form's");
    let real = b.post("/login", &[("challenge", &ch), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(real.is_consent(), "{}", real.html);
    let missing = b.post("/login", &[("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(missing.status, 400);
    let garbage = b.post("/consent", &[("challenge", "1_nope"), ("decision", "allow")]).await;
    assert_eq!(garbage.status, 400);
}

#[tokio::test]
async fn consent_denied_returns_access_denied() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", id.as_str()), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "d")];
    let page = Page::from(b.authorize(&q).await).await;
    let page = b.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(page.is_consent());
    let p = b.post("/consent", &[("challenge", &page.challenge()), ("decision", "deny")]).await.redirect_params();
    assert_eq!(p["error"], "access_denied");
    assert_eq!(p["state"], "d");
}

/// Post-redirect-get: the login POST sends the browser to a GET of the consent page, so
/// pressing Back after consenting lands on a page, never on a form to resubmit. The consent
/// page's URL is bound to the session: useless in another browser.
#[tokio::test]
async fn the_login_redirects_to_the_consent_page_which_is_a_get() {
    let s = TestServer::start().await;
    let (id, _) = s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let page = Page::from(b.authorize(&[("response_type", "code"), ("client_id", &id), ("redirect_uri", REDIRECT), ("scope", "openid")]).await).await;
    let login = b.post_no_follow("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(login.status, 303);
    let to = login.location.clone().unwrap();
    assert!(to.starts_with("/consent?challenge="), "{to}");
    for _ in 0..2 {
        // Shown again on Back (a GET), as often as the browser asks.
        let consent = Page::from(b.client.get(s.url(&to)).send().await.unwrap()).await;
        assert!(consent.is_consent(), "{}", consent.html);
    }
    let stranger = s.browser();
    let refused = Page::from(stranger.client.get(s.url(&to)).send().await.unwrap()).await;
    assert_eq!(refused.status, 400);
    assert!(!refused.is_consent());
    let done = b.post_no_follow("/consent", &[("challenge", &Page::from(b.client.get(s.url(&to)).send().await.unwrap()).await.challenge()), ("decision", "allow")]).await;
    assert!(done.redirect_params().contains_key("code"));
}
