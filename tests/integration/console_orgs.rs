//! Organizations in the admin console (issue 31): a tenant admin creates, edits and deletes
//! them and manages their members, every change audited as the console user's; an auditor
//! looks; an organization administrator (a member with the organization role `admin`) signs
//! in with the console's factor rules and sees and manages only their own organizations'
//! members, everything else refused by the server, pages and forms alike. And the tenant's
//! admin API credentials, made and revoked in the console.

use crate::console::{csrf, enter, operator, totp};
use crate::harness::*;
use crate::passkeys::{get, post};
use reqwest::Method;
use serde_json::{json, Value};

/// The console's organization events of the audit log, as (event, detail).
async fn org_events(s: &TestServer) -> Vec<(String, Value)> {
    let (_, v) = s.admin(Method::GET, "/admin/audit?limit=100", None).await;
    v["events"].as_array().unwrap().iter().filter(|e| e["event"].as_str().unwrap().starts_with("organization_")).map(|e| (e["event"].as_str().unwrap().to_string(), e["detail"].clone())).collect()
}

async fn member_roles(s: &TestServer, org: &str, user: &str) -> Option<Value> {
    let (_, v) = s.admin(Method::GET, &format!("/admin/organizations/{org}/members"), None).await;
    v["members"].as_array().unwrap().iter().find(|m| m["username"] == user).map(|m| m["roles"].clone())
}

#[tokio::test]
async fn the_console_manages_organizations_and_their_members() {
    organizations(false).await;
}

#[tokio::test]
async fn the_console_manages_organizations_and_their_members_on_postgres() {
    organizations(true).await;
}

