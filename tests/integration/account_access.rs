//! The account page's list of the user's sessions and of the applications they allowed
//! (issue 36): ending a session there is a logout of that session (its tokens refused, its
//! relying parties told by back-channel logout, audited), withdrawing an application's access
//! forgets the consent (the next authorization asks again) and revokes its refresh tokens;
//! neither reaches another user's, and neither works without the form's CSRF token.

use crate::harness::*;
use crate::logout::{eventually, quick, receiver, signed_in, silent, Mode};
use crate::passkeys::{field, get, post};
use serde_json::{json, Value};

/// The account page in `b`, signed in as `username` (with the password if asked).
async fn account_page(b: &Browser, username: &str) -> Page {
    let mut page = get(b, "/account").await;
    if page.is_login() {
        page = post(b, "/login", &[("challenge", &page.challenge()), ("username", username), ("password", PASSWORD)]).await;
    }
    assert!(page.html.contains("<h1>Your account</h1>"), "{} {}", page.status, page.html);
    page
}

/// The `sid` values of the end-session forms on the account page, in order.
fn end_forms(page: &Page) -> Vec<String> {
    page.html
        .split("action=\"/account/sessions/end\"")
        .skip(1)
        .map(|form| {
            let marker = "name=\"sid\" value=\"";
            let start = form.find(marker).expect("a sid in the form") + marker.len();
            form[start..].split('"').next().unwrap().to_string()
        })
        .collect()
}

#[tokio::test]
async fn the_account_page_ends_another_session_as_a_logout_does() {
    let rp = receiver(Mode::Ok).await;
    let s = TestServer::start_with(quick).await;
    s.user("alice", json!({})).await;
    let bob = s.user("bob", json!({})).await;
    // Alice's phone signed in to the relying party; her laptop opens the account page.
    let phone = s.browser();
    let (secret, tok) = signed_in(&s, &phone, "rp", json!({"backchannel_logout_uri": rp.url})).await;
    let phone_sid = jwt_parts(tok["id_token"].as_str().unwrap()).1["sid"].as_str().unwrap().to_string();
    let access = tok["access_token"].as_str().unwrap();
    let laptop = s.browser();
    let page = account_page(&laptop, "alice").await;
    // Both sessions listed, this one marked and without a button; the phone's with one.
    assert!(page.html.contains("Where you are signed in") && page.html.contains("This browser"), "{}", page.html);
    assert_eq!(end_forms(&page), [phone_sid.clone()], "{}", page.html);
    assert!(page.html.contains("from 127.0.0.1"), "{}", page.html);
    // Bob's session, which the page does not list, cannot be ended from Alice's page.
    let bobs = s.browser();
    s.code_for(&bobs, "rp", "bob", &[]).await;
    let (_, v) = s.admin(reqwest::Method::GET, &format!("/admin/users/{bob}/sessions"), None).await;
    let bob_sid = v["sessions"][0]["sid"].as_str().unwrap().to_string();
    let csrf = field(&page, "csrf");
    let refused = laptop.post_no_follow("/account/sessions/end", &[("csrf", &csrf), ("sid", &bob_sid)]).await;
    assert_eq!(refused.status, 303);
    assert!(silent(&bobs, "rp").await.contains_key("code"), "Bob is still signed in");
    // Nor without the CSRF token.
    let forged = laptop.post_no_follow("/account/sessions/end", &[("csrf", "forged"), ("sid", &phone_sid)]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    assert_eq!(s.userinfo(access).await.0, 200, "nothing ended yet");

    let done = post(&laptop, "/account/sessions/end", &[("csrf", &csrf), ("sid", &phone_sid)]).await;
    assert!(done.html.contains("That session was signed out."), "{}", done.html);
    assert!(end_forms(&done).is_empty(), "{}", done.html);
    // As a logout: the phone is signed out, its access token refused (userinfo, introspection),
    // and the relying party told with a logout token for that session.
    assert_eq!(silent(&phone, "rp").await["error"], "login_required");
    assert_eq!(s.userinfo(access).await.0, 401);
    let res = s.http.post(s.url("/introspect")).basic_auth("rp", Some(&secret)).form(&[("token", access)]).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"active": false}));
    eventually("the phone's logout token", || async { rp.got.lock().await.tokens.len() == 1 }).await;
    let logout_token = rp.got.lock().await.tokens[0].clone();
    assert_eq!(jwt_parts(&logout_token).1["sid"], phone_sid.as_str());
    // The laptop is still signed in; Bob too.
    account_page(&laptop, "alice").await;
    assert!(silent(&bobs, "rp").await.contains_key("code"));
    let audit = s.admin(reqwest::Method::GET, "/admin/audit?event=logout", None).await.1;
    let event = &audit["events"][0];
    assert_eq!((event["detail"]["sid"].as_str(), event["detail"]["by"].as_str()), (Some(phone_sid.as_str()), Some("account")), "{audit}");
}

