//! CIBA (OpenID Connect Client-Initiated Backchannel Authentication Core 1.0): the client's
//! request and every refusal of it, the user's answer on the account page (approve, deny,
//! CSRF, another user's request), polling (pending, slow_down, denied, expired, once only),
//! ping mode's notification, the ID token's claims and the bounds on waiting requests.

use crate::harness::*;
use crate::logout::eventually;
use crate::passkeys::{field, get, post};
use axum::http::StatusCode;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::Mutex;

pub(crate) const GRANT: &str = "urn:openid:params:grant-type:ciba";

/// A server with a poll interval of two seconds (two polls within a second are always too soon), `tweak` for more.
pub(crate) async fn server(postgres: bool, tweak: impl FnOnce(&mut authrim::config::Config)) -> TestServer {
    TestServer::start_on(postgres, |c| {
        c.ciba_poll_interval = 2;
        c.backchannel_logout_retry_initial = 1;
        c.backchannel_logout_timeout = 2;
        tweak(c);
    })
    .await
}

/// The poll-mode client `call` (a call centre: CIBA, the code flow for id_token_hint, refresh)
/// and the users alice and bob; returns call's secret.
pub(crate) async fn call_and_users(s: &TestServer) -> String {
    let meta = json!({
        "grant_types": [GRANT, "authorization_code", "refresh_token"],
        "backchannel_token_delivery_mode": "poll",
        "scope": "openid profile email offline_access",
    });
    let (_, secret) = s.client("call", meta).await;
    s.user("alice", json!({"email": "alice@example.com", "name": "Alice"})).await;
    s.user("bob", json!({"email": "bob@example.com"})).await;
    secret.unwrap()
}

