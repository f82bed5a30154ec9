//! Organizations (issue 31), the ways in: an invitation by e-mail (mailed from the outbox,
//! accepted once, by the invited verified address only, at its own tenant only), and a client
//! that needs an organization (`organization_required`): the user's only one, a chooser for a
//! member of several, `access_denied` for a member of none. On SQLite and PostgreSQL.

use crate::harness::*;
use crate::mail::{link_in, mail_server, wait_for};
use crate::passkeys::{field, get, post};
use crate::tenants::rp_and_alice;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Open `path` in `b`, signing in as `username` if the login page comes.
async fn signed_in_page(b: &Browser, path: &str, username: &str) -> Page {
    let page = get(b, path).await;
    if page.html.contains("action=\"/login\"") {
        return post(b, "/login", &[("challenge", &page.challenge()), ("username", username), ("password", PASSWORD)]).await;
    }
    page
}

/// The path (with its query) of a link to this server.
fn path_of(link: &str) -> String {
    let u = url::Url::parse(link).unwrap();
    format!("{}?{}", u.path(), u.query().unwrap_or_default())
}

async fn members(s: &TestServer, org: &str) -> Vec<(String, Value)> {
    let (_, list) = s.admin(Method::GET, &format!("/admin/organizations/{org}/members"), None).await;
    list["members"].as_array().unwrap().iter().map(|m| (m["username"].as_str().unwrap_or_default().to_string(), m["roles"].clone())).collect()
}

async fn pending(s: &TestServer, org: &str) -> Vec<Value> {
    let (status, list) = s.admin(Method::GET, &format!("/admin/organizations/{org}/invitations"), None).await;
    assert_eq!(status, 200, "{list}");
    list["invitations"].as_array().unwrap().clone()
}

