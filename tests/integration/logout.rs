//! Sessions and logout: RP-Initiated Logout (hint, redirect, confirmation, refusals), what a
//! logout revokes and what it leaves, Back-Channel Logout delivery (token claims, retries, a
//! slow, failing and unreachable receiver, a restart), Front-Channel iframes, and operators
//! ending sessions.

use crate::harness::*;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

const BACK: &str = "https://rp.example/logged-out";

/// What a relying party's back-channel endpoint does with each POST.
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    Ok,
    /// 500 on the first attempt, 200 afterwards.
    FailOnce,
    /// Holds the request far longer than the server waits.
    Slow,
}

#[derive(Default)]
pub(crate) struct Received {
    pub tokens: Vec<String>,
    attempts: usize,
    /// A slow request is being held right now.
    holding: bool,
}

pub(crate) struct Receiver {
    pub url: String,
    pub got: Arc<Mutex<Received>>,
}

pub(crate) async fn receiver(mode: Mode) -> Receiver {
    receiver_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), mode)
}

fn receiver_on(listener: tokio::net::TcpListener, mode: Mode) -> Receiver {
    let got = Arc::new(Mutex::new(Received::default()));
    let url = format!("http://{}/backchannel", listener.local_addr().unwrap());
    let state = (got.clone(), mode);
    let app = axum::Router::new()
        .route(
            "/backchannel",
            axum::routing::post(
                |State((got, mode)): State<(Arc<Mutex<Received>>, Mode)>, headers: axum::http::HeaderMap, body: String| async move {
                    assert_eq!(headers["content-type"], "application/x-www-form-urlencoded");
                    let form: std::collections::HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                    let attempt = {
                        let mut g = got.lock().await;
                        g.attempts += 1;
                        g.attempts
                    };
                    match mode {
                        Mode::FailOnce if attempt == 1 => return StatusCode::INTERNAL_SERVER_ERROR,
                        Mode::Slow => {
                            got.lock().await.holding = true;
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                        _ => {}
                    }
                    got.lock().await.tokens.push(form["logout_token"].clone());
                    StatusCode::OK
                },
            ),
        )
        .with_state(state);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Receiver { url, got }
}

/// Fast retries, a short delivery timeout, few attempts: the test's clock.
pub(crate) fn quick(c: &mut authrim::config::Config) {
    c.backchannel_logout_retry_initial = 1;
    c.backchannel_logout_timeout = 1;
    c.backchannel_logout_max_attempts = 3;
}

/// A client with a post-logout URI (and `extra`), a signed-in `alice` who used it; returns
/// the browser and the token response.
pub(crate) async fn signed_in(s: &TestServer, b: &Browser, client: &str, extra: Value) -> (String, Value) {
    let mut meta = json!({"post_logout_redirect_uris": [BACK]});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        meta[k] = v;
    }
    let (id, secret) = s.client(client, meta).await;
    let code = s.code_for(b, &id, "alice", &[]).await["code"].clone();
    let (st, tok, _) = s
        .token(Some((&id, secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!(st, 200, "{tok}");
    (secret.unwrap(), tok)
}

async fn logout(b: &Browser, query: &[(&str, &str)]) -> Page {
    Page::from(b.client.get(format!("{}/logout", b.base)).query(query).send().await.unwrap()).await
}

/// `prompt=none` for `client`: a code if the browser still has a session, else the error.
pub(crate) async fn silent(b: &Browser, client: &str) -> std::collections::HashMap<String, String> {
    let res = b
        .authorize(&[("response_type", "code"), ("client_id", client), ("redirect_uri", REDIRECT), ("scope", "openid"), ("prompt", "none"), ("state", "s")])
        .await;
    Page::from(res).await.redirect_params()
}

pub(crate) async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn discovery_advertises_logout() {
    let s = TestServer::start().await;
    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["end_session_endpoint"], s.url("/logout"));
    for f in ["backchannel_logout_supported", "backchannel_logout_session_supported", "frontchannel_logout_supported", "frontchannel_logout_session_supported"] {
        assert_eq!(d[f], true, "{f}");
    }
}

#[tokio::test]
async fn a_hint_ends_the_session_at_once_and_its_tokens_with_it() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (secret, tok) = signed_in(&s, &b, "rp", json!({})).await;
    let (id_token, access) = (tok["id_token"].as_str().unwrap(), tok["access_token"].as_str().unwrap());
    assert!(jwt_parts(id_token).1["sid"].is_string());
    assert_eq!(s.userinfo(access).await.0, 200);
    assert!(silent(&b, "rp").await.contains_key("code"), "signed in before");

    let state = "a \"tricky\" &state=<x>#%";
    let page = logout(&b, &[("id_token_hint", id_token), ("post_logout_redirect_uri", BACK), ("state", state)]).await;
    assert_eq!(page.status, 302, "{}", page.html);
    let to = url::Url::parse(page.location.as_deref().unwrap()).unwrap();
    assert_eq!(&to[..url::Position::AfterPath], BACK);
    let params: Vec<(String, String)> = to.query_pairs().into_owned().collect();
    assert_eq!(params, [("state".to_string(), state.to_string())], "state, and nothing else");
    assert!(page.set_cookie.iter().any(|c| c.starts_with("authrim_session=;") && c.contains("Max-Age=0")));

    assert_eq!(silent(&b, "rp").await["error"], "login_required");
    assert_eq!(s.userinfo(access).await.0, 401, "the session's access token is dead");
    let res = s.http.post(s.url("/introspect")).basic_auth("rp", Some(&secret)).form(&[("token", access)]).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"active": false}));
    let audit = s.admin(reqwest::Method::GET, "/admin/audit?event=logout", None).await.1;
    assert_eq!(audit["events"][0]["detail"]["clients"], json!(["rp"]));
}

