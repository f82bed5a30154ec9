//! Outbound provisioning's admin API (issue 32, slice 3) on SQLite and PostgreSQL: a client's
//! SCIM target set (its credential written only), validated, changes queued in the outbox as
//! users and assignments change, its failures shown, removed with the client; another tenant
//! sees none of it; the same in the console. Delivery to a real SCIM server is in
//! tests/e2e/test_provisioning.py.

use crate::console::{csrf, enter, operator, totp};
use crate::harness::*;
use crate::passkeys::{get, post};
use reqwest::Method;
use serde_json::json;

async fn state(s: &TestServer, client: &str) -> serde_json::Value {
    let (st, v) = s.admin(Method::GET, &format!("/admin/clients/{client}/provisioning"), None).await;
    assert_eq!(st, 200, "{v}");
    v
}

async fn a_client_target_is_set_queued_and_removed(postgres: bool) {
    // A target that never answers (a name under .invalid does not resolve): every change
    // stays queued, retried, and its failure is shown.
    let s = TestServer::start_on(postgres, |c| {
        c.backchannel_logout_retry_initial = 3600;
        c.fetch_allow_private_addresses = false;
    })
    .await;
    s.client("wiki", json!({})).await;
    let path = "/admin/clients/wiki/provisioning";
    assert_eq!(s.admin(Method::GET, path, None).await.0, 404, "no target yet");
    for (body, why) in [
        (json!({"endpoint": "https://wiki.invalid/scim/v2"}), "token is required"),
        (json!({"endpoint": "ftp://wiki.invalid/scim", "token": "t"}), "endpoint"),
        (json!({"endpoint": "http://127.0.0.1:9/scim", "token": "t"}), "endpoint"),
        (json!({"endpoint": "https://wiki.invalid/scim/v2", "token": "t", "users": "some"}), "users is one of"),
        (json!({"endpoint": "https://wiki.invalid/scim/v2", "token": "t", "extra": 1}), "extra"),
    ] {
        let (st, e) = s.admin(Method::PUT, path, Some(body.clone())).await;
        assert_eq!(st, 400, "{body}: {e}");
        assert!(e["error_description"].as_str().unwrap().contains(why), "{body}: {e}");
    }
    assert_eq!(s.admin(Method::PUT, "/admin/clients/nope/provisioning", Some(json!({"endpoint": "https://x.invalid", "token": "t"}))).await.0, 404);

    let (st, set) = s.admin(Method::PUT, path, Some(json!({"endpoint": "https://wiki.invalid/scim/v2", "token": "s3cret-token"}))).await;
    assert_eq!(st, 200, "{set}");
    assert_eq!((set["users"].as_str(), set["enabled"].as_bool(), set["pending"].as_i64()), (Some("assigned"), Some(true), Some(0)), "{set}");
    assert!(!set.to_string().contains("s3cret-token"), "the credential is never shown: {set}");

    // Changes that reach a user queue one row each, coalesced while they wait.
    let alice = s.user("alice", json!({})).await;
    s.user("bob", json!({})).await;
    assert_eq!(s.admin(Method::PUT, "/admin/clients/wiki/roles/editor", Some(json!({}))).await.0, 204);
    assert_eq!(s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": "Editors"}))).await.0, 201);
    assert_eq!(s.admin(Method::PUT, "/admin/clients/wiki/roles/editor/assignments/groups/Editors", None).await.0, 204);
    assert_eq!(s.admin(Method::PUT, "/admin/groups/Editors/members/users/alice", None).await.0, 204);
    assert_eq!(s.admin(Method::PATCH, &format!("/admin/users/{alice}"), Some(json!({"claims": {"name": "Alice"}}))).await.0, 200);
    let waiting = |v: &serde_json::Value| v["pending"].as_i64().unwrap();
    let mut now = state(&s, "wiki").await;
    for _ in 0..100 {
        if now["last_error"].is_string() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        now = state(&s, "wiki").await;
    }
    assert!(now["last_error"].as_str().is_some_and(|e| !e.is_empty()), "the unreachable target's failure is shown: {now}");
    // Alice's changes wait as one row, retried later (two if the second came while the first
    // was being tried: a row in delivery may have read her before it); Bob holds no role and
    // the target never had him: his row needed nothing and is done.
    assert!((1..=2).contains(&waiting(&now)), "{now}");
    assert!(now["last_delivered_at"].is_i64(), "{now}");

    // A resync queues every user in scope; the audit says who set and resynced it.
    let (st, r) = s.admin(Method::POST, &format!("{path}/resync"), None).await;
    assert_eq!((st, r["queued"].as_u64()), (202, Some(1)), "alice alone holds a role: {r}");
    let (st, set) = s.admin(Method::PUT, path, Some(json!({"endpoint": "https://wiki.invalid/scim/v2", "users": "all"}))).await;
    assert_eq!((st, set["users"].as_str()), (200, Some("all")), "the credential kept: {set}");
    let (_, audit) = s.admin(Method::GET, "/admin/audit?event=provisioning_set", None).await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 2, "{audit}");
    assert!(!audit.to_string().contains("s3cret-token"));

    // Another tenant sees nothing of it.
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "other"}))).await.0, 201);
    assert_eq!(s.admin(Method::GET, "/t/other/admin/clients/wiki/provisioning", None).await.0, 404);

    // Removed, and with the client.
    assert_eq!(s.admin(Method::DELETE, path, None).await.0, 204);
    assert_eq!(s.admin(Method::DELETE, path, None).await.0, 404);
    assert_eq!(s.admin(Method::PUT, path, Some(json!({"endpoint": "https://wiki.invalid/scim/v2", "token": "t2"}))).await.0, 200);
    assert_eq!(s.admin(Method::DELETE, "/admin/clients/wiki", None).await.0, 204);
    s.client("wiki", json!({})).await;
    assert_eq!(s.admin(Method::GET, path, None).await.0, 404, "a new client of the same id has no target");
}

