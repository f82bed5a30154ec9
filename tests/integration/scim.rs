//! The SCIM 2.0 service (issue 32, slice 2): provisioning credentials (scope `scim`, good for
//! nothing else), the discovery resources, and `Groups` read with filters, sorting,
//! pagination, projections and ETags, and written; SCIM errors; another tenant sees none of
//! it. `Users` are in `scim_users.rs`.

use crate::harness::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn scim(s: &TestServer, token: &str, path: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = s.http.get(s.url(path)).bearer_auth(token);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let (status, h) = (res.status().as_u16(), res.headers().clone());
    (status, h, res.json().await.unwrap_or(Value::Null))
}

fn names(list: &Value) -> Vec<&str> {
    list["Resources"].as_array().unwrap().iter().map(|g| g["displayName"].as_str().unwrap_or("")).collect()
}

async fn groups_are_read_through_scim(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let alice = s.user("alice", json!({})).await;

    // A provisioning credential: scope scim, refused by the admin API.
    let (status, made) = s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "hr", "scopes": ["scim"]}))).await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["scopes"], json!(["scim"]));
    let token = made["token"].as_str().unwrap().to_string();
    assert_eq!(s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "x", "scopes": ["root"]}))).await.0, 400);
    assert_eq!(s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "x", "scopes": []}))).await.0, 400);
    let res = s.http.get(s.url("/admin/clients")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(res.status(), 401, "a scim credential is not good for the admin API");

    // Who may call, and the errors' shape.
    let res = s.http.get(s.url("/scim/v2/Groups")).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert!(res.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    assert_eq!(res.headers()["content-type"], "application/scim+json");
    let err: Value = res.json().await.unwrap();
    assert_eq!((err["schemas"][0].as_str(), err["status"].as_str()), (Some("urn:ietf:params:scim:api:messages:2.0:Error"), Some("401")), "{err}");
    assert_eq!(scim(&s, "atk_00_nope", "/scim/v2/Groups", &[]).await.0, 401);
    assert_eq!(scim(&s, ADMIN, "/scim/v2/Groups", &[]).await.0, 200, "the deployment's token");
    let (_, admin_cred) = s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "ops"}))).await;
    assert_eq!(scim(&s, admin_cred["token"].as_str().unwrap(), "/scim/v2/Groups", &[]).await.0, 200, "an admin credential");

    // Discovery says what is built.
    let (status, _, config) = scim(&s, &token, "/scim/v2/ServiceProviderConfig", &[]).await;
    assert_eq!(status, 200);
    assert_eq!((config["filter"]["supported"].as_bool(), config["etag"]["supported"].as_bool(), config["patch"]["supported"].as_bool()), (Some(true), Some(true), Some(true)));
    let (_, _, types) = scim(&s, &token, "/scim/v2/ResourceTypes", &[]).await;
    let endpoints: Vec<&str> = types["Resources"].as_array().unwrap().iter().map(|t| t["endpoint"].as_str().unwrap()).collect();
    assert_eq!(endpoints, ["/Users", "/Groups"]);
    let urn = "urn:ietf:params:scim:schemas:core:2.0:Group";
    let (status, _, schema) = scim(&s, &token, &format!("/scim/v2/Schemas/{urn}"), &[]).await;
    assert_eq!((status, schema["attributes"][0]["name"].as_str()), (200, Some("displayName")));
    assert_eq!(scim(&s, &token, "/scim/v2/Schemas/urn:nope", &[]).await.0, 404);
    assert_eq!(scim(&s, &token, "/scim/v2/Nothing", &[]).await.0, 404);
    // What the router itself refuses is a SCIM error too.
    for (method, path, want) in [(Method::PUT, "/scim/v2/ServiceProviderConfig", 405), (Method::GET, "/scim/v2/Groups/%ff%fe", 400), (Method::GET, "/scim/elsewhere", 404)] {
        let res = s.http.request(method, s.url(path)).bearer_auth(&token).send().await.unwrap();
        assert_eq!((res.status().as_u16(), res.headers()["content-type"].to_str().unwrap()), (want, "application/scim+json"), "{path}");
        let e: Value = res.json().await.unwrap();
        assert_eq!(e["status"], want.to_string(), "{e}");
    }
    let res = s.http.post(s.url("/scim/v2/Bulk")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(res.status(), 501, "bulk is not offered, and says so");

    // Groups made through the admin API, read through SCIM.
    for name in ["Engineering", "Backend", "Sales"] {
        assert_eq!(s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": name, "external_id": format!("hr-{name}")}))).await.0, 201);
    }
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Engineering/members/groups/Backend", None).await.0, 204);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Backend/members/users/alice", None).await.0, 204);
    let (status, _, all) = scim(&s, &token, "/scim/v2/Groups?sortBy=displayName", &[]).await;
    assert_eq!(status, 200, "{all}");
    assert_eq!((all["totalResults"].as_u64(), names(&all)), (Some(3), vec!["Backend", "Engineering", "Sales"]));
    let backend = all["Resources"][0].clone();
    assert_eq!(backend["members"][0]["value"], alice.as_str());
    assert_eq!(backend["members"][0]["type"], "User");
    assert!(backend["members"][0]["$ref"].as_str().unwrap().ends_with(&format!("/scim/v2/Users/{alice}")), "{backend}");
    assert_eq!(backend["externalId"], "hr-Backend");
    assert_eq!(backend["meta"]["resourceType"], "Group");

    for (filter, want) in [
        ("displayName eq \"engineering\"", vec!["Engineering"]),
        ("displayName sw \"B\" or displayName ew \"les\"", vec!["Backend", "Sales"]),
        (&format!("members[value eq \"{alice}\"]") as &str, vec!["Backend"]),
        ("members pr", vec!["Backend", "Engineering"]),
        ("not (members pr)", vec!["Sales"]),
        ("externalId eq \"HR-Sales\"", vec![]),
        ("externalId eq \"hr-Sales\"", vec!["Sales"]),
    ] {
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("filter", filter).append_pair("sortBy", "displayName").finish();
        let (status, _, found) = scim(&s, &token, &format!("/scim/v2/Groups?{q}"), &[]).await;
        assert_eq!((status, names(&found)), (200, want), "{filter}: {found}");
    }
    let (status, _, bad) = scim(&s, &token, "/scim/v2/Groups?filter=displayName%20eq", &[]).await;
    assert_eq!((status, bad["scimType"].as_str(), bad["status"].as_str()), (400, Some("invalidFilter"), Some("400")), "{bad}");
    assert_eq!(scim(&s, &token, "/scim/v2/Groups?sortOrder=sideways", &[]).await.2["scimType"], "invalidValue");

    // Pagination, order, projections.
    let (_, _, page) = scim(&s, &token, "/scim/v2/Groups?sortBy=displayName&sortOrder=descending&startIndex=2&count=1", &[]).await;
    assert_eq!((page["totalResults"].as_u64(), page["itemsPerPage"].as_u64(), page["startIndex"].as_u64(), names(&page)), (Some(3), Some(1), Some(2), vec!["Engineering"]));
    let (_, _, none) = scim(&s, &token, "/scim/v2/Groups?count=0", &[]).await;
    assert_eq!((none["totalResults"].as_u64(), none["Resources"].as_array().unwrap().len()), (Some(3), 0));
    let (_, _, slim) = scim(&s, &token, "/scim/v2/Groups?attributes=displayName&sortBy=displayName", &[]).await;
    let mut keys: Vec<&String> = slim["Resources"][0].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["displayName", "id", "schemas"]);
    let (_, _, values) = scim(&s, &token, "/scim/v2/Groups?attributes=members.value&filter=members%20pr&sortBy=displayName", &[]).await;
    assert_eq!(values["Resources"][0]["members"][0], json!({"value": alice}));
    let (_, _, without) = scim(&s, &token, "/scim/v2/Groups?excludedAttributes=members,meta", &[]).await;
    assert!(without["Resources"].as_array().unwrap().iter().all(|g| g.get("members").is_none() && g.get("meta").is_none() && g.get("id").is_some()));

    // One group, its ETag, and If-None-Match.
    let id = backend["id"].as_str().unwrap();
    let (status, headers, one) = scim(&s, &token, &format!("/scim/v2/Groups/{id}"), &[]).await;
    assert_eq!((status, one["displayName"].as_str()), (200, Some("Backend")));
    let tag = headers["etag"].to_str().unwrap().to_string();
    assert_eq!(one["meta"]["version"], tag.as_str());
    assert!(one["meta"]["location"].as_str().unwrap().ends_with(&format!("/scim/v2/Groups/{id}")));
    assert_eq!(scim(&s, &token, &format!("/scim/v2/Groups/{id}"), &[("if-none-match", &tag)]).await.0, 304);
    assert_eq!(s.admin(Method::DELETE, "/admin/groups/Backend/members/users/alice", None).await.0, 204);
    let (status, headers, _) = scim(&s, &token, &format!("/scim/v2/Groups/{id}"), &[("if-none-match", &tag)]).await;
    assert_eq!(status, 200, "a member change is a new version");
    assert_ne!(headers["etag"].to_str().unwrap(), tag);
    let (status, _, missing) = scim(&s, &token, "/scim/v2/Groups/grp_nope", &[]).await;
    assert_eq!((status, missing["status"].as_str()), (404, Some("404")));

    // Another tenant: its SCIM sees none of it, and this tenant's credential is nothing there.
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    assert_eq!(scim(&s, &token, "/t/other/scim/v2/Groups", &[]).await.0, 401);
    let (_, _, theirs) = scim(&s, ADMIN, "/t/other/scim/v2/Groups", &[]).await;
    assert_eq!(theirs["totalResults"], 0);
    assert_eq!(scim(&s, ADMIN, &format!("/t/other/scim/v2/Groups/{id}"), &[]).await.0, 404);

    // A revoked credential is refused at once.
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/credentials/{}", made["id"].as_str().unwrap()), None).await.0, 200);
    assert_eq!(scim(&s, &token, "/scim/v2/Groups", &[]).await.0, 401);
}