#[tokio::test]
async fn offline_access_outlives_the_session() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (id, secret) = s.client("rp", json!({"post_logout_redirect_uris": [BACK], "grant_types": ["authorization_code", "refresh_token"]})).await;
    let code = s.code_for(&b, &id, "alice", &[("scope", "openid offline_access")]).await["code"].clone();
    let auth = Some((id.as_str(), secret.as_deref().unwrap()));
    let (_, tok, _) = s.token(auth, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let refresh = tok["refresh_token"].as_str().expect("offline access gives a refresh token");
    assert_eq!(logout(&b, &[("id_token_hint", tok["id_token"].as_str().unwrap())]).await.status, 200);

    let (st, next, _) = s.token(auth, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!(st, 200, "OpenID Connect Core §11: offline access survives logout: {next}");
    assert_eq!(s.userinfo(next["access_token"].as_str().unwrap()).await.0, 200);
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 200, "its access tokens too");
}

#[tokio::test]
async fn an_expired_hint_still_signs_out() {
    let s = TestServer::start_with(|c| c.id_token_ttl = 1).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp", json!({})).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let page = logout(&b, &[("id_token_hint", tok["id_token"].as_str().unwrap()), ("post_logout_redirect_uri", BACK)]).await;
    assert_eq!(page.status, 302, "{}", page.html);
    assert_eq!(page.location.as_deref(), Some(BACK), "no state sent, none added");
    assert_eq!(silent(&b, "rp").await["error"], "login_required");
}

#[tokio::test]
async fn bad_requests_get_a_page_and_never_a_redirect() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp", json!({})).await;
    s.client("other", json!({"post_logout_redirect_uris": ["https://other.example/bye"]})).await;
    let hint = tok["id_token"].as_str().unwrap();
    let mut tampered = hint.to_string();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let (h, c) = jwt_parts(hint);
    let unsigned = {
        use base64::Engine;
        let e = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.", e(&json!({"alg": "none", "typ": h["typ"]})), e(&c))
    };
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("tampered hint", vec![("id_token_hint", &tampered), ("post_logout_redirect_uri", BACK)]),
        ("unsigned hint", vec![("id_token_hint", &unsigned), ("post_logout_redirect_uri", BACK)]),
        ("unregistered URI", vec![("id_token_hint", hint), ("post_logout_redirect_uri", "https://rp.example/elsewhere")]),
        ("registered URI plus a query", vec![("id_token_hint", hint), ("post_logout_redirect_uri", "https://rp.example/logged-out?x=1")]),
        ("another client's URI", vec![("id_token_hint", hint), ("post_logout_redirect_uri", "https://other.example/bye")]),
        ("client_id not the hint's", vec![("id_token_hint", hint), ("client_id", "other"), ("post_logout_redirect_uri", "https://other.example/bye")]),
        ("URI without a client", vec![("post_logout_redirect_uri", BACK)]),
        ("unknown client", vec![("client_id", "nobody"), ("post_logout_redirect_uri", BACK)]),
    ];
    for (what, q) in cases {
        let page = logout(&b, &q).await;
        assert_eq!(page.status, 400, "{what}: {}", page.html);
        assert!(page.location.is_none(), "{what}: redirected to {:?}", page.location);
        assert!(silent(&b, "rp").await.contains_key("code"), "{what}: the session must survive");
    }
}

