//! Second factors in the sign-in: TOTP codes (each accepted once), recovery codes, the
//! `mfa_policy`, step-up by `acr_values` and the essential `acr` claim, acr/amr in the ID
//! token, failed codes in the login throttle, and the operator's admin API.

use crate::harness::*;
use authrim::factors::totp::code_at;
use authrim::factors::ACR_MFA;
use authrim::util::now;
use reqwest::Method;
use serde_json::{json, Value};

const SECOND: &str = "action=\"/login/second-factor\"";

async fn enrol(s: &TestServer, user: &str) -> String {
    let (st, v) = s.admin(Method::POST, &format!("/admin/users/{user}/factors/totp"), Some(json!({"name": "phone"}))).await;
    assert_eq!(st, 201, "{v}");
    assert!(v["otpauth_uri"].as_str().unwrap().starts_with("otpauth://totp/"), "{v}");
    v["secret"].as_str().unwrap().to_string()
}

fn query(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut q = vec![("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s"), ("nonce", "n")];
    q.extend_from_slice(extra);
    q
}

/// Sign in with the password; returns the page that follows (the second-factor page, if any).
async fn password(browser: &Browser, q: &[(&str, &str)]) -> Page {
    let page = Page::from(browser.authorize(q).await).await;
    assert!(page.is_login(), "{}", page.html);
    browser.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await
}

/// From a page after the sign-in: consent if asked; the code.
async fn finish(browser: &Browser, mut page: Page) -> String {
    if page.is_consent() {
        page = browser.post("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    page.redirect_params()["code"].clone()
}

async fn id_token_of(s: &TestServer, secret: &str, code: &str) -> Value {
    let (st, tokens, _) = s.token(Some(("rp", secret)), &[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    jwt_parts(tokens["id_token"].as_str().unwrap()).1
}

#[tokio::test]
async fn a_totp_code_is_the_second_step_and_is_accepted_once() {
    totp_second_step(false).await;
}

#[tokio::test]
async fn a_totp_code_is_the_second_step_and_is_accepted_once_on_postgres() {
    totp_second_step(true).await;
}

async fn totp_second_step(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    let totp = enrol(&s, &alice).await;

    let browser = s.browser();
    let step = password(&browser, &query(&[])).await;
    assert!(step.html.contains(SECOND), "a user with a factor is asked for it: {}", step.html);
    let wrong = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", "000000")]).await;
    assert_eq!(wrong.status, 401);
    assert!(wrong.html.contains("not right"), "{}", wrong.html);
    let code = code_at(&totp, now()).unwrap();
    let after = browser.post("/login/second-factor", &[("challenge", &wrong.challenge()), ("code", &code)]).await;
    let claims = id_token_of(&s, &secret, &finish(&browser, after).await).await;
    assert_eq!(claims["acr"], ACR_MFA);
    assert_eq!(claims["amr"], json!(["pwd", "otp", "mfa"]));

    // The same code again, in another browser, within its window: refused.
    let other = s.browser();
    let step = password(&other, &query(&[])).await;
    let replay = other.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code)]).await;
    assert_eq!(replay.status, 401, "a used code is refused: {}", replay.html);
    let audit = s.admin(Method::GET, "/admin/audit?event=second_factor_failure", None).await.1;
    assert_eq!(audit["events"].as_array().unwrap().len(), 2, "{audit}");
}

#[tokio::test]
async fn recovery_codes_work_once_each_and_an_operator_can_reset_factors() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    enrol(&s, &alice).await;
    let (st, v) = s.admin(Method::POST, &format!("/admin/users/{alice}/recovery-codes"), None).await;
    assert_eq!(st, 201);
    let codes: Vec<String> = v["codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    assert_eq!(codes.len(), 10);

    let browser = s.browser();
    let step = password(&browser, &query(&[])).await;
    let typed = codes[0].to_lowercase().replace('-', " ");
    let after = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &typed)]).await;
    let claims = id_token_of(&s, &secret, &finish(&browser, after).await).await;
    assert_eq!(claims["acr"], ACR_MFA);

    let other = s.browser();
    let step = password(&other, &query(&[])).await;
    let again = other.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &codes[0])]).await;
    assert_eq!(again.status, 401, "a recovery code works once");
    let listed = s.admin(Method::GET, &format!("/admin/users/{alice}/factors"), None).await.1;
    assert_eq!(listed["recovery_codes_left"], 9, "{listed}");
    assert_eq!(listed["factors"][0]["kind"], "totp");
    assert!(listed["factors"][0].get("secret").is_none());

    let (st, _) = s.admin(Method::DELETE, &format!("/admin/users/{alice}/factors"), None).await;
    assert_eq!(st, 204);
    let third = s.browser();
    let page = password(&third, &query(&[])).await;
    assert!(!page.html.contains(SECOND), "no factor left: password only");
    let claims = id_token_of(&s, &secret, &finish(&third, page).await).await;
    assert_eq!((claims["acr"].as_str(), &claims["amr"]), (Some(authrim::tokens::ACR_PASSWORD), &json!(["pwd"])));
}

