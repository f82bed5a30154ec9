//! PostgreSQL only: several nodes (here, several `App`s in one process, each with its own
//! pool, caches and notification connection) on one database. The same properties with
//! separate processes are tested in `tests/integration/multinode.rs`.

use super::backend::{fresh_database, Backend};
use super::{family, grant, jti, new_id, T};
use authrim::db::StoreError;
use authrim::stores::{Redemption, Rotation, Session};
use std::time::{Duration, Instant};

async fn two_nodes(tweak: fn(&mut authrim::config::Config)) -> Option<(Backend, super::backend::Node, super::backend::Node)> {
    let mut b = Backend::sqlite();
    b.url = Some(fresh_database().await?);
    let (n1, n2) = (b.node(tweak).await, b.node(tweak).await);
    Some((b, n1, n2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_is_consumed_once_across_nodes() {
    let Some((_b, n1, n2)) = two_nodes(|_| {}).await else { return };
    let code = n1.app.stores.codes.issue(T, grant(), 60).await.unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..40 {
        let codes = if i % 2 == 0 { n1.app.stores.codes.clone() } else { n2.app.stores.codes.clone() };
        let code = code.clone();
        set.spawn(async move { codes.consume(T, &code, jti(&i.to_string())).await.unwrap() });
    }
    let outcomes = set.join_all().await;
    assert_eq!(outcomes.iter().filter(|o| matches!(o, Redemption::Fresh(_))).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_is_exactly_once_across_nodes_and_theft_is_seen_by_all() {
    let Some((_b, n1, n2)) = two_nodes(|_| {}).await else { return };
    let t0 = n1.app.stores.refresh.create(T, &new_id(), family("u")).await.unwrap();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..50 {
        let r = if i % 2 == 0 { n1.app.stores.refresh.clone() } else { n2.app.stores.refresh.clone() };
        let t = t0.clone();
        set.spawn(async move { r.rotate(T, &t).await.unwrap() });
    }
    let outcomes = set.join_all().await;
    let winners: Vec<_> = outcomes.iter().filter_map(|o| match o { Rotation::Rotated { token, .. } => Some(token.clone()), _ => None }).collect();
    assert_eq!(winners.len(), 1, "exactly one rotation");
    // Every loser presented a superseded token: theft. The family is revoked on both nodes.
    assert_eq!(n2.app.stores.refresh.rotate(T, &winners[0]).await.unwrap(), Rotation::Revoked);
    assert_eq!(n1.app.stores.refresh.rotate(T, &winners[0]).await.unwrap(), Rotation::Revoked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_made_on_one_node_works_on_another() {
    let Some((_b, n1, n2)) = two_nodes(|_| {}).await else { return };
    let session = Session::new("u", "s".into(), 1, vec![], "1");
    let id = n1.app.stores.sessions.create(T, session.clone(), 60).await.unwrap();
    assert_eq!(n2.app.stores.sessions.get(T, &id).await.unwrap(), Some(session));
    n2.app.stores.sessions.end(T, authrim::stores::SessionRef::Cookie(id.clone()), Box::new(|_, _| Ok(()))).await.unwrap();
    assert_eq!(n1.app.stores.sessions.get(T, &id).await.unwrap(), None);
}

/// The stated bound: once `revocation_max_staleness_ms` has passed after a revocation was
/// acknowledged, every node either refuses the token or refuses to answer (503); never
/// accepts it. How soon it is refused in practice is printed (docs/benchmarks.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_is_honoured_by_every_node_within_the_bound() {
    let Some((_b, n1, n2)) = two_nodes(|c| c.revocation_max_staleness_ms = 500).await else { return };
    let bound = Duration::from_millis(500);
    let mut seen_after = Vec::new();
    for i in 0..200 {
        let jti = format!("jti-{i}");
        assert!(!n2.app.stores.revocations.is_revoked(T, &jti).await.unwrap());
        n1.app.stores.revocations.revoke(T, &jti, authrim::util::now() + 600).await.unwrap();
        let acked = Instant::now();
        loop {
            match n2.app.stores.revocations.is_revoked(T, &jti).await {
                Ok(true) => break,
                Ok(false) => assert!(acked.elapsed() <= bound, "node 2 still accepts {jti} {:?} after the revocation", acked.elapsed()),
                Err(StoreError::Unavailable(_)) => {}
                Err(e) => panic!("{e}"),
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        seen_after.push(acked.elapsed());
    }
    seen_after.sort();
    let p = |q: f64| seen_after[((seen_after.len() - 1) as f64 * q) as usize];
    println!("revocation seen by the other node after: p50 {:?}, p99 {:?}, max {:?}", p(0.5), p(0.99), p(1.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_edits_reach_the_other_nodes() {
    let Some((_b, n1, n2)) = two_nodes(|_| {}).await else { return };
    let (client, _) = authrim::registry::clients::new_client(authrim::registry::ClientInput {
        redirect_uris: Some(vec!["https://rp.example/cb".into()]),
        ..Default::default()
    }, n1.app.vault())
    .unwrap();
    n1.app.registry.of(authrim::tenant::TenantId::DEFAULT).save_client(client.clone()).await.unwrap();
    let start = Instant::now();
    while n2.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(client.id()).is_none() {
        assert!(start.elapsed() < Duration::from_secs(5), "the client never reached node 2");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Another tenant's client under the same id: its notification names its tenant, and
    // node 2 puts it there, not in the default tenant.
    let other = authrim::tenant::TenantId(7);
    n1.app.registry.of(other).save_client(client.clone()).await.unwrap();
    while n2.app.registry.of(other).client(client.id()).is_none() {
        assert!(start.elapsed() < Duration::from_secs(5), "tenant 7's client never reached node 2");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    n1.app.registry.of(authrim::tenant::TenantId::DEFAULT).delete_client(client.id()).await.unwrap();
    while n2.app.registry.of(authrim::tenant::TenantId::DEFAULT).client(client.id()).is_some() {
        assert!(start.elapsed() < Duration::from_secs(5), "the deletion never reached node 2");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(n2.app.registry.of(other).client(client.id()).map(|c| c.tenant), Some(other), "the default tenant's deletion left tenant 7's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotated_on_one_node_is_published_by_all_before_it_signs() {
    let Some((_b, n1, n2)) = two_nodes(|c| {
        c.key_cache_ttl = 1;
        c.key_publish_delay = 3;
    })
    .await
    else {
        return;
    };
    let old = n1.app.tenants.default_tenant().keys.active_kid();
    let vault = authrim::keys::Vault::open(n1.app.config.key_encryption_key.as_deref(), &n1.app.config.data_dir).unwrap();
    let new = authrim::keys::KeyManager::rotate(&n1.app.db, &vault).await.unwrap();
    let published = |n: &super::backend::Node| n.app.tenants.default_tenant().keys.jwks_json().contains(&new);
    let start = Instant::now();
    while !published(&n2) {
        assert!(start.elapsed() < Duration::from_secs(2), "node 2 did not publish the new key");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(n2.app.tenants.default_tenant().keys.active_kid(), old, "published, not yet signing");
    assert_eq!(n1.app.tenants.default_tenant().keys.active_kid(), old);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    // The first node to refresh after the delay promotes the key and tells the others.
    n1.app.tenants.default_tenant().keys.refresh().await.unwrap();
    assert_eq!(n1.app.tenants.default_tenant().keys.active_kid(), new);
    while n2.app.tenants.default_tenant().keys.active_kid() != new {
        assert!(start.elapsed() < Duration::from_secs(8), "node 2 never switched to the new key");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(n2.app.tenants.default_tenant().keys.jwks_json().contains(&old), "the old key stays published");
}

/// Back-Channel Logout across nodes: both nodes run their deliverer on one outbox; every
/// logout token is delivered, each once (the claim's lease, `FOR UPDATE SKIP LOCKED`), and a
/// session ended on one node is ended for the other's token checks within the revocation bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_logout_token_is_delivered_once_by_one_of_the_nodes() {
    use authrim::logout::{backchannel, end_session, EndedBy};
    use authrim::stores::SessionRef;
    use std::sync::{Arc, Mutex};
    // The receiver below listens on loopback: private addresses allowed, as in the suite.
    let Some((_b, n1, n2)) = two_nodes(|c| {
        c.backchannel_logout_retry_initial = 1;
        c.fetch_allow_private_addresses = true;
    })
    .await
    else {
        return;
    };

    let jtis: Arc<Mutex<Vec<String>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}/bc", listener.local_addr().unwrap());
    let seen = jtis.clone();
    let rp = axum::Router::new().route(
        "/bc",
        axum::routing::post(move |body: String| {
            let seen = seen.clone();
            async move {
                let token = body.strip_prefix("logout_token=").expect("a logout_token form").to_string();
                let claims: serde_json::Value = {
                    use base64::Engine;
                    let payload = token.split('.').nth(1).unwrap();
                    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
                };
                // Slow enough that both nodes' deliverers are busy at once.
                tokio::time::sleep(Duration::from_millis(20)).await;
                seen.lock().unwrap().push(claims["jti"].as_str().unwrap().to_string());
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, rp).await.unwrap() });

    let input: authrim::registry::ClientInput =
        serde_json::from_value(serde_json::json!({"client_id": "rp", "redirect_uris": ["https://rp.example/cb"], "backchannel_logout_uri": uri})).unwrap();
    let (client, _) = authrim::registry::clients::new_client(input, n1.app.vault()).unwrap();
    n1.app.registry.of(authrim::tenant::TenantId::DEFAULT).save_client(client).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while n2.app.registry.of(authrim::tenant::TenantId::DEFAULT).client("rp").is_none() {
        assert!(Instant::now() < deadline, "the client never reached node 2");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deliverers = [tokio::spawn(backchannel::run(n1.app.clone())), tokio::spawn(backchannel::run(n2.app.clone()))];

    const SESSIONS: usize = 30;
    let mut sids = Vec::new();
    for i in 0..SESSIONS {
        let sid = format!("sid-{i}");
        let cookie = n1.app.stores.sessions.create(T, Session::new("u", sid.clone(), 1, vec![], "1"), 600).await.unwrap();
        n1.app.stores.sessions.join(T, &cookie, "rp").await.unwrap();
        sids.push(sid);
    }
    for (i, sid) in sids.iter().enumerate() {
        let node = if i % 2 == 0 { &n1 } else { &n2 };
        assert!(end_session(&node.app, T, SessionRef::Sid(sid.clone()), EndedBy::Operator).await.unwrap().is_some());
    }
    // Ended on node 1: node 2 refuses the session's tokens within the revocation bound.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !authrim::tokens::session_ended(&n2.app, T, &sids[0]).await.unwrap_or(false) {
        assert!(Instant::now() < deadline, "node 2 never learnt of the logout on node 1");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let deadline = Instant::now() + Duration::from_secs(30);
    while jtis.lock().unwrap().len() < SESSIONS {
        assert!(Instant::now() < deadline, "only {} of {SESSIONS} delivered", jtis.lock().unwrap().len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A few more polls of both nodes: nothing is delivered twice.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut got = jtis.lock().unwrap().clone();
    assert_eq!(got.len(), SESSIONS, "each token once");
    got.sort();
    got.dedup();
    assert_eq!(got.len(), SESSIONS, "distinct tokens");
    let left: i64 = n1.app.db.read(|sql| sql.query("SELECT COUNT(*) FROM logout_outbox", &[])?[0].i64(0)).await.unwrap();
    assert_eq!(left, 0, "the outbox is empty once everything is delivered");
    deliverers.iter().for_each(|d| d.abort());
}
