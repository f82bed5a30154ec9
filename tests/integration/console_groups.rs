//! Groups and roles in the admin console (issue 32): a tenant admin creates, renames and
//! deletes groups and adds and removes their members (a cycle, a name taken, nobody by that
//! name: said on the page, nothing changed); defines a client's roles and gives them to users
//! and groups, and sets the client's groups claim; a user's page shows their groups and roles.
//! Every change is the admin API's, audited as the console user's; an auditor looks and is
//! refused every change; a form without its CSRF token is refused; another tenant's console
//! sees none of it. The groups on SQLite and PostgreSQL.

use crate::console::{csrf, enter, operator, totp};
use crate::harness::*;
use crate::passkeys::{get, post};
use reqwest::Method;
use serde_json::{json, Value};

async fn api(s: &TestServer, path: &str) -> (u16, Value) {
    s.admin(Method::GET, path, None).await
}

/// The group's direct members as the admin API lists them, as (type, id).
async fn members(s: &TestServer, group: &str) -> Vec<(String, String)> {
    let (st, v) = api(s, &format!("/admin/groups/{group}/members")).await;
    assert_eq!(st, 200, "{v}");
    v["members"].as_array().unwrap().iter().map(|m| (m["type"].as_str().unwrap().to_string(), m["id"].as_str().unwrap().to_string())).collect()
}

/// Each of these kinds of event is in the audit log, made in the console by this admin.
async fn audited(s: &TestServer, admin: &str, kinds: &[&str]) {
    let (_, v) = api(s, "/admin/audit?limit=200").await;
    let events = v["events"].as_array().unwrap();
    for kind in kinds {
        assert!(events.iter().any(|e| e["event"] == *kind && e["detail"]["by"] == "console" && e["detail"]["admin"] == admin), "{kind}: {v}");
    }
}

/// A refusal shown on the page it came from: a 400, the alert, the reason's words.
fn said(page: &Page, words: &str) {
    assert_eq!(page.status, 400, "{words}: {}", page.html);
    assert!(page.html.contains("role=\"alert\"") && page.html.replace("&#x27;", "'").replace("&#39;", "'").replace("&quot;", "\"").contains(words), "{words}: {}", page.html);
}

async fn signed_in_admin(s: &TestServer) -> (String, Browser) {
    let root = operator(s, "root", &["admin"]).await;
    let secret = totp(s, &root).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);
    (root, admin)
}

#[tokio::test]
async fn the_console_manages_groups_and_their_members() {
    groups(false).await;
}

#[tokio::test]
async fn the_console_manages_groups_and_their_members_on_postgres() {
    groups(true).await;
}

