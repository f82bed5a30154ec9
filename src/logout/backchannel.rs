//! Back-Channel Logout 1.0: a logout token POSTed to each client that took part in an ended
//! session, from a durable outbox.
//!
//! The outbox is the `logout_outbox` table, written in the commit that ends the session
//! (`enqueue`). Each node runs a `Deliverer` that claims due rows with a lease (on PostgreSQL
//! `FOR UPDATE SKIP LOCKED`, so each row goes to one node), POSTs the token, and deletes the
//! row on a 2xx or reschedules it with a doubled wait. A row whose lease ran out (its node
//! died mid-delivery) is claimed again: delivery is at least once, and a token keeps its `jti`
//! across attempts so that a relying party can tell a repeat. Bounded: a row lives for at most
//! `backchannel_logout_max_attempts` attempts; rows exist only for sessions that ended, and a
//! session exists only after a sign-in.
//!
//! A slow or dead endpoint holds one delivery slot for at most `backchannel_logout_timeout`,
//! never the user's logout (which only wrote the row) nor other clients' deliveries (each runs
//! in its own task, `backchannel_logout_concurrency` at once). Every POST goes through the
//! server's fetcher and its address policy (`fetch_allow_private_addresses`): an endpoint on
//! a loopback, private or link-local address gets nothing, and its row is abandoned at once.

use crate::app::{App, AppState};
use crate::audit::AuditEvent;
use crate::db::{Dialect, Sql, StoreResult};
use crate::http::fetch::FetchError;
use crate::metrics::{OutcomeLabels, METRICS};
use crate::stores::Session;
use crate::tenant::Issuer;
use crate::util::{now, random_token};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};

/// The `kind` of a logout token's row.
pub const LOGOUT_KIND: &str = "logout";
/// `events` member of every logout token (Back-Channel Logout 1.0 §2.4).
pub const LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";
/// JOSE `typ` of a logout token (§2.4, as updated by errata 1).
pub const LOGOUT_TOKEN_TYP: &str = "logout+jwt";
/// How long a logout token is valid after it is signed (errata 1 recommends two minutes).
const TOKEN_LIFETIME: u64 = 120;
/// The longest wait between two attempts.
const MAX_BACKOFF: u64 = 3600;
/// How often a node looks for rows that are due without being woken (retries, other nodes'
/// rows, rows whose node died).
const POLL: Duration = Duration::from_secs(1);

/// Queue a notice of the ended `session` for each of its clients in `notified`, of the kind
/// given there (`logout`: a logout token; `logout::saml_soap::KIND`: a SAML LogoutRequest by
/// SOAP), inside the transaction that ends the session.
pub fn enqueue(sql: &mut dyn Sql, session: &Session, notified: &HashMap<String, &'static str>, t: u64) -> StoreResult<()> {
    for (client, kind) in session.clients.iter().filter_map(|c| notified.get(c).map(|k| (c, *k))) {
        sql.execute(
            "INSERT INTO logout_outbox (tenant_id, id, client_id, sub, sid, attempts, due_at, lease_until, created_at, kind) \
             VALUES (?6, ?1, ?2, ?3, ?4, 0, ?5, 0, ?5, ?7)",
            crate::params![random_token(), client.as_str(), session.user_id.as_str(), session.sid.as_str(), t as i64, session.tenant, kind],
        )?;
    }
    Ok(())
}

/// Queue a row of another `kind` (a CIBA ping or notice) for `client_id`, its sealed
/// `payload` what the deliverer of that kind sends, in the caller's transaction.
pub fn enqueue_other(sql: &mut dyn Sql, tenant: crate::tenant::TenantId, kind: &str, client_id: &str, user_id: &str, payload: Vec<u8>, t: u64) -> StoreResult<()> {
    sql.execute(
        "INSERT INTO logout_outbox (tenant_id, id, client_id, sub, sid, attempts, due_at, lease_until, created_at, kind, payload) \
         VALUES (?7, ?1, ?2, ?3, '', 0, ?4, 0, ?4, ?5, ?6)",
        crate::params![random_token(), client_id, user_id, t as i64, kind, payload, tenant],
    )?;
    Ok(())
}

