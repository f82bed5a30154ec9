//! The security audit log: login success and failure, code reuse, refresh reuse, family and
//! token revocation. Requests hand events over without waiting for the disk; a task writes
//! them in batches (one transaction each). Nothing is dropped: a full queue makes the caller
//! wait (back-pressure), and shutdown flushes the queue before the database closes.

use crate::db::{Database, Sql, StoreResult};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// Who acts in an event whose detail does not say (`detail.by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acting {
    /// The event's user (a sign-in, a change on their account page).
    User,
    /// The event's client (a token request, a registration).
    Client,
    /// Whoever holds the admin API's token.
    Operator,
    /// The server itself (a delivery, an expiry, a reaction to reuse).
    Server,
}

/// Every kind of event the code records, and who acts in it when its detail names nobody:
/// the one list the console's event filter offers (the unit test below holds the code to it,
/// so a new event is added here or the test names it).
pub const EVENTS: &[(&str, Acting)] = &[
    ("admin_credential_created", Acting::Operator),
    ("admin_credential_revoked", Acting::Operator),
    ("backchannel_logout_abandoned", Acting::Server),
    ("backchannel_logout_delivered", Acting::Server),
    ("ciba_approved", Acting::User),
    ("ciba_denied", Acting::User),
    ("ciba_notice_abandoned", Acting::Server),
    ("ciba_notice_delivered", Acting::Server),
    ("ciba_ping_abandoned", Acting::Server),
    ("ciba_ping_delivered", Acting::Server),
    ("ciba_push_abandoned", Acting::Server),
    ("ciba_push_delivered", Acting::Server),
    ("ciba_user_code_removed", Acting::User),
    ("ciba_user_code_set", Acting::User),
    ("client_created", Acting::Operator),
    ("client_deleted", Acting::Operator),
    ("client_expired", Acting::Server),
    ("client_registered", Acting::Client),
    ("client_role_defined", Acting::Operator),
    ("client_role_removed", Acting::Operator),
    ("client_secret_rotated", Acting::Operator),
    ("client_unregistered", Acting::Client),
    ("client_updated", Acting::Operator),
    ("code_reuse", Acting::Client),
    ("consent_withdrawn", Acting::User),
    ("device_approved", Acting::User),
    ("device_denied", Acting::User),
    ("directory_groups_mapped", Acting::Server),
    ("directory_sign_in", Acting::User),
    ("directory_sync", Acting::Server),
    ("directory_sync_skipped", Acting::Server),
    ("directory_unreachable", Acting::Server),
    ("email_verification_sent", Acting::User),
    ("email_verified", Acting::User),
    ("factor_enrolled", Acting::User),
    ("factor_enrolment_failed", Acting::User),
    ("factor_removed", Acting::User),
    ("factors_reset", Acting::Operator),
    ("family_revoked", Acting::Server),
    ("group_changed", Acting::Operator),
    ("group_created", Acting::Operator),
    ("group_deleted", Acting::Operator),
    ("group_member_added", Acting::Operator),
    ("group_member_removed", Acting::Operator),
    ("id_jag_accepted", Acting::Client),
    ("id_jag_issued", Acting::Client),
    ("identity_linked", Acting::User),
    ("identity_unlinked", Acting::User),
    ("initial_access_token_created", Acting::Operator),
    ("login_failure", Acting::User),
    ("login_refused", Acting::User),
    ("login_success", Acting::User),
    ("logout", Acting::User),
    ("mail_given_up", Acting::Server),
    ("organization_changed", Acting::Operator),
    ("organization_created", Acting::Operator),
    ("organization_deleted", Acting::Operator),
    ("organization_invitation_accepted", Acting::User),
    ("organization_invitation_created", Acting::Operator),
    ("organization_invitation_revoked", Acting::Operator),
    ("organization_member_added", Acting::Operator),
    ("organization_member_changed", Acting::Operator),
    ("organization_member_removed", Acting::Operator),
    ("password_change_failed", Acting::User),
    ("password_changed", Acting::User),
    ("password_reset", Acting::User),
    ("password_reset_requested", Acting::User),
    ("profile_changed", Acting::User),
    ("provisioning_removed", Acting::Operator),
    ("provisioning_resync", Acting::Operator),
    ("provisioning_set", Acting::Operator),
    ("recovery_codes_created", Acting::User),
    ("refresh_reuse", Acting::Client),
    ("role_assigned", Acting::Operator),
    ("role_unassigned", Acting::Operator),
    ("saml_assertion_accepted", Acting::User),
    ("saml_assertion_refused", Acting::Server),
    ("saml_logout", Acting::User),
    ("saml_logout_refused", Acting::Client),
    ("saml_request_refused", Acting::Client),
    ("saml_response_issued", Acting::User),
    ("saml_response_refused", Acting::Server),
    ("saml_soap_logout_abandoned", Acting::Server),
    ("saml_soap_logout_delivered", Acting::Server),
    ("scim_provisioned", Acting::Server),
    ("scim_provisioning_abandoned", Acting::Server),
    ("second_factor_failure", Acting::User),
    ("second_factor_locked", Acting::Server),
    ("second_factor_success", Acting::User),
    ("sessions_ended", Acting::Operator),
    ("signing_key_rotated", Acting::Operator),
    ("signup_pending", Acting::User),
    ("signup_refused", Acting::User),
    ("tenant_changed", Acting::Operator),
    ("tenant_created", Acting::Operator),
    ("tenant_deleted", Acting::Server),
    ("tenant_deletion_started", Acting::Operator),
    ("token_exchanged", Acting::Client),
    ("token_revocation", Acting::Client),
    ("tokens_revoked", Acting::Operator),
    ("user_created", Acting::Operator),
    ("user_deleted", Acting::Operator),
    ("user_updated", Acting::Operator),
];