async fn an_invitation_is_mailed_and_accepted_once_by_its_address(postgres: bool) {
    let (smtp, mail) = mail_server().await;
    let s = TestServer::start_on(postgres, |c| c.smtp_url = Some(smtp)).await;
    let secret = rp_and_alice(&s, "").await;
    s.user("bob", json!({"email": "bob@acme.example", "email_verified": true})).await;
    s.user("carol", json!({"email": "carol@elsewhere.example", "email_verified": true})).await;
    s.user("dan", json!({"email": "dan@acme.example", "email_verified": false})).await;
    assert_eq!(s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "acme", "display_name": "Acme Inc."}))).await.0, 201);

    // Invited, with roles: the answer never holds the token; the mail is in the outbox.
    let (status, inv) = s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(json!({"email": "Bob@Acme.example", "roles": ["billing:read"]}))).await;
    assert_eq!(status, 201, "{inv}");
    assert!(inv.get("token").is_none() && inv.get("token_hash").is_none(), "{inv}");
    assert!(inv["expires_at"].as_u64().unwrap() >= inv["created_at"].as_u64().unwrap() + 7 * 86_400 - 1, "the default: 7 days");
    let listed = pending(&s, "acme").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], inv["id"]);
    for (body, want) in [
        (json!({"email": "bob@acme.example"}), 409),
        (json!({"email": "not an address"}), 400),
        (json!({"email": "x@acme.example", "roles": ["has space"]}), 400),
        (json!({"email": "x@acme.example", "surprise": 1}), 400),
    ] {
        assert_eq!(s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(body.clone())).await.0, want, "{body}");
    }
    assert_eq!(s.admin(Method::POST, "/admin/organizations/nope/invitations", Some(json!({"email": "x@acme.example"}))).await.0, 404);
    let messages = wait_for(&mail, 1).await;
    assert!(messages[0].contains("Bob@Acme.example") && messages[0].contains("Acme Inc."), "{}", messages[0]);
    let link = link_in(&messages[0]);
    assert!(link.starts_with(&format!("{}/organizations/invitation?token=", s.issuer())), "{link}");
    let path = path_of(&link);

    // Another tenant knows no such invitation.
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    let stranger = s.browser();
    let page = get(&stranger, &format!("/t/other{path}")).await;
    assert_eq!(page.status, 404, "{}", page.html);
    assert_eq!(s.admin(Method::GET, "/t/other/admin/organizations/acme/invitations", None).await.0, 404);

    // Someone else signed in (another address, or the address unverified): refused, and
    // nothing changes.
    for who in ["carol", "dan"] {
        let page = signed_in_page(&s.browser(), &path, who).await;
        assert_eq!(page.status, 403, "{who}: {}", page.html);
        assert!(page.html.contains("not the one this invitation was sent to") && !page.html.contains("name=\"csrf\""), "{}", page.html);
    }
    assert!(members(&s, "acme").await.is_empty());

    // Bob signs in from the link and is offered the invitation; a post without its CSRF
    // token changes nothing.
    let bob = s.browser();
    let offer = signed_in_page(&bob, &path, "bob").await;
    assert_eq!(offer.status, 200, "{}", offer.html);
    assert!(offer.html.contains("Join Acme Inc.") && offer.html.contains("billing:read"), "{}", offer.html);
    let (csrf, token) = (field(&offer, "csrf"), field(&offer, "token"));
    let refused = post(&bob, "/organizations/invitation", &[("csrf", "forged"), ("token", &token)]).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    let refused = stranger.post_no_follow("/organizations/invitation", &[("csrf", &csrf), ("token", &token)]).await;
    assert_eq!(refused.status, 303, "another browser is sent to sign in: {:?}", refused.location);
    assert!(members(&s, "acme").await.is_empty());
    assert_eq!(pending(&s, "acme").await.len(), 1);

    // Accepted: a member with the invited roles, audited; the link works once.
    let done = post(&bob, "/organizations/invitation", &[("csrf", &csrf), ("token", &token)]).await;
    assert_eq!(done.status, 200, "{}", done.html);
    assert!(done.html.contains("You are now a member of Acme Inc."), "{}", done.html);
    assert_eq!(members(&s, "acme").await, vec![("bob".to_string(), json!(["billing:read"]))]);
    assert!(pending(&s, "acme").await.is_empty());
    let again = post(&bob, "/organizations/invitation", &[("csrf", &csrf), ("token", &token)]).await;
    assert_eq!(again.status, 410, "{}", again.html);
    assert_eq!(get(&bob, &path).await.status, 410);
    let audit = s.admin(Method::GET, "/admin/audit?event=organization_invitation_accepted", None).await.1;
    assert_eq!(audit["events"][0]["detail"]["invitation_id"], inv["id"], "{audit}");
    let audit = s.admin(Method::GET, "/admin/audit?event=organization_invitation_created", None).await.1;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1, "{audit}");

    // Bob's tokens for the organization carry the invited roles.
    let res = bob.authorize(&request_query("code", "rp", &[("organization", "acme")])).await;
    let code = bob.finish_login(res, "bob", PASSWORD).await;
    let form = [("grant_type", "authorization_code"), ("code", code["code"].as_str()), ("redirect_uri", REDIRECT)];
    let tokens: Value = s.http.post(s.url("/token")).basic_auth("rp", Some(&secret)).form(&form).send().await.unwrap().json().await.unwrap();
    let claims = jwt_parts(tokens["id_token"].as_str().unwrap()).1;
    assert_eq!((claims["org_name"].as_str(), claims["org_roles"].clone()), (Some("acme"), json!(["billing:read"])), "{claims}");

    // Revoked: the link stops working; revoking twice is a 404.
    let (status, second) = s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(json!({"email": "erin@acme.example"}))).await;
    assert_eq!(status, 201, "{second}");
    let link = link_in(&wait_for(&mail, 2).await[1]);
    let id = second["id"].as_str().unwrap();
    assert_eq!(s.admin(Method::DELETE, &format!("/t/other/admin/organizations/acme/invitations/{id}"), None).await.0, 404);
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/organizations/acme/invitations/{id}"), None).await.0, 204);
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/organizations/acme/invitations/{id}"), None).await.0, 404);
    let page = get(&s.browser(), &path_of(&link)).await;
    assert_eq!(page.status, 410, "{}", page.html);
    assert!(page.html.contains("withdrawn"), "{}", page.html);
    assert!(s.admin(Method::GET, "/admin/audit?event=organization_invitation_revoked", None).await.1["events"][0].is_object());

    // An unknown or malformed token: a page, never a server error.
    for bad in ["/organizations/invitation", "/organizations/invitation?token=nope", "/organizations/invitation?token=%FF%FE"] {
        assert_eq!(get(&s.browser(), bad).await.status, 404, "{bad}");
    }
}

#[tokio::test]
async fn an_invitation_is_mailed_and_accepted_once_by_its_address_on_sqlite() {
    an_invitation_is_mailed_and_accepted_once_by_its_address(false).await;
}

#[tokio::test]
async fn an_invitation_is_mailed_and_accepted_once_by_its_address_on_postgres() {
    an_invitation_is_mailed_and_accepted_once_by_its_address(true).await;
}