#[tokio::test]
async fn a_client_target_is_set_queued_and_removed_on_sqlite() {
    a_client_target_is_set_queued_and_removed(false).await;
}

#[tokio::test]
async fn a_client_target_is_set_queued_and_removed_on_postgres() {
    a_client_target_is_set_queued_and_removed(true).await;
}

/// The console shows a client's target and lets an admin set it (the credential written
/// only), resync and remove it; a refusal is said on the page; each change audited as the
/// console user's. (An auditor's and a forged form's refusals: `console_groups.rs`.)
#[tokio::test]
async fn the_console_provisions_an_application() {
    let s = TestServer::start().await;
    s.client("wiki", json!({})).await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);

    let page = get(&admin, "/console/clients/wiki").await;
    assert!(page.html.contains("id=\"provisioning\"") && page.html.contains("This application is not provisioned."), "{}", page.html);
    let token = csrf(&page);
    let path = "/console/clients/wiki/provisioning";
    let no_token = post(&admin, path, &[("csrf", &token), ("endpoint", "https://wiki.invalid/scim/v2"), ("users", "assigned"), ("enabled", "on")]).await;
    assert!(no_token.status == 400 && no_token.html.contains("token is required"), "{}", no_token.html);
    assert!(no_token.html.contains("value=\"https://wiki.invalid/scim/v2\""), "what was typed is kept");
    let bad = post(&admin, path, &[("csrf", &token), ("endpoint", "ftp://wiki.invalid/scim"), ("token", "t")]).await;
    assert!(bad.status == 400 && bad.html.contains("endpoint"), "{}", bad.html);
    assert_eq!(s.admin(Method::GET, "/admin/clients/wiki/provisioning", None).await.0, 404, "nothing set");

    let set = post(&admin, path, &[("csrf", &token), ("endpoint", "https://wiki.invalid/scim/v2"), ("token", "s3cret-token"), ("users", "all"), ("enabled", "on")]).await;
    assert_eq!(set.status, 200, "{}", set.html);
    assert!(set.html.contains("<code>https://wiki.invalid/scim/v2</code>") && set.html.contains("Every user") && !set.html.contains("s3cret-token"), "{}", set.html);
    // Saved again without a credential: the one set is kept; unchecked: paused.
    let paused = post(&admin, path, &[("csrf", &token), ("endpoint", "https://wiki.invalid/scim/v2"), ("token", ""), ("users", "all")]).await;
    assert!(paused.status == 200 && paused.html.contains("(paused)"), "{}", paused.html);
    let (_, state) = s.admin(Method::GET, "/admin/clients/wiki/provisioning", None).await;
    assert_eq!((state["enabled"].as_bool(), state["users"].as_str()), (Some(false), Some("all")), "{state}");

    let queued = post(&admin, &format!("{path}/resync"), &[("csrf", &token)]).await;
    assert!(queued.status == 200 && queued.html.contains("Queued"), "{}", queued.html);
    let removed = post(&admin, &format!("{path}/remove"), &[("csrf", &token)]).await;
    assert!(removed.status == 200 && removed.html.contains("This application is not provisioned."), "{}", removed.html);
    assert_eq!(post(&admin, &format!("{path}/resync"), &[("csrf", &token)]).await.status, 404);

    let (_, v) = s.admin(Method::GET, "/admin/audit?limit=200", None).await;
    for kind in ["provisioning_set", "provisioning_resync", "provisioning_removed"] {
        assert!(v["events"].as_array().unwrap().iter().any(|e| e["event"] == kind && e["detail"]["by"] == "console" && e["detail"]["admin"] == root.as_str()), "{kind}: {v}");
    }
}