/// What the outbox needs of one kind of row: where it goes, how it is sent, whether a refusal
/// is final, and what the audit log calls its outcomes. One per kind, each in its own module
/// (logout tokens here, `ciba::ping`, `ciba::push`, `ciba::hook`, `provisioning::deliver`): a new side effect is a new
/// `Deliverer` in `DELIVERERS`, not a branch in `deliver`.
pub trait Deliverer: Sync {
    /// The `kind` values of its rows.
    fn kinds(&self) -> &'static [&'static str];
    /// Where the row goes now; `None`: nobody to tell any more (the row is dropped).
    fn endpoint(&self, app: &Issuer, row: &Due) -> Option<String>;
    /// Send the row. The outer error is ours (e.g. a row that cannot be opened); the inner
    /// one the endpoint's or the network's.
    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a>;
    /// Whether an error of ours is final (a sealed row that cannot be opened never will be;
    /// a logout token that cannot be signed may be later).
    fn our_error_is_final(&self) -> bool;
    /// Whether a refusal (a 3xx, or a 4xx other than 408 and 429) is final.
    fn refusal_is_final(&self) -> bool;
    /// The audit events of a delivery and of an abandonment.
    fn events(&self) -> (&'static str, &'static str);
    /// Whether a row's `sub` is a user's id (the audit event names them); a group's, for
    /// outbound provisioning's group rows, is said in the event's detail instead.
    fn sub_is_user(&self, row: &Due) -> bool {
        let _ = row;
        true
    }
}

/// What `Deliverer::send` returns.
pub type Sending<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Result<(), FetchError>, String>> + Send + 'a>>;

/// Every kind of outbox row; a row of a kind none names is a logout token (the column's
/// default).
const DELIVERERS: &[&dyn Deliverer] =
    &[&LogoutTokens, &super::saml_soap::SoapLogouts, &crate::ciba::ping::Pings, &crate::ciba::push::Pushes, &crate::ciba::hook::Notices, &crate::provisioning::deliver::Provisions];

fn deliverer(kind: &str) -> &'static dyn Deliverer {
    DELIVERERS.iter().copied().find(|d| d.kinds().contains(&kind)).unwrap_or(&LogoutTokens)
}

/// Back-Channel Logout's own rows: a logout token, signed at each attempt (its `jti` the row's
/// id), to the client's `backchannel_logout_uri`.
struct LogoutTokens;

impl Deliverer for LogoutTokens {
    fn kinds(&self) -> &'static [&'static str] {
        &[LOGOUT_KIND]
    }

    fn endpoint(&self, app: &Issuer, row: &Due) -> Option<String> {
        app.client(&row.client_id).and_then(|c| c.meta.backchannel_logout_uri.clone())
    }

    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(async move {
            let token = logout_token(app, &row.client_id, &row.sub, &row.sid, &row.id).map_err(|e| format!("cannot sign the logout token: {e}"))?;
            Ok(app.fetcher.post_form(uri, &[("logout_token", token.as_str())], timeout).await)
        })
    }

    fn our_error_is_final(&self) -> bool {
        false
    }

    fn refusal_is_final(&self) -> bool {
        false
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("backchannel_logout_delivered", "backchannel_logout_abandoned")
    }
}

/// One claimed row.
#[derive(Debug, Clone)]
pub struct Due {
    /// Also the token's `jti`.
    pub id: String,
    pub client_id: String,
    pub sub: String,
    pub sid: String,
    /// Including this one.
    pub attempts: u64,
    /// Whose row it is: a logout token is signed with its keys, a ping is its client's.
    pub tenant: crate::tenant::TenantId,
    /// `logout`, `saml_soap_logout`, or a CIBA kind (`ciba::ping`, `ciba::push`, `ciba::hook`: then `payload` is
    /// what it sends, sealed, and `sid` empty).
    pub kind: String,
    pub payload: Option<Vec<u8>>,
}

/// The node's side of the outbox: what wakes its deliverer. The POSTs go through the
/// server's one `Fetcher`: a `backchannel_logout_uri` is a client's choice, and without the
/// fetcher's address policy a client could make every logout POST into the server's own
/// network (blind SSRF).
pub struct Outbox {
    wake: Notify,
}

impl Outbox {
    pub fn new() -> Self {
        Self { wake: Notify::new() }
    }