#[tokio::test]
async fn without_a_hint_the_user_confirms_with_a_form_bound_to_the_session() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    s.user("mallory", json!({})).await;
    let b = s.browser();
    signed_in(&s, &b, "rp", json!({})).await;
    let page = logout(&b, &[("client_id", "rp"), ("post_logout_redirect_uri", BACK), ("state", "st")]).await;
    assert_eq!(page.status, 200);
    assert!(page.html.contains("action=\"/logout/confirm\""), "{}", page.html);
    let challenge = page.challenge();
    assert!(silent(&b, "rp").await.contains_key("code"), "asking is not signing out");

    // Another signed-in browser cannot use alice's form (CSRF): refused, its session intact.
    let other = s.browser();
    s.code_for(&other, "rp", "mallory", &[]).await;
    let refused = other.post("/logout/confirm", &[("challenge", &challenge)]).await;
    assert_eq!(refused.status, 400);
    assert!(refused.location.is_none());
    assert!(silent(&other, "rp").await.contains_key("code"));
    // A forged form is refused too.
    assert_eq!(b.post("/logout/confirm", &[("challenge", "forged")]).await.status, 400);

    let done = b.post("/logout/confirm", &[("challenge", &challenge)]).await;
    assert_eq!(done.status, 303, "{}", done.html);
    assert_eq!(done.location.as_deref(), Some(format!("{BACK}?state=st").as_str()));
    assert_eq!(silent(&b, "rp").await["error"], "login_required");
    // A hint for another user than the one signed in also asks first.
    let (_, tok) = signed_in(&s, &other, "rp2", json!({})).await;
    let again = logout(&b, &[("id_token_hint", tok["id_token"].as_str().unwrap())]).await;
    assert_eq!(again.status, 200, "no session here: nothing to confirm, signed out page");
    assert!(again.html.contains("signed out"));
}