/// POST /backchannel as `client` with Basic `secret` (or none).
pub(crate) async fn ask(s: &TestServer, client: &str, secret: Option<&str>, form: &[(&str, &str)]) -> (u16, Value) {
    let mut req = s.http.post(s.url("/backchannel")).form(form);
    if let Some(secret) = secret {
        req = req.basic_auth(client, Some(secret));
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn redeem(s: &TestServer, client: &str, secret: &str, auth_req_id: &str) -> (u16, Value) {
    let (status, body, _) = s.token(Some((client, secret)), &[("grant_type", GRANT), ("auth_req_id", auth_req_id)]).await;
    (status, body)
}

/// The account page in `b`, signed in as `username`.
pub(crate) async fn account(b: &Browser, username: &str) -> Page {
    let mut page = get(b, "/account").await;
    if page.is_login() {
        page = post(b, "/login", &[("challenge", &page.challenge()), ("username", username), ("password", PASSWORD)]).await;
    }
    assert!(page.html.contains("<h1>Your account</h1>"), "{} {}", page.status, page.html);
    page
}

/// The handles of the approval forms on the account page, in order.
pub(crate) fn handles(page: &Page) -> Vec<String> {
    page.html
        .split("action=\"/account/requests/approve\"")
        .skip(1)
        .map(|form| {
            let marker = "name=\"handle\" value=\"";
            let start = form.find(marker).expect("a handle in the form") + marker.len();
            form[start..].split('"').next().unwrap().to_string()
        })
        .collect()
}

/// The handle of the listed request whose item shows `message`.
pub(crate) fn handle_with(page: &Page, message: &str) -> String {
    let item = page.html.split("<li>").find(|li| li.contains(message) && li.contains("/account/requests/approve")).expect("the request is listed");
    let marker = "name=\"handle\" value=\"";
    let start = item.find(marker).unwrap() + marker.len();
    item[start..].split('"').next().unwrap().to_string()
}

#[tokio::test]
async fn poll_mode_from_request_to_tokens_with_every_poll_answer() {
    for postgres in [false, true] {
        let s = server(postgres, |_| {}).await;
        let secret = call_and_users(&s).await;
        let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
        assert_eq!(meta["backchannel_authentication_endpoint"], s.url("/backchannel"));
        assert_eq!(meta["backchannel_token_delivery_modes_supported"], json!(["poll", "ping", "push"]));
        assert_eq!(meta["backchannel_user_code_parameter_supported"], true);
        let algs = meta["backchannel_authentication_request_signing_alg_values_supported"].as_array().unwrap();
        assert!(algs.contains(&json!("ES256")) && algs.contains(&json!("PS256")), "{algs:?}");
        assert!(!algs.iter().any(|a| a == "none" || a.as_str().unwrap().starts_with("HS")), "asymmetric only: {algs:?}");
        assert!(meta["grant_types_supported"].as_array().unwrap().iter().any(|g| g == GRANT));

        let form = [("scope", "openid profile offline_access"), ("login_hint", "alice@example.com"), ("binding_message", "W4SCT")];
        let (status, r) = ask(&s, "call", Some(&secret), &form).await;
        assert_eq!(status, 200, "{r}");
        assert_eq!((r["expires_in"].as_u64(), r["interval"].as_u64()), (Some(300), Some(2)), "{r}");
        let id = r["auth_req_id"].as_str().unwrap();
        assert!(id.len() >= 43, "{id}");

        let (status, body) = redeem(&s, "call", &secret, id).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("authorization_pending")), "{body}");
        let (status, body) = redeem(&s, "call", &secret, id).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("slow_down")), "too soon: {body}");

        // Alice's account page lists it: the application, its message; Bob's does not.
        let phone = s.browser();
        let page = account(&phone, "alice").await;
        assert!(page.html.contains("Sign-in requests") && page.html.contains("Client call") && page.html.contains("W4SCT"), "{}", page.html);
        let listed = handles(&page);
        assert_eq!(listed.len(), 1);
        let bobs = s.browser();
        let bob_page = account(&bobs, "bob").await;
        assert!(handles(&bob_page).is_empty() && !bob_page.html.contains("W4SCT"));
        // Bob cannot answer it with its handle, nor Alice without the form's CSRF token.
        let refused = bobs.post_no_follow("/account/requests/approve", &[("csrf", &field(&bob_page, "csrf")), ("handle", &listed[0])]).await;
        assert_eq!(refused.status, 303);
        let forged = phone.post_no_follow("/account/requests/approve", &[("csrf", "forged"), ("handle", &listed[0])]).await;
        assert_eq!(forged.status, 400, "{}", forged.html);
        assert_eq!(handles(&account(&phone, "alice").await).len(), 1, "still waiting");

        let done = post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &listed[0])]).await;
        assert!(done.html.contains("The sign-in request was approved"), "{}", done.html);
        assert!(handles(&done).is_empty());
        let (_, events) = s.admin(reqwest::Method::GET, "/admin/audit?event=ciba_approved", None).await;
        assert!(events.to_string().contains("W4SCT"), "audited with its message: {events}");

        // Another client cannot redeem it; the right one gets the tokens, once.
        let (_, other) = s.client("other", json!({"grant_types": [GRANT], "backchannel_token_delivery_mode": "poll", "redirect_uris": []})).await;
        let (status, body) = redeem(&s, "other", other.as_deref().unwrap(), id).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
        let (status, tokens) = redeem(&s, "call", &secret, id).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["scope"], "openid profile offline_access");
        let (_, idt) = jwt_parts(tokens["id_token"].as_str().unwrap());
        assert_eq!((idt["aud"].as_str(), idt["acr"].as_str()), (Some("call"), Some("urn:authrim:acr:password")), "{idt}");
        assert!(idt["auth_time"].as_u64().is_some() && idt.get("nonce").is_none(), "{idt}");
        let (status, info, _) = s.userinfo(tokens["access_token"].as_str().unwrap()).await;
        assert_eq!((status, info["name"].as_str()), (200, Some("Alice")), "{info}");
        let refresh = tokens["refresh_token"].as_str().expect("offline_access gives a refresh token");
        let (status, refreshed, _) = s.token(Some(("call", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
        assert_eq!(status, 200, "{refreshed}");
        let (status, body) = redeem(&s, "call", &secret, id).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "once only: {body}");
        let (status, body) = redeem(&s, "call", &secret, "forged-id").await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    }
}

#[tokio::test]
async fn denied_and_expired_requests_are_told_so() {
    let s = server(false, |_| {}).await;
    let secret = call_and_users(&s).await;
    let (_, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("binding_message", "DENY-ME")]).await;
    let denied = r["auth_req_id"].as_str().unwrap().to_string();
    let (_, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("requested_expiry", "999999")]).await;
    assert_eq!(r["expires_in"], 1800, "cut to ciba_max_request_ttl: {r}");

    let phone = s.browser();
    let page = account(&phone, "alice").await;
    let listed = handles(&page);
    assert_eq!(listed.len(), 2, "{}", page.html);
    let done = post(&phone, "/account/requests/deny", &[("csrf", &field(&page, "csrf")), ("handle", &handle_with(&page, "DENY-ME"))]).await;
    assert!(done.html.contains("The sign-in request was denied"), "{}", done.html);
    let (status, body) = redeem(&s, "call", &secret, &denied).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("access_denied")), "{body}");

    // A request of one second, asked for after the page's sign-in (which takes longer than a
    // second on a loaded machine), expires before its first poll.
    let (_, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("requested_expiry", "1")]).await;
    assert_eq!(r["expires_in"], 1, "{r}");
    let expiring = r["auth_req_id"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    let (status, body) = redeem(&s, "call", &secret, &expiring).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("expired_token")), "{body}");
    assert_eq!(handles(&account(&phone, "alice").await).len(), 1, "an expired request is no longer listed");
}