    /// Rows were queued: look now rather than at the next poll.
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

impl Default for Outbox {
    fn default() -> Self {
        Self::new()
    }
}

/// The logout token for one delivery (Back-Channel Logout 1.0 §2.4): `sub` and `sid` both,
/// whatever the client asked for; never a `nonce`.
pub fn logout_token(app: &Issuer, client_id: &str, sub: &str, sid: &str, jti: &str) -> anyhow::Result<String> {
    let iat = now();
    let claims = json!({
        "iss": app.issuer(),
        "aud": client_id,
        "iat": iat,
        "exp": iat + TOKEN_LIFETIME,
        "jti": jti,
        "sub": crate::tokens::subject::subject_for(app, client_id, sub),
        "sid": sid,
        "events": { LOGOUT_EVENT: {} },
    });
    // Signed as the client's ID tokens are (Back-Channel Logout 1.0 §2.4).
    app.keys().sign_as(&crate::tokens::id_token_alg(app, client_id), LOGOUT_TOKEN_TYP, &claims)
}

/// The node's deliverer; runs until aborted (at shutdown: rows being delivered keep their
/// lease, and are delivered again once it runs out).
pub async fn run(app: AppState) {
    // One process owns an SQLite database: a lease found at start is this process's former
    // life's, cut short by a stop or a crash, and nobody else will ever finish it. On
    // PostgreSQL a lease may be another live node's: it has to run out.
    if app.db.dialect() == Dialect::Sqlite {
        let released = app.db.write(|sql| sql.execute("UPDATE logout_outbox SET lease_until = 0 WHERE lease_until > 0", &[])).await;
        if let Err(e) = released {
            tracing::warn!(error = %e, "back-channel logout: cannot release the leases of the previous run");
        }
    }
    let slots = Arc::new(Semaphore::new(app.config.backchannel_logout_concurrency));
    loop {
        let free = slots.available_permits();
        if free > 0 {
            match claim(&app, free).await {
                Ok(rows) => {
                    for row in rows {
                        let Ok(permit) = slots.clone().acquire_owned().await else { return };
                        let app = app.clone();
                        tokio::spawn(async move {
                            // Signed with the keys of the tenant whose session ended; a row of
                            // a tenant that no longer exists has no one to tell.
                            match crate::tenant::Issuer::of(&app, row.tenant) {
                                Some(issuer) => deliver(&issuer, row).await,
                                None => finish(&app, &row, "dropped", None).await,
                            }
                            drop(permit);
                        });
                    }
                }
                Err(e) => tracing::warn!(error = %e, "back-channel logout: cannot read the outbox"),
            }
        }
        tokio::select! {
            _ = app.backchannel.wake.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Claim up to `limit` due rows for this node: their lease keeps other nodes off them while
/// they are delivered.
async fn claim(app: &App, limit: usize) -> StoreResult<Vec<Due>> {
    let t = now() as i64;
    // A look first: most polls find nothing, and a read costs no commit.
    let (pending, due) = app
        .db
        .read(move |sql| {
            let r = sql.query_opt(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN due_at <= ?1 AND lease_until <= ?1 THEN 1 ELSE 0 END), 0) FROM logout_outbox",
                crate::params![t],
            )?;
            Ok(r.map(|r| Ok::<_, crate::db::StoreError>((r.i64(0)?, r.i64(1)?))).transpose()?.unwrap_or((0, 0)))
        })
        .await?;
    METRICS.backchannel_pending.set(pending);
    if due == 0 {
        return Ok(Vec::new());
    }
    let lease = t + (app.config.backchannel_logout_timeout + 30) as i64;
    let rows = app.db.write(move |sql| claim_rows(sql, t, lease, limit)).await?;
    rows.iter()
        .map(|r| {
            Ok(Due {
                id: r.text(0)?,
                client_id: r.text(1)?,
                sub: r.text(2)?,
                sid: r.text(3)?,
                attempts: r.i64(4)?.max(0) as u64,
                kind: r.text(5)?,
                payload: r.opt_blob(6)?,
                tenant: r.tenant(7)?,
            })
        })
        .collect()
}

/// Send one row by its kind's deliverer and record the outcome.
async fn deliver(app: &Issuer, row: Due) {
    let kind = deliverer(&row.kind);
    let Some(uri) = kind.endpoint(app, &row) else {
        // The client is gone or no longer asks to be told: nothing to deliver.
        finish(app, &row, "dropped", None).await;
        return;
    };
    let timeout = Duration::from_secs(app.config.backchannel_logout_timeout);
    let mut forbidden = false;
    let failure = match kind.send(app, &uri, &row, timeout).await {
        Err(e) => {
            forbidden = kind.our_error_is_final();
            Some(e)
        }
        Ok(sent) => match sent {
            Ok(()) => None,
            Err(FetchError::Status(status)) => {
                // A client that refuses a ping or a push (401, 403, 404, …) refuses it again:
                // CIBA Core §10.2 and §10.3 leave 4xx to the OP, and a retry would only reach
                // the client later with a stale token (the OpenID Foundation's FAPI-CIBA plan
                // fails a second call after a 401). A 3xx the client must not send (§10.2) and
                // we do not follow: final too. 408 and 429 ask for a later attempt, and 5xx are
                // retried as before.
                forbidden = kind.refusal_is_final() && (300..500).contains(&status) && status != 408 && status != 429;
                Some(format!("the endpoint answered {status}"))
            }
            Err(FetchError::Transport(why)) if why == "timed out" => Some("the endpoint did not answer in time".into()),
            Err(FetchError::Transport(why)) => Some(format!("the endpoint could not be reached: {why}")),
            Err(e) => {
                // The address policy refuses the URI: no later attempt would be allowed either.
                forbidden = matches!(e, FetchError::Forbidden(_));
                Some(e.to_string())
            }
        },
    };
    match failure {
        None => finish(app, &row, "delivered", None).await,
        Some(why) if forbidden || row.attempts >= app.config.backchannel_logout_max_attempts => finish(app, &row, "abandoned", Some(why)).await,
        Some(why) => retry(app, &row, why).await,
    }
}

/// The row is done with (delivered, abandoned, or nothing to deliver): remove it.
async fn finish(app: &App, row: &Due, outcome: &'static str, why: Option<String>) {
    let id = row.id.clone();
    if let Err(e) = app.db.write(move |sql| sql.execute("DELETE FROM logout_outbox WHERE id = ?1", crate::params![id.as_str()])).await {
        // The lease runs out and the row is delivered again: at least once, never lost.
        tracing::warn!(error = %e, "back-channel logout: cannot remove a finished row");
    }
    if outcome == "dropped" {
        return;
    }
    METRICS.backchannel_logouts.get_or_create(&OutcomeLabels { outcome }).inc();
    let mut detail = json!({"sid": row.sid, "attempts": row.attempts});
    if let Some(why) = why {
        detail["error"] = Value::String(why);
    }
    let kind = deliverer(&row.kind);
    let (delivered, abandoned) = kind.events();
    let event = if outcome == "delivered" { delivered } else { abandoned };
    let mut e = AuditEvent::new(event).tenant(row.tenant).client(&row.client_id);
    match kind.sub_is_user(row) {
        true => e = e.user(&row.sub),
        false => detail["group_id"] = Value::String(row.sub.clone()),
    }
    app.audit.record(e.detail(detail)).await;
}

/// Lease up to `limit` due rows until `lease`. A provisioning row whose user or group has
/// another row in flight for the same target waits for it: two deliveries of one resource at
/// once would each find nothing at the target and each create it (the e2e provisioning run
/// found a group made twice). A row is queued for a resource while its earlier row is in
/// flight (`provisioning::enqueue_for` coalesces only waiting rows), hence the check here. On
/// PostgreSQL two nodes claiming at the same instant could still each take one; a single
/// node's claims are one at a time.
fn claim_rows(sql: &mut dyn Sql, t: i64, lease: i64, limit: usize) -> StoreResult<Vec<crate::db::Row>> {
    let lock = if sql.dialect() == Dialect::Postgres { " FOR UPDATE SKIP LOCKED" } else { "" };
    sql.query(
        &format!(
            "UPDATE logout_outbox SET lease_until = ?1, attempts = attempts + 1 WHERE id IN \
             (SELECT id FROM logout_outbox o WHERE due_at <= ?2 AND lease_until <= ?2 \
              AND NOT (kind IN (?4, ?5) AND EXISTS (SELECT 1 FROM logout_outbox f WHERE f.tenant_id = o.tenant_id AND f.kind = o.kind \
                       AND f.client_id = o.client_id AND f.sub = o.sub AND f.lease_until > ?2)) \
              ORDER BY due_at LIMIT ?3{lock}) \
             RETURNING id, client_id, sub, sid, attempts, kind, payload, tenant_id"
        ),
        crate::params![lease, t, limit as i64, crate::provisioning::KIND, crate::provisioning::GROUP_KIND],
    )
}

/// Try again after a wait that doubles with each failure.
async fn retry(app: &App, row: &Due, why: String) {
    METRICS.backchannel_logouts.get_or_create(&OutcomeLabels { outcome: "retry" }).inc();
    let wait = backoff(app.config.backchannel_logout_retry_initial, row.attempts);
    tracing::info!(client = %row.client_id, attempts = row.attempts, retry_in = wait, error = %why, "back-channel logout failed; will retry");
    let (id, due) = (row.id.clone(), (now() + wait) as i64);
    let released = app
        .db
        .write(move |sql| {
            sql.execute("UPDATE logout_outbox SET due_at = ?2, lease_until = 0 WHERE id = ?1", crate::params![id.as_str(), due])
        })
        .await;
    if let Err(e) = released {
        tracing::warn!(error = %e, "back-channel logout: cannot reschedule; the lease will expire instead");
    }
}

/// The wait after the `attempts`-th failure: initial, 2×initial, 4×… up to an hour.
fn backoff(initial: u64, attempts: u64) -> u64 {
    initial.saturating_mul(1u64 << attempts.saturating_sub(1).min(20)).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::{backoff, claim_rows, deliverer, enqueue_other, DELIVERERS};
    use crate::db::Sql as _;
    use crate::tenant::TenantId;

    /// A provisioning row waits while another row of the same resource and target is in
    /// flight; other kinds, other resources and other targets do not.
    #[test]
    fn a_resource_s_provisioning_rows_are_delivered_one_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let sql = &mut crate::db::SqliteSql(&conn);
        let (group, user) = (crate::provisioning::GROUP_KIND, crate::provisioning::KIND);
        let t = 1_000;
        enqueue_other(sql, TenantId::DEFAULT, group, "target-a", "crew", Vec::new(), 10).unwrap();
        let first = claim_rows(sql, t, t + 60, 10).unwrap();
        assert_eq!(first.len(), 1);
        // While it is in flight: the same group again (a later change), the same group for
        // another target, another group, a user of the same id, two logout tokens of one user.
        for (kind, target, sub) in [(group, "target-a", "crew"), (group, "target-b", "crew"), (group, "target-a", "ops"), (user, "target-a", "crew"), ("logout", "rp", "alice"), ("logout", "rp", "alice")] {
            enqueue_other(sql, TenantId::DEFAULT, kind, target, sub, Vec::new(), 20).unwrap();
        }
        let claimed = claim_rows(sql, t + 1, t + 61, 10).unwrap();
        let next: Vec<(String, String, String)> = claimed.iter().map(|r| (r.text(5).unwrap(), r.text(1).unwrap(), r.text(2).unwrap())).collect();
        assert_eq!(next.len(), 5, "{next:?}");
        assert!(!next.contains(&(group.to_string(), "target-a".to_string(), "crew".to_string())), "{next:?}");
        for r in &claimed {
            sql.execute("DELETE FROM logout_outbox WHERE id = ?1", crate::params![r.text(0).unwrap().as_str()]).unwrap();
        }
        // Once the first is done (its row gone), or its lease has run out (its node died), the
        // waiting one goes.
        let id = first[0].text(0).unwrap();
        sql.execute("DELETE FROM logout_outbox WHERE id = ?1", crate::params![id.as_str()]).unwrap();
        let last = claim_rows(sql, t + 2, t + 62, 10).unwrap();
        assert_eq!(last.iter().map(|r| (r.text(1).unwrap(), r.text(2).unwrap())).collect::<Vec<_>>(), [("target-a".to_string(), "crew".to_string())]);
        enqueue_other(sql, TenantId::DEFAULT, group, "target-a", "crew", Vec::new(), 30).unwrap();
        assert!(claim_rows(sql, t + 3, t + 63, 10).unwrap().is_empty(), "in flight until its lease runs out");
        assert_eq!(claim_rows(sql, t + 63, t + 123, 10).unwrap().len(), 2, "the lease ran out: both go");
    }

    /// Each kind has one deliverer; a row of a kind nobody names is a logout token; every
    /// outcome is an audit event the console lists.
    #[test]
    fn every_kind_has_one_deliverer_and_listed_events() {
        let mut kinds: Vec<&str> = DELIVERERS.iter().flat_map(|d| d.kinds().iter().copied()).collect();
        let n = kinds.len();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), n, "a kind named twice");
        for kind in [crate::ciba::ping::KIND, crate::ciba::push::KIND, crate::ciba::push::EXPIRED_KIND, crate::ciba::hook::KIND, "logout"] {
            assert!(kinds.contains(&kind), "{kind}");
        }
        assert_eq!(deliverer("from-a-newer-version").events(), deliverer("logout").events());
        assert_eq!(deliverer(crate::ciba::push::EXPIRED_KIND).events().1, "ciba_push_abandoned");
        let listed: Vec<&str> = crate::audit::EVENTS.iter().map(|(n, _)| *n).collect();
        for d in DELIVERERS {
            let (a, b) = d.events();
            assert!(listed.contains(&a) && listed.contains(&b), "{a} {b}");
        }
    }

    #[test]
    fn the_wait_doubles_up_to_an_hour() {
        assert_eq!((1..=4).map(|n| backoff(2, n)).collect::<Vec<_>>(), [2, 4, 8, 16]);
        assert_eq!(backoff(2, 40), 3600);
        assert_eq!(backoff(u64::MAX, 3), 3600);
    }
}
