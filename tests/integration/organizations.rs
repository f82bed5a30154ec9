//! Organizations (issue 31): managed through a tenant's admin API; `organization=` on the
//! authorization request lets members only sign in for one, and their tokens then name it
//! (`org_id`, `org_name`, `org_roles`) until the membership ends; another tenant sees none of
//! it. On SQLite and PostgreSQL.

use crate::harness::*;
use crate::tenants::{authorize_as, browser, introspect, rp_and_alice};
use reqwest::Method;
use serde_json::{json, Value};

async fn redeem(s: &TestServer, prefix: &str, secret: &str, code: &str) -> Value {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT)];
    let res = s.http.post(s.url(&format!("{prefix}/token"))).basic_auth("rp", Some(secret)).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn refresh(s: &TestServer, secret: &str, token: &str) -> (u16, Value) {
    let res = s.http.post(s.url("/token")).basic_auth("rp", Some(secret)).form(&[("grant_type", "refresh_token"), ("refresh_token", token)]).send().await.unwrap();
    (res.status().as_u16(), res.json().await.unwrap())
}

async fn userinfo_status(s: &TestServer, token: &str) -> u16 {
    s.http.get(s.url("/userinfo")).bearer_auth(token).send().await.unwrap().status().as_u16()
}

fn claims(jwt: &Value) -> Value {
    jwt_parts(jwt.as_str().unwrap()).1
}