#[tokio::test]
async fn every_refused_request_gets_the_error_the_spec_lists() {
    let s = server(false, |_| {}).await;
    let secret = call_and_users(&s).await;
    let ok = [("scope", "openid"), ("login_hint", "alice")];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut f: Vec<(&str, &str)> = ok.to_vec();
        for (k, v) in extra {
            f.retain(|(fk, _)| fk != k);
            f.push((k, v));
        }
        f
    };
    let cases: Vec<(Vec<(&str, &str)>, u16, &str)> = vec![
        (with(&[("scope", "profile")]), 400, "invalid_scope"),
        (vec![("login_hint", "alice")], 400, "invalid_request"),
        (vec![("scope", "openid")], 400, "invalid_request"),
        (with(&[("id_token_hint", "x")]), 400, "invalid_request"),
        (vec![("scope", "openid"), ("login_hint_token", "x")], 400, "invalid_request"),
        (with(&[("login_hint", "nobody")]), 400, "unknown_user_id"),
        (with(&[("binding_message", "a message far longer than the sixty-four characters a small screen can show")]), 400, "invalid_binding_message"),
        (with(&[("binding_message", "two\nlines")]), 400, "invalid_binding_message"),
        (with(&[("user_code", "1234")]), 400, "invalid_user_code"),
        (with(&[("requested_expiry", "soon")]), 400, "invalid_request"),
        (with(&[("requested_expiry", "0")]), 400, "invalid_request"),
        (with(&[("acr_values", "urn:example:unknown")]), 400, "invalid_request"),
        (with(&[("request", "eyJhbGciOiJub25lIn0.e30.")]), 400, "invalid_request"),
        (vec![("scope", "openid"), ("id_token_hint", "not.a.jwt")], 400, "invalid_request"),
    ];
    for (form, status, error) in cases {
        let (st, body) = ask(&s, "call", Some(&secret), &form).await;
        assert_eq!((st, body["error"].as_str()), (status, Some(error)), "{form:?}: {body}");
    }
    // Client authentication as at /token.
    let (st, body) = ask(&s, "call", None, &[("scope", "openid"), ("login_hint", "alice"), ("client_id", "call")]).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    let (st, body) = ask(&s, "call", Some("wrong"), &ok).await;
    assert_eq!((st, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    // A client not registered for the grant.
    let (_, web) = s.client("web", json!({})).await;
    let (st, body) = ask(&s, "web", web.as_deref(), &ok).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");
    // A disabled user is nobody.
    let carol = s.user("carol", json!({})).await;
    let (st, _) = s.admin(reqwest::Method::PATCH, &format!("/admin/users/{carol}"), Some(json!({"disabled": true}))).await;
    assert_eq!(st, 200);
    let (st, body) = ask(&s, "call", Some(&secret), &with(&[("login_hint", "carol")])).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("unknown_user_id")), "{body}");

    // Registration: CIBA clients are confidential and name a mode this server offers.
    for (meta, why) in [
        (json!({"grant_types": [GRANT], "redirect_uris": []}), "no mode"),
        (json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "push"}), "push without an endpoint"),
        (
            json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "push", "backchannel_client_notification_endpoint": "https://rp.example/cb", "dpop_bound_access_tokens": true}),
            "push of bound tokens",
        ),
        (json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "pull"}), "an unknown mode"),
        (json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "ping"}), "ping without an endpoint"),
        (json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "poll", "token_endpoint_auth_method": "none"}), "public"),
        (
            json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": "http://rp.example/cb"}),
            "plain http",
        ),
    ] {
        let mut body = meta.clone();
        body["client_id"] = json!(format!("bad-{}", why.replace(' ', "-")));
        let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
        assert_eq!(st, 400, "{why}: {v}");
    }
}