async fn groups(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (root, admin) = signed_in_admin(&s).await;
    let alice = s.user("alice", json!({"email": "alice@acme.example"})).await;

    // The list, in the navigation, with the form.
    let list = get(&admin, "/console/groups").await;
    assert_eq!(list.status, 200, "{}", list.html);
    assert!(list.html.contains("href=\"/console/groups\" aria-current=\"page\"") && list.html.contains("No groups yet."), "{}", list.html);
    let made = post(&admin, "/console/groups", &[("csrf", &csrf(&list)), ("display_name", "Engineering <R&D>"), ("external_id", "E-1")]).await;
    assert_eq!(made.status, 200, "{}", made.html);
    assert!(made.html.contains("Created.") && made.html.contains("Group Engineering &lt;R&amp;D&gt;"), "{}", made.html);
    let (_, eng) = api(&s, "/admin/groups/Engineering%20%3CR%26D%3E").await;
    assert_eq!((eng["display_name"].as_str(), eng["external_id"].as_str()), (Some("Engineering <R&D>"), Some("E-1")), "{eng}");
    let eng_id = eng["id"].as_str().unwrap().to_string();
    let backend = post(&admin, "/console/groups", &[("csrf", &csrf(&list)), ("display_name", "Backend"), ("external_id", "")]).await;
    assert!(backend.html.contains("Created."), "{}", backend.html);
    let backend_id = api(&s, "/admin/groups/Backend").await.1["id"].as_str().unwrap().to_string();

    // Refused: a name taken (whatever the case), an empty one, and no CSRF token; nothing made.
    let taken = post(&admin, "/console/groups", &[("csrf", &csrf(&list)), ("display_name", "backend"), ("external_id", "typed")]).await;
    said(&taken, "the display name is another group's");
    assert!(taken.html.contains("value=\"typed\""), "what was typed is kept: {}", taken.html);
    said(&post(&admin, "/console/groups", &[("csrf", &csrf(&list)), ("display_name", " ")]).await, "display_name: 1-256 characters");
    let forged = post(&admin, "/console/groups", &[("display_name", "Forged")]).await;
    assert_eq!(forged.status, 400, "{}", forged.html);
    assert_eq!(api(&s, "/admin/groups").await.1["groups"].as_array().unwrap().len(), 2, "nothing more made");

    // Renamed, and not to another group's name.
    let page = get(&admin, &format!("/console/groups/{backend_id}")).await;
    assert!(page.html.contains("No members yet.") && page.html.contains("name=\"display_name\" value=\"Backend\""), "{}", page.html);
    let token = csrf(&page);
    let renamed = post(&admin, &format!("/console/groups/{backend_id}"), &[("csrf", &token), ("display_name", "Back end"), ("external_id", "B-2")]).await;
    assert!(renamed.html.contains("Saved.") && renamed.html.contains("Group Back end"), "{}", renamed.html);
    said(&post(&admin, &format!("/console/groups/{backend_id}"), &[("csrf", &token), ("display_name", "ENGINEERING <r&d>")]).await, "another group's");
    assert_eq!(api(&s, &format!("/admin/groups/{backend_id}")).await.1["display_name"], "Back end");

    // Members: a group nested, a user by e-mail; links to their pages.
    let nested = post(&admin, &format!("/console/groups/{eng_id}/members"), &[("csrf", &token), ("kind", "groups"), ("member", "back END")]).await;
    assert!(nested.html.contains("Created.") && nested.html.contains(&format!("href=\"/console/groups/{backend_id}\">Back end</a>")), "{}", nested.html);
    let added = post(&admin, &format!("/console/groups/{backend_id}/members"), &[("csrf", &token), ("kind", "users"), ("member", "ALICE@acme.example")]).await;
    assert!(added.html.contains(&format!("href=\"/console/users/{alice}\">alice</a>")) && added.html.contains("alice@acme.example"), "{}", added.html);
    assert!(added.html.contains(&format!("href=\"/console/groups/{eng_id}\">Engineering &lt;R&amp;D&gt;</a>")), "the group it is in: {}", added.html);
    assert_eq!(members(&s, &backend_id).await, vec![("user".to_string(), alice.clone())]);
    // A cycle, nobody by that name, an unknown kind: said on the group's page, nothing changed.
    let cycle = post(&admin, &format!("/console/groups/{backend_id}/members"), &[("csrf", &token), ("kind", "groups"), ("member", "Engineering <R&D>")]).await;
    said(&cycle, "a group cannot contain itself");
    assert!(cycle.html.contains("<h1>Group Back end</h1>") && cycle.html.contains("value=\"Engineering &lt;R&amp;D&gt;\""), "{}", cycle.html);
    said(&post(&admin, &format!("/console/groups/{eng_id}/members"), &[("csrf", &token), ("kind", "groups"), ("member", "Engineering <R&D>")]).await, "a group cannot contain itself");
    said(&post(&admin, &format!("/console/groups/{backend_id}/members"), &[("csrf", &token), ("kind", "users"), ("member", "ali")]).await, "no such user");
    said(&post(&admin, &format!("/console/groups/{backend_id}/members"), &[("csrf", &token), ("kind", "robots"), ("member", "alice")]).await, "members are users or groups");
    assert_eq!(members(&s, &backend_id).await.len(), 1);
    assert_eq!(members(&s, &eng_id).await, vec![("group".to_string(), backend_id.clone())]);
    let list = get(&admin, "/console/groups").await;
    assert!(list.html.contains(">E-1</td><td>1</td>") && list.html.contains(">B-2</td><td>1</td>"), "direct member counts: {}", list.html);
    let found = get(&admin, "/console/groups?q=back").await;
    assert!(found.html.contains("Back end") && !found.html.contains("E-1"), "{}", found.html);

    // The user's page: the group directly, both through nesting.
    let user = get(&admin, &format!("/console/users/{alice}")).await;
    let direct = user.html.split("Directly in</dt>").nth(1).unwrap().split("</dd>").next().unwrap();
    assert!(direct.contains("Back end") && !direct.contains("Engineering"), "{direct}");
    let all = user.html.split("(through contained groups too)</dt>").nth(1).unwrap().split("</dd>").next().unwrap();
    assert!(all.find("Back end").is_some_and(|b| all.find("Engineering").is_some_and(|e| b < e)), "both, by name: {all}");

    // Removed; removing again is not found.
    let removed = post(&admin, &format!("/console/groups/{backend_id}/members/remove"), &[("csrf", &token), ("kind", "users"), ("member", &alice)]).await;
    assert!(removed.html.contains("Removed.") && removed.html.contains("No members yet."), "{}", removed.html);
    assert!(members(&s, &backend_id).await.is_empty());
    assert_eq!(post(&admin, &format!("/console/groups/{backend_id}/members/remove"), &[("csrf", &token), ("kind", "users"), ("member", &alice)]).await.status, 404);

    // Deleted with its name typed again; a wrong one deletes nothing.
    let wrong = post(&admin, &format!("/console/groups/{backend_id}/delete"), &[("csrf", &token), ("confirm", "Back")]).await;
    assert!(wrong.status == 400 && wrong.html.contains("The name typed does not match"), "{}", wrong.html);
    assert_eq!(api(&s, &format!("/admin/groups/{backend_id}")).await.0, 200);
    let deleted = post(&admin, &format!("/console/groups/{backend_id}/delete"), &[("csrf", &token), ("confirm", "Back end")]).await;
    assert!(deleted.html.contains("Deleted.") && !deleted.html.contains("Back end"), "{}", deleted.html);
    assert_eq!(api(&s, &format!("/admin/groups/{backend_id}")).await.0, 404);
    assert!(members(&s, &eng_id).await.is_empty(), "its membership went with it");
    assert_eq!(get(&admin, &format!("/console/groups/{backend_id}")).await.status, 404);

    // Each change is the admin API's event, by the console user.
    audited(&s, &root, &["group_created", "group_changed", "group_member_added", "group_member_removed", "group_deleted"]).await;
}