async fn invitations_expire_are_capped_and_go_with_their_organization(postgres: bool) {
    let (smtp, mail) = mail_server().await;
    let s = TestServer::start_on(postgres, |c| {
        c.smtp_url = Some(smtp);
        c.organization_invitation_ttl = 2;
        c.organization_max_pending_invitations = 2;
    })
    .await;
    s.user("bob", json!({"email": "bob@acme.example", "email_verified": true})).await;
    assert_eq!(s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "acme"}))).await.0, 201);
    for who in ["bob@acme.example", "erin@acme.example"] {
        assert_eq!(s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(json!({"email": who}))).await.0, 201);
    }
    let (status, over) = s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(json!({"email": "fay@acme.example"}))).await;
    assert_eq!(status, 409, "{over}");
    let messages = wait_for(&mail, 2).await;
    let links: Vec<String> = messages.iter().map(|m| path_of(&link_in(m))).collect();
    let bobs = links.iter().zip(&messages).find(|(_, m)| m.contains("bob@acme.example")).unwrap().0.clone();
    let erins = links.iter().find(|l| **l != bobs).unwrap().clone();

    // Bob signs in from his link in time, but accepts after it expired: refused, nothing changes.
    let bob = s.browser();
    let offer = signed_in_page(&bob, &bobs, "bob").await;
    assert_eq!(offer.status, 200, "{}", offer.html);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let late = post(&bob, "/organizations/invitation", &[("csrf", &field(&offer, "csrf")), ("token", &field(&offer, "token"))]).await;
    assert_eq!(late.status, 410, "{}", late.html);
    assert!(late.html.contains("expired"), "{}", late.html);
    assert!(members(&s, "acme").await.is_empty());
    // Expired ones are not pending: the cap has room again.
    assert!(pending(&s, "acme").await.is_empty());
    assert_eq!(s.admin(Method::POST, "/admin/organizations/acme/invitations", Some(json!({"email": "fay@acme.example"}))).await.0, 201);

    // Deleting the organization removes its invitations: their links name nothing.
    assert_eq!(s.admin(Method::DELETE, "/admin/organizations/acme", None).await.0, 204);
    assert_eq!(get(&s.browser(), &erins).await.status, 404);
    let fays = path_of(&link_in(&wait_for(&mail, 3).await[2]));
    assert_eq!(get(&s.browser(), &fays).await.status, 404);
}

#[tokio::test]
async fn invitations_expire_are_capped_and_go_with_their_organization_on_sqlite() {
    invitations_expire_are_capped_and_go_with_their_organization(false).await;
}

#[tokio::test]
async fn invitations_expire_are_capped_and_go_with_their_organization_on_postgres() {
    invitations_expire_are_capped_and_go_with_their_organization(true).await;
}

/// Sign `username` in for `rp` with `extra`, choosing `choose` (an organization's id) if
/// the chooser comes: the redirect's parameters, or the page where it stopped.
async fn authorize_choosing(b: &Browser, username: &str, extra: &[(&str, &str)], choose: Option<&str>) -> Result<HashMap<String, String>, Page> {
    let mut page = Page::from(b.authorize(&request_query("code", "rp", extra)).await).await;
    for _ in 0..5 {
        if page.location.as_deref().is_some_and(|l| l.starts_with(REDIRECT)) {
            return Ok(page.redirect_params());
        }
        page = if page.is_login() {
            b.post("/login", &[("challenge", &page.challenge()), ("username", username), ("password", PASSWORD)]).await
        } else if page.is_consent() {
            b.post("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await
        } else if page.html.contains("action=\"/login/organization\"") && choose.is_some() {
            b.post("/login/organization", &[("challenge", &page.challenge()), ("organization", choose.unwrap())]).await
        } else {
            return Err(page);
        };
    }
    Err(page)
}

fn redirected(r: Result<HashMap<String, String>, Page>) -> HashMap<String, String> {
    r.unwrap_or_else(|p| panic!("stopped at a page ({}): {}", p.status, p.html))
}

fn stopped(r: Result<HashMap<String, String>, Page>) -> Page {
    match r {
        Ok(m) => panic!("went back to the client: {m:?}"),
        Err(p) => p,
    }
}

async fn id_token_claims(s: &TestServer, secret: &str, code: &str) -> Value {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)];
    let tokens: Value = s.http.post(s.url("/token")).basic_auth("rp", Some(secret)).form(&form).send().await.unwrap().json().await.unwrap();
    jwt_parts(tokens["id_token"].as_str().unwrap_or_else(|| panic!("{tokens}"))).1
}