#[tokio::test]
async fn logout_tokens_reach_every_client_whatever_the_others_do() {
    let (ok, flaky, slow) = (receiver(Mode::Ok).await, receiver(Mode::FailOnce).await, receiver(Mode::Slow).await);
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/backchannel", l.local_addr().unwrap())
    };
    let s = TestServer::start_with(quick).await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp-ok", json!({"backchannel_logout_uri": ok.url, "backchannel_logout_session_required": true})).await;
    signed_in(&s, &b, "rp-flaky", json!({"backchannel_logout_uri": flaky.url})).await;
    signed_in(&s, &b, "rp-slow", json!({"backchannel_logout_uri": slow.url})).await;
    signed_in(&s, &b, "rp-dead", json!({"backchannel_logout_uri": dead})).await;
    signed_in(&s, &b, "rp-quiet", json!({})).await;
    let id_claims = jwt_parts(tok["id_token"].as_str().unwrap()).1;

    let page = logout(&b, &[("id_token_hint", tok["id_token"].as_str().unwrap()), ("post_logout_redirect_uri", BACK)]).await;
    assert_eq!(page.status, 302, "the user's logout does not wait for any relying party");

    eventually("the healthy and the flaky client's tokens", || async {
        ok.got.lock().await.tokens.len() == 1 && flaky.got.lock().await.tokens.len() == 1
    })
    .await;
    assert_eq!(flaky.got.lock().await.attempts, 2, "retried after the 500");
    assert!(slow.got.lock().await.holding, "the slow client was tried, and held nobody up");

    // The token, checked as a relying party would (Back-Channel Logout 1.0 §2.4, §2.6).
    let token = ok.got.lock().await.tokens[0].clone();
    let (header, claims) = jwt_parts(&token);
    assert_eq!(header["typ"], "logout+jwt");
    let jwks: jsonwebtoken::jwk::JwkSet = s.http.get(s.url("/jwks")).send().await.unwrap().json().await.unwrap();
    let key = jsonwebtoken::DecodingKey::from_jwk(jwks.find(header["kid"].as_str().unwrap()).unwrap()).unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&["rp-ok"]);
    v.set_issuer(&[s.issuer()]);
    v.set_required_spec_claims(&["iss", "aud", "iat", "exp"]);
    jsonwebtoken::decode::<Value>(&token, &key, &v).expect("verifies against our JWKS");
    assert_eq!(claims["sid"], id_claims["sid"]);
    assert_eq!(claims["sub"], id_claims["sub"]);
    assert!(claims["jti"].is_string());
    assert_eq!(claims["events"], json!({"http://schemas.openid.net/event/backchannel-logout": {}}));
    assert!(claims.get("nonce").is_none());
    let (iat, exp) = (claims["iat"].as_u64().unwrap(), claims["exp"].as_u64().unwrap());
    assert!(exp > iat && exp - iat <= 120);

    // The unreachable and the slow client are given up after their attempts, audited.
    eventually("both abandoned", || async {
        let v = s.admin(reqwest::Method::GET, "/admin/audit?event=backchannel_logout_abandoned", None).await.1;
        v["events"].as_array().map(|e| e.len()) == Some(2)
    })
    .await;
    let metrics = s.http.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    // Metrics are per process, and other tests here deliver too: at least this test's counts.
    let count = |outcome: &str| -> u64 {
        let prefix = format!("authrim_backchannel_logouts_total{{outcome=\"{outcome}\"}} ");
        metrics.lines().find_map(|l| l.strip_prefix(prefix.as_str())).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
    };
    assert!(count("delivered") >= 2 && count("abandoned") >= 2 && count("retry") >= 1, "{metrics}");
    let delivered = s.admin(reqwest::Method::GET, "/admin/audit?event=backchannel_logout_delivered", None).await.1;
    assert_eq!(delivered["events"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_queued_logout_token_is_delivered_after_a_restart() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener); // down while the user signs out
    let s = TestServer::start_with(|c| {
        quick(c);
        c.backchannel_logout_max_attempts = 100;
    })
    .await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp", json!({"backchannel_logout_uri": format!("http://{addr}/backchannel")})).await;
    assert_eq!(logout(&b, &[("id_token_hint", tok["id_token"].as_str().unwrap())]).await.status, 200);
    let TestServer { server, dir, .. } = s;
    server.stop().await.unwrap();
    // As if the process had died in the middle of a delivery: the row is leased for an hour.
    let db = rusqlite::Connection::open(authrim::db::db_path(dir.path())).unwrap();
    let leased = db.execute("UPDATE logout_outbox SET lease_until = ?1", [authrim::util::now() as i64 + 3600]).unwrap();
    assert_eq!(leased, 1, "the token is still queued");
    drop(db);

    let rp = receiver_on(tokio::net::TcpListener::bind(addr).await.unwrap(), Mode::Ok);
    let mut config = test_config(dir.path());
    quick(&mut config);
    let _s = TestServer::start_in(dir, config).await;
    eventually("delivery after the restart", || async { rp.got.lock().await.tokens.len() == 1 }).await;
    assert_eq!(jwt_parts(&rp.got.lock().await.tokens[0]).1["sid"], jwt_parts(tok["id_token"].as_str().unwrap()).1["sid"]);
}

