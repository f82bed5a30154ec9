//! Self-registration: the form's rules (required fields, passwords too short, the username,
//! breached), a sign-up that waits for its e-mail to be verified (nobody created until the
//! link is confirmed, by a POST, once), an address already taken answered like any other
//! (its owner told by mail), the throttle per address; without verification, an account at
//! once. Enumeration and flooding: signup_abuse.rs.

use crate::harness::*;
use crate::mail::{link_in, mail_server, wait_for};
use crate::passkeys::{field, get, post};
use serde_json::json;

async fn signup(browser: &Browser, fields: &[(&str, &str)]) -> Page {
    signup_at(browser, "/signup", fields).await
}

/// The form at `path` (the login page's link carries the request it resumes), filled in.
async fn signup_at(browser: &Browser, path: &str, fields: &[(&str, &str)]) -> Page {
    let form = get(browser, path).await;
    assert_eq!(form.status, 200, "{}", form.html);
    let (token, challenge) = (field(&form, "form"), form.html.contains("name=\"challenge\"").then(|| field(&form, "challenge")));
    let mut all = vec![("form", token.as_str())];
    if let Some(c) = &challenge {
        all.push(("challenge", c.as_str()));
    }
    all.extend_from_slice(fields);
    post(browser, "/signup", &all).await
}

/// An application's login page, and its link to sign up (which carries the request).
async fn signup_link(b: &Browser) -> String {
    let login = Page::from(b.authorize(&[("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "s1")]).await).await;
    let start = login.html.find("href=\"/signup?challenge=").unwrap_or_else(|| panic!("{}", login.html)) + 6;
    login.html[start..].split('"').next().unwrap().replace("&amp;", "&")
}

#[tokio::test]
async fn a_sign_up_waits_for_its_email_to_be_verified() {
    sign_up_waits_for_its_email(false).await;
}

#[tokio::test]
async fn a_sign_up_waits_for_its_email_to_be_verified_on_postgres() {
    sign_up_waits_for_its_email(true).await;
}

async fn sign_up_waits_for_its_email(postgres: bool) {
    let (smtp_url, mail) = mail_server().await;
    let dir = tempfile::tempdir().unwrap();
    let breached = dir.path().join("breached.txt");
    std::fs::write(&breached, "letmein-letmein\n").unwrap();
    let s = TestServer::start_on(postgres, |c| {
        c.signup = true;
        c.signup_required = "email name".into();
        c.smtp_url = Some(smtp_url);
        c.breached_passwords_file = Some(breached);
    })
    .await;
    s.user("alice", json!({"email": "alice@example.com"})).await;
    let b = s.browser();

    let good = [("username", "carol"), ("email", "carol@example.com"), ("name", "Carol"), ("password", "a fine passphrase"), ("confirm_password", "a fine passphrase")];
    let with = |k: &'static str, v: &'static str| good.iter().map(|(a, b)| if *a == k { (*a, v) } else { (*a, *b) }).collect::<Vec<_>>();
    for (fields, status, says) in [
        (with("name", ""), 422, "A required field is empty"),
        (with("email", "not-an-address"), 422, "This is not an e-mail address"),
        (with("confirm_password", "something else"), 422, "are not the same"),
        (with("password", "short").into_iter().map(|(k, v)| if k == "confirm_password" { (k, "short") } else { (k, v) }).collect(), 422, "password"),
        (with("password", "letmein-LETMEIN").into_iter().map(|(k, v)| if k == "confirm_password" { (k, "letmein-LETMEIN") } else { (k, v) }).collect(), 422, "known from a data breach"),
        // A username that is an e-mail address must be the one given (decided by what was
        // typed; a taken username is told only on the confirmation page: signup_abuse.rs).
        (with("username", "carol@elsewhere.example"), 409, "This username cannot be used"),
    ] {
        let page = signup(&b, &fields).await;
        assert_eq!(page.status, status, "{fields:?}: {}", page.html);
        assert!(page.html.contains(says), "{fields:?}: {}", page.html);
        assert!(page.html.contains("value=\"Carol\"") || fields.iter().any(|(k, v)| *k == "name" && v.is_empty()), "what was typed is kept: {}", page.html);
    }
    let forged = post(&b, "/signup", &[("form", "forged"), ("username", "x")]).await;
    assert_eq!(forged.status, 400);

    // A good one: nobody yet; a mail with the link.
    let sent = signup(&b, &good).await;
    assert!(sent.status == 200 && sent.html.contains("Almost done"), "{}", sent.html);
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("carol").is_none(), "nobody until the address is verified");
    let messages = wait_for(&mail, 1).await;
    assert!(messages[0].contains("To: carol@example.com"), "{}", messages[0]);
    let link = link_in(&messages[0]);
    let token = link.split("token=").nth(1).unwrap().to_string();
    // Opening the link (a scanner's GET) confirms nothing; the button does, once.
    let page = get(&b, link.trim_start_matches(&s.url(""))).await;
    assert!(page.html.contains("action=\"/signup/verify\""), "{}", page.html);
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("carol").is_none());
    let done = post(&b, "/signup/verify", &[("token", &token)]).await;
    assert!(done.html.contains("Your account is ready"), "{}", done.html);
    let carol = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("carol@example.com").expect("created");
    assert_eq!((carol.claims["email_verified"].clone(), carol.claims["name"].clone()), (json!(true), json!("Carol")));
    assert!(authrim::registry::users::verify_password(Some(&carol), "a fine passphrase"));
    assert_eq!(post(&b, "/signup/verify", &[("token", &token)]).await.status, 400, "once");

    // An address already taken: the same page; its owner is told, and no link goes out.
    let taken = signup(&s.browser(), &[("username", "mallory"), ("email", "ALICE@example.com"), ("name", "M"), ("password", "a fine passphrase"), ("confirm_password", "a fine passphrase")]).await;
    assert_eq!(taken.html, sent.html, "the same answer");
    let messages = wait_for(&mail, 2).await;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(mail.lock().unwrap().len(), 2, "one mail, to the owner");
    assert!(messages[1].contains("To: alice@example.com") && messages[1].contains("already has one") && !messages[1].contains("/signup/verify"), "{}", messages[1]);
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("mallory").is_none());

    // From an application's login page: the link confirmed in the same browser signs her in
    // and goes on with the request; confirmed in another, only the account is made.
    let rp_secret = s.client("rp", json!({})).await.1.unwrap();
    for (same_browser, name) in [(true, "gwen"), (false, "hal")] {
        let b2 = s.browser();
        let email = format!("{name}@example.com");
        let fields = [("username", name), ("email", email.as_str()), ("name", "G"), ("password", "a fine passphrase"), ("confirm_password", "a fine passphrase")];
        let sent = signup_at(&b2, &signup_link(&b2).await, &fields).await;
        assert!(sent.html.contains("Almost done"), "{}", sent.html);
        let n = mail.lock().unwrap().len();
        let messages = wait_for(&mail, n + 1).await;
        let token = link_in(&messages[n]).split("token=").nth(1).unwrap().to_string();
        let confirming = if same_browser { b2 } else { s.browser() };
        let done = post(&confirming, "/signup/verify", &[("token", &token)]).await;
        if same_browser {
            let done = if done.is_consent() { confirming.post("/consent", &[("challenge", &done.challenge()), ("decision", "allow")]).await } else { done };
            let back = done.redirect_params();
            assert_eq!(back.get("state").map(String::as_str), Some("s1"), "{:?} {}", done.location, done.html);
            let (st, tokens, _) = s.token(Some(("rp", &rp_secret)), &[("grant_type", "authorization_code"), ("code", &back["code"]), ("redirect_uri", REDIRECT)]).await;
            assert_eq!(st, 200, "{tokens}");
            assert_eq!(jwt_parts(tokens["id_token"].as_str().unwrap()).1["sub"], s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login(name).unwrap().id.as_str());
        } else {
            assert!(done.status == 200 && done.html.contains("Your account is ready"), "{}", done.html);
            assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login(name).is_some());
        }
    }

    // Sign-ups are throttled per address.
    let mut statuses = Vec::new();
    for i in 0..6 {
        let name = format!("user{i}");
        let email = format!("user{i}@example.com");
        statuses.push(signup(&b, &[("username", &name), ("email", &email), ("name", "U"), ("password", "a fine passphrase"), ("confirm_password", "a fine passphrase")]).await.status);
    }
    assert!(statuses.contains(&429), "{statuses:?}");
}