async fn a_client_that_needs_an_organization_gets_one(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let secret = rp_and_alice(&s, "").await;
    for u in ["bob", "carol"] {
        s.user(u, json!({})).await;
    }
    s.user("dora", json!({"email": "dora@initech.example", "email_verified": true})).await;
    let mut ids = HashMap::new();
    for (slug, name, domains) in [("acme", "Acme Inc.", json!([])), ("globex", "Globex", json!([])), ("initech", "Initech", json!(["initech.example"]))] {
        let (status, org) = s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": slug, "display_name": name, "domains": domains}))).await;
        assert_eq!(status, 201, "{org}");
        ids.insert(slug, org["id"].as_str().unwrap().to_string());
    }
    for (org, user, roles) in [("acme", "alice", json!(["admin"])), ("globex", "alice", json!(["viewer"])), ("acme", "carol", json!([]))] {
        assert_eq!(s.admin(Method::PUT, &format!("/admin/organizations/{org}/members/{user}"), Some(json!({"roles": roles}))).await.0, 200);
    }
    // Without the setting, a request naming no organization is for none.
    let r = redirected(authorize_choosing(&s.browser(), "alice", &[], None).await);
    assert!(id_token_claims(&s, &secret, &r["code"]).await.get("org_id").is_none());

    let grants = json!(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]);
    assert_eq!(s.admin(Method::PATCH, "/admin/clients/rp", Some(json!({"grant_types": grants}))).await.0, 200);
    let device = || s.http.post(s.url("/device_authorization")).basic_auth("rp", Some(&secret)).form(&[("scope", "openid")]).send();
    assert_eq!(device().await.unwrap().status(), 200);

    let (status, rp) = s.admin(Method::PATCH, "/admin/clients/rp", Some(json!({"organization_required": true}))).await;
    assert_eq!(status, 200, "{rp}");
    assert_eq!(s.admin(Method::GET, "/admin/clients/rp", None).await.1["organization_required"], true);
    // The device grant cannot ask which organization: refused, not tokens for none.
    let res = device().await.unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert!(body["error"] == "unauthorized_client" && body["error_description"].as_str().unwrap().contains("organization"), "{body}");

    // A member of one: that one, without a question.
    let r = redirected(authorize_choosing(&s.browser(), "carol", &[], None).await);
    assert_eq!(id_token_claims(&s, &secret, &r["code"]).await["org_name"], "acme");
    // A member of none: refused to the client. One whose verified address is at an
    // organization's domain joins it.
    let r = redirected(authorize_choosing(&s.browser(), "bob", &[], None).await);
    assert_eq!(r["error"], "access_denied", "{r:?}");
    let r = redirected(authorize_choosing(&s.browser(), "dora", &[], None).await);
    assert_eq!(id_token_claims(&s, &secret, &r["code"]).await["org_name"], "initech");

    // A member of several: the chooser, with their organizations only.
    let alice = s.browser();
    let chooser = stopped(authorize_choosing(&alice, "alice", &[], None).await);
    assert_eq!(chooser.status, 200);
    assert!(chooser.html.contains("Acme Inc.") && chooser.html.contains("Globex") && !chooser.html.contains("Initech"), "{}", chooser.html);
    // Another organization's id, or none, is refused; nothing is issued.
    for bad in [ids["initech"].as_str(), "", "nope"] {
        let page = alice.post("/login/organization", &[("challenge", &chooser.challenge()), ("organization", bad)]).await;
        assert_eq!(page.status, 400, "{bad}: {}", page.html);
    }
    // The form is the session's: another browser cannot post it.
    let page = s.browser().post("/login/organization", &[("challenge", &chooser.challenge()), ("organization", &ids["globex"])]).await;
    assert_eq!(page.status, 400);
    let r = redirected(authorize_choosing(&alice, "alice", &[], Some(&ids["globex"])).await);
    let claims = id_token_claims(&s, &secret, &r["code"]).await;
    assert_eq!((claims["org_id"].as_str(), claims["org_name"].as_str(), claims["org_roles"].clone()), (Some(ids["globex"].as_str()), Some("globex"), json!(["viewer"])));

    // Silently, the choice cannot be asked; a request that names one needs none.
    let r = redirected(authorize_choosing(&alice, "alice", &[("prompt", "none")], None).await);
    assert_eq!(r["error"], "interaction_required", "{r:?}");
    let r = redirected(authorize_choosing(&alice, "alice", &[("organization", "acme")], None).await);
    assert_eq!(id_token_claims(&s, &secret, &r["code"]).await["org_roles"], json!(["admin"]));
}

#[tokio::test]
async fn a_client_that_needs_an_organization_gets_one_on_sqlite() {
    a_client_that_needs_an_organization_gets_one(false).await;
}

#[tokio::test]
async fn a_client_that_needs_an_organization_gets_one_on_postgres() {
    a_client_that_needs_an_organization_gets_one(true).await;
}