pub(crate) async fn send(s: &TestServer, token: &str, method: Method, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = s.http.request(method, s.url(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.header("content-type", "application/scim+json").body(b.to_string());
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let (status, h) = (res.status().as_u16(), res.headers().clone());
    (status, h, res.json().await.unwrap_or(Value::Null))
}

fn member_ids(g: &Value) -> Vec<String> {
    let mut v: Vec<String> = g["members"].as_array().map(|m| m.iter().map(|x| x["value"].as_str().unwrap().to_string()).collect()).unwrap_or_default();
    v.sort();
    v
}

pub(crate) fn patch_op(ops: Value) -> Value {
    json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": ops})
}

/// Groups written through SCIM as Entra ID and Okta write them: create with members, PATCH
/// with and without a path (their documented shapes), PUT, If-Match, delete; refusals as
/// SCIM errors; each change one change of the directory (a refused one changes nothing),
/// audited, and seen by the admin API and in tokens.
async fn groups_are_written_through_scim(postgres: bool) {
    let s = TestServer::start_on(postgres, |c| c.directory_max_members = 3).await;
    let alice = s.user("alice", json!({})).await;
    let bob = s.user("bob", json!({})).await;
    let (_, made) = s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "entra", "scopes": ["scim"]}))).await;
    let token = made["token"].as_str().unwrap().to_string();
    let schema = "urn:ietf:params:scim:schemas:core:2.0:Group";

    // Create, as Entra ID does (members by id, no type), and Okta (with type).
    let (status, headers, eng) = send(&s, &token, Method::POST, "/scim/v2/Groups", Some(json!({"schemas": [schema], "displayName": "Engineering", "externalId": "e-1", "members": [{"value": alice}]})), &[]).await;
    assert_eq!(status, 201, "{eng}");
    let eng_id = eng["id"].as_str().unwrap().to_string();
    assert!(headers["location"].to_str().unwrap().ends_with(&format!("/scim/v2/Groups/{eng_id}")));
    assert_eq!((member_ids(&eng), eng["externalId"].as_str()), (vec![alice.clone()], Some("e-1")));
    let (status, _, ops) = send(&s, &token, Method::POST, "/scim/v2/Groups", Some(json!({"schemas": [schema], "displayName": "Ops", "members": [{"value": eng_id, "type": "Group"}]})), &[]).await;
    assert_eq!(status, 201, "{ops}");
    let ops_id = ops["id"].as_str().unwrap().to_string();
    let (_, seen) = s.admin(Method::GET, "/admin/users/alice/groups", None).await;
    assert_eq!(seen["effective_groups"].as_array().unwrap().len(), 2, "{seen}");

    // Refusals, each a SCIM error, none of them a change.
    for (body, status, scim_type) in [
        (json!({"schemas": [schema], "displayName": "engineering"}), 409, "uniqueness"),
        (json!({"schemas": [schema]}), 400, "invalidValue"),
        (json!({"schemas": [schema], "displayName": "X", "members": [{"value": "u_nobody"}]}), 400, "invalidValue"),
        (json!({"schemas": [schema], "displayName": "X", "members": [{"value": alice, "type": "Robot"}]}), 400, "invalidValue"),
        (json!({"schemas": [schema], "displayName": 7}), 400, "invalidValue"),
    ] {
        let (st, _, e) = send(&s, &token, Method::POST, "/scim/v2/Groups", Some(body.clone()), &[]).await;
        assert_eq!((st, e["scimType"].as_str()), (status, Some(scim_type)), "{body}: {e}");
    }
    let res = s.http.post(s.url("/scim/v2/Groups")).bearer_auth(&token).header("content-type", "application/scim+json").body("{not json").send().await.unwrap();
    assert_eq!(res.status(), 400);
    // A cycle, in a PATCH that also does something valid: nothing of it is applied.
    let (st, _, e) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([
        {"op": "replace", "path": "displayName", "value": "Renamed"},
        {"op": "add", "path": "members", "value": [{"value": ops_id}]},
    ]))), &[]).await;
    assert_eq!((st, e["scimType"].as_str()), (400, Some("invalidValue")), "{e}");
    assert_eq!(scim(&s, &token, &format!("/scim/v2/Groups/{eng_id}"), &[]).await.2["displayName"], "Engineering", "all or nothing");

    // PATCH as Entra ID sends it: op names capitalised, add members, remove with a value.
    let (st, headers, g) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "Add", "path": "members", "value": [{"value": bob}]}]))), &[]).await;
    assert_eq!((st, member_ids(&g).len()), (200, 2), "{g}");
    let tag = headers["etag"].to_str().unwrap().to_string();
    let (st, _, g) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "Remove", "path": "members", "value": [{"value": alice}]}]))), &[("if-match", &tag)]).await;
    assert_eq!((st, member_ids(&g)), (200, vec![bob.clone()]), "{g}");
    // A stale version: 412, nothing changed.
    let (st, _, _) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "replace", "path": "displayName", "value": "Stale"}]))), &[("if-match", &tag)]).await;
    assert_eq!(st, 412);
    // Okta's remove by filter, and a replace without a path.
    let (st, _, g) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([
        {"op": "remove", "path": format!("members[value eq \"{bob}\"]")},
        {"op": "replace", "value": {"displayName": "Platform", "externalId": "e-2"}},
    ]))), &[]).await;
    assert_eq!((st, g["displayName"].as_str(), g["externalId"].as_str(), g.get("members").map(|m| m.as_array().unwrap().len())), (200, Some("Platform"), Some("e-2"), Some(0)), "{g}");
    let (st, _, e) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "remove", "path": "displayName"}]))), &[]).await;
    assert_eq!((st, e["scimType"].as_str()), (400, Some("invalidValue")));
    let (st, _, e) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "replace", "path": "members[value eq", "value": []}]))), &[]).await;
    assert_eq!((st, e["scimType"].as_str()), (400, Some("invalidPath")));

    // PUT: the name and what it names; members left out stay (not asserted).
    let (st, _, g) = send(&s, &token, Method::PUT, &format!("/scim/v2/Groups/{eng_id}"), Some(json!({"schemas": [schema], "displayName": "Platform", "members": [{"value": alice}, {"value": bob}]})), &[]).await;
    assert_eq!((st, member_ids(&g).len()), (200, 2), "{g}");
    let (st, _, g) = send(&s, &token, Method::PUT, &format!("/scim/v2/Groups/{eng_id}"), Some(json!({"schemas": [schema], "displayName": "Platform Team"})), &[]).await;
    assert_eq!((st, g["displayName"].as_str(), member_ids(&g).len()), (200, Some("Platform Team"), 2));
    // directory_max_members (3 here): a fourth member is refused, as a whole.
    let carol = s.user("carol", json!({})).await;
    let dave = s.user("dave", json!({})).await;
    let (st, _, e) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Groups/{eng_id}"), Some(patch_op(json!([{"op": "add", "path": "members", "value": [{"value": carol}, {"value": dave}]}]))), &[]).await;
    assert_eq!((st, e["scimType"].as_str()), (400, Some("invalidValue")), "{e}");
    assert_eq!(member_ids(&scim(&s, &token, &format!("/scim/v2/Groups/{eng_id}"), &[]).await.2).len(), 2);

    // Seen by the admin API and audited, via scim.
    let (_, listed) = s.admin(Method::GET, "/admin/groups/Platform%20Team/members", None).await;
    assert_eq!(listed["members"].as_array().unwrap().len(), 2, "{listed}");
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=group_member_added", None).await;
    let events = audit["events"].as_array().unwrap();
    assert!(events.iter().all(|e| e["detail"]["via"] == "scim" && e["detail"]["credential"] == made["id"]), "{audit}");

    // Delete, with a stale If-Match refused first; another tenant cannot reach it.
    assert_eq!(send(&s, &token, Method::DELETE, &format!("/scim/v2/Groups/{eng_id}"), None, &[("if-match", "W/\"1\"")]).await.0, 412);
    assert_eq!(send(&s, ADMIN, Method::DELETE, &format!("/t/nowhere/scim/v2/Groups/{eng_id}"), None, &[]).await.0, 404);
    assert_eq!(send(&s, &token, Method::DELETE, &format!("/scim/v2/Groups/{eng_id}"), None, &[]).await.0, 204);
    assert_eq!(scim(&s, &token, &format!("/scim/v2/Groups/{eng_id}"), &[]).await.0, 404);
    assert_eq!(send(&s, &token, Method::DELETE, &format!("/scim/v2/Groups/{eng_id}"), None, &[]).await.0, 404);
    let (_, ops_now) = s.admin(Method::GET, &format!("/admin/groups/{ops_id}/members"), None).await;
    assert_eq!(ops_now["members"], json!([]), "the nesting went with the group");
}

#[tokio::test]
async fn groups_are_written_through_scim_on_sqlite() {
    groups_are_written_through_scim(false).await;
}

#[tokio::test]
async fn groups_are_written_through_scim_on_postgres() {
    groups_are_written_through_scim(true).await;
}

#[tokio::test]
async fn groups_are_read_through_scim_on_sqlite() {
    groups_are_read_through_scim(false).await;
}

#[tokio::test]
async fn groups_are_read_through_scim_on_postgres() {
    groups_are_read_through_scim(true).await;
}