async fn members_only_and_their_tokens_name_the_organization(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let secret = rp_and_alice(&s, "").await;
    s.user("bob", json!({})).await;

    // Managed by the admin API, checked as it is saved.
    let (status, acme) = s.admin(Method::POST, "/admin/organizations", Some(json!({"slug": "acme", "display_name": "Acme Inc.", "domains": ["Acme.example"]}))).await;
    assert_eq!(status, 201, "{acme}");
    let org_id = acme["id"].as_str().unwrap().to_string();
    assert_eq!(acme["domains"], json!(["acme.example"]));
    for (bad, want) in [
        (json!({"slug": "acme"}), 409),
        (json!({"slug": "globex", "domains": ["acme.example"]}), 409),
        (json!({"slug": "Globex"}), 400),
        (json!({"slug": "globex", "upstream": "nowhere"}), 400),
        (json!({"slug": "globex", "logo_uri": "http://globex.example/logo.png"}), 400),
        (json!({"display_name": "no slug"}), 400),
        (json!({"slug": "globex", "surprise": 1}), 400),
    ] {
        assert_eq!(s.admin(Method::POST, "/admin/organizations", Some(bad.clone())).await.0, want, "{bad}");
    }
    let (status, m) = s.admin(Method::PUT, "/admin/organizations/acme/members/alice", Some(json!({"roles": ["admin", "billing:read"]}))).await;
    assert_eq!(status, 200, "{m}");
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/alice", Some(json!({"roles": ["has space"]}))).await.0, 400);
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/nobody", Some(json!({}))).await.0, 404);
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/nope/members/alice", Some(json!({}))).await.0, 404);
    let (_, list) = s.admin(Method::GET, "/admin/organizations/acme/members", None).await;
    assert_eq!(list["members"][0]["username"], "alice");
    assert_eq!(list["members"][0]["roles"], json!(["admin", "billing:read"]));

    // Another tenant sees none of it, and cannot name it on a sign-in.
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    rp_and_alice(&s, "/t/other").await;
    assert_eq!(s.admin(Method::GET, "/t/other/admin/organizations/acme", None).await.0, 404);
    assert_eq!(s.admin(Method::GET, &format!("/t/other/admin/organizations/{org_id}"), None).await.0, 404);
    assert_eq!(s.admin(Method::GET, "/t/other/admin/organizations", None).await.1["organizations"], json!([]));
    let r = authorize_as(&s, &browser(), "/t/other", "alice", &[("organization", "acme")]).await;
    assert_eq!(r["error"], "invalid_request", "{r:?}");

    // The login page says which organization the sign-in is for.
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("organization", "acme")];
    let page = Page::from(browser().get(s.url("/authorize")).query(&q).send().await.unwrap()).await;
    assert!(page.html.contains("for Acme Inc., to continue to"), "{}", page.html);

    // A member signs in for it (by slug or id): the tokens name it, with the member's roles.
    let alice = browser();
    let r = authorize_as(&s, &alice, "", "alice", &[("organization", "acme")]).await;
    let tokens = redeem(&s, "", &secret, &r["code"]).await;
    let id = claims(&tokens["id_token"]);
    assert_eq!((id["org_id"].as_str(), id["org_name"].as_str()), (Some(org_id.as_str()), Some("acme")));
    assert_eq!(id["org_roles"], json!(["admin", "billing:read"]));
    let at = claims(&tokens["access_token"]);
    assert_eq!(at["org_id"], org_id.as_str());
    assert_eq!(at["org_roles"], json!(["admin", "billing:read"]));
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert!(introspect(&s, "", &secret, &access).await);
    assert_eq!(userinfo_status(&s, &access).await, 200);

    // Without `organization`, the same user's tokens name none.
    let r = authorize_as(&s, &alice, "", "alice", &[]).await;
    let plain = redeem(&s, "", &secret, &r["code"]).await;
    assert!(claims(&plain["id_token"]).get("org_id").is_none());

    // Not a member, or no such organization: refused to the client.
    let r = authorize_as(&s, &browser(), "", "bob", &[("organization", &org_id)]).await;
    assert_eq!(r["error"], "access_denied", "{r:?}");
    let r = authorize_as(&s, &browser(), "", "bob", &[("organization", "nope")]).await;
    assert_eq!(r["error"], "invalid_request", "{r:?}");

    // A refresh reads the membership as it is now.
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/alice", Some(json!({"roles": ["viewer"]}))).await.0, 200);
    let (status, refreshed) = refresh(&s, &secret, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{refreshed}");
    assert_eq!(claims(&refreshed["access_token"])["org_roles"], json!(["viewer"]));

    // Removal ends every token for the organization at once, and nothing else of the user's.
    let (status, _) = s.admin(Method::DELETE, "/admin/organizations/acme/members/alice", None).await;
    assert_eq!(status, 204);
    assert_eq!(s.admin(Method::DELETE, "/admin/organizations/acme/members/alice", None).await.0, 404);
    assert!(!introspect(&s, "", &secret, &access).await);
    assert_eq!(userinfo_status(&s, &access).await, 401);
    assert_eq!(refresh(&s, &secret, refreshed["refresh_token"].as_str().unwrap()).await.0, 400);
    assert!(introspect(&s, "", &secret, plain["access_token"].as_str().unwrap()).await, "a token for no organization stands");
    let r = authorize_as(&s, &alice, "", "alice", &[("organization", "acme")]).await;
    assert_eq!(r["error"], "access_denied", "{r:?}");

    // Joining again (a later second) does not bring the earlier tokens back.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/alice", Some(json!({"roles": []}))).await.0, 200);
    assert!(!introspect(&s, "", &secret, &access).await);
    let r = authorize_as(&s, &alice, "", "alice", &[("organization", "acme")]).await;
    let again = redeem(&s, "", &secret, &r["code"]).await;
    assert_eq!(claims(&again["id_token"])["org_roles"], json!([]));

    // A code issued for the organization is refused once the membership is gone.
    let r = authorize_as(&s, &alice, "", "alice", &[("organization", "acme")]).await;
    assert_eq!(s.admin(Method::DELETE, "/admin/organizations/acme/members/alice", None).await.0, 204);
    let form = [("grant_type", "authorization_code"), ("code", r["code"].as_str()), ("redirect_uri", REDIRECT)];
    let res = s.http.post(s.url("/token")).basic_auth("rp", Some(&secret)).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(res.json::<Value>().await.unwrap()["error"], "invalid_grant");

    // Changing and deleting the organization; a deleted user's memberships go too.
    let (status, changed) = s.admin(Method::PATCH, "/admin/organizations/acme", Some(json!({"display_name": "Acme", "domains": []}))).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["domains"], json!([]));
    assert_eq!(s.admin(Method::PUT, "/admin/organizations/acme/members/bob", Some(json!({"roles": ["x"]}))).await.0, 200);
    let (_, bob) = s.admin(Method::GET, "/admin/users", None).await;
    let bob_id = bob["users"].as_array().unwrap().iter().find(|u| u["username"] == "bob").unwrap()["id"].as_str().unwrap().to_string();
    assert!(s.admin(Method::DELETE, &format!("/admin/users/{bob_id}"), None).await.0 < 300);
    assert_eq!(s.admin(Method::GET, "/admin/organizations/acme/members", None).await.1["members"], json!([]));
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/organizations/{org_id}"), None).await.0, 204);
    assert_eq!(s.admin(Method::GET, "/admin/organizations/acme", None).await.0, 404);
    assert!(!introspect(&s, "", &secret, again["access_token"].as_str().unwrap()).await);
}

#[tokio::test]
async fn members_only_and_their_tokens_name_the_organization_on_sqlite() {
    members_only_and_their_tokens_name_the_organization(false).await;
}

#[tokio::test]
async fn members_only_and_their_tokens_name_the_organization_on_postgres() {
    members_only_and_their_tokens_name_the_organization(true).await;
}