#[tokio::test]
async fn a_clients_roles_are_given_in_the_console_and_show_on_the_users_page() {
    let s = TestServer::start().await;
    let (root, admin) = signed_in_admin(&s).await;
    let alice = s.user("alice", json!({})).await;
    let (st, v) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "rp", "client_name": "Reports", "redirect_uris": [REDIRECT]}))).await;
    assert_eq!(st, 201, "{v}");
    for body in [json!({"display_name": "Staff"}), json!({"display_name": "Analysts"})] {
        assert_eq!(s.admin(Method::POST, "/admin/groups", Some(body)).await.0, 201);
    }
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Staff/members/groups/Analysts", None).await.0, 204);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Analysts/members/users/alice", None).await.0, 204);

    let page = get(&admin, "/console/clients/rp").await;
    assert!(page.html.contains("id=\"roles\"") && page.html.contains("No roles yet."), "{}", page.html);
    let token = csrf(&page);
    let defined = post(&admin, "/console/clients/rp/roles", &[("csrf", &token), ("role", "reports:read"), ("description", "Reads <reports>")]).await;
    assert!(defined.html.contains("Saved.") && defined.html.contains("<code>reports:read</code>") && defined.html.contains("Reads &lt;reports&gt;"), "{}", defined.html);
    let bad = post(&admin, "/console/clients/rp/roles", &[("csrf", &token), ("role", "has space"), ("description", "")]).await;
    said(&bad, "has space");
    assert!(bad.html.contains("value=\"has space\""), "{}", bad.html);
    assert_eq!(api(&s, "/admin/clients/rp/roles").await.1["roles"], json!([{"role": "reports:read", "description": "Reads <reports>"}]));

    // Given to a group: alice holds it through Analysts in Staff, and her page says so.
    let given = post(&admin, "/console/clients/rp/roles/assign", &[("csrf", &token), ("role", "reports:read"), ("kind", "groups"), ("member", "staff")]).await;
    assert!(given.html.contains("Saved.") && given.html.contains(">Staff</a>"), "{}", given.html);
    said(&post(&admin, "/console/clients/rp/roles/assign", &[("csrf", &token), ("role", "reports:write"), ("kind", "users"), ("member", "alice")]).await, "no such role");
    said(&post(&admin, "/console/clients/rp/roles/assign", &[("csrf", &token), ("role", "reports:read"), ("kind", "groups"), ("member", "Nobody")]).await, "no such group");
    let user = get(&admin, &format!("/console/users/{alice}")).await;
    assert!(user.html.contains("href=\"/console/clients/rp#roles\">Reports</a></td><td><code>reports:read</code>"), "{}", user.html);
    let (_, effective) = api(&s, &format!("/admin/users/{alice}/groups")).await;
    assert_eq!(effective["roles"], json!({"rp": ["reports:read"]}), "{effective}");

    // Taken away from the group: gone from her page.
    let staff = api(&s, "/admin/groups/Staff").await.1["id"].as_str().unwrap().to_string();
    let taken = post(&admin, "/console/clients/rp/roles/unassign", &[("csrf", &token), ("role", "reports:read"), ("kind", "groups"), ("member", &staff)]).await;
    assert!(taken.html.contains("Removed.") && taken.html.contains("Nobody holds this role yet."), "{}", taken.html);
    assert!(!get(&admin, &format!("/console/users/{alice}")).await.html.contains("reports:read"));

    // The groups claim, set with the client's other settings; a claim name tokens use already is refused.
    let form = |extra: &'static [(&'static str, &'static str)]| {
        let mut f = vec![("csrf", token.clone()), ("client_name", "Reports".into()), ("redirect_uris", REDIRECT.into()), ("grant:authorization_code", "on".into()), ("method", "client_secret_basic".into())];
        f.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        f
    };
    let fields = form(&[("groups_claim", "names"), ("groups_assigned_only", "on"), ("groups_prefixes", "app-\r\nteam-"), ("groups_claim_name", "teams"), ("roles_claim_name", "")]);
    let saved = post(&admin, "/console/clients/rp", &fields.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>()).await;
    assert!(saved.html.contains("Saved.") && saved.html.contains("<option value=\"names\" selected>") && saved.html.contains("value=\"teams\""), "{}", saved.html);
    let (_, rp) = api(&s, "/admin/clients/rp").await;
    assert_eq!((&rp["groups_claim"], &rp["groups_assigned_only"], &rp["groups_prefixes"], &rp["groups_claim_name"]), (&json!("names"), &json!(true), &json!(["app-", "team-"]), &json!("teams")), "{rp}");
    let fields = form(&[("groups_claim", "ids"), ("groups_claim_name", "sub")]);
    let bad = post(&admin, "/console/clients/rp", &fields.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>()).await;
    said(&bad, "groups_claim_name");
    assert!(bad.html.contains("<option value=\"ids\" selected>") && bad.html.contains("id=\"roles\""), "the typed form, with the roles: {}", bad.html);
    assert_eq!(api(&s, "/admin/clients/rp").await.1["groups_claim"], "names", "nothing changed");
    // Emptied: no groups claim, the default names again.
    let fields = form(&[]);
    assert!(post(&admin, "/console/clients/rp", &fields.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>()).await.html.contains("Saved."));
    let (_, rp) = api(&s, "/admin/clients/rp").await;
    assert!(rp.get("groups_claim").is_none_or(Value::is_null) && rp.get("groups_claim_name").is_none_or(Value::is_null) && rp.get("groups_prefixes").is_none_or(|p| p == &json!([])), "{rp}");

    // Removed with its assignments.
    assert_eq!(post(&admin, "/console/clients/rp/roles/assign", &[("csrf", &token), ("role", "reports:read"), ("kind", "users"), ("member", "alice")]).await.status, 200);
    let removed = post(&admin, "/console/clients/rp/roles/remove", &[("csrf", &token), ("role", "reports:read")]).await;
    assert!(removed.html.contains("Removed.") && removed.html.contains("No roles yet."), "{}", removed.html);
    assert_eq!(api(&s, &format!("/admin/users/{alice}/groups")).await.1["roles"], json!({}));
    assert_eq!(post(&admin, "/console/clients/rp/roles/remove", &[("csrf", &token), ("role", "reports:read")]).await.status, 404);

    audited(&s, &root, &["client_role_defined", "role_assigned", "role_unassigned", "client_role_removed"]).await;
}

