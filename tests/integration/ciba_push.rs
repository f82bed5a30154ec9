//! CIBA push mode (CIBA Core §10.3): the tokens (or the denial, or the expiry) POSTed to the
//! client's notification endpoint with its bearer token, through the back-channel outbox; the
//! pushed ID token's `auth_req_id`, `at_hash` and `rt_hash`; `/token` refusing push ids; the
//! queued delivery surviving a restart, sealed.

use crate::ciba::{account, ask, handle_with, handles, ping_receiver, receiver_on, redeem, server, GRANT};
use crate::harness::*;
use crate::logout::eventually;
use crate::passkeys::{field, post};
use authrim::util::b64;
use serde_json::{json, Value};

const TOKEN: &str = "f6f4b4a0-8c39-4a38-8d5e-9b3f0c0e7d21";

/// The push client `shop` (refresh tokens too), sending to `url`; returns its secret.
async fn shop(s: &TestServer, url: &str) -> String {
    let meta = json!({
        "grant_types": [GRANT, "refresh_token"], "redirect_uris": [], "scope": "openid profile offline_access",
        "backchannel_token_delivery_mode": "push", "backchannel_client_notification_endpoint": url,
    });
    s.client("shop", meta).await.1.unwrap()
}

/// OIDC Core §3.1.3.6's left half of the SHA-256 of `token`, base64url (our ID tokens are
/// signed with a SHA-256 algorithm unless the client asks otherwise).
fn half_hash(token: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    b64(&digest.as_ref()[..16])
}