#[tokio::test]
async fn without_verification_the_account_signs_in_at_once_and_off_is_off() {
    let off = TestServer::start().await;
    assert_eq!(get(&off.browser(), "/signup").await.status, 404);

    let s = TestServer::start_with(|c| {
        c.signup = true;
        c.signup_verify_email = false;
        c.signup_required = String::new();
    })
    .await;
    let rp_secret = s.client("rp", json!({})).await.1.unwrap();
    let b = s.browser();
    let login = Page::from(b.authorize(&[("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid")]).await).await;
    assert!(login.html.contains("href=\"/signup?challenge="), "{}", login.html);
    let done = signup(&b, &[("username", "dave"), ("password", PASSWORD), ("confirm_password", PASSWORD)]).await;
    assert!(done.html.contains("Your account is ready"), "{}", done.html);

    // From an application's login page: signed up, signed in, on with its request.
    let resumed = signup_at(&b, &signup_link(&b).await, &[("username", "erin"), ("password", PASSWORD), ("confirm_password", PASSWORD)]).await;
    let resumed = if resumed.is_consent() { b.post("/consent", &[("challenge", &resumed.challenge()), ("decision", "allow")]).await } else { resumed };
    let back = resumed.redirect_params();
    assert_eq!(back.get("state").map(String::as_str), Some("s1"), "{:?} {}", resumed.location, resumed.html);
    let (st, tokens, _) = s.token(Some(("rp", &rp_secret)), &[("grant_type", "authorization_code"), ("code", &back["code"]), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    let erin = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("erin").unwrap();
    assert_eq!(jwt_parts(tokens["id_token"].as_str().unwrap()).1["sub"], erin.id.as_str());
    // A forged or another browser's request is not resumed: the plain page.
    let other = s.browser();
    let form = get(&other, "/signup").await;
    let plain = post(&other, "/signup", &[("form", &field(&form, "form")), ("challenge", "forged"), ("username", "finn"), ("password", PASSWORD), ("confirm_password", PASSWORD)]).await;
    assert!(plain.html.contains("Your account is ready"), "{}", plain.html);
    let params = s.code_for(&s.browser(), "rp", "dave", &[]).await;
    assert!(params.contains_key("code"), "{params:?}");
    let (_, audit) = s.admin(reqwest::Method::GET, "/admin/audit?event=user_created", None).await;
    assert_eq!(audit["events"][0]["detail"]["by"], "signup", "{audit}");
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("dave").unwrap().claims.get("locale").is_none(), "no language asked, none kept");

    // A Japanese browser's account keeps its language (for its mail); German has no catalogue.
    for (accept, username, kept) in [("ja-JP,ja;q=0.9", "emi", Some("ja")), ("de-DE", "fritz", None)] {
        let form = Page::from(b.client.get(s.url("/signup")).header("accept-language", accept).send().await.unwrap()).await;
        let fields = [("form", field(&form, "form")), ("username", username.into()), ("password", PASSWORD.into()), ("confirm_password", PASSWORD.into())];
        let done = Page::from(b.client.post(s.url("/signup")).header("accept-language", accept).form(&fields).send().await.unwrap()).await;
        assert_eq!(done.status, 200, "{}", done.html);
        let user = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login(username).unwrap();
        assert_eq!(user.claims.get("locale").and_then(|v| v.as_str()), kept, "{accept}");
    }
}

/// Pending sign-ups are bounded (`signup_max_pending`): past it, the oldest waiting one makes
/// room (its link stops working), so that a flood cannot hold the form shut; a confirmation
/// that cannot be made changes nothing.
#[tokio::test]
async fn pending_sign_ups_are_bounded() {
    let (smtp_url, mail) = mail_server().await;
    let s = TestServer::start_with(|c| {
        c.signup = true;
        c.signup_max_pending = 2;
        c.smtp_url = Some(smtp_url);
    })
    .await;
    let b = s.browser();
    let fields = |n: &str| {
        let (u, e) = (format!("user{n}"), format!("user{n}@example.com"));
        vec![("username".to_string(), u), ("email".to_string(), e), ("password".to_string(), "a fine passphrase".to_string()), ("confirm_password".to_string(), "a fine passphrase".to_string())]
    };
    let go = |n: &'static str| {
        let b = &b;
        async move {
            let f = fields(n);
            let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            signup(b, &f).await
        }
    };
    let pending = || async { s.server.app.db.read(|sql| sql.query("SELECT username FROM pending_signups", &[])).await.unwrap().iter().map(|r| r.text(0).unwrap()).collect::<Vec<_>>() };
    let token_for = |messages: &[String], n: &str| {
        let m = messages.iter().find(|m| m.contains(&format!("To: user{n}@example.com"))).unwrap_or_else(|| panic!("no mail to user{n}: {messages:?}"));
        link_in(m).split("token=").nth(1).unwrap().to_string()
    };
    assert_eq!(go("1").await.status, 200);
    assert_eq!(go("2").await.status, 200);
    wait_for(&mail, 2).await;
    let full = go("3").await;
    assert_eq!(full.status, 200, "{}", full.html);
    let names = pending().await;
    // The oldest by the second it came (user1 and user2 came in the same one: either).
    assert!(names.len() == 2 && names.contains(&"user3".to_string()), "the oldest made room; still within the bound: {names:?}");
    let (kept, dropped) = if names.contains(&"user1".to_string()) { ("1", "2") } else { ("2", "1") };
    let messages = wait_for(&mail, 3).await;
    assert_eq!(post(&b, "/signup/verify", &[("token", &token_for(&messages, dropped))]).await.status, 400, "the dropped one's link no longer works");
    // A confirmation that cannot be made (the username taken meanwhile) changes nothing: the
    // sign-up stays pending, nobody is made under its name.
    s.user(&format!("user{kept}"), json!({})).await;
    let refused = post(&b, "/signup/verify", &[("token", &token_for(&messages, kept))]).await;
    assert_eq!(refused.status, 409, "{}", refused.html);
    assert_eq!(pending().await.len(), 2, "the refused confirmation took nothing out");
    // The other one confirmed: one fewer waiting.
    assert_eq!(post(&b, "/signup/verify", &[("token", &token_for(&messages, "3"))]).await.status, 200);
    assert_eq!(pending().await, [format!("user{kept}")]);
}