#[tokio::test]
async fn the_logout_page_loads_front_channel_iframes_then_moves_on() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp", json!({"frontchannel_logout_uri": "https://rp.example/fc?x=1", "frontchannel_logout_session_required": true})).await;
    signed_in(&s, &b, "rp2", json!({"frontchannel_logout_uri": "https://two.example/fc"})).await;
    let sid = jwt_parts(tok["id_token"].as_str().unwrap()).1["sid"].as_str().unwrap().to_string();
    let res = b.client.get(format!("{}/logout", s.url(""))).query(&[("id_token_hint", tok["id_token"].as_str().unwrap()), ("post_logout_redirect_uri", BACK), ("state", "z")]).send().await.unwrap();
    let csp = res.headers()["content-security-policy"].to_str().unwrap().to_string();
    let page = Page::from(res).await;
    assert_eq!(page.status, 200);
    let iss = url::form_urlencoded::byte_serialize(s.issuer().as_bytes()).collect::<String>();
    for frame in [format!("https://rp.example/fc?x=1&amp;iss={iss}&amp;sid={sid}"), format!("https://two.example/fc?iss={iss}&amp;sid={sid}")] {
        assert!(page.html.contains(&format!("<iframe src=\"{frame}\"")), "{frame} in {}", page.html);
    }
    assert!(page.html.contains(&format!("href=\"{BACK}?state=z\"")));
    assert!(csp.contains("frame-src https://rp.example https://two.example"), "{csp}");
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap();
    assert!(page.html.contains(&format!("<script nonce=\"{nonce}\">")));
    assert_eq!(silent(&b, "rp").await["error"], "login_required");
}

#[tokio::test]
async fn operators_list_and_end_sessions_with_the_same_notifications() {
    let rp = receiver(Mode::Ok).await;
    let s = TestServer::start_with(quick).await;
    let alice = s.user("alice", json!({})).await;
    let (b1, b2) = (s.browser(), s.browser());
    let (_, tok) = signed_in(&s, &b1, "rp", json!({"backchannel_logout_uri": rp.url})).await;
    s.code_for(&b2, "rp", "alice", &[]).await;
    let (st, v) = s.admin(reqwest::Method::GET, &format!("/admin/users/{alice}/sessions"), None).await;
    assert_eq!(st, 200);
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0]["clients"], json!(["rp"]));
    assert!(sessions[0]["address"].as_str().unwrap().starts_with("127.0.0.1"));

    let sid = jwt_parts(tok["id_token"].as_str().unwrap()).1["sid"].as_str().unwrap().to_string();
    let (st, _) = s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/sessions/{sid}"), None).await;
    assert_eq!(st, 204);
    assert_eq!(silent(&b1, "rp").await["error"], "login_required");
    assert!(silent(&b2, "rp").await.contains_key("code"), "only that session");
    assert_eq!(s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/sessions/{sid}"), None).await.0, 404);
    let (st, v) = s.admin(reqwest::Method::DELETE, &format!("/admin/users/{alice}/sessions"), None).await;
    assert_eq!((st, v["ended"].as_u64()), (200, Some(1)));
    assert_eq!(silent(&b2, "rp").await["error"], "login_required");
    eventually("a logout token per ended session", || async { rp.got.lock().await.tokens.len() == 2 }).await;
    let ops = s.admin(reqwest::Method::GET, "/admin/audit?event=logout", None).await.1;
    assert!(ops["events"].as_array().unwrap().iter().all(|e| e["detail"]["by"] == "operator"));
}

/// The CLI reaches sessions through the running server's admin API (they live in its memory).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_lists_and_ends_sessions_through_the_server() {
    let s = TestServer::start().await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let b = s.browser();
    let (_, tok) = signed_in(&s, &b, "rp", json!({})).await;
    let sid = jwt_parts(tok["id_token"].as_str().unwrap()).1["sid"].as_str().unwrap().to_string();
    let cli = |args: &'static [&'static str]| {
        let (dir, issuer) = (s.dir.path().to_path_buf(), s.issuer());
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_authrim"))
                .args(args)
                .env("AUTHRIM_DATA_DIR", dir)
                .env("AUTHRIM_ISSUER", issuer)
                .env("AUTHRIM_ADMIN_TOKEN", ADMIN)
                .env_remove("AUTHRIM_CONFIG")
                .output()
                .unwrap()
        })
    };
    let listed = cli(&["session", "list", "alice@example.com"]).await.unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let v: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(v["sessions"][0]["sid"], sid.as_str());
    let ended = cli(&["session", "end", "alice"]).await.unwrap();
    assert!(ended.status.success(), "{}", String::from_utf8_lossy(&ended.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&ended.stdout).unwrap()["ended"], 1);
    assert_eq!(silent(&b, "rp").await["error"], "login_required");
    let again = cli(&["withdraw-consent", "alice", "rp"]).await.unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let none = cli(&["withdraw-consent", "alice", "rp"]).await.unwrap();
    assert!(!none.status.success(), "nothing left to withdraw: an error");
}