#[tokio::test]
async fn push_mode_sends_the_tokens_with_the_bearer_and_token_refuses_the_id() {
    for postgres in [false, true] {
        let s = server(postgres, |_| {}).await;
        s.user("alice", json!({"name": "Alice"})).await;
        let (url, got) = ping_receiver().await;
        let secret = shop(&s, &url).await;
        let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
        assert_eq!(meta["backchannel_token_delivery_modes_supported"], json!(["poll", "ping", "push"]));

        let form = [("scope", "openid profile offline_access"), ("login_hint", "alice"), ("binding_message", "PUSH-1")];
        let (st, body) = ask(&s, "shop", Some(&secret), &form).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_request")), "push needs a client_notification_token: {body}");
        let mut with_token = form.to_vec();
        with_token.push(("client_notification_token", TOKEN));
        let (st, r) = ask(&s, "shop", Some(&secret), &with_token).await;
        assert_eq!(st, 200, "{r}");
        assert!(r.get("interval").is_none(), "a push client does not poll: {r}");
        let id = r["auth_req_id"].as_str().unwrap().to_string();
        let (st, body) = redeem(&s, "shop", &secret, &id).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "no polling in push mode: {body}");

        let phone = s.browser();
        let page = account(&phone, "alice").await;
        assert!(page.html.contains("PUSH-1"));
        let done = post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;
        assert!(done.html.contains("The sign-in request was approved"), "{}", done.html);
        eventually("the pushed tokens", || async { !got.lock().await.is_empty() }).await;
        let (auth, tokens) = got.lock().await[0].clone();
        assert_eq!(auth, format!("Bearer {TOKEN}"));
        assert_eq!(tokens["auth_req_id"], id.as_str(), "{tokens}");
        assert_eq!((tokens["token_type"].as_str(), tokens["scope"].as_str()), (Some("Bearer"), Some("openid profile offline_access")), "{tokens}");
        assert!(tokens["expires_in"].as_u64().is_some(), "{tokens}");
        let (access, refresh) = (tokens["access_token"].as_str().unwrap(), tokens["refresh_token"].as_str().expect("offline_access: a refresh token"));

        let (header, idt) = jwt_parts(tokens["id_token"].as_str().unwrap());
        assert!(header["alg"].as_str().unwrap().ends_with("256"), "{header}");
        assert_eq!(idt["urn:openid:params:jwt:claim:auth_req_id"], id.as_str(), "{idt}");
        assert_eq!(idt["at_hash"], half_hash(access), "{idt}");
        assert_eq!(idt["urn:openid:params:jwt:claim:rt_hash"], half_hash(refresh), "{idt}");
        assert_eq!((idt["aud"].as_str(), idt.get("nonce")), (Some("shop"), None), "{idt}");

        // The pushed tokens are real ones.
        let (st, info, _) = s.userinfo(access).await;
        assert_eq!((st, info["name"].as_str()), (200, Some("Alice")), "{info}");
        let (st, refreshed, _) = s.token(Some(("shop", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
        assert_eq!(st, 200, "{refreshed}");
        let (_, again) = jwt_parts(refreshed["id_token"].as_str().unwrap());
        assert!(again.get("urn:openid:params:jwt:claim:auth_req_id").is_none(), "only the pushed ID token names the request: {again}");
        // Still no redeeming, and the push went once.
        let (st, body) = redeem(&s, "shop", &secret, &id).await;
        assert_eq!((st, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
        assert_eq!(got.lock().await.len(), 1);
        let (_, events) = s.admin(reqwest::Method::GET, "/admin/audit?event=ciba_push_delivered", None).await;
        assert_eq!(events["events"].as_array().unwrap().len(), 1, "{events}");
    }
}

#[tokio::test]
async fn a_denied_or_lapsed_push_request_is_told_with_the_error() {
    for postgres in [false, true] {
        let s = server(postgres, |_| {}).await;
        s.user("alice", json!({})).await;
        let (url, got) = ping_receiver().await;
        let secret = shop(&s, &url).await;
        let ask_for = |message: &'static str, expiry: &'static str| {
            vec![("scope", "openid"), ("login_hint", "alice"), ("binding_message", message), ("client_notification_token", TOKEN), ("requested_expiry", expiry)]
        };
        // Signed in first: on a busy machine a sign-in (the password's hash) can outlast the
        // lapsing request's one second.
        let phone = s.browser();
        account(&phone, "alice").await;
        let (_, denied) = ask(&s, "shop", Some(&secret), &ask_for("DENY-ME", "300")).await;
        let page = account(&phone, "alice").await;
        assert_eq!(handles(&page).len(), 1, "{}", page.html);
        post(&phone, "/account/requests/deny", &[("csrf", &field(&page, "csrf")), ("handle", &handle_with(&page, "DENY-ME"))]).await;
        eventually("the denial", || async { !got.lock().await.is_empty() }).await;
        let (auth, body) = got.lock().await[0].clone();
        assert_eq!(auth, format!("Bearer {TOKEN}"));
        assert_eq!((body["auth_req_id"].as_str(), body["error"].as_str()), (denied["auth_req_id"].as_str(), Some("access_denied")), "{body}");
        assert!(body.get("access_token").is_none() && body.get("id_token").is_none(), "{body}");

        // Another lapses unanswered: the sweep tells the client, once.
        let (_, lapsing) = ask(&s, "shop", Some(&secret), &ask_for("LAPSE", "1")).await;
        tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
        s.server.app.stores.sweep_expired().await.unwrap();
        s.server.app.stores.sweep_expired().await.unwrap();
        eventually("the expiry", || async { got.lock().await.len() == 2 }).await;
        let (auth, body) = got.lock().await[1].clone();
        assert_eq!(auth, format!("Bearer {TOKEN}"));
        assert_eq!((body["auth_req_id"].as_str(), body["error"].as_str()), (lapsing["auth_req_id"].as_str(), Some("expired_token")), "{body}");
        tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
        assert_eq!(got.lock().await.len(), 2, "told once");
        assert!(handles(&account(&phone, "alice").await).is_empty());
    }
}

/// A push the client refuses with a 4xx is not sent again (as a ping, CIBA Core §10.3), one
/// answered 503 is; the refusal is audited as abandoned.
#[tokio::test]
async fn a_push_refused_with_4xx_is_not_retried() {
    for (answer, retried) in [(401u16, false), (404, false), (503, true)] {
        let s = server(false, |c| c.backchannel_logout_retry_initial = 1).await;
        s.user("alice", json!({})).await;
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/cb/push", listener.local_addr().unwrap());
        let seen = calls.clone();
        let app = axum::Router::new().route(
            "/cb/push",
            axum::routing::post(move || {
                let seen = seen.clone();
                async move {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    axum::http::StatusCode::from_u16(answer).unwrap()
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let secret = shop(&s, &url).await;
        let (st, r) = ask(&s, "shop", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", TOKEN)]).await;
        assert_eq!(st, 200, "{r}");
        let phone = s.browser();
        let page = account(&phone, "alice").await;
        post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;
        let count = || calls.load(std::sync::atomic::Ordering::SeqCst);
        eventually("the push", || async { count() > 0 }).await;
        if retried {
            eventually("the push again", || async { count() > 1 }).await;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(3_500)).await;
            assert_eq!(count(), 1, "a {answer} is final");
            let (_, events) = s.admin(reqwest::Method::GET, "/admin/audit?event=ciba_push_abandoned", None).await;
            assert_eq!(events["events"].as_array().unwrap().len(), 1, "{events}");
        }
    }
}

#[tokio::test]
async fn a_queued_push_survives_a_restart_sealed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener); // the client is down when the user approves
    let s = server(false, |c| c.backchannel_logout_max_attempts = 100).await;
    s.user("alice", json!({})).await;
    let secret = shop(&s, &format!("http://{addr}/cb/ciba")).await;
    let (st, r) = ask(&s, "shop", Some(&secret), &[("scope", "openid"), ("login_hint", "alice"), ("client_notification_token", TOKEN)]).await;
    assert_eq!(st, 200, "{r}");
    let phone = s.browser();
    let page = account(&phone, "alice").await;
    post(&phone, "/account/requests/approve", &[("csrf", &field(&page, "csrf")), ("handle", &handles(&page)[0])]).await;

    let TestServer { server, dir, .. } = s;
    server.stop().await.unwrap();
    let db = rusqlite::Connection::open(authrim::db::db_path(dir.path())).unwrap();
    let payload: Vec<u8> = db.query_row("SELECT payload FROM logout_outbox WHERE kind = 'ciba_push'", [], |r| r.get(0)).expect("the push is queued");
    let text = String::from_utf8_lossy(&payload);
    assert!(!text.contains(TOKEN) && !text.contains("eyJ") && !text.contains("auth_req_id"), "sealed: {text}");
    // As if the process had died in the middle of a delivery: the row is leased for an hour.
    db.execute("UPDATE logout_outbox SET lease_until = ?1", [authrim::util::now() as i64 + 3600]).unwrap();
    drop(db);

    let (_, got) = receiver_on(tokio::net::TcpListener::bind(addr).await.unwrap());
    let mut config = test_config(dir.path());
    config.backchannel_logout_retry_initial = 1;
    let _s = TestServer::start_in(dir, config).await;
    eventually("the push after the restart", || async { !got.lock().await.is_empty() }).await;
    let (auth, body) = got.lock().await[0].clone();
    assert_eq!(auth, format!("Bearer {TOKEN}"));
    assert_eq!(body["auth_req_id"], r["auth_req_id"]);
    assert!(body["access_token"].is_string() && body["id_token"].is_string(), "{body}");
}