#[tokio::test]
async fn an_id_token_hint_names_the_user_it_was_issued_for_and_only_to_that_client() {
    let s = server(false, |_| {}).await;
    let secret = call_and_users(&s).await;
    let b = s.browser();
    let code = s.code_for(&b, "call", "alice", &[]).await["code"].clone();
    let (st, tok, _) = s.token(Some(("call", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    let hint = tok["id_token"].as_str().unwrap();
    let (st, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("id_token_hint", hint)]).await;
    assert_eq!(st, 200, "{r}");
    assert_eq!(handles(&account(&s.browser(), "alice").await).len(), 1);
    // Another CIBA client presenting call's ID token.
    let (_, other) = s.client("other", json!({"grant_types": [GRANT], "backchannel_token_delivery_mode": "poll", "redirect_uris": []})).await;
    let (st, body) = ask(&s, "other", other.as_deref(), &[("scope", "openid"), ("id_token_hint", hint)]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
    // An altered one.
    let mut parts: Vec<String> = hint.split('.').map(str::to_string).collect();
    parts[2] = parts[2].chars().rev().collect();
    let (st, body) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("id_token_hint", &parts.join("."))]).await;
    assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "{body}");
}

/// A ping (or push) receiver: what it was sent (the Authorization header and the JSON body).
pub(crate) async fn ping_receiver() -> (String, Arc<Mutex<Vec<(String, Value)>>>) {
    receiver_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap())
}

