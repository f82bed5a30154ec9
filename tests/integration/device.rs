//! The device authorization grant (RFC 8628): the device's request, the verification page
//! (sign-in, the code, the answer), polling, and the bounds on what unauthenticated requests
//! may store.

use crate::dpop::DpopKey;
use crate::harness::*;
use serde_json::{json, Value};

const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A server with short device intervals (a poll a second), `tweak` for more.
async fn server(postgres: bool, tweak: impl FnOnce(&mut authrim::config::Config)) -> TestServer {
    TestServer::start_on(postgres, |c| {
        c.device_poll_interval = 1;
        tweak(c);
    })
    .await
}

/// The confidential client `tv` (device + refresh grants) and the user alice; returns tv's secret.
async fn tv_and_alice(s: &TestServer) -> String {
    let (_, secret) = s.client("tv", json!({"grant_types": [GRANT, "refresh_token"], "redirect_uris": [], "scope": "openid profile offline_access"})).await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    secret.unwrap()
}

/// POST /device_authorization as `client` (Basic with `secret`, or the client_id alone).
async fn authorize_device(s: &TestServer, client: &str, secret: Option<&str>, form: &[(&str, &str)]) -> (u16, Value) {
    let mut form = form.to_vec();
    let mut req = s.http.post(s.url("/device_authorization"));
    match secret {
        Some(secret) => req = req.basic_auth(client, Some(secret)),
        None => form.push(("client_id", client)),
    }
    let res = req.form(&form).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn poll(s: &TestServer, client: &str, secret: Option<&str>, device_code: &str) -> (u16, Value) {
    let mut form = vec![("grant_type", GRANT), ("device_code", device_code)];
    if secret.is_none() {
        form.push(("client_id", client));
    }
    let (status, body, _) = s.token(secret.map(|sec| (client, sec)), &form).await;
    (status, body)
}

/// GET `url` in the browser, following redirects to this server (the sign-in's round trip
/// through `/authorize` and the page's callback) until a page is answered.
async fn open(s: &TestServer, b: &Browser, url: &str) -> Page {
    let mut url = url.to_string();
    for _ in 0..10 {
        let page = Page::from(b.client.get(&url).send().await.unwrap()).await;
        match page.location.clone() {
            Some(to) if page.status == 303 || page.status == 302 => url = if to.starts_with('/') { s.url(&to) } else { to },
            _ => return page,
        }
    }
    panic!("too many redirects from {url}");
}

/// Follow the login form's answer (a 303 on to the callback and the page).
async fn sign_in(s: &TestServer, b: &Browser, login: Page, username: &str) -> Page {
    assert!(login.is_login(), "the device page signs in first: {}", login.html);
    let page = b.post_no_follow("/login", &[("challenge", &login.challenge()), ("username", username), ("password", PASSWORD)]).await;
    let to = page.location.clone().unwrap_or_else(|| panic!("the login redirects: {}", page.html));
    open(s, b, &if to.starts_with('/') { s.url(&to) } else { to }).await
}

/// The named hidden field of a page's form.
fn field(page: &Page, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.html.find(&marker).unwrap_or_else(|| panic!("no {name} in page: {}", page.html)) + marker.len();
    page.html[start..].split('"').next().unwrap().replace("&#x2f;", "/").replace("&amp;", "&")
}

/// Alice, in the browser `b`, opens `uri` (a verification URI), signs in and answers.
pub(crate) async fn answer(s: &TestServer, b: &Browser, uri: &str, decision: &str) -> Page {
    let mut page = open(s, b, uri).await;
    if page.is_login() {
        page = sign_in(s, b, page, "alice").await;
    }
    assert_eq!(page.status, 200, "{}", page.html);
    b.post_no_follow("/device/decide", &[("state", &field(&page, "state")), ("decision", decision)]).await
}

fn on_both(name: &str) -> [bool; 2] {
    let _ = name;
    [false, true]
}

#[tokio::test]
async fn a_device_is_approved_with_a_password_sign_in_and_its_code_is_used_once() {
    for postgres in on_both("happy path") {
        let s = server(postgres, |_| {}).await;
        let secret = tv_and_alice(&s).await;
        let meta: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
        assert_eq!(meta["device_authorization_endpoint"], s.url("/device_authorization"));
        assert!(meta["grant_types_supported"].as_array().unwrap().iter().any(|g| g == GRANT));

        let (status, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid profile offline_access")]).await;
        assert_eq!(status, 200, "{d}");
        let user_code = d["user_code"].as_str().unwrap();
        assert_eq!(user_code.len(), 9, "{user_code}");
        assert!(user_code.chars().enumerate().all(|(i, c)| if i == 4 { c == '-' } else { "BCDFGHJKLMNPQRSTVWXZ".contains(c) }), "{user_code}");
        assert_eq!(d["verification_uri"], s.url("/device"));
        assert_eq!(d["verification_uri_complete"], format!("{}?user_code={user_code}", s.url("/device")));
        assert_eq!((d["interval"].as_u64(), d["expires_in"].as_u64()), (Some(1), Some(600)));
        let device_code = d["device_code"].as_str().unwrap();

        let (status, body) = poll(&s, "tv", Some(&secret), device_code).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("authorization_pending")), "{body}");

        let b = s.browser();
        // The page shows the application and the code (to compare with the device's screen).
        let page = sign_in(&s, &b, open(&s, &b, d["verification_uri_complete"].as_str().unwrap()).await, "alice").await;
        assert!(page.html.contains("Client tv") && page.html.contains(user_code), "{}", page.html);
        let done = b.post_no_follow("/device/decide", &[("state", &field(&page, "state")), ("decision", "allow")]).await;
        assert_eq!(done.status, 200, "{}", done.html);
        assert!(done.html.contains("Device connected"), "{}", done.html);

        let (status, tokens) = poll(&s, "tv", Some(&secret), device_code).await;
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(tokens["token_type"], "Bearer");
        assert_eq!(tokens["scope"], "openid profile offline_access");
        let (_, id) = jwt_parts(tokens["id_token"].as_str().unwrap());
        assert_eq!((id["aud"].as_str(), id["acr"].as_str()), (Some("tv"), Some("urn:authrim:acr:password")), "{id}");
        assert_eq!(id["amr"], json!(["pwd"]));
        assert!(id["auth_time"].as_u64().is_some() && id.get("nonce").is_none(), "{id}");
        let (status, info, _) = s.userinfo(tokens["access_token"].as_str().unwrap()).await;
        assert_eq!((status, info["email"].as_str()), (200, None), "profile was granted, not email: {info}");
        // The refresh token works as a code's does.
        let refresh = tokens["refresh_token"].as_str().expect("offline_access gives a refresh token");
        let (status, refreshed, _) = s.token(Some(("tv", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
        assert_eq!(status, 200, "{refreshed}");

        // Once only.
        let (status, body) = poll(&s, "tv", Some(&secret), device_code).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
        // The approval is a consent: the account page lists the application.
        let account = open(&s, &b, &s.url("/account")).await;
        assert!(account.html.contains("Client tv"), "{}", account.html);
        // And is audited.
        let (_, events) = s.admin(reqwest::Method::GET, "/admin/audit?event=device_approved", None).await;
        assert!(events.to_string().contains("device_approved"), "{events}");
    }
}

#[tokio::test]
async fn a_denied_request_is_access_denied_and_an_answered_one_cannot_be_answered_again() {
    let s = server(false, |_| {}).await;
    let secret = tv_and_alice(&s).await;
    let (_, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
    let b = s.browser();
    let page = sign_in(&s, &b, open(&s, &b, d["verification_uri_complete"].as_str().unwrap()).await, "alice").await;
    let state = field(&page, "state");
    let done = b.post_no_follow("/device/decide", &[("state", &state), ("decision", "deny")]).await;
    assert!(done.status == 200 && done.html.contains("Request denied"), "{}", done.html);
    for _ in 0..2 {
        let (status, body) = poll(&s, "tv", Some(&secret), d["device_code"].as_str().unwrap()).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("access_denied")), "{body}");
    }
    // The same form again (Back, then Allow): the request is no longer waiting.
    let again = b.post_no_follow("/device/decide", &[("state", &state), ("decision", "allow")]).await;
    assert_eq!(again.status, 400, "{}", again.html);
    assert!(again.html.contains("no longer waiting"), "{}", again.html);
    // A forged or foreign state is refused as a page, never a 500.
    let forged = b.post_no_follow("/device/decide", &[("state", "nonsense"), ("decision", "allow")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    let other = s.browser();
    let res = other.client.post(s.url("/device/decide")).form(&[("state", state.as_str()), ("decision", "allow")]).send().await.unwrap();
    assert_eq!(res.status(), 303, "not signed in: to the sign-in");
}

#[tokio::test]
async fn polling_too_fast_grows_the_interval_and_an_expired_code_is_expired_token() {
    // Lifetimes are whole seconds: a 4 s request lives between 3 and 4 s.
    let s = server(false, |c| c.device_code_ttl = 4).await;
    let secret = tv_and_alice(&s).await;
    let (_, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
    let code = d["device_code"].as_str().unwrap();
    assert_eq!(poll(&s, "tv", Some(&secret), code).await.1["error"], "authorization_pending");
    assert_eq!(poll(&s, "tv", Some(&secret), code).await.1["error"], "slow_down");
    // The interval was 1 s and is now 6 s: a poll after 1.2 s is still too soon.
    tokio::time::sleep(std::time::Duration::from_millis(1_200)).await;
    assert_eq!(poll(&s, "tv", Some(&secret), code).await.1["error"], "slow_down");
    tokio::time::sleep(std::time::Duration::from_millis(3_000)).await;
    assert_eq!(poll(&s, "tv", Some(&secret), code).await.1["error"], "expired_token");
    // The page no longer knows its user code.
    let b = s.browser();
    let page = sign_in(&s, &b, open(&s, &b, d["verification_uri_complete"].as_str().unwrap()).await, "alice").await;
    assert_eq!(page.status, 400, "{}", page.html);
    assert!(page.html.contains("not recognised"), "{}", page.html);
}

#[tokio::test]
async fn clients_are_checked_as_the_rfc_says() {
    let s = server(false, |_| {}).await;
    let secret = tv_and_alice(&s).await;
    let (_, other_secret) = s.client("other", json!({"grant_types": [GRANT], "redirect_uris": []})).await;
    let (_, web_secret) = s.client("web", json!({"grant_types": ["authorization_code"]})).await;
    // Wrong secret, unknown client: invalid_client.
    let (status, body) = authorize_device(&s, "tv", Some("wrong"), &[]).await;
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")), "{body}");
    assert_eq!(authorize_device(&s, "nobody", None, &[]).await.1["error"], "invalid_client");
    // A confidential client with no secret.
    assert_eq!(authorize_device(&s, "tv", None, &[]).await.1["error"], "invalid_client");
    // Not registered for the grant.
    let (status, body) = authorize_device(&s, "web", web_secret.as_deref(), &[("scope", "openid")]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");
    // A scope the client may not have.
    let (status, body) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid admin")]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_scope")), "{body}");
    // No scope: the client's registered one.
    let (status, d) = authorize_device(&s, "tv", Some(&secret), &[]).await;
    assert_eq!(status, 200, "{d}");
    let code = d["device_code"].as_str().unwrap();
    // Another client polling with tv's device code learns nothing and changes nothing.
    let (status, body) = poll(&s, "other", other_secret.as_deref(), code).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    assert_eq!(poll(&s, "tv", Some(&secret), code).await.1["error"], "authorization_pending", "the other client's poll did not count");
    // Forged device codes.
    for forged in ["nonsense", &code.replace('.', "_"), &format!("{}x", &code[..code.len() - 1])] {
        assert_eq!(poll(&s, "tv", Some(&secret), forged).await.1["error"], "invalid_grant", "{forged}");
    }
    // A client not registered for the grant cannot poll either.
    let (status, body) = poll(&s, "web", web_secret.as_deref(), code).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("unauthorized_client")), "{body}");
}

#[tokio::test]
async fn user_codes_are_typed_in_any_case_with_or_without_the_dash() {
    let s = server(false, |_| {}).await;
    let secret = tv_and_alice(&s).await;
    let (_, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
    let b = s.browser();
    // The bare verification URI: sign in, then the form.
    let page = sign_in(&s, &b, open(&s, &b, d["verification_uri"].as_str().unwrap()).await, "alice").await;
    assert!(page.html.contains("name=\"user_code\""), "{}", page.html);
    let csrf = field(&page, "csrf");
    let typed = format!(" {} ", d["user_code"].as_str().unwrap().replace('-', "").to_lowercase());
    let page = b.post_no_follow("/device", &[("csrf", &csrf), ("user_code", &typed)]).await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.html.contains(d["user_code"].as_str().unwrap()), "{}", page.html);
    // Without the form's CSRF token: refused.
    let refused = b.post_no_follow("/device", &[("csrf", "x"), ("user_code", &typed)]).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    let done = b.post_no_follow("/device/decide", &[("state", &field(&page, "state")), ("decision", "allow")]).await;
    assert_eq!(done.status, 200, "{}", done.html);
    assert_eq!(poll(&s, "tv", Some(&secret), d["device_code"].as_str().unwrap()).await.0, 200);
}

#[tokio::test]
async fn wrong_user_codes_are_throttled_per_account_and_address() {
    let s = server(false, |c| c.device_user_code_max_failures = 3).await;
    let secret = tv_and_alice(&s).await;
    s.user("bob", json!({})).await;
    let (_, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
    let b = s.browser();
    let page = sign_in(&s, &b, open(&s, &b, &s.url("/device")).await, "alice").await;
    let csrf = field(&page, "csrf");
    // A typo that cannot be a code is not counted.
    for _ in 0..5 {
        let page = b.post_no_follow("/device", &[("csrf", &csrf), ("user_code", "AEIO-UAEI")]).await;
        assert!(page.status == 400 && page.html.contains("8 letters"), "{}", page.html);
    }
    for wrong in ["BBBB-BBBB", "CCCC-CCCC", "DDDD-DDDD"] {
        let page = b.post_no_follow("/device", &[("csrf", &csrf), ("user_code", wrong)]).await;
        assert_eq!(page.status, 400, "{}", page.html);
    }
    // Locked, even for the right code.
    let page = b.post_no_follow("/device", &[("csrf", &csrf), ("user_code", d["user_code"].as_str().unwrap())]).await;
    assert_eq!(page.status, 429, "{}", page.html);
    assert!(page.html.contains("Too many codes"), "{}", page.html);
    // Another account from the same address is held back too (the address's bucket).
    let bob = s.browser();
    let page = sign_in(&s, &bob, open(&s, &bob, d["verification_uri_complete"].as_str().unwrap()).await, "bob").await;
    assert_eq!(page.status, 429, "{}", page.html);
}

#[tokio::test]
async fn waiting_requests_are_bounded_per_client_and_in_all() {
    for postgres in on_both("bounds") {
        let s = server(postgres, |c| {
            c.device_max_pending_per_client = 2;
            c.device_max_pending = 3;
        })
        .await;
        let secret = tv_and_alice(&s).await;
        s.client("cli", json!({"grant_types": [GRANT], "redirect_uris": [], "token_endpoint_auth_method": "none"})).await;
        let mut codes = Vec::new();
        for _ in 0..2 {
            let (status, d) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
            assert_eq!(status, 200, "{d}");
            codes.push(d);
        }
        let (status, body) = authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await;
        assert_eq!((status, body["error"].as_str()), (503, Some("temporarily_unavailable")), "per client: {body}");
        assert_eq!(authorize_device(&s, "cli", None, &[("scope", "openid")]).await.0, 200);
        let (status, body) = authorize_device(&s, "cli", None, &[("scope", "openid")]).await;
        assert_eq!((status, body["error"].as_str()), (503, Some("temporarily_unavailable")), "in all: {body}");
        // An answered request no longer waits: its place is free again.
        let b = s.browser();
        let done = answer(&s, &b, codes[0]["verification_uri_complete"].as_str().unwrap(), "deny").await;
        assert_eq!(done.status, 200, "{}", done.html);
        assert_eq!(authorize_device(&s, "tv", Some(&secret), &[("scope", "openid")]).await.0, 200);
    }
}

#[tokio::test]
async fn a_public_client_gets_tokens_for_a_resource_bound_to_its_dpop_key() {
    for postgres in on_both("public, resource, DPoP") {
        let s = server(postgres, |_| {}).await;
        s.client(
            "cli",
            json!({"grant_types": [GRANT, "refresh_token"], "redirect_uris": [], "token_endpoint_auth_method": "none",
                   "scope": "openid offline_access", "allowed_resources": ["https://api.example/"]}),
        )
        .await;
        s.user("alice", json!({})).await;
        let (status, d) = authorize_device(&s, "cli", None, &[("scope", "openid offline_access"), ("resource", "https://api.example/")]).await;
        assert_eq!(status, 200, "{d}");
        let (status, body) = authorize_device(&s, "cli", None, &[("scope", "openid"), ("resource", "https://elsewhere.example/")]).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_target")), "{body}");
        let b = s.browser();
        let done = answer(&s, &b, d["verification_uri_complete"].as_str().unwrap(), "allow").await;
        assert_eq!(done.status, 200, "{}", done.html);
        let key = DpopKey::new();
        let proof = key.proof("POST", &s.url("/token"), None, json!({}));
        let res = s
            .http
            .post(s.url("/token"))
            .header("DPoP", proof)
            .form(&[("grant_type", GRANT), ("device_code", d["device_code"].as_str().unwrap()), ("client_id", "cli")])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let tokens: Value = res.json().await.unwrap();
        assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
        let (_, at) = jwt_parts(tokens["access_token"].as_str().unwrap());
        assert_eq!(at["cnf"]["jkt"], key.jkt(), "{at}");
        assert!(at["aud"] == json!("https://api.example/") || at["aud"] == json!(["https://api.example/"]), "{at}");
        // The public client's refresh token is bound to the key too: refused without a proof.
        let refresh = tokens["refresh_token"].as_str().unwrap();
        let (status, body, _) = s.token(None, &[("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "cli")]).await;
        assert_eq!(status, 400, "{body}");
    }
}

#[tokio::test]
async fn odd_requests_get_pages_or_json_errors_never_a_500() {
    let s = server(false, |_| {}).await;
    let secret = tv_and_alice(&s).await;
    let b = s.browser();
    // Signed in, so that the page's own checks are reached.
    let page = sign_in(&s, &b, open(&s, &b, &s.url("/device")).await, "alice").await;
    assert_eq!(page.status, 200, "{}", page.html);
    let long = "B".repeat(5_000);
    let pages: Vec<(reqwest::Method, String, Option<Vec<(&str, &str)>>)> = vec![
        (reqwest::Method::GET, "/device/decide".into(), None),
        (reqwest::Method::GET, format!("/device?user_code={long}"), None),
        (reqwest::Method::GET, "/device?user_code=%FF%FE".into(), None),
        (reqwest::Method::GET, "/device/callback?code=x&state=y".into(), None),
        (reqwest::Method::POST, "/device".into(), Some(vec![("user_code", "BCDF-GHJK")])),
        (reqwest::Method::POST, "/device".into(), Some(vec![("csrf", "a"), ("csrf", "b")])),
        (reqwest::Method::POST, "/device/decide".into(), Some(vec![("decision", "allow")])),
        (reqwest::Method::DELETE, "/device".into(), None),
    ];
    for (method, path, form) in pages {
        let mut req = b.client.request(method.clone(), s.url(&path));
        if let Some(f) = &form {
            req = req.form(f);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let html = res.headers().get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/html"));
        assert!((400..500).contains(&status) && html, "{method} {path}: {status}");
    }
    // The API endpoint answers JSON, whatever it is sent.
    for body in ["", "not a form", "scope=a&scope=b", "client_id=tv&client_id=tv"] {
        let res = s.http.post(s.url("/device_authorization")).basic_auth("tv", Some(&secret)).header("content-type", "application/x-www-form-urlencoded").body(body).send().await.unwrap();
        let status = res.status().as_u16();
        let v: Value = res.json().await.unwrap_or(Value::Null);
        assert!((400..500).contains(&status) && v["error"].is_string() || status == 200, "{body:?}: {status} {v}");
    }
    let res = s.http.get(s.url("/device_authorization")).send().await.unwrap();
    assert_eq!(res.status(), 405);
    assert!(res.json::<Value>().await.unwrap()["error"].is_string());
}
