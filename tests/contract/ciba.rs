//! The CibaStore contract (backchannel authentication requests), on both backends: answered
//! once, redeemed once, across a restart; paced polls; the answer's hook (a ping's outbox
//! row) in the answer's commit; the bounds; expiry; tenants and users apart; only a hash of the
//! `auth_req_id` written; a push request that lapses queued for its client by the sweep.

use crate::backend::Backend;
use authrim::stores::ciba::{CibaRequest, Mode, Poll};
use authrim::stores::device::{Approval, Decision, Limits};
use authrim::tenant::TenantId;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const T: TenantId = TenantId::DEFAULT;
const ROOMY: Limits = Limits { per_client: 1000, total: 1000 };

contract!(
    a_ciba_request_is_answered_once_and_redeemed_once_across_a_restart,
    ciba_polls_are_paced_and_only_the_owner_redeems,
    waiting_ciba_requests_are_bounded_and_expire,
    ciba_requests_of_other_tenants_and_users_are_out_of_reach,
    a_lapsed_push_request_is_queued_for_its_client_once,
);

fn request(client: &str, user: &str, ttl: u64) -> CibaRequest {
    let t = authrim::util::now();
    CibaRequest {
        client_id: client.into(),
        user_id: user.into(),
        scope: "openid".into(),
        resources: vec![],
        acr_values: vec![],
        binding_message: Some("W4SCT".into()),
        mode: Mode::Ping,
        created_at: t,
        expires_at: t + ttl,
    }
}

fn approval() -> Decision {
    Decision::Approved(Approval { user_id: "alice".into(), auth_time: 7, sid: "s1".into(), acr: Some("urn:authrim:acr:mfa".into()), amr: vec!["pwd".into()] })
}

fn no_hook() -> authrim::stores::ciba::Hook {
    Box::new(|_| Ok(()))
}

fn no_answer_hook() -> authrim::stores::ciba::AnswerHook {
    Box::new(|_, _, _| Ok(()))
}

async fn issue(s: &Arc<dyn authrim::stores::CibaStore>, tenant: TenantId, r: CibaRequest, limits: Limits) -> Option<String> {
    let id = authrim::util::random_token();
    s.issue(tenant, &id, r, 5, Some(b"sealed ping".to_vec()), limits, no_hook()).await.unwrap().then_some(id)
}