/// A receiver on `listener`, for a test that brings it up late.
pub(crate) fn receiver_on(listener: tokio::net::TcpListener) -> (String, Arc<Mutex<Vec<(String, Value)>>>) {
    let got: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let url = format!("http://{}/cb/ciba", listener.local_addr().unwrap());
    let seen = got.clone();
    let app = axum::Router::new().route(
        "/cb/ciba",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let seen = seen.clone();
            async move {
                let auth = headers.get("authorization").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
                assert_eq!(headers["content-type"], "application/json");
                seen.lock().await.push((auth, serde_json::from_str(&body).unwrap()));
                StatusCode::NO_CONTENT
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

#[tokio::test]
async fn ping_mode_tells_the_client_then_it_redeems() {
    for postgres in [false, true] {
        let s = server(postgres, |_| {}).await;
        call_and_users(&s).await;
        let (url, got) = ping_receiver().await;
        let meta = json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": url});
        let (_, secret) = s.client("bank", meta).await;
        let secret = secret.unwrap();
        let (st, body) = ask(&s, "bank", Some(&secret), &[("scope", "openid"), ("login_hint", "alice")]).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "ping needs a client_notification_token: {body}");
        let token = "8d67dc78-7faa-4d41-aabd-67707b374255";
        let (st, r) = ask(&s, "bank", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", token)]).await;
        assert_eq!(st, 200, "{r}");
        let id = r["auth_req_id"].as_str().unwrap();
        // A ping client may poll too.
        let (st, body) = redeem(&s, "bank", &secret, id).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("authorization_pending")), "{body}");
        assert!(got.lock().await.is_empty(), "no ping before the user answers");

        let phone = s.browser();
        let page = account(&phone, "alice").await;
        post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;
        eventually("the ping", || async { !got.lock().await.is_empty() }).await;
        let (auth, body) = got.lock().await[0].clone();
        assert_eq!(auth, format!("Bearer {token}"));
        assert_eq!(body, json!({"auth_req_id": id}));
        let (st, tokens) = redeem(&s, "bank", &secret, id).await;
        assert_eq!(st, 200, "{tokens}");
        assert!(tokens["id_token"].is_string());
        // Delivered once: the outbox row is gone.
        tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
        assert_eq!(got.lock().await.len(), 1);
    }
}

/// A ping the client refuses with a 4xx is not sent again (CIBA Core §10.2 leaves 4xx to the
/// OP; the FAPI-CIBA plan's `…-response-401-and-require-server-does-not-retry`), nor one
/// answered with a redirect (which the client must not send, §10.2: not followed); a 5xx is
/// retried; either way the client can still redeem the answer.
#[tokio::test]
async fn a_ping_refused_with_4xx_is_not_retried() {
    for (answer, retried) in [(401u16, false), (403, false), (301, false), (503, true)] {
        let s = server(false, |c| c.backchannel_logout_retry_initial = 1).await;
        call_and_users(&s).await;
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/cb/ciba", listener.local_addr().unwrap());
        let seen = calls.clone();
        let app = axum::Router::new().route(
            "/cb/ciba",
            axum::routing::post(move || {
                let seen = seen.clone();
                async move {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    StatusCode::from_u16(answer).unwrap()
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let meta = json!({"grant_types": [GRANT], "redirect_uris": [], "backchannel_token_delivery_mode": "ping", "backchannel_client_notification_endpoint": url});
        let (_, secret) = s.client("bank", meta).await;
        let secret = secret.unwrap();
        let (st, r) = ask(&s, "bank", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", "token-0123456789")]).await;
        assert_eq!(st, 200, "{r}");
        let phone = s.browser();
        let page = account(&phone, "alice").await;
        post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;
        eventually("the ping", || async { calls.load(std::sync::atomic::Ordering::SeqCst) > 0 }).await;
        if retried {
            eventually("the ping again", || async { calls.load(std::sync::atomic::Ordering::SeqCst) > 1 }).await;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(3_500)).await;
            assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "a {answer} is final");
        }
        let (st, tokens) = redeem(&s, "bank", &secret, r["auth_req_id"].as_str().unwrap()).await;
        assert_eq!(st, 200, "{tokens}");
    }
}

#[tokio::test]
async fn waiting_requests_are_bounded_per_client_and_in_all() {
    let s = server(false, |c| {
        c.ciba_max_pending_per_client = 2;
        c.ciba_max_pending = 3;
    })
    .await;
    let secret = call_and_users(&s).await;
    let (_, other) = s.client("other", json!({"grant_types": [GRANT], "backchannel_token_delivery_mode": "poll", "redirect_uris": []})).await;
    let form = [("scope", "openid"), ("login_hint", "alice")];
    for _ in 0..2 {
        assert_eq!(ask(&s, "call", Some(&secret), &form).await.0, 200);
    }
    let (st, body) = ask(&s, "call", Some(&secret), &form).await;
    assert_eq!((st, body["error"].as_str()), (503, Some("temporarily_unavailable")), "per client: {body}");
    assert_eq!(ask(&s, "other", other.as_deref(), &form).await.0, 200);
    let (st, body) = ask(&s, "other", other.as_deref(), &form).await;
    assert_eq!((st, body["error"].as_str()), (503, Some("temporarily_unavailable")), "in all: {body}");
    // An answered request frees its place.
    let phone = s.browser();
    let page = account(&phone, "alice").await;
    post(&phone, "/account/requests/deny", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;
    assert_eq!(ask(&s, "call", Some(&secret), &form).await.0, 200);
}

#[tokio::test]
async fn a_user_with_an_address_is_mailed_a_link_to_the_account_page() {
    let (smtp_url, mail) = crate::mail::mail_server().await;
    let s = server(false, |c| c.smtp_url = Some(smtp_url)).await;
    let secret = call_and_users(&s).await;
    let (st, r) = ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("binding_message", "W4SCT")]).await;
    assert_eq!(st, 200, "{r}");
    let got = crate::mail::wait_for(&mail, 1).await;
    let message = got[0].replace("=\r\n", "").replace("=\n", "").replace("=3D", "=");
    assert!(message.contains("alice@example.com") && message.contains("Client call") && message.contains("W4SCT"), "{message}");
    assert_eq!(crate::mail::link_in(&message), format!("{}#requests", s.url("/account")), "{message}");
    assert!(!message.contains(r["auth_req_id"].as_str().unwrap()), "the client's secret is not mailed: {message}");
}

#[tokio::test]
async fn a_push_service_hook_is_sent_a_notice_without_the_clients_secret() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/push", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = got.clone();
    let app = axum::Router::new().route(
        "/push",
        axum::routing::post(move |body: String| {
            let seen = seen.clone();
            async move {
                seen.lock().await.push(serde_json::from_str(&body).unwrap());
                StatusCode::ACCEPTED
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let s = server(false, |c| c.ciba_notify_hook_url = Some(url)).await;
    let secret = call_and_users(&s).await;
    let (st, r) = ask(&s, "call", Some(&secret), &[("scope", "openid profile"), ("login_hint", "alice"), ("binding_message", "W4SCT")]).await;
    assert_eq!(st, 200, "{r}");
    eventually("the notice", || async { !got.lock().await.is_empty() }).await;
    let notice = got.lock().await[0].clone();
    assert_eq!((notice["event"].as_str(), notice["username"].as_str()), (Some("ciba_request"), Some("alice")), "{notice}");
    assert_eq!((notice["client_name"].as_str(), notice["binding_message"].as_str()), (Some("Client call"), Some("W4SCT")), "{notice}");
    assert_eq!(notice["answer_at"], format!("{}#requests", s.url("/account")));
    assert!(!notice.to_string().contains(r["auth_req_id"].as_str().unwrap()), "{notice}");
    // A request refused (no user) notifies nobody.
    ask(&s, "call", Some(&secret), &[("scope", "openid"), ("login_hint", "nobody")]).await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    assert_eq!(got.lock().await.len(), 1);
}