#[tokio::test]
async fn acr_values_step_up_a_password_session_and_an_unmeetable_essential_acr_is_an_error() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    let alice = s.user("alice", json!({})).await;
    let browser = s.browser();

    // No factor: a voluntary acr_values is not met, and not an error.
    let page = password(&browser, &query(&[("acr_values", ACR_MFA)])).await;
    let claims = id_token_of(&s, &secret, &finish(&browser, page).await).await;
    assert_eq!(claims["acr"], authrim::tokens::ACR_PASSWORD);
    // Essential (the claims request): an error to the client.
    let essential = r#"{"id_token":{"acr":{"essential":true,"values":["urn:authrim:acr:mfa"]}}}"#;
    let other = s.browser();
    let page = password(&other, &query(&[("claims", essential)])).await;
    assert_eq!(page.redirect_params()["error"], "unmet_authentication_requirements");

    // With a factor: the password session is stepped up when a client asks, not otherwise.
    let totp = enrol(&s, &alice).await;
    let page = Page::from(browser.authorize(&query(&[])).await).await;
    assert_eq!(page.status, 302, "no acr asked: the session serves");
    let page = Page::from(browser.authorize(&query(&[("acr_values", ACR_MFA)])).await).await;
    assert!(page.is_login(), "step-up: sign in again");
    let step = browser.post("/login", &[("challenge", &page.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(step.html.contains(SECOND));
    let after = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code_at(&totp, now()).unwrap())]).await;
    let claims = id_token_of(&s, &secret, &finish(&browser, after).await).await;
    assert_eq!(claims["acr"], ACR_MFA);
    let page = Page::from(browser.authorize(&query(&[("acr_values", ACR_MFA)])).await).await;
    assert_eq!(page.status, 302, "the stepped-up session serves MFA requests");

    let d: Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert!(d["acr_values_supported"].as_array().unwrap().contains(&json!(ACR_MFA)));
}

#[tokio::test]
async fn the_policy_can_require_a_second_factor_and_failed_codes_are_throttled() {
    let s = TestServer::start_with(|c| {
        c.mfa_policy = "required".into();
        c.second_factor_max_failures = 3;
    })
    .await;
    s.client("rp", json!({})).await;
    let alice = s.user("alice", json!({})).await;
    let refused = password(&s.browser(), &query(&[])).await;
    assert_eq!(refused.status, 403, "no factor, required: {}", refused.html);

    let totp = enrol(&s, &alice).await;
    let browser = s.browser();
    let mut step = password(&browser, &query(&[])).await;
    for _ in 0..3 {
        step = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", "123456")]).await;
        assert_eq!(step.status, 401);
    }
    let locked = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code_at(&totp, now()).unwrap())]).await;
    assert_eq!(locked.status, 429, "the right code is refused once the account is throttled");
}

