//! The end of a session (OpenID Connect RP-Initiated, Back-Channel and Front-Channel Logout
//! 1.0), whoever ends it: the user at the end-session endpoint or on the account page (one
//! of their other sessions), or an operator.
//!
//! Ending a session does three things, in this order:
//! 1. revoke the session's id (`tokens::session_revocation_key`): from then on every access
//!    token, code and refresh token issued in the session without `offline_access` is refused
//!    wherever it is presented (OpenID Connect Core §11: `offline_access` grants outlive the
//!    session). Revoking first means a failure further on leaves the tokens dead and the
//!    session standing, so a retry completes the logout; never the reverse;
//! 2. delete the session and, in the same commit, queue one logout token per client of the
//!    session that has a `backchannel_logout_uri`, and one SOAP LogoutRequest per SAML SP of
//!    it that has an `slo_soap_url` (`backchannel::enqueue`): a crash after the commit loses
//!    no notification, a failed commit sends none;
//! 3. wake the deliverer, which sends them off the request path (`backchannel::Deliverer`).
//!
//! The front-channel iframes are the end-session page's business (`frontchannel`).

pub mod backchannel;
pub mod frontchannel;
pub mod saml_soap;

use crate::app::App;
use crate::audit::AuditEvent;
use crate::db::StoreResult;
use crate::stores::{Session, SessionRef};
use crate::tenant::TenantId;
use crate::util::now;
use serde_json::json;
use std::collections::HashMap;

/// Who ended a session, for the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndedBy {
    /// The user, at the end-session endpoint.
    User,
    /// An operator, through the admin API or CLI.
    Operator,
    /// An admin in the console (their user id).
    Console(String),
    /// The user on the account page, from another of their sessions (its `sid`).
    Account(String),
    /// A directory's sync round, the user being gone from it (its provider, `ldap:<id>`).
    Directory(String),
    /// The user through a SAML SP's LogoutRequest (the SP's client id).
    Saml(String),
}

/// What `cut_off` ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CutOff {
    pub sessions: usize,
    pub families: usize,
}

/// Whoever had the account's old password, or one of its sessions, keeps nothing: called after
/// a new password or "end all sessions" has saved the user's `tokens_cutoff` (which refuses the
/// user's access tokens and refresh-token families issued up to it, on every node once the
/// user change reaches it). Then every session but `keep` ends as a logout does (its tokens
/// through the revocation list, back-channel notifications queued), and every live refresh
/// family of the user is revoked with the tokens it issued, each through its grant's entry in
/// the revocation list (which every node honours within `revocation_max_staleness_ms`).
///
/// Returns once the cutoff's second has passed (at most a second later; at once for a disabled
/// user): a token's `iat` is in whole seconds, so what is issued after the answer (the kept
/// session's next tokens, the next sign-in) is not refused.
pub async fn cut_off(app: &App, tenant: TenantId, user_id: &str, cutoff: u64, keep: Option<&str>, by: EndedBy) -> StoreResult<CutOff> {
    let mut done = CutOff::default();
    for s in app.stores.sessions.of_user(tenant, user_id).await? {
        if keep == Some(s.sid.as_str()) {
            continue;
        }
        if end_session(app, tenant, SessionRef::Sid(s.sid), by.clone()).await?.is_some() {
            done.sessions += 1;
        }
    }
    let families = app.stores.refresh.revoke_of(tenant, user_id, None).await?;
    let until = now() + crate::tokens::grant_revocation_ttl(app);
    for id in &families {
        app.stores.revocations.revoke(tenant, &crate::tokens::grant_revocation_key(id), until).await?;
    }
    done.families = families.len();
    // (A disabled user gets no tokens to wait for.)
    if app.registry.of(tenant).user(user_id).is_none_or(|u| u.disabled) {
        return Ok(done);
    }
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    if let Some(wait) = std::time::Duration::from_secs(cutoff + 1).checked_sub(since_epoch) {
        tokio::time::sleep(wait).await;
    }
    Ok(done)
}

/// End the session `which` names; returns it as it was, or `None` if there was no live one.
pub async fn end_session(app: &App, tenant: TenantId, which: SessionRef, by: EndedBy) -> StoreResult<Option<Session>> {
    let sid = match &which {
        SessionRef::Sid(sid) => sid.clone(),
        SessionRef::Cookie(cookie) => match app.stores.sessions.get(tenant, cookie).await? {
            Some(s) => s.sid,
            None => return Ok(None),
        },
    };
    let until = now() + crate::tokens::session_revocation_ttl(app);
    app.stores.revocations.revoke(tenant, &crate::tokens::session_revocation_key(&sid), until).await?;

    // Who to tell, and how, is read from the registry now; the hook runs inside the store's
    // commit. A SAML SP that asked for this logout itself is answered, not told.
    let asked = match &by {
        EndedBy::Saml(sp) => Some(sp.as_str()),
        _ => None,
    };
    let notified: HashMap<String, &'static str> = app
        .registry
        .of(tenant)
        .list_clients()
        .iter()
        .filter_map(|c| {
            let kind = if c.meta.backchannel_logout_uri.is_some() {
                backchannel::LOGOUT_KIND
            } else if c.meta.saml.as_ref().is_some_and(|s| s.slo_soap_url.is_some()) && asked != Some(c.id()) {
                saml_soap::KIND
            } else {
                return None;
            };
            Some((c.id().to_string(), kind))
        })
        .collect();
    let t = now();
    let hook = Box::new(move |s: &Session, sql: &mut dyn crate::db::Sql| backchannel::enqueue(sql, s, &notified, t));
    let Some(ended) = app.stores.sessions.end(tenant, which, hook).await? else { return Ok(None) };
    app.backchannel.wake();
    let mut detail = json!({"sid": ended.sid, "clients": ended.clients});
    match by {
        EndedBy::User => detail["by"] = "user".into(),
        EndedBy::Operator => detail["by"] = "operator".into(),
        EndedBy::Console(admin) => {
            detail["by"] = "console".into();
            detail["admin"] = admin.into();
        }
        EndedBy::Account(from) => {
            detail["by"] = "account".into();
            detail["from_sid"] = from.into();
        }
        EndedBy::Directory(provider) => {
            detail["by"] = "ldap".into();
            detail["directory"] = provider.into();
        }
        EndedBy::Saml(client) => {
            detail["by"] = "saml".into();
            detail["sp"] = client.into();
        }
    }
    app.audit.record(AuditEvent::new("logout").tenant(tenant).user(&ended.user_id).detail(detail)).await;
    Ok(Some(ended))
}