/// Who acts in events of this kind when their detail does not say.
pub fn acting(event: &str) -> Acting {
    EVENTS.iter().find(|(name, _)| *name == event).map_or(Acting::Server, |(_, a)| *a)
}

#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// The tenant whose event it is (listed only within it).
    pub tenant: crate::tenant::TenantId,
    /// When, in seconds since the epoch (listed also as `time`, ISO 8601 UTC).
    pub at: u64,
    pub event: String,
    pub client_id: Option<String>,
    pub user_id: Option<String>,
    pub address: Option<String>,
    pub detail: Value,
}

/// The listed form (admin API, CLI): the fields as stored, and `time`, `at` in ISO 8601 (UTC),
/// for people; `at` stays for programs that read it.
impl Serialize for AuditEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Listed<'a> {
            at: u64,
            time: String,
            event: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            client_id: Option<&'a String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            user_id: Option<&'a String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            address: Option<&'a String>,
            detail: &'a Value,
        }
        Listed {
            at: self.at,
            time: crate::util::iso8601(self.at),
            event: &self.event,
            client_id: self.client_id.as_ref(),
            user_id: self.user_id.as_ref(),
            address: self.address.as_ref(),
            detail: &self.detail,
        }
        .serialize(s)
    }
}

impl AuditEvent {
    pub fn new(event: &str) -> Self {
        Self { tenant: Default::default(), at: crate::util::now(), event: event.into(), client_id: None, user_id: None, address: None, detail: Value::Null }
    }

    pub fn tenant(mut self, tenant: crate::tenant::TenantId) -> Self {
        self.tenant = tenant;
        self
    }

    pub fn client(mut self, id: &str) -> Self {
        self.client_id = Some(id.into());
        self
    }

    pub fn user(mut self, id: &str) -> Self {
        self.user_id = Some(id.into());
        self
    }

    pub fn address(mut self, a: &str) -> Self {
        self.address = Some(a.into());
        self
    }

    pub fn detail(mut self, d: Value) -> Self {
        self.detail = d;
        self
    }
}