/// An auditor sees groups and roles and changes none of them, by any form; a form without
/// its CSRF token is refused to an admin as well.
#[tokio::test]
async fn an_auditor_looks_and_a_form_needs_its_csrf_token() {
    let s = TestServer::start().await;
    let (_, admin) = signed_in_admin(&s).await;
    let alice = s.user("alice", json!({})).await;
    let (_, g) = s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": "Staff"}))).await;
    let group = g["id"].as_str().unwrap().to_string();
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Staff/members/users/alice", None).await.0, 204);
    assert_eq!(s.admin(Method::POST, "/admin/clients", Some(json!({"client_id": "rp", "redirect_uris": [REDIRECT]}))).await.0, 201);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/rp/roles/viewer", Some(json!({"description": "Views"}))).await.0, 204);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/rp/roles/viewer/assignments/groups/Staff", None).await.0, 204);
    let state = || async {
        let groups = (api(&s, "/admin/groups").await.1, members(&s, &group).await);
        let roles = (api(&s, "/admin/clients/rp/roles/viewer/assignments").await.1, api(&s, "/admin/clients/rp/roles").await.1);
        (groups, roles, api(&s, "/admin/clients/rp/provisioning").await)
    };
    let before = state().await;

    let auditor = operator(&s, "audrey", &["auditor"]).await;
    let audrey_totp = totp(&s, &auditor).await;
    let audrey = s.browser();
    assert_eq!(enter(&audrey, "audrey", Some(&audrey_totp)).await.status, 200);
    let seen = get(&audrey, &format!("/console/groups/{group}")).await;
    assert!(seen.status == 200 && seen.html.contains(">alice</a>") && !seen.html.contains("method=\"post\""), "{}", seen.html);
    let list = get(&audrey, "/console/groups").await;
    assert!(list.html.contains(">Staff</a>") && !list.html.contains("method=\"post\""), "{}", list.html);
    let client = get(&audrey, "/console/clients/rp").await;
    assert!(client.html.contains("<code>viewer</code>") && client.html.contains(">Staff</a>") && !client.html.contains("/roles/assign"), "{}", client.html);
    // Her CSRF token from a page that has a form (her own, disabled).
    let token = csrf(&get(&audrey, &format!("/console/users/{auditor}")).await);
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        ("/console/groups".into(), vec![("display_name", "Audrey's")]),
        (format!("/console/groups/{group}"), vec![("display_name", "Audrey's")]),
        (format!("/console/groups/{group}/delete"), vec![("confirm", "Staff")]),
        (format!("/console/groups/{group}/members"), vec![("kind", "users"), ("member", "audrey")]),
        (format!("/console/groups/{group}/members/remove"), vec![("kind", "users"), ("member", &alice)]),
        ("/console/clients/rp/roles".into(), vec![("role", "auditor:made")]),
        ("/console/clients/rp/roles/remove".into(), vec![("role", "viewer")]),
        ("/console/clients/rp/roles/assign".into(), vec![("role", "viewer"), ("kind", "users"), ("member", "audrey")]),
        ("/console/clients/rp/roles/unassign".into(), vec![("role", "viewer"), ("kind", "groups"), ("member", &group)]),
        ("/console/clients/rp/provisioning".into(), vec![("endpoint", "https://wiki.invalid/scim/v2"), ("token", "t"), ("users", "all"), ("enabled", "on")]),
        ("/console/clients/rp/provisioning/resync".into(), vec![]),
        ("/console/clients/rp/provisioning/remove".into(), vec![]),
    ];
    for (path, fields) in &forms {
        let mut form = vec![("csrf", token.as_str())];
        form.extend(fields.iter().copied());
        let page = post(&audrey, path, &form).await;
        assert!(page.status == 403 && page.html.contains("Read only"), "{path}: {} {}", page.status, page.html);
    }
    assert_eq!(state().await, before, "nothing changed");

    // The admin, without the token or with another session's: refused, nothing changed.
    for csrf in [None, Some(token.as_str())] {
        for (path, fields) in &forms {
            let form: Vec<(&str, &str)> = csrf.map(|c| ("csrf", c)).into_iter().chain(fields.iter().copied()).collect();
            let page = post(&admin, path, &form).await;
            assert_eq!(page.status, 400, "{path}: {}", page.html);
        }
    }
    assert_eq!(state().await, before, "nothing changed");
}