async fn a_ciba_request_is_answered_once_and_redeemed_once_across_a_restart(b: Backend) {
    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    // The issue hook commits with the request (here: a mail row).
    let id = authrim::util::random_token();
    let hook: authrim::stores::ciba::Hook = Box::new(|sql| authrim::mail::enqueue(sql, T, "alice@example.com", "subject", b"body".to_vec()));
    assert!(s.issue(T, &id, request("bank", "alice", 600), 5, Some(b"sealed ping".to_vec()), ROOMY, hook).await.unwrap());
    let mails = node.app.db.read(|sql| sql.query_opt("SELECT COUNT(*) FROM mail_outbox", &[])).await.unwrap().unwrap().i64(0).unwrap();
    assert_eq!(mails, 1);
    // Only a hash of the id is written.
    let rows = node.app.db.read(|sql| sql.query("SELECT hash, data, ping FROM ciba_requests", &[])).await.unwrap();
    assert_eq!(rows.len(), 1);
    let raw = format!("{:?}", rows[0]);
    assert!(!raw.contains(&id) && !raw.contains(&format!("{:?}", id.as_bytes())), "{raw}");
    assert_eq!(s.poll(T, &id, "bank").await.unwrap(), Poll::Pending);
    drop(s);
    node.stop().await;

    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    let waiting = s.waiting_for(T, "alice").await.unwrap();
    assert_eq!(waiting.len(), 1, "remembered across a restart");
    assert_eq!(waiting[0].request.binding_message.as_deref(), Some("W4SCT"));
    let handle = waiting[0].handle.clone();
    // Of racing answers one is recorded, and its hook (the ping) runs with it, once.
    let hooked = Arc::new(AtomicUsize::new(0));
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (s, handle, hooked) = (s.clone(), handle.clone(), hooked.clone());
            tokio::spawn(async move {
                let hook: authrim::stores::ciba::AnswerHook = Box::new(move |sql, client, ping| {
                    assert_eq!((client, ping.as_deref()), ("bank", Some(&b"sealed ping"[..])));
                    hooked.fetch_add(1, Ordering::SeqCst);
                    authrim::ciba::ping::enqueue(sql, T, client, "alice", ping.unwrap(), authrim::util::now())
                });
                s.decide(T, &handle, "alice", if i % 2 == 0 { approval() } else { Decision::Denied }, hook).await.unwrap()
            })
        })
        .collect();
    let mut won = 0;
    for r in racers {
        won += usize::from(r.await.unwrap());
    }
    assert_eq!((won, hooked.load(Ordering::SeqCst)), (1, 1));
    let pings = node.app.db.read(|sql| sql.query_opt("SELECT COUNT(*) FROM logout_outbox WHERE kind = 'ciba_ping'", &[])).await.unwrap().unwrap().i64(0).unwrap();
    assert_eq!(pings, 1, "the ping committed with the answer");
    assert!(s.waiting_for(T, "alice").await.unwrap().is_empty(), "answered: no longer waiting");
    match s.poll(T, &id, "bank").await.unwrap() {
        Poll::Approved(r, a) => assert_eq!((r.client_id.as_str(), a.auth_time), ("bank", 7)),
        Poll::Denied => {}
        other => panic!("{other:?}"),
    }
    drop(s);
    node.stop().await;
}