#[tokio::test]
async fn withdrawing_an_application_asks_again_and_refuses_its_refresh_token() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let (id, secret) = s.client("rp", json!({"client_name": "Photo Printer", "grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    let b = s.browser();
    let code = s.code_for(&b, &id, "alice", &[("scope", "openid email offline_access")]).await["code"].clone();
    let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    let refresh = tok["refresh_token"].as_str().expect("offline access: a refresh token").to_string();
    let query = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid email offline_access"), ("state", "s")];
    assert!(Page::from(b.authorize(&query).await).await.redirect_params().contains_key("code"), "allowed: no consent page");

    let page = account_page(&b, "alice").await;
    assert!(page.html.contains("Applications you allowed") && page.html.contains("<strong>Photo Printer</strong>"), "{}", page.html);
    assert!(page.html.contains("see your e-mail address") && page.html.contains("keep access while you are away"), "{}", page.html);
    let csrf = field(&page, "csrf");
    let forged = b.post_no_follow("/account/applications/withdraw", &[("csrf", "forged"), ("client_id", "rp")]).await;
    assert_eq!(forged.status, 400);
    let done = post(&b, "/account/applications/withdraw", &[("csrf", &csrf), ("client_id", "rp")]).await;
    assert!(done.html.contains("The access was withdrawn.") && done.html.contains("You have not allowed any application yet."), "{}", done.html);

    let (st, e, _) = s.token(Some(("rp", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")), "{e}");
    assert!(Page::from(b.authorize(&query).await).await.is_consent(), "the application must ask again");
    let audit = s.admin(reqwest::Method::GET, "/admin/audit?event=consent_withdrawn", None).await.1;
    let event = &audit["events"][0];
    assert_eq!((event["client_id"].as_str(), event["detail"]["reason"].as_str(), event["detail"]["families_revoked"].as_u64()), (Some("rp"), Some("user"), Some(1)), "{audit}");
}

#[tokio::test]
async fn recovery_codes_download_as_a_text_file_only_from_their_page() {
    let s = TestServer::start().await;
    s.user("alice", json!({})).await;
    let b = s.browser();
    let page = account_page(&b, "alice").await;
    let shown = post(&b, "/account/recovery-codes", &[("csrf", &field(&page, "csrf"))]).await;
    assert_eq!(shown.status, 200, "{}", shown.html);
    let codes: Vec<String> = shown.html.split("<li><code>").skip(1).map(|c| c.split('<').next().unwrap().to_string()).collect();
    assert_eq!(codes.len(), 10, "{}", shown.html);
    let (csrf, sealed) = (field(&shown, "csrf"), field(&shown, "codes"));
    assert!(!sealed.contains(&codes[0]), "the form carries the codes sealed, not as they are");
    let res = b.client.post(s.url("/account/recovery-codes/download")).form(&[("csrf", csrf.as_str()), ("codes", sealed.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(res.headers()["content-disposition"], "attachment; filename=\"recovery-codes-127.0.0.1.txt\"");
    assert_eq!(res.headers()["cache-control"], "no-store");
    let text = res.text().await.unwrap();
    assert!(text.starts_with("Recovery codes for alice at 127.0.0.1\n"), "{text}");
    assert!(text.ends_with(&format!("\n\n{}\n", codes.join("\n"))), "{text}");
    // Another browser (its own session) cannot open them, nor a forged form.
    let other = s.browser();
    let theirs = account_page(&other, "alice").await;
    let res = other.client.post(s.url("/account/recovery-codes/download")).form(&[("csrf", field(&theirs, "csrf").as_str()), ("codes", sealed.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("can no longer be downloaded"));
    let res = b.client.post(s.url("/account/recovery-codes/download")).form(&[("csrf", "forged"), ("codes", sealed.as_str())]).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

/// OpenID Connect Core §4, third-party initiated login: an operator's client with an
/// `initiate_login_uri` is listed on the start page, linked there with `iss`; the account
/// page links each application the user allowed that has one. A self-registered client's is
/// never on the start page (anyone could put a link there); the URI must be https.
#[tokio::test]
async fn applications_with_a_login_initiation_uri_are_linked_with_iss() {
    let s = TestServer::start().await;
    s.client("shop", json!({"client_name": "Shop", "initiate_login_uri": "https://shop.example/login?from=idp"})).await;
    s.client("plain", json!({"client_name": "Plain"})).await;
    s.user("alice", json!({})).await;
    let iss = url::form_urlencoded::byte_serialize(s.issuer().as_bytes()).collect::<String>();
    let link = format!("https://shop.example/login?from=idp&amp;iss={iss}");
    let start = get(&s.browser(), "/").await;
    assert!(start.html.contains(&format!("<a href=\"{link}\">Shop</a>")), "{}", start.html);
    assert!(!start.html.contains("Plain"), "{}", start.html);

    // Self-registered: on its users' account pages only.
    let (_, t) = s.admin(reqwest::Method::POST, "/admin/registration-tokens", Some(json!({"max_uses": 1}))).await;
    let reg: Value = s.http.post(s.url("/register")).bearer_auth(t["initial_access_token"].as_str().unwrap())
        .json(&json!({"client_name": "Stranger", "redirect_uris": [REDIRECT], "initiate_login_uri": "https://stranger.example/go"}))
        .send().await.unwrap().json().await.unwrap();
    assert_eq!(reg["initiate_login_uri"], "https://stranger.example/go", "{reg}");
    assert!(!get(&s.browser(), "/").await.html.contains("Stranger"));

    let b = s.browser();
    s.code_for(&b, "shop", "alice", &[]).await;
    s.code_for(&b, reg["client_id"].as_str().unwrap(), "alice", &[]).await;
    let page = account_page(&b, "alice").await;
    assert!(page.html.contains(&format!("<a href=\"{link}\">Shop</a>")), "{}", page.html);
    assert!(page.html.contains(&format!("<a href=\"https://stranger.example/go?iss={iss}\">Stranger</a>")), "{}", page.html);

    for bad in ["http://shop.example/login", "javascript:alert(1)", "https://shop.example/login#x"] {
        let (st, body) = s.admin(reqwest::Method::PATCH, "/admin/clients/shop", Some(json!({"initiate_login_uri": bad}))).await;
        assert_eq!(st, 400, "{bad}: {body}");
    }
}