enum Msg {
    Event(AuditEvent),
    Flush(oneshot::Sender<()>),
}

const QUEUE: usize = 8_192;
const BATCH: usize = 512;

#[derive(Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Msg>,
}

impl AuditLog {
    /// Start the writer task (needs a Tokio runtime).
    pub fn start(db: Database) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_loop(rx, db));
        Self { tx }
    }

    pub async fn record(&self, event: AuditEvent) {
        tracing::info!(audit = %event.event, client = ?event.client_id, user = ?event.user_id, "security event");
        if self.tx.send(Msg::Event(event)).await.is_err() {
            tracing::error!("audit writer stopped; event not recorded");
        }
    }

    /// Wait until every event recorded before this call is committed.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_loop(mut rx: mpsc::Receiver<Msg>, db: Database) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut waiters = Vec::new();
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Event(e) => batch.push(e),
                Msg::Flush(done) => waiters.push(done),
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            let events = std::mem::take(&mut batch);
            let mut attempt = 0;
            loop {
                let copy = events.clone();
                match db.write(move |sql| insert_all(sql, &copy)).await {
                    Ok(()) => break,
                    Err(e) if attempt < 5 => {
                        attempt += 1;
                        tracing::warn!(error = %e, attempt, "audit batch not written; retrying");
                        tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, events = ?events, "audit batch lost after retries");
                        break;
                    }
                }
            }
        }
        for w in waiters.drain(..) {
            let _ = w.send(());
        }
    }
}

/// Record events from outside the server (the CLI), in the caller's transaction.
pub fn insert(sql: &mut dyn Sql, events: &[AuditEvent]) -> StoreResult<()> {
    insert_all(sql, events)
}

fn insert_all(sql: &mut dyn Sql, events: &[AuditEvent]) -> StoreResult<()> {
    for e in events {
        sql.execute(
            "INSERT INTO audit_events (tenant_id, at, event, client_id, user_id, address, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            crate::params![e.tenant, e.at as i64, &e.event, e.client_id.clone(), e.user_id.clone(), e.address.clone(), e.detail.to_string()],
        )?;
    }
    Ok(())
}

/// Which events to list: the newest `limit` of those matching every filter that is set.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Whose events: one tenant's only.
    pub tenant: crate::tenant::TenantId,
    pub limit: u32,
    pub event: Option<String>,
    /// The user's id (a caller resolves a username or e-mail first: `Registry::find_user`).
    pub user_id: Option<String>,
    pub client_id: Option<String>,
    /// Only events at or after this time (seconds since the epoch).
    pub since: Option<u64>,
}

/// The newest `limit` events, optionally of one kind, newest first.
pub fn list(sql: &mut dyn Sql, limit: u32, event: Option<&str>) -> StoreResult<Vec<AuditEvent>> {
    list_filtered(sql, &Filter { limit, event: event.map(str::to_string), ..Default::default() })
}