#[tokio::test]
async fn a_client_can_require_a_second_factor_or_ask_for_one_by_default() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.client("strict", json!({"require_mfa": true})).await;
    s.client("asks", json!({"default_acr_values": [ACR_MFA]})).await;
    let (st, body) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "odd", "redirect_uris": [REDIRECT], "default_acr_values": ["urn:x"]}))).await;
    assert_eq!(st, 400, "an acr we do not have: {body}");
    let alice = s.user("alice", json!({})).await;

    let browser = s.browser();
    let strict = [("response_type", "code"), ("client_id", "strict"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    let refused = password(&browser, &strict).await;
    assert_eq!(refused.status, 403, "strict needs a factor alice does not have");
    let page = password(&browser, &query(&[])).await;
    let claims = id_token_of(&s, &secret, &finish(&browser, page).await).await;
    assert_eq!(claims["acr"], authrim::tokens::ACR_PASSWORD, "rp does not");

    // With a factor: the client asking by default steps the password session up.
    enrol(&s, &alice).await;
    let asks = [("response_type", "code"), ("client_id", "asks"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s")];
    let page = Page::from(browser.authorize(&asks).await).await;
    assert!(page.is_login(), "default_acr_values asks for MFA: {}", page.html);
    let page = Page::from(browser.authorize(&strict).await).await;
    assert!(page.is_login(), "require_mfa steps up too");
}

#[tokio::test]
async fn the_cli_enrols_lists_and_resets_factors_of_a_running_servers_users() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let dir = s.dir.path().to_path_buf();
    let out = crate::admin::cli(&dir, &["factor", "totp", "alice", "--name", "laptop"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let enrolled: Value = serde_json::from_slice(&out.stdout).unwrap();
    let totp = enrolled["secret"].as_str().unwrap().to_string();

    // The running server asks for it at the next sign-in (factors are read from the database).
    let browser = s.browser();
    let step = password(&browser, &query(&[])).await;
    assert!(step.html.contains(SECOND), "{}", step.html);
    let after = browser.post("/login/second-factor", &[("challenge", &step.challenge()), ("code", &code_at(&totp, now()).unwrap())]).await;
    assert_eq!(id_token_of(&s, &secret, &finish(&browser, after).await).await["acr"], ACR_MFA);

    let out = crate::admin::cli(&dir, &["factor", "list", "alice"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["factors"][0]["name"], "laptop");
    assert!(listed["factors"][0]["last_used_at"].as_u64().unwrap() > 0, "{listed}");
    let out = crate::admin::cli(&dir, &["factor", "reset", "alice"]);
    assert!(out.status.success());
    let audit = s.admin(Method::GET, "/admin/audit?event=factors_reset", None).await.1;
    assert_eq!(audit["events"][0]["detail"]["by"], "cli", "{audit}");
    assert!(!password(&s.browser(), &query(&[])).await.html.contains(SECOND));
}

#[tokio::test]
async fn an_essential_acr_is_met_by_any_of_its_values_and_never_ignored_by_an_existing_session() {
    let s = TestServer::start().await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.user("alice", json!({})).await;
    let browser = s.browser();
    // A password session (alice has no factor).
    let page = password(&browser, &query(&[])).await;
    finish(&browser, page).await;

    let mfa_only = r#"{"id_token":{"acr":{"essential":true,"values":["urn:authrim:acr:mfa"]}}}"#;
    for extra in [vec![("claims", mfa_only)], vec![("claims", mfa_only), ("prompt", "none")]] {
        let page = Page::from(browser.authorize(&query(&extra)).await).await;
        assert_eq!(page.redirect_params()["error"], "unmet_authentication_requirements", "an existing session does not meet it either");
    }
    let either = r#"{"id_token":{"acr":{"essential":true,"values":["urn:authrim:acr:password","urn:authrim:acr:mfa"]}}}"#;
    let page = Page::from(browser.authorize(&query(&[("claims", either)])).await).await;
    let code = page.redirect_params()["code"].clone();
    assert_eq!(id_token_of(&s, &secret, &code).await["acr"], authrim::tokens::ACR_PASSWORD, "a password meets one of the values");
    // acr_values in order of preference: password first does not ask for more.
    let page = Page::from(browser.authorize(&query(&[("acr_values", "urn:authrim:acr:password urn:authrim:acr:mfa")])).await).await;
    assert!(page.redirect_params().contains_key("code"));
}