/// A tenant's groups are its own: another tenant's console lists none of them and finds none
/// by id or by name, to look at or to change.
#[tokio::test]
async fn another_tenants_console_does_not_see_the_groups() {
    let s = TestServer::start_with(|c| c.console_mfa = "if_enrolled".into()).await;
    let (_, g) = s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": "Home staff"}))).await;
    let group = g["id"].as_str().unwrap().to_string();
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    let (st, v) = s.admin(Method::POST, "/t/other/admin/users", Some(json!({"username": "olga", "password": PASSWORD, "roles": ["admin"]}))).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(s.admin(Method::POST, "/t/other/admin/groups", Some(json!({"display_name": "Other staff"}))).await.0, 201);

    let browser = s.browser();
    let login = get(&browser, "/t/other/console").await;
    let home = post(&browser, "/t/other/login", &[("challenge", &login.challenge()), ("username", "olga"), ("password", PASSWORD)]).await;
    assert_eq!(home.status, 200, "{}", home.html);
    let list = get(&browser, "/t/other/console/groups").await;
    assert!(list.status == 200 && list.html.contains(">Other staff</a>") && !list.html.contains("Home staff"), "{}", list.html);
    for path in [format!("/t/other/console/groups/{group}"), "/t/other/console/groups/Home%20staff".into()] {
        assert_eq!(get(&browser, &path).await.status, 404, "{path}");
    }
    let token = csrf(&list);
    for (path, fields) in [
        (format!("/t/other/console/groups/{group}"), vec![("display_name", "Taken over")]),
        (format!("/t/other/console/groups/{group}/members"), vec![("kind", "users"), ("member", "olga")]),
        (format!("/t/other/console/groups/{group}/delete"), vec![("confirm", "Home staff")]),
    ] {
        let mut form = vec![("csrf", token.as_str())];
        form.extend(fields);
        assert_eq!(post(&browser, &path, &form).await.status, 404, "{path}");
    }
    // Nor as a member added by name in its own group: the other tenant's group is nobody there.
    let other = get(&browser, "/t/other/console/groups/Other%20staff").await;
    let refused = post(&browser, "/t/other/console/groups/Other%20staff/members", &[("csrf", &csrf(&other)), ("kind", "groups"), ("member", "Home staff")]).await;
    said(&refused, "no such group");
    let (_, home_group) = api(&s, &format!("/admin/groups/{group}")).await;
    assert_eq!((home_group["display_name"].as_str(), home_group["members"].as_u64()), (Some("Home staff"), Some(0)), "{home_group}");
}