/// Issue 30, defect 3 (blind SSRF): a client whose `backchannel_logout_uri` (and
/// `frontchannel_logout_uri`) names a loopback address, with `fetch_allow_private_addresses`
/// off. The admin API and registration refuse it (`invalid_client_metadata`); put in the
/// registry past them (as a client saved before the policy, or edited in the database
/// would be), its logout token is not POSTed there, the row is abandoned at once and
/// audited, and the logout page renders no iframe for it.
#[tokio::test]
async fn logout_never_reaches_a_private_address() {
    let internal = receiver(Mode::Ok).await;
    let internal_url = internal.url.replace("/backchannel", "/internal-admin/backchannel");
    let s = TestServer::start_with(|c| {
        quick(c);
        c.fetch_allow_private_addresses = false;
        c.open_registration = true;
    })
    .await;
    s.user("alice", json!({})).await;
    let meta = json!({"client_id": "rp-internal", "redirect_uris": [REDIRECT], "post_logout_redirect_uris": [BACK], "backchannel_logout_uri": internal.url});
    let (st, v) = s.admin(reqwest::Method::POST, "/admin/clients", Some(meta.clone())).await;
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    let res = s.http.post(s.url("/register")).json(&json!({"redirect_uris": [REDIRECT], "backchannel_logout_uri": internal_url})).send().await.unwrap();
    let (st, v): (u16, Value) = (res.status().as_u16(), res.json().await.unwrap());
    assert_eq!((st, v["error"].as_str()), (400, Some("invalid_client_metadata")), "{v}");
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).client("rp-internal").is_none());

    // Past the checks, straight into the registry.
    let input = authrim::registry::ClientInput {
        client_id: Some("rp-internal".into()),
        redirect_uris: Some(vec![REDIRECT.into()]),
        post_logout_redirect_uris: Some(vec![BACK.into()]),
        // The receiver's own path, so that a POST that reached it would be counted.
        backchannel_logout_uri: Some(internal.url.clone()),
        frontchannel_logout_uri: Some(internal.url.replace("/backchannel", "/frontchannel")),
        ..Default::default()
    };
    let (client, secret) = authrim::registry::clients::new_client(input, s.server.app.vault()).unwrap();
    s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).save_client(client).await.unwrap();
    let b = s.browser();
    let code = s.code_for(&b, "rp-internal", "alice", &[]).await["code"].clone();
    let (st, tok, _) = s
        .token(Some(("rp-internal", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)])
        .await;
    assert_eq!(st, 200, "{tok}");
    let res = b.client.get(format!("{}/logout", s.url(""))).query(&[("id_token_hint", tok["id_token"].as_str().unwrap()), ("post_logout_redirect_uri", BACK)]).send().await.unwrap();
    let csp = res.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let page = Page::from(res).await;
    assert!(!page.html.contains("<iframe") && !page.html.contains("127.0.0.1:") && !csp.contains("127.0.0.1"), "{csp} {}", page.html);

    let abandoned = || async { s.admin(reqwest::Method::GET, "/admin/audit?event=backchannel_logout_abandoned", None).await.1 };
    eventually("the delivery tried", || async {
        internal.got.lock().await.attempts > 0 || abandoned().await["events"].as_array().is_some_and(|e| !e.is_empty())
    })
    .await;
    assert_eq!(internal.got.lock().await.attempts, 0, "nothing reached the internal endpoint");
    let v = abandoned().await;
    let event = &v["events"][0];
    assert_eq!(event["detail"]["attempts"], 1, "not retried: the address stays refused: {event}");
    assert!(event["detail"]["error"].as_str().unwrap().contains("not a public address"), "{event}");
}