/// The newest events matching `filter`, newest first.
pub fn list_filtered(sql: &mut dyn Sql, filter: &Filter) -> StoreResult<Vec<AuditEvent>> {
    let rows = sql.query(
        "SELECT at, event, client_id, user_id, address, detail, tenant_id FROM audit_events
         WHERE (CAST(?1 AS TEXT) IS NULL OR event = CAST(?1 AS TEXT))
           AND (CAST(?2 AS TEXT) IS NULL OR user_id = CAST(?2 AS TEXT))
           AND (CAST(?3 AS TEXT) IS NULL OR client_id = CAST(?3 AS TEXT))
           AND at >= ?4 AND tenant_id = ?6
         ORDER BY id DESC LIMIT ?5",
        crate::params![filter.event.clone(), filter.user_id.clone(), filter.client_id.clone(), filter.since.unwrap_or(0) as i64, filter.limit as i64, filter.tenant],
    )?;
    rows.iter()
        .map(|r| {
            Ok(AuditEvent {
                tenant: r.tenant(6)?,
                at: r.i64(0)? as u64,
                event: r.text(1)?,
                client_id: r.opt_text(2)?,
                user_id: r.opt_text(3)?,
                address: r.opt_text(4)?,
                detail: serde_json::from_str(&r.text(5)?).unwrap_or(Value::Null),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event name written in the code, at the calls that record one, is in `EVENTS`
    /// (so the console's list is complete), and `EVENTS` names each once.
    #[test]
    fn every_recorded_event_is_listed() {
        fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for call in ["AuditEvent::new(\"", "event(\"", "audit(&app, &me, \"", "audit(\""] {
                        for (i, _) in text.match_indices(call) {
                            let rest = &text[i + call.len()..];
                            let name = &rest[..rest.find('"').unwrap()];
                            out.push((path.display().to_string(), name.to_string()));
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
        assert!(found.len() > 40, "the scan found too little: {found:?}");
        let names: Vec<&str> = EVENTS.iter().map(|(n, _)| *n).collect();
        let missing: Vec<_> = found.iter().filter(|(_, n)| !names.contains(&n.as_str())).collect();
        assert!(missing.is_empty(), "recorded but not in audit::EVENTS: {missing:?}");
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, names, "EVENTS: sorted, each once");
    }

    #[test]
    fn listed_events_carry_an_iso_time() {
        let e = AuditEvent { at: 1_700_000_000, ..AuditEvent::new("login_success") };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!((v["at"].as_u64(), v["time"].as_str()), (Some(1_700_000_000), Some("2023-11-14T22:13:20Z")), "{v}");
        assert!(v.get("user_id").is_none(), "{v}");
    }

    /// Each tenant's log lists its own events only, whatever else matches.
    #[test]
    fn a_tenant_lists_its_own_events() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::open(dir.path(), "NORMAL").unwrap();
        let sql = &mut crate::db::SqliteSql(&conn);
        let (a, b) = (crate::tenant::TenantId::DEFAULT, crate::tenant::TenantId(3));
        insert(sql, &[AuditEvent::new("login_success").user("u"), AuditEvent::new("login_success").tenant(b).user("u"), AuditEvent::new("logout").tenant(b)]).unwrap();
        let mut listed = |tenant| list_filtered(sql, &Filter { tenant, limit: 10, user_id: Some("u".into()), ..Default::default() }).unwrap();
        assert_eq!(listed(a).iter().map(|e| e.tenant).collect::<Vec<_>>(), vec![a]);
        assert_eq!(listed(b).iter().map(|e| e.tenant).collect::<Vec<_>>(), vec![b]);
        assert!(listed(crate::tenant::TenantId(4)).is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_are_batched_flushed_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config { data_dir: dir.path().into(), ..Default::default() };
        let db = Database::open(&config).await.unwrap();
        let log = AuditLog::start(db.clone());
        // More than the queue holds: senders wait rather than lose events.
        let mut set = tokio::task::JoinSet::new();
        for i in 0..(QUEUE + 1000) {
            let log = log.clone();
            set.spawn(async move { log.record(AuditEvent::new("login_failure").user(&format!("u{i}"))).await });
        }
        set.join_all().await;
        log.record(AuditEvent::new("refresh_reuse").client("c")).await;
        log.flush().await;
        let reader = crate::db::open_reader(dir.path()).unwrap();
        let n: i64 = reader.query_row("SELECT COUNT(*) FROM audit_events", [], |r| r.get(0)).unwrap();
        assert_eq!(n as usize, QUEUE + 1001);
        let Database::Sqlite(sqlite) = &db else { unreachable!() };
        let commits = sqlite.journal.stats().commits.load(std::sync::atomic::Ordering::Relaxed);
        assert!(commits < 200, "events were not batched: {commits} commits");
        let reuse = list(&mut crate::db::SqliteSql(&reader), 10, Some("refresh_reuse")).unwrap();
        assert_eq!(reuse.len(), 1);
        assert_eq!(reuse[0].client_id.as_deref(), Some("c"));
    }
}
