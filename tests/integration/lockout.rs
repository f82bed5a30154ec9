//! Issue 30, defect 5: what a new password and "end all sessions" cut off. Someone who had the
//! password (an intruder signed in on their own device, with `offline_access`) keeps nothing:
//! after a reset, the user's own change on the account page, an operator's change or the end
//! of all sessions, the refresh token answers `invalid_grant`, the access token is refused at
//! userinfo (401) and introspection (`active: false`), and an older reset link is spent.

use crate::harness::*;
use crate::mail::{link_in, mail_server, wait_for};
use crate::passkeys::{account, field, get, post};
use reqwest::Method;
use serde_json::{json, Value};

const NEW_PASSWORD: &str = "a new passphrase, mine alone";

struct Intruder {
    browser: Browser,
    access: String,
    refresh: String,
}

/// A client that refreshes, alice (with an e-mail), and the intruder's tokens: signed in with
/// alice's password in a browser of their own, `offline_access` (outlives any session).
async fn setup(s: &TestServer) -> (String, String, Intruder) {
    let (_, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let alice = s.user("alice", json!({"email": "alice@example.com"})).await;
    let browser = s.browser();
    let code = s.code_for(&browser, "rp", "alice", &[("scope", "openid offline_access")]).await["code"].clone();
    let (st, tok, _) = s.token(Some(("rp", secret.as_deref().unwrap())), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    let intruder = Intruder { browser, access: tok["access_token"].as_str().unwrap().into(), refresh: tok["refresh_token"].as_str().unwrap().into() };
    (alice, secret.unwrap(), intruder)
}

/// Before the change: everything the intruder holds works.
async fn works(s: &TestServer, secret: &str, i: &mut Intruder) {
    assert_eq!(s.userinfo(&i.access).await.0, 200);
    assert_eq!(introspect(s, secret, &i.access).await["active"], true);
    let (st, tok, _) = s.token(Some(("rp", secret)), &[("grant_type", "refresh_token"), ("refresh_token", &i.refresh)]).await;
    assert_eq!(st, 200, "{tok}");
    i.refresh = tok["refresh_token"].as_str().unwrap().into();
}

/// After the change: nothing the intruder holds works, and their session has ended.
async fn cut_off(s: &TestServer, secret: &str, i: &Intruder, how: &str) {
    let (st, tok, _) = s.token(Some(("rp", secret)), &[("grant_type", "refresh_token"), ("refresh_token", &i.refresh)]).await;
    assert_eq!((st, tok["error"].as_str()), (400, Some("invalid_grant")), "{how}: the offline refresh token: {tok}");
    assert_eq!(s.userinfo(&i.access).await.0, 401, "{how}: the access token at userinfo");
    assert_eq!(introspect(s, secret, &i.access).await, json!({"active": false}), "{how}: the access token at introspection");
    assert_eq!(introspect(s, secret, &i.refresh).await, json!({"active": false}), "{how}: the refresh token at introspection");
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("prompt", "none")];
    let page = Page::from(i.browser.authorize(&q).await).await;
    assert_eq!(page.redirect_params()["error"], "login_required", "{how}: the intruder's session");
}

async fn introspect(s: &TestServer, secret: &str, token: &str) -> Value {
    let res = s.http.post(s.url("/introspect")).basic_auth("rp", Some(secret)).form(&[("token", token)]).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn ask_reset(browser: &Browser) {
    let form = get(browser, "/login/forgot").await;
    let sent = post(browser, "/login/forgot", &[("form", &field(&form, "form")), ("login", "alice")]).await;
    assert_eq!(sent.status, 200, "{}", sent.html);
}

async fn use_link(s: &TestServer, browser: &Browser, link: &str, password: &str) -> Page {
    let path = link.trim_start_matches(&s.url(""));
    let form = get(browser, path).await;
    if form.status != 200 {
        return form;
    }
    let token = link.split("token=").nth(1).unwrap();
    post(browser, "/login/reset", &[("form", &field(&form, "form")), ("token", token), ("new_password", password), ("confirm_password", password)]).await
}

/// Two links asked for (the intruder, say, reads the mailbox too); the user uses the newer:
/// the older is spent with it, and so is any asked for before an operator's new password.
#[tokio::test]
async fn a_reset_spends_every_outstanding_link_and_cuts_off_every_token() {
    let (smtp_url, mail) = mail_server().await;
    let s = TestServer::start_with(|c| c.smtp_url = Some(smtp_url)).await;
    let (alice, secret, mut intruder) = setup(&s).await;
    works(&s, &secret, &mut intruder).await;
    let user = s.browser();
    ask_reset(&user).await;
    ask_reset(&user).await;
    let links: Vec<String> = wait_for(&mail, 2).await.iter().map(|m| link_in(m)).collect();
    assert_ne!(links[0], links[1]);
    let done = use_link(&s, &user, &links[1], NEW_PASSWORD).await;
    assert!(done.status == 200 && done.html.contains("Your password was changed"), "{}", done.html);
    let older = use_link(&s, &user, &links[0], "the intruder's passphrase").await;
    assert_eq!(older.status, 400, "the older link is spent by the newer one's use: {}", older.html);
    let u = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user(&alice).unwrap();
    assert!(authrim::registry::users::verify_password(Some(&u), NEW_PASSWORD), "the older link set nothing");
    cut_off(&s, &secret, &intruder, "reset").await;
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=password_reset", None).await;
    assert_eq!(audit["events"][0]["detail"]["families_revoked"], 1, "{audit}");

    // An operator's new password spends a link asked for before it, too.
    ask_reset(&user).await;
    let link = link_in(&wait_for(&mail, 3).await[2]);
    let (st, v) = s.admin(Method::PATCH, &format!("/admin/users/{alice}"), Some(json!({"password": "the operator's passphrase"}))).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(use_link(&s, &user, &link, "yet another passphrase").await.status, 400);
}

/// The user changes the password on the account page: this session stays, the intruder's
/// session ends and every token issued before the change is refused; a new sign-in from the
/// kept session gets tokens that work.
#[tokio::test]
async fn the_users_own_change_keeps_this_session_and_cuts_off_the_rest() {
    let s = TestServer::start().await;
    let (_, secret, mut intruder) = setup(&s).await;
    works(&s, &secret, &mut intruder).await;
    let mine = s.browser();
    account(&mine).await;
    let form = get(&mine, "/account/password").await;
    let done = post(&mine, "/account/password", &[("csrf", &field(&form, "csrf")), ("current_password", PASSWORD), ("new_password", NEW_PASSWORD), ("confirm_password", NEW_PASSWORD)]).await;
    assert!(done.html.contains("Your password was changed"), "{}", done.html);
    cut_off(&s, &secret, &intruder, "the user's change").await;
    // This session survived: the account page without a sign-in, and tokens for the client
    // without a password.
    let page = get(&mine, "/account").await;
    assert!(page.html.contains("<h1>Your account</h1>"), "{}", page.html);
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid offline_access")];
    let code = mine.finish_login(mine.authorize(&q).await, "alice", "not asked").await["code"].clone();
    let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 200, "a token issued after the change works");
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=password_changed", None).await;
    assert_eq!(audit["events"][0]["detail"]["other_sessions_ended"], 1, "{audit}");
}

/// An operator's new password (the admin API; the console and CLI share its operation).
#[tokio::test]
async fn an_operators_new_password_cuts_off_every_token() {
    operators_new_password(false).await;
}

#[tokio::test]
async fn an_operators_new_password_cuts_off_every_token_on_postgres() {
    operators_new_password(true).await;
}

async fn operators_new_password(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (alice, secret, mut intruder) = setup(&s).await;
    works(&s, &secret, &mut intruder).await;
    let (st, v) = s.admin(Method::PATCH, &format!("/admin/users/{alice}"), Some(json!({"password": NEW_PASSWORD}))).await;
    assert_eq!(st, 200, "{v}");
    cut_off(&s, &secret, &intruder, "an operator's change").await;
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=tokens_revoked", None).await;
    assert_eq!(audit["events"][0]["detail"]["reason"], "password", "{audit}");
    // A sign-in with the new password right after gets tokens that work.
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid")];
    let code = b.finish_login(b.authorize(&q).await, "alice", NEW_PASSWORD).await["code"].clone();
    let (st, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    assert_eq!(s.userinfo(tok["access_token"].as_str().unwrap()).await.0, 200);
}

/// "End all sessions" (admin API): the sessions end with their back-channel logout as before,
/// and `offline_access` tokens no longer outlive them.
#[tokio::test]
async fn ending_all_sessions_cuts_off_offline_tokens_too() {
    end_all_sessions(false).await;
}

#[tokio::test]
async fn ending_all_sessions_cuts_off_offline_tokens_too_on_postgres() {
    end_all_sessions(true).await;
}

async fn end_all_sessions(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (alice, secret, mut intruder) = setup(&s).await;
    works(&s, &secret, &mut intruder).await;
    let (st, v) = s.admin(Method::DELETE, &format!("/admin/users/{alice}/sessions"), None).await;
    assert_eq!(st, 200, "{v}");
    cut_off(&s, &secret, &intruder, "end all sessions").await;
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=sessions_ended", None).await;
    assert_eq!(audit["events"][0]["detail"]["families_revoked"], 1, "{audit}");
    assert_eq!(audit["events"][0]["detail"]["ended"], 1, "{audit}");
}