async fn organizations(postgres: bool) {
    let s = TestServer::start_on(postgres, |c| {
        c.identity_providers = vec![toml::from_str("id = \"acme-idp\"\nname = \"Acme SSO\"\nissuer = \"http://127.0.0.1:9\"\nclient_id = \"c\"\nclient_secret = \"s\"").unwrap()];
    })
    .await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let alice = s.user("alice", json!({"email": "alice@acme.example"})).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);

    // The list, with the navigation entry and the form; the connection is one of the tenant's providers.
    let list = get(&admin, "/console/organizations").await;
    assert_eq!(list.status, 200, "{}", list.html);
    assert!(list.html.contains("href=\"/console/organizations\" aria-current=\"page\"") && list.html.contains("No organizations yet."), "{}", list.html);
    assert!(list.html.contains("<option value=\"acme-idp\">Acme SSO (acme-idp)</option>"), "{}", list.html);
    let made = post(
        &admin,
        "/console/organizations",
        &[("csrf", &csrf(&list)), ("slug", "acme"), ("display_name", "Acme <Inc>"), ("logo_uri", "https://acme.example/logo.png"), ("domains", "Acme.example\r\nacme.test, acme.example"), ("upstream", "acme-idp")],
    )
    .await;
    assert_eq!(made.status, 200, "{}", made.html);
    assert!(made.html.contains("Created.") && made.html.contains("Organization Acme &lt;Inc&gt;"), "{}", made.html);
    let (_, acme) = s.admin(Method::GET, "/admin/organizations/acme", None).await;
    assert_eq!((acme["display_name"].as_str(), acme["domains"].clone(), acme["upstream"].as_str()), (Some("Acme <Inc>"), json!(["acme.example", "acme.test"]), Some("acme-idp")), "{acme}");
    let acme_id = acme["id"].as_str().unwrap().to_string();

    // Refused values: the form again with the reason; nothing made or changed.
    for (fields, words) in [
        (vec![("slug", "Not A Slug")], "slug"),
        (vec![("slug", "globex"), ("domains", "acme.example")], "the domain acme.example is another organization"),
        (vec![("slug", "globex"), ("domains", "localhost")], "is not a domain name"),
        (vec![("slug", "globex"), ("upstream", "nowhere")], "no upstream identity provider"),
        (vec![("slug", "globex"), ("logo_uri", "http://globex.example/logo.png")], "logo_uri must be an https URL"),
    ] {
        let mut form = vec![("csrf", csrf(&made))];
        form.extend(fields.iter().map(|(k, v)| (*k, v.to_string())));
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let bad = post(&admin, "/console/organizations", &form).await;
        assert!(bad.status == 400 || bad.status == 409, "{words}: {}", bad.html);
        assert!(bad.html.contains("role=\"alert\"") && bad.html.replace("&quot;", "\"").contains(words), "{words}: {}", bad.html);
    }
    assert_eq!(s.admin(Method::GET, "/admin/organizations", None).await.1["organizations"].as_array().unwrap().len(), 1, "nothing made");
    // Without the CSRF token: refused.
    let forged = post(&admin, "/console/organizations", &[("slug", "forged")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    assert_eq!(s.admin(Method::GET, "/admin/organizations/forged", None).await.0, 404);

    // An edit: the whole form; a domain taken away, the connection removed.
    let page = get(&admin, &format!("/console/organizations/{acme_id}")).await;
    assert!(page.html.contains("<option value=\"acme-idp\" selected>") && page.html.contains("acme.test"), "{}", page.html);
    let saved = post(&admin, &format!("/console/organizations/{acme_id}"), &[("csrf", &csrf(&page)), ("display_name", "Acme"), ("domains", "acme.example"), ("upstream", "")]).await;
    assert!(saved.html.contains("Saved."), "{}", saved.html);
    let (_, acme) = s.admin(Method::GET, "/admin/organizations/acme", None).await;
    assert_eq!((acme["display_name"].as_str(), acme["domains"].clone(), acme.get("upstream").cloned().unwrap_or(Value::Null)), (Some("Acme"), json!(["acme.example"]), Value::Null), "{acme}");
    let bad = post(&admin, &format!("/console/organizations/{acme_id}"), &[("csrf", &csrf(&page)), ("display_name", "Typed"), ("domains", "not a domain")]).await;
    assert!(bad.status == 400 && bad.html.contains("value=\"Typed\""), "the typed values kept: {}", bad.html);

    // Members: added by e-mail or username, roles changed, removed; a stranger is not found.
    let added = post(&admin, &format!("/console/organizations/{acme_id}/members"), &[("csrf", &csrf(&page)), ("user", "ALICE@acme.example"), ("roles", "billing:read, support")]).await;
    assert!(added.html.contains("Created.") && added.html.contains(">alice</a>"), "{}", added.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, Some(json!(["billing:read", "support"])));
    let unknown = post(&admin, &format!("/console/organizations/{acme_id}/members"), &[("csrf", &csrf(&page)), ("user", "ali"), ("roles", "")]).await;
    assert_eq!(unknown.status, 400, "not a search: {}", unknown.html);
    assert!(unknown.html.contains("no user has the username or e-mail"), "{}", unknown.html);
    let bad_role = post(&admin, &format!("/console/organizations/{acme_id}/members/{alice}"), &[("csrf", &csrf(&page)), ("roles", "has\u{7f}control")]).await;
    assert_eq!(bad_role.status, 400, "{}", bad_role.html);
    let changed = post(&admin, &format!("/console/organizations/{acme_id}/members/{alice}"), &[("csrf", &csrf(&page)), ("roles", "admin")]).await;
    assert!(changed.html.contains("Saved."), "{}", changed.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, Some(json!(["admin"])));
    let removed = post(&admin, &format!("/console/organizations/{acme_id}/members/{alice}/remove"), &[("csrf", &csrf(&page))]).await;
    assert!(removed.html.contains("Removed.") && removed.html.contains("No members yet."), "{}", removed.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, None);
    // The roles form does not add anyone: only a member's roles change there.
    let not_member = post(&admin, &format!("/console/organizations/{acme_id}/members/{alice}"), &[("csrf", &csrf(&page)), ("roles", "admin")]).await;
    assert_eq!(not_member.status, 404, "{}", not_member.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, None);

    // Each change is the admin API's event, by the console user.
    let events = org_events(&s).await;
    for kind in ["organization_created", "organization_changed", "organization_member_added", "organization_member_changed", "organization_member_removed"] {
        assert!(events.iter().any(|(e, d)| e == kind && d["by"] == "console" && d["admin"] == root.as_str()), "{kind}: {events:?}");
    }

    // An auditor looks, and changes nothing.
    let auditor = operator(&s, "audrey", &["auditor"]).await;
    let audrey_totp = totp(&s, &auditor).await;
    let audrey = s.browser();
    assert_eq!(enter(&audrey, "audrey", Some(&audrey_totp)).await.status, 200);
    let seen = get(&audrey, &format!("/console/organizations/{acme_id}")).await;
    assert!(seen.status == 200 && seen.html.contains("acme.example") && !seen.html.contains("name=\"domains\"") && !seen.html.contains("/members\""), "{}", seen.html);
    // Her CSRF token from a page that has a form (her own, disabled).
    let token = csrf(&get(&audrey, &format!("/console/users/{auditor}")).await);
    for path in [format!("/console/organizations/{acme_id}/members"), format!("/console/organizations/{acme_id}"), format!("/console/organizations/{acme_id}/delete")] {
        let refused = post(&audrey, &path, &[("csrf", &token), ("user", "alice"), ("confirm", "acme"), ("display_name", "Audrey's")]).await;
        assert_eq!(refused.status, 403, "{path}: {}", refused.html);
    }
    assert_eq!(member_roles(&s, "acme", "alice").await, None);

    // Deleted with the slug typed again; a wrong one deletes nothing.
    let wrong = post(&admin, &format!("/console/organizations/{acme_id}/delete"), &[("csrf", &csrf(&page)), ("confirm", "acm")]).await;
    assert_eq!(wrong.status, 400, "{}", wrong.html);
    assert_eq!(s.admin(Method::GET, "/admin/organizations/acme", None).await.0, 200);
    let deleted = post(&admin, &format!("/console/organizations/{acme_id}/delete"), &[("csrf", &csrf(&page)), ("confirm", "acme")]).await;
    assert!(deleted.html.contains("Deleted.") && deleted.html.contains("No organizations yet."), "{}", deleted.html);
    assert_eq!(s.admin(Method::GET, "/admin/organizations/acme", None).await.0, 404);
    assert_eq!(get(&admin, &format!("/console/organizations/{acme_id}")).await.status, 404);
    assert!(org_events(&s).await.iter().any(|(e, d)| e == "organization_deleted" && d["admin"] == root.as_str()));
}

/// An organization administrator: the console's second-factor rule; only their own
/// organizations, whose members and roles they manage; every other page and form of the
/// console refused by the server (a table of them), another organization's as well.
#[tokio::test]
async fn an_organization_administrator_manages_only_their_members() {
    let s = TestServer::start().await;
    let alice = s.user("alice", json!({"email": "alice@acme.example"})).await;
    let bob = s.user("bob", json!({})).await;
    let carol = s.user("carol", json!({})).await;
    let (_, acme) = s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "acme", "domains": ["acme.example"]}))).await;
    let (_, globex) = s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "globex", "display_name": "Globex Corp", "domains": ["globex.example"]}))).await;
    let (acme_id, globex_id) = (acme["id"].as_str().unwrap().to_string(), globex["id"].as_str().unwrap().to_string());
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/bob", Some(json!({"roles": ["admin"]}))).await.0, 200);
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/globex/members/carol", Some(json!({"roles": ["admin"]}))).await.0, 200);
    // A member without the role is no administrator.
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/carol", Some(json!({"roles": ["billing"]}))).await.0, 200);
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/globex/members/alice", Some(json!({"roles": ["billing"]}))).await.0, 200);

    // The console's rules hold: a second factor first.
    let page = enter(&s.browser(), "bob", None).await;
    assert_eq!(page.status, 403, "{}", page.html);
    assert!(page.html.contains("Add a second factor first"), "{}", page.html);
    let secret = totp(&s, &bob).await;
    let browser = s.browser();
    let home = enter(&browser, "bob", Some(&secret)).await;
    assert_eq!(home.status, 200, "{}", home.html);
    // Their console is their organizations: only theirs listed, no other navigation.
    assert!(home.html.contains("<h1>Organizations</h1>") && home.html.contains("organization administrator"), "{}", home.html);
    assert!(home.html.contains(&format!("/console/organizations/{acme_id}\"")) && !home.html.contains("globex") && !home.html.contains("Globex"), "{}", home.html);
    for link in ["/console/clients", "/console/users", "/console/keys", "/console/audit", "/console/credentials", "/console/tenants", "name=\"slug\""] {
        assert!(!home.html.contains(link), "{link}: {}", home.html);
    }
    let mine = get(&browser, "/console/organizations/acme").await;
    assert_eq!(mine.status, 200, "{}", mine.html);
    assert!(mine.html.contains("acme.example") && mine.html.contains(">carol<") && mine.html.contains("set by the tenant"), "{}", mine.html);
    assert!(!mine.html.contains("name=\"domains\"") && !mine.html.contains("/delete\""), "no settings form: {}", mine.html);
    assert!(!mine.html.contains("/console/users/"), "no link into the tenant's users: {}", mine.html);
    let token = csrf(&mine);

    // Refused, by typing URLs: every other page of the console, and another organization.
    let refused = |page: &Page| page.status == 403 && page.html.contains("Outside your organizations") && !page.html.contains("Globex") && !page.html.contains("globex.example");
    for path in [
        "/console/clients".to_string(),
        "/console/clients/new?type=web".into(),
        "/console/clients/authrim-console".into(),
        "/console/users".into(),
        "/console/users?q=alice".into(),
        "/console/users/new".into(),
        format!("/console/users/{alice}"),
        format!("/console/users/{bob}"),
        "/console/keys".into(),
        "/console/audit".into(),
        format!("/console/audit?user={alice}"),
        "/console/tenants".into(),
        "/console/credentials".into(),
        "/console/groups".into(),
        "/console/organizations/globex".into(),
        format!("/console/organizations/{globex_id}"),
        "/console/organizations/no-such-org".into(),
    ] {
        let page = get(&browser, &path).await;
        assert!(refused(&page), "{path}: {} {}", page.status, page.html);
    }
    // And by posting forms, with a valid CSRF token: nothing changes.
    let before = (s.admin(Method::GET, "/admin/organizations", None).await.1, s.admin(Method::GET, "/admin/clients", None).await.1, s.admin(Method::GET, "/admin/users", None).await.1, s.admin(Method::GET, "/admin/credentials", None).await.1);
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        ("/console/clients".into(), vec![("client_id", "sneaky"), ("method", "none"), ("redirect_uris", REDIRECT), ("grant:authorization_code", "on")]),
        ("/console/clients/authrim-console/delete".into(), vec![]),
        ("/console/users".into(), vec![("username", "mallory"), ("password", PASSWORD), ("role:admin", "on")]),
        (format!("/console/users/{bob}"), vec![("username", "bob"), ("role:admin", "on")]),
        (format!("/console/users/{alice}/delete"), vec![]),
        (format!("/console/users/{alice}/sessions/end"), vec![]),
        (format!("/console/users/{alice}/factors/remove"), vec![]),
        ("/console/keys/rotate".into(), vec![("alg", "RS256")]),
        ("/console/tenants".into(), vec![("slug", "sneaky")]),
        ("/console/credentials".into(), vec![("name", "sneaky")]),
        ("/console/credentials/0a1b/revoke".into(), vec![]),
        ("/console/organizations".into(), vec![("slug", "sneaky")]),
        ("/console/groups".into(), vec![("display_name", "sneaky")]),
        ("/console/clients/authrim-console/roles".into(), vec![("role", "sneaky")]),
        // Their own organization's settings are the tenant admin's (domains decide membership).
        (format!("/console/organizations/{acme_id}"), vec![("display_name", "Mine"), ("domains", "globex.example\nbig.example")]),
        (format!("/console/organizations/{acme_id}/delete"), vec![("confirm", "acme")]),
        // Another organization's members.
        ("/console/organizations/globex/members".into(), vec![("user", "bob"), ("roles", "admin")]),
        (format!("/console/organizations/{globex_id}/members/{carol}"), vec![("roles", "")]),
        (format!("/console/organizations/{globex_id}/members/{alice}/remove"), vec![]),
        (format!("/console/organizations/{globex_id}"), vec![("display_name", "Mine")]),
        (format!("/console/organizations/{globex_id}/delete"), vec![("confirm", "globex")]),
    ];
    for (path, fields) in &forms {
        let mut form = vec![("csrf", token.as_str())];
        form.extend(fields.iter().copied());
        let page = post(&browser, path, &form).await;
        assert!(refused(&page), "{path}: {} {}", page.status, page.html);
    }
    let after = (s.admin(Method::GET, "/admin/organizations", None).await.1, s.admin(Method::GET, "/admin/clients", None).await.1, s.admin(Method::GET, "/admin/users", None).await.1, s.admin(Method::GET, "/admin/credentials", None).await.1);
    assert_eq!(before, after, "nothing changed");
    assert_eq!(member_roles(&s, "globex", "carol").await, Some(json!(["admin"])));
    assert_eq!(member_roles(&s, "globex", "alice").await, Some(json!(["billing"])));

    // Their own members: added by exact e-mail, roles changed, removed; audited as theirs.
    let added = post(&browser, &format!("/console/organizations/{acme_id}/members"), &[("csrf", &token), ("user", "alice@acme.example"), ("roles", "billing")]).await;
    assert!(added.status == 200 && added.html.contains("Created.") && added.html.contains(">alice<"), "{}", added.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, Some(json!(["billing"])));
    let partial = post(&browser, &format!("/console/organizations/{acme_id}/members"), &[("csrf", &token), ("user", "alice@acme"), ("roles", "")]).await;
    assert_eq!(partial.status, 400, "exactly, not a search: {}", partial.html);
    let changed = post(&browser, &format!("/console/organizations/{acme_id}/members/{carol}"), &[("csrf", &token), ("roles", "admin billing")]).await;
    assert!(changed.html.contains("Saved."), "{}", changed.html);
    assert_eq!(member_roles(&s, "acme", "carol").await, Some(json!(["admin", "billing"])));
    let removed = post(&browser, &format!("/console/organizations/{acme_id}/members/{alice}/remove"), &[("csrf", &token)]).await;
    assert!(removed.html.contains("Removed."), "{}", removed.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, None);
    assert_eq!(member_roles(&s, "globex", "alice").await, Some(json!(["billing"])), "her other membership untouched");
    let events = org_events(&s).await;
    for kind in ["organization_member_added", "organization_member_changed", "organization_member_removed"] {
        assert!(events.iter().any(|(e, d)| e == kind && d["by"] == "console" && d["admin"] == bob.as_str()), "{kind}: {events:?}");
    }
    // Not their own administration, by a slip.
    for (path, fields) in [(format!("/console/organizations/{acme_id}/members/{bob}/remove"), vec![]), (format!("/console/organizations/{acme_id}/members/{bob}"), vec![("roles", "billing")])] {
        let mut form = vec![("csrf", token.as_str())];
        form.extend(fields);
        let page = post(&browser, &path, &form).await;
        assert_eq!(page.status, 400, "{path}: {}", page.html);
    }
    assert_eq!(member_roles(&s, "acme", "bob").await, Some(json!(["admin"])));
    // The CSRF token is still needed.
    let forged = post(&browser, &format!("/console/organizations/{acme_id}/members"), &[("csrf", "forged"), ("user", "alice")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    assert_eq!(member_roles(&s, "acme", "alice").await, None);

    // The role taken away (by the other administrator, carol, now one of acme's): the next page is refused.
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/bob", Some(json!({"roles": []}))).await.0, 200);
    let gone = get(&browser, "/console/organizations").await;
    assert!(gone.status == 403 && gone.html.contains("has no console role"), "{}", gone.html);
}

/// The tenant's admin API credentials in the console: made (the token shown once, not
/// cached, and it works), listed without it, revoked (then refused); an auditor looks.
#[tokio::test]
async fn the_console_manages_admin_credentials() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    let root = operator(&s, "root", &["admin"]).await;
    let audrey = operator(&s, "audrey", &["auditor"]).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", None).await.status, 200);
    let list = get(&admin, "/console/credentials").await;
    assert!(list.status == 200 && list.html.contains("No credentials yet.") && list.html.contains("aria-current=\"page\""), "{}", list.html);

    let res = admin.client.post(format!("{}/console/credentials", admin.base)).form(&[("csrf", csrf(&list).as_str()), ("name", "CI <deploy>"), ("expires_days", "30")]).send().await.unwrap();
    assert_eq!(res.headers()["cache-control"], "no-store");
    let made = Page::from(res).await;
    assert_eq!(made.status, 200, "{}", made.html);
    let token = made.html.split("<code id=\"secret\">").nth(1).unwrap().split('<').next().unwrap().to_string();
    assert!(token.starts_with("atk_") && made.html.contains("CI &lt;deploy&gt;") && made.html.contains("shown only once"), "{}", made.html);
    let api = |token: String| {
        let s = &s;
        async move { s.http.get(s.url("/admin/organizations")).bearer_auth(token).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(api(token.clone()).await, 200, "the token works on the tenant's admin API");
    let (_, creds) = s.admin(Method::GET, "/admin/credentials", None).await;
    let cred = &creds["credentials"][0];
    let expires = cred["expires_at"].as_u64().unwrap() as i64 - cred["created_at"].as_u64().unwrap() as i64;
    // 30 days from its creation (the clock may tick between the two readings).
    assert!(cred["name"] == "CI <deploy>" && (expires - 30 * 86_400).abs() <= 1, "{creds}");
    let id = cred["id"].as_str().unwrap().to_string();
    let list = get(&admin, "/console/credentials").await;
    assert!(list.html.contains(&id) && list.html.contains("active") && !list.html.contains(&token), "listed, never the token: {}", list.html);

    // Bad values: a page that says so, nothing made.
    for (name, days) in [("", ""), ("ok", "0"), ("ok", "many"), ("ok", "100000")] {
        let bad = post(&admin, "/console/credentials", &[("csrf", &csrf(&list)), ("name", name), ("expires_days", days)]).await;
        assert_eq!(bad.status, 400, "{name:?} {days:?}: {}", bad.html);
    }
    assert_eq!(s.admin(Method::GET, "/admin/credentials", None).await.1["credentials"].as_array().unwrap().len(), 1);

    // An auditor sees the list, and neither makes nor revokes.
    let auditor = s.browser();
    assert_eq!(enter(&auditor, "audrey", None).await.status, 200);
    let seen = get(&auditor, "/console/credentials").await;
    assert!(seen.status == 200 && seen.html.contains(&id) && !seen.html.contains("/revoke\"") && !seen.html.contains("name=\"expires_days\""), "{}", seen.html);
    // Her CSRF token from a page that has a form (her own, disabled).
    let token_page = get(&auditor, &format!("/console/users/{audrey}")).await;
    assert_eq!(post(&auditor, "/console/credentials", &[("csrf", &csrf(&token_page)), ("name", "sneaky")]).await.status, 403);
    assert_eq!(post(&auditor, &format!("/console/credentials/{id}/revoke"), &[("csrf", &csrf(&token_page))]).await.status, 403);
    assert_eq!(api(token.clone()).await, 200);

    // Revoked: listed as such, refused at once; an unknown one is not found.
    let revoked = post(&admin, &format!("/console/credentials/{id}/revoke"), &[("csrf", &csrf(&list))]).await;
    assert!(revoked.status == 200 && revoked.html.contains("Revoked.") && !revoked.html.contains(&format!("/console/credentials/{id}/revoke")), "{}", revoked.html);
    assert_eq!(api(token).await, 401);
    assert_eq!(post(&admin, "/console/credentials/0000/revoke", &[("csrf", &csrf(&list))]).await.status, 404);
    let (_, audit) = s.admin(Method::GET, "/admin/audit?limit=50", None).await;
    for kind in ["admin_credential_created", "admin_credential_revoked"] {
        assert!(audit["events"].as_array().unwrap().iter().any(|e| e["event"] == kind && e["detail"]["admin"] == root.as_str()), "{kind}: {audit}");
    }
}

/// Organization administrators are a tenant's: one of another tenant's organization signs in
/// to that tenant's console (its own issuer) and sees its organization only; at the default
/// tenant's console the same name is nobody's administrator, and an organization of the
/// default tenant is not reachable from the other tenant's console.
#[tokio::test]
async fn an_organization_administrator_is_one_tenants() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    let (_, home_org) = s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "initech"}))).await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    let (st, v) = s.admin(Method::POST, "/t/other/admin/users", Some(json!({"username": "olga", "password": PASSWORD}))).await;
    assert_eq!(st, 201, "{v}");
    let (_, acme) = s.admin(Method::POST, "/t/other/admin/organizations", Some(json!({"slug": "acme"}))).await;
    assert_eq!(s.admin(Method::PUT, "/t/other/admin/organizations/acme/members/olga", Some(json!({"roles": ["admin"]}))).await.0, 200);
    // The same username at the default tenant: no organization there.
    s.user("olga", json!({})).await;

    let browser = s.browser();
    let login = get(&browser, "/t/other/console").await;
    let home = post(&browser, "/t/other/login", &[("challenge", &login.challenge()), ("username", "olga"), ("password", PASSWORD)]).await;
    assert_eq!(home.status, 200, "{}", home.html);
    assert!(home.html.contains("href=\"/t/other/console/organizations/") && home.html.contains(">acme</a>"), "{}", home.html);
    let theirs = get(&browser, &format!("/t/other/console/organizations/{}", acme["id"].as_str().unwrap())).await;
    assert_eq!(theirs.status, 200, "{}", theirs.html);
    // The default tenant's organization, by id or slug, from the other tenant's console: refused, as any not theirs.
    for path in [format!("/t/other/console/organizations/{}", home_org["id"].as_str().unwrap()), "/t/other/console/organizations/initech".into(), "/t/other/console/users".into()] {
        let page = get(&browser, &path).await;
        assert!(page.status == 403 && !page.html.contains("initech"), "{path}: {}", page.html);
    }
    // The default tenant's console: the same name has no role there.
    let denied = enter(&s.browser(), "olga", None).await;
    assert!(denied.status == 403 && denied.html.contains("has no console role"), "{}", denied.html);
}

/// The console's recent-sign-in rule holds for an organization administrator too.
#[tokio::test]
async fn an_organization_administrator_signs_in_again_when_the_sign_in_is_old() {
    let s = TestServer::start_with(|c| {
        c.console_mfa = "if_enrolled".into();
        c.console_max_age = 0;
    })
    .await;
    s.user("olga", json!({})).await;
    assert_eq!(s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "acme"}))).await.0, 201);
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/olga", Some(json!({"roles": ["admin"]}))).await.0, 200);
    let browser = s.browser();
    let home = enter(&browser, "olga", None).await;
    assert_eq!(home.status, 200, "{}", home.html);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    for path in ["/console/organizations", "/console/organizations/acme"] {
        let res = browser.client.get(format!("{}{path}", browser.base)).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert_eq!(res.headers()["location"], "/console/login?reauth=1", "{path}");
    }
}
