//! SCIM `Users` (issue 32, slice 2) as Entra ID and Okta provision them (their documented
//! request shapes): created, found by `userName` and `externalId`, their attributes become
//! the claims of their tokens, patched with and without a path, deactivated (sessions ended,
//! tokens refused), replaced and deleted; on SQLite and PostgreSQL.

use crate::harness::*;
use crate::scim::{patch_op, send};
use reqwest::Method;
use serde_json::{json, Value};

const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// A code-flow sign-in of `username` at the client `rp`: (access token, refresh token, the
/// claims userinfo gives).
async fn sign_in(s: &TestServer, secret: &str, username: &str) -> (String, String, Value) {
    let b = s.browser();
    let code = s.code_for(&b, "rp", username, &[("scope", "openid profile email offline_access")]).await["code"].clone();
    let (st, tok, _) = s.token(Some(("rp", secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tok}");
    let access = tok["access_token"].as_str().unwrap().to_string();
    let (st, claims, _) = s.userinfo(&access).await;
    assert_eq!(st, 200, "{username}: {claims}");
    (access, tok["refresh_token"].as_str().unwrap().into(), claims)
}

async fn sessions(s: &TestServer, id: &str) -> usize {
    let (st, v) = s.admin(Method::GET, &format!("/admin/users/{id}/sessions"), None).await;
    assert_eq!(st, 200, "{v}");
    v["sessions"].as_array().map_or(0, Vec::len)
}

async fn users_are_provisioned_as_entra_id_and_okta_do(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let (_, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    let (_, made) = s.admin(Method::POST, "/admin/credentials", Some(json!({"name": "entra", "scopes": ["scim"]}))).await;
    let token = made["token"].as_str().unwrap().to_string();

    // Entra ID asks first whether the user exists, then creates them.
    let (st, _, none) = send(&s, &token, Method::GET, "/scim/v2/Users?filter=userName+eq+%22bjensen%40example.com%22", None, &[]).await;
    assert_eq!((st, none["totalResults"].as_u64()), (200, Some(0)), "{none}");
    let entra = json!({
        "schemas": [USER, ENTERPRISE], "externalId": "0a21f0f2-8d2a-4f8e-bf98-7b2f1b1a3d55", "userName": "bjensen@example.com", "active": true,
        "displayName": "Babs Jensen", "emails": [{"primary": true, "type": "work", "value": "bjensen@example.com"}],
        "name": {"formatted": "Ms. Barbara J Jensen III", "familyName": "Jensen", "givenName": "Barbara"},
        "title": "Tour Guide", ENTERPRISE: {"department": "Tours", "employeeNumber": "701984"},
        "password": PASSWORD,
    });
    let (st, headers, created) = send(&s, &token, Method::POST, "/scim/v2/Users", Some(entra.clone()), &[]).await;
    assert_eq!(st, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    assert!(headers["location"].to_str().unwrap().ends_with(&format!("/scim/v2/Users/{id}")));
    assert_eq!(headers["etag"].to_str().unwrap(), created["meta"]["version"].as_str().unwrap());
    assert!(created.get("password").is_none(), "never returned");
    for key in ["externalId", "displayName", "emails", "name", "title", ENTERPRISE] {
        assert_eq!(created[key], entra[key], "{key} read back as written");
    }
    assert_eq!(created["schemas"], json!([USER, ENTERPRISE]));
    let (st, _, e) = send(&s, &token, Method::POST, "/scim/v2/Users", Some(json!({"schemas": [USER], "userName": "BJENSEN@example.com"})), &[]).await;
    assert_eq!((st, e["scimType"].as_str()), (409, Some("uniqueness")), "{e}");
    for filter in ["userName eq \"BJensen@Example.com\"", "externalId eq \"0a21f0f2-8d2a-4f8e-bf98-7b2f1b1a3d55\"", "emails[type eq \"work\" and value co \"@example.com\"]", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq \"Tours\""] {
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("filter", filter).finish();
        let (_, _, found) = send(&s, &token, Method::GET, &format!("/scim/v2/Users?{q}"), None, &[]).await;
        assert_eq!(found["totalResults"], 1, "{filter}: {found}");
        assert_eq!(found["Resources"][0]["id"], id.as_str());
    }

    // The provisioned attributes are the claims of the user's tokens.
    let (access, refresh, claims) = sign_in(&s, &secret, "bjensen@example.com").await;
    assert_eq!(claims["sub"], id.as_str());
    assert_eq!((claims["name"].as_str(), claims["given_name"].as_str(), claims["family_name"].as_str()), (Some("Babs Jensen"), Some("Barbara"), Some("Jensen")));
    assert_eq!((claims["email"].as_str(), claims["email_verified"].as_bool()), (Some("bjensen@example.com"), Some(false)), "an address from provisioning is not one the user proved");
    assert_eq!(s.userinfo(&access).await.0, 200);

    // Entra ID's PATCH shapes: a path with a value filter, the manager as an id, and a
    // boolean as a string.
    let manager = s.user("manager", json!({})).await;
    let (st, headers, patched) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Users/{id}"), Some(patch_op(json!([
        {"op": "Replace", "path": "emails[type eq \"work\"].value", "value": "babs@example.com"},
        {"op": "Replace", "path": "name.givenName", "value": "Babs"},
        {"op": "Add", "path": format!("{ENTERPRISE}:manager"), "value": manager},
    ]))), &[]).await;
    assert_eq!(st, 200, "{patched}");
    assert_eq!(patched["emails"], json!([{"primary": true, "type": "work", "value": "babs@example.com"}]));
    assert_eq!(patched[ENTERPRISE]["manager"], json!({"value": manager}));
    let tag = headers["etag"].to_str().unwrap().to_string();
    let (_, user) = s.admin(Method::GET, &format!("/admin/users/{id}"), None).await;
    assert_eq!((user["claims"]["email"].as_str(), user["claims"]["given_name"].as_str(), user["source"].as_str()), (Some("babs@example.com"), Some("Babs"), Some("scim")), "{user}");

    // A stale version is refused; deactivation, as Entra ID sends it, ends the user's
    // sessions and refuses every token they hold.
    assert!(sessions(&s, &id).await > 0);
    let stale = send(&s, &token, Method::PATCH, &format!("/scim/v2/Users/{id}"), Some(patch_op(json!([{"op": "Replace", "path": "title", "value": "x"}]))), &[("if-match", "W/\"0000\"")]).await;
    assert_eq!(stale.0, 412);
    let (st, _, off) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Users/{id}"), Some(patch_op(json!([{"op": "Replace", "path": "active", "value": "False"}]))), &[("if-match", &tag)]).await;
    assert_eq!((st, off["active"].as_bool()), (200, Some(false)), "{off}");
    assert_eq!(sessions(&s, &id).await, 0);
    assert_eq!(s.userinfo(&access).await.0, 401);
    let (st, _, _) = s.token(Some(("rp", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!(st, 400, "the refresh token is refused");
    let (_, _, deactivated) = send(&s, &token, Method::GET, "/scim/v2/Users?filter=active+eq+false", None, &[]).await;
    assert_eq!(deactivated["totalResults"], 1);

    // Okta's shape: PATCH without a path; the user signs in again, their old token stays
    // refused.
    let (st, _, on) = send(&s, &token, Method::PATCH, &format!("/scim/v2/Users/{id}"), Some(patch_op(json!([{"op": "replace", "value": {"active": true}}]))), &[]).await;
    assert_eq!((st, on["active"].as_bool()), (200, Some(true)), "{on}");
    assert_eq!(s.userinfo(&access).await.0, 401);
    // (Tokens issued in the second of the cutoff are refused with it: wait that second out.)
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (access, _, _) = sign_in(&s, &secret, "babs@example.com").await;
    assert_eq!(s.userinfo(&access).await.0, 200);

    // Okta's PUT: the whole user. What it leaves out is cleared (with its claim); the claims
    // SCIM does not map, and the password, are kept.
    assert_eq!(s.admin(Method::PATCH, &format!("/admin/users/{id}"), Some(json!({"claims": {"birthdate": "1970-01-01"}}))).await.0, 200);
    let okta = json!({"schemas": [USER], "userName": "bjensen@example.com", "active": true, "name": {"givenName": "Barbara", "familyName": "Jensen"},
                      "emails": [{"primary": true, "value": "bjensen@example.com", "type": "work"}], "displayName": "Barbara Jensen"});
    let (st, _, put) = send(&s, &token, Method::PUT, &format!("/scim/v2/Users/{id}"), Some(okta.clone()), &[]).await;
    assert_eq!(st, 200, "{put}");
    assert!(put.get("title").is_none() && put.get(ENTERPRISE).is_none() && put.get("externalId").is_none(), "{put}");
    let (_, user) = s.admin(Method::GET, &format!("/admin/users/{id}"), None).await;
    assert_eq!((user["claims"]["name"].as_str(), user["claims"]["birthdate"].as_str()), (Some("Barbara Jensen"), Some("1970-01-01")), "{user}");
    let (access, _, _) = sign_in(&s, &secret, "bjensen@example.com").await;
    // The password the user has, sent again with a PUT (as a provisioning system that syncs
    // passwords may): no change, nobody signed out. A new one: every token refused.
    let mut with_password = okta.clone();
    with_password["password"] = PASSWORD.into();
    assert_eq!(send(&s, &token, Method::PUT, &format!("/scim/v2/Users/{id}"), Some(with_password.clone()), &[]).await.0, 200);
    assert_eq!(s.userinfo(&access).await.0, 200, "the same password changes nothing");
    with_password["password"] = "a brand new passphrase".into();
    assert_eq!(send(&s, &token, Method::PUT, &format!("/scim/v2/Users/{id}"), Some(with_password), &[]).await.0, 200);
    assert_eq!(s.userinfo(&access).await.0, 401, "a new password ends what the old one got");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let b = s.browser();
    let res = b.authorize(&request_query("code", "rp", &[])).await;
    let code = b.finish_login_at(res, "bjensen@example.com", "a brand new passphrase", REDIRECT).await["code"].clone();
    let (_, tok, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    let access = tok["access_token"].as_str().unwrap().to_string();

    // Bad input is a SCIM error, never a 500.
    for (body, scim_type) in [
        (json!({"schemas": [USER], "userName": 7}), "invalidValue"),
        (json!({"schemas": [USER]}), "invalidValue"),
        (json!({"schemas": [USER], "userName": " padded "}), "invalidValue"),
        (json!({"schemas": [USER], "userName": "x", "emails": "x@example.com"}), "invalidValue"),
        (json!({"schemas": [USER], "userName": "x", "password": "short"}), "invalidValue"),
        (json!({"schemas": [USER], "userName": "x", "emails": [{"value": "BJensen@example.com"}], "title": "t"}), "uniqueness"),
    ] {
        let (st, _, e) = send(&s, &token, Method::POST, "/scim/v2/Users", Some(body.clone()), &[]).await;
        assert_eq!(e["scimType"].as_str(), Some(scim_type), "{body}: {st} {e}");
    }
    assert_eq!(send(&s, &token, Method::GET, "/scim/v2/Users?filter=userName+zz+1", None, &[]).await.2["scimType"], "invalidFilter");

    // A user made elsewhere is seen too, from their claims; another tenant sees none of them.
    let alice = s.user("alice", json!({"email": "alice@example.com", "zoneinfo": "Asia/Tokyo"})).await;
    let (_, _, a) = send(&s, &token, Method::GET, &format!("/scim/v2/Users/{alice}"), None, &[]).await;
    assert_eq!((a["userName"].as_str(), a["active"].as_bool(), a["timezone"].as_str()), (Some("alice"), Some(true), Some("Asia/Tokyo")));
    assert_eq!(a["emails"], json!([{"value": "alice@example.com", "primary": true}]));
    let (st, _, search) = send(&s, &token, Method::POST, "/scim/v2/Users/.search", Some(json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "sortBy": "userName", "attributes": ["userName"]})), &[]).await;
    assert_eq!(st, 200, "{search}");
    let names: Vec<&str> = search["Resources"].as_array().unwrap().iter().map(|u| u["userName"].as_str().unwrap()).collect();
    assert_eq!(names, ["alice", "bjensen@example.com", "manager"]);
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    let (_, _, theirs) = send(&s, ADMIN, Method::GET, "/t/other/scim/v2/Users", None, &[]).await;
    assert_eq!(theirs["totalResults"], 0);
    assert_eq!(send(&s, ADMIN, Method::GET, &format!("/t/other/scim/v2/Users/{id}"), None, &[]).await.0, 404);
    assert_eq!(send(&s, ADMIN, Method::DELETE, &format!("/t/other/scim/v2/Users/{id}"), None, &[]).await.0, 404);

    // Deletion ends everything, and is audited as the credential's.
    assert!(sessions(&s, &id).await > 0);
    assert_eq!(send(&s, &token, Method::DELETE, &format!("/scim/v2/Users/{id}"), None, &[]).await.0, 204);
    assert_eq!(s.userinfo(&access).await.0, 401);
    assert_eq!(send(&s, &token, Method::GET, &format!("/scim/v2/Users/{id}"), None, &[]).await.0, 404);
    assert_eq!(s.admin(Method::GET, &format!("/admin/users/{id}"), None).await.0, 404);
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=user_deleted", None).await;
    assert_eq!(audit["events"][0]["detail"]["credential"], made["id"], "{audit}");
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=user_updated", None).await;
    assert!(audit["events"].as_array().unwrap().iter().any(|e| e["detail"]["via"] == "scim"), "{audit}");
}

#[tokio::test]
async fn users_are_provisioned_as_entra_id_and_okta_do_on_sqlite() {
    users_are_provisioned_as_entra_id_and_okta_do(false).await;
}

#[tokio::test]
async fn users_are_provisioned_as_entra_id_and_okta_do_on_postgres() {
    users_are_provisioned_as_entra_id_and_okta_do(true).await;
}
