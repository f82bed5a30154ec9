//! The SCIM 2.0 service (issue 32, slice 2, so far): provisioning credentials (scope `scim`,
//! good for nothing else), the discovery resources, and `Groups` read with filters, sorting,
//! pagination, projections and ETags; SCIM errors; another tenant sees none of it.

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
    assert_eq!((config["filter"]["supported"].as_bool(), config["etag"]["supported"].as_bool(), config["patch"]["supported"].as_bool()), (Some(true), Some(true), Some(false)));
    let (_, _, types) = scim(&s, &token, "/scim/v2/ResourceTypes", &[]).await;
    assert_eq!(types["Resources"][0]["endpoint"], "/Groups");
    let urn = "urn:ietf:params:scim:schemas:core:2.0:Group";
    let (status, _, schema) = scim(&s, &token, &format!("/scim/v2/Schemas/{urn}"), &[]).await;
    assert_eq!((status, schema["attributes"][0]["name"].as_str()), (200, Some("displayName")));
    assert_eq!(scim(&s, &token, "/scim/v2/Schemas/urn:nope", &[]).await.0, 404);
    assert_eq!(scim(&s, &token, "/scim/v2/Nothing", &[]).await.0, 404);
    let res = s.http.post(s.url("/scim/v2/Groups")).bearer_auth(&token).json(&json!({"displayName": "x"})).send().await.unwrap();
    assert_eq!(res.status(), 501, "writes are not built yet, and say so");

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
    assert_eq!((backend["members"][0]["type"].as_str(), backend["members"][0]["display"].as_str()), (Some("User"), Some("alice")));
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

#[tokio::test]
async fn groups_are_read_through_scim_on_sqlite() {
    groups_are_read_through_scim(false).await;
}

#[tokio::test]
async fn groups_are_read_through_scim_on_postgres() {
    groups_are_read_through_scim(true).await;
}