/// A provisioning credential made in the console: the form's choice of what it opens; the
/// list says it; it opens the SCIM service and not the admin API.
#[tokio::test]
async fn the_console_makes_a_provisioning_credential() {
    let s = TestServer::start_on(false, |_| {}).await;
    let (_, admin) = signed_in_admin(&s).await;
    let page = get(&admin, "/console/credentials").await;
    assert!(page.html.contains("name=\"scope\" value=\"scim\""), "{}", page.html);
    let made = post(&admin, "/console/credentials", &[("csrf", &csrf(&page)), ("name", "entra"), ("scope", "scim")]).await;
    assert_eq!(made.status, 200, "{}", made.html);
    let token = made.html.split("atk_").nth(1).map(|rest| format!("atk_{}", rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).next().unwrap())).expect("the token on the page");
    let scim = s.http.get(s.url("/scim/v2/Groups")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(scim.status(), 200);
    let api = s.http.get(s.url("/admin/clients")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(api.status(), 401);
    let listed = get(&admin, "/console/credentials").await;
    assert!(listed.html.contains("Provisioning (SCIM)"), "{}", listed.html);
    let page = get(&admin, "/console/credentials").await;
    let bad = post(&admin, "/console/credentials", &[("csrf", &csrf(&page)), ("name", "x"), ("scope", "root")]).await;
    assert_eq!(bad.status, 400, "{}", bad.html);
}