async fn ciba_polls_are_paced_and_only_the_owner_redeems(b: Backend) {
    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    let id = issue(&s, T, request("bank", "alice", 600), ROOMY).await.unwrap();
    assert_eq!(s.poll(T, &id, "other").await.unwrap(), Poll::Unknown, "another client's");
    assert_eq!(s.poll(T, &id, "bank").await.unwrap(), Poll::Pending);
    assert_eq!(s.poll(T, &id, "bank").await.unwrap(), Poll::SlowDown, "within the interval");
    assert_eq!(s.poll(T, &id, "bank").await.unwrap(), Poll::SlowDown, "the interval grew");
    let handle = s.waiting_for(T, "alice").await.unwrap()[0].handle.clone();
    assert!(s.decide(T, &handle, "alice", approval(), no_answer_hook()).await.unwrap());
    assert!(!s.decide(T, &handle, "alice", Decision::Denied, no_answer_hook()).await.unwrap(), "answered once");
    assert_eq!(s.poll(T, &id, "other").await.unwrap(), Poll::Unknown);
    // Of racing redemptions, one gets the request.
    let racers: Vec<_> = (0..6).map(|_| {
        let (s, id) = (s.clone(), id.clone());
        tokio::spawn(async move { s.poll(T, &id, "bank").await.unwrap() })
    }).collect();
    let mut approved = 0;
    for r in racers {
        match r.await.unwrap() {
            Poll::Approved(..) => approved += 1,
            Poll::Unknown => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(approved, 1);
    assert_eq!(s.poll(T, "junk", "bank").await.unwrap(), Poll::Unknown);
    drop(s);
    node.stop().await;
}

async fn waiting_ciba_requests_are_bounded_and_expire(b: Backend) {
    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    let limits = Limits { per_client: 2, total: 3 };
    assert!(issue(&s, T, request("a", "alice", 600), limits).await.is_some());
    // Expiry is in whole seconds: a lifetime of 1 can end a few milliseconds after it was
    // issued (at x.99 s), before the checks below on a loaded machine. 3 leaves two seconds.
    let short = issue(&s, T, request("a", "alice", 3), limits).await.unwrap();
    assert!(issue(&s, T, request("a", "alice", 600), limits).await.is_none(), "per client");
    assert!(issue(&s, T, request("b", "alice", 600), limits).await.is_some());
    assert!(issue(&s, T, request("c", "alice", 600), limits).await.is_none(), "in all");
    tokio::time::sleep(Duration::from_millis(3_100)).await;
    assert_eq!(s.poll(T, &short, "a").await.unwrap(), Poll::Expired);
    assert_eq!(s.waiting_for(T, "alice").await.unwrap().len(), 2, "an expired request is not listed");
    // Nor counted.
    assert!(issue(&s, T, request("c", "alice", 600), limits).await.is_some());
    // An answered one frees its place.
    let first = s.waiting_for(T, "alice").await.unwrap()[0].handle.clone();
    assert!(s.decide(T, &first, "alice", Decision::Denied, no_answer_hook()).await.unwrap());
    assert!(issue(&s, T, request("d", "alice", 600), limits).await.is_some());
    drop(s);
    node.stop().await;
}

async fn ciba_requests_of_other_tenants_and_users_are_out_of_reach(b: Backend) {
    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    let id = issue(&s, T, request("bank", "alice", 600), ROOMY).await.unwrap();
    let handle = s.waiting_for(T, "alice").await.unwrap()[0].handle.clone();
    assert!(s.waiting_for(TenantId(7), "alice").await.unwrap().is_empty());
    assert_eq!(s.poll(TenantId(7), &id, "bank").await.unwrap(), Poll::Unknown);
    assert!(!s.decide(TenantId(7), &handle, "alice", approval(), no_answer_hook()).await.unwrap());
    assert!(!s.decide(T, &handle, "bob", approval(), no_answer_hook()).await.unwrap(), "another user's request");
    assert!(!s.decide(T, "not-a-handle", "alice", approval(), no_answer_hook()).await.unwrap());
    assert_eq!(s.poll(T, &id, "bank").await.unwrap(), Poll::Pending, "unchanged");
    drop(s);
    node.stop().await;
}

async fn a_lapsed_push_request_is_queued_for_its_client_once(b: Backend) {
    let node = b.node(|_| {}).await;
    let s = node.app.stores.ciba.clone();
    let push = |client, ttl| CibaRequest { mode: Mode::Push, ..request(client, "alice", ttl) };
    let lapsing = issue(&s, T, push("shop", 1), ROOMY).await.unwrap();
    issue(&s, T, push("shop", 600), ROOMY).await.unwrap();
    issue(&s, T, request("bank", "alice", 1), ROOMY).await.unwrap(); // a ping request lapses untold
    issue(&s, T, push("answered", 1), ROOMY).await.unwrap();
    let handle = s.waiting_for(T, "alice").await.unwrap().into_iter().find(|w| w.request.client_id == "answered").unwrap().handle;
    assert!(s.decide(T, &handle, "alice", Decision::Denied, no_answer_hook()).await.unwrap(), "answered: its client is told by the answer");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    s.sweep_expired().await.unwrap();
    s.sweep_expired().await.unwrap();
    let rows = node.app.db.read(|sql| sql.query("SELECT kind, client_id, sub, payload FROM logout_outbox", &[])).await.unwrap();
    assert_eq!(rows.len(), 1, "one lapsed, unanswered push request; told once");
    assert_eq!((rows[0].text(0).unwrap(), rows[0].text(1).unwrap(), rows[0].text(2).unwrap()), ("ciba_push_expired".into(), "shop".into(), "alice".into()));
    assert_eq!(rows[0].opt_blob(3).unwrap().as_deref(), Some(&b"sealed ping"[..]), "the request's own sealed ping");
    // Still told expired_token when polled (and /token refuses push ids anyway).
    assert_eq!(s.poll(T, &lapsing, "shop").await.unwrap(), Poll::Expired);
    drop(s);
    node.stop().await;
}
