//! Who has access to the account, as the account page lists it: the user's sessions (each
//! browser signed in: which one, from where, since and last seen when; this one marked) and
//! the applications the user allowed (their consents). Either can be ended from here:
//!
//! - a session ends exactly as a logout or an operator ends it (`logout::end_session`): its
//!   id is revoked (the access tokens, codes and non-`offline_access` refresh tokens issued
//!   in it are refused), it is deleted, and the back-channel logout tokens of its clients are
//!   queued in the same commit (front-channel iframes need the browser that holds the
//!   session, which is elsewhere);
//! - a consent is withdrawn as an operator withdraws it (`consent::withdraw`): forgotten (the
//!   application's next request asks again) and every refresh-token family of the user at
//!   that application revoked.
//!
//! Both take access away, so they ask for the form's CSRF token but not a recent sign-in
//! (`Own`): someone who finds a session elsewhere should be able to end it at once.

use super::{see_other, Own, CLIENT_ID};
use crate::http::account_pages::{date, date_time, iso};
use crate::logout::{end_session, EndedBy};
use crate::stores::{Session, SessionRef};
use crate::tenant::Issuer;
use axum::response::Response;
use serde_json::{json, Value};

/// The user's live sessions for the overview, the current one first.
pub(super) fn sessions(list: &[Session], current_sid: &str) -> Vec<Value> {
    let mut out: Vec<(bool, u64, Value)> = list
        .iter()
        .map(|s| {
            let (browser, system) = crate::http::user_agent::describe(s.user_agent.as_deref().unwrap_or_default());
            let this = s.sid == current_sid;
            let seen = s.last_seen.max(s.created_at).max(s.auth_time);
            let signed_in = if s.created_at == 0 { s.auth_time } else { s.created_at };
            let v = json!({
                "sid": s.sid, "this": this, "browser": browser, "system": system,
                "address": s.address, "signed_in": date_time(signed_in), "signed_in_iso": iso(signed_in),
                "seen": date_time(seen), "seen_iso": iso(seen),
            });
            (!this, u64::MAX - seen, v)
        })
        .collect();
    out.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    out.into_iter().map(|(_, _, v)| v).collect()
}

/// The applications the user allowed, newest first; first-party pages (which ask no
/// consent) are not among them.
pub(super) async fn applications(app: &Issuer, user_id: &str) -> crate::db::StoreResult<Vec<Value>> {
    let consents = app.registry().consents_of(user_id).await?;
    Ok(consents
        .into_iter()
        .filter(|c| crate::endpoints::first_party::by_client_id(&c.client_id).is_none())
        .map(|c| {
            let client = app.client(&c.client_id);
            let name = client.as_ref().and_then(|cl| cl.meta.client_name.clone()).unwrap_or_else(|| c.client_id.clone());
            // OpenID Connect Core §4: an application that can be signed into from here.
            let open = client.as_ref().and_then(|cl| crate::registry::clients::login_initiation(&cl.meta, app.issuer(), None));
            json!({
                "client_id": c.client_id, "name": name, "open": open,
                "scopes": crate::util::split_list(&c.scope).collect::<Vec<_>>(),
                "date": date(c.updated_at), "date_iso": iso(c.updated_at),
            })
        })
        .collect())
}

/// `POST /account/sessions/end` (`sid`): one of the user's sessions ends, as a logout ends it.
pub async fn end(app: Issuer, Own { me, params }: Own) -> Response {
    let sid = params.get("sid").unwrap_or_default();
    // Only the user's own: another user's sid (guessed or copied) ends nothing.
    let mine = match app.stores.sessions.of_user(app.tenant.id, &me.user.id).await {
        Ok(list) => list.iter().any(|s| s.sid == sid),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    if !mine {
        return see_other(app.base(), "/account#sessions");
    }
    match end_session(&app, app.tenant.id, SessionRef::Sid(sid.to_string()), EndedBy::Account(me.session.sid.clone())).await {
        // Ending the session this page runs in is signing out here: the next page asks for a sign-in.
        Ok(Some(_)) if sid == me.session.sid => see_other(app.base(), "/account"),
        Ok(Some(_)) => see_other(app.base(), "/account?done=session-ended#sessions"),
        Ok(None) => see_other(app.base(), "/account#sessions"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /account/applications/withdraw` (`client_id`): the consent is withdrawn and the
/// application's refresh tokens for the user revoked (audited by `consent::withdraw`).
pub async fn withdraw(app: Issuer, Own { me, params }: Own) -> Response {
    let client_id = params.get("client_id").unwrap_or_default();
    if client_id.is_empty() || client_id == CLIENT_ID {
        return see_other(app.base(), "/account#applications");
    }
    match crate::consent::withdraw(&app, app.tenant.id, &me.user.id, client_id, "user").await {
        Ok(done) if done.consent || done.families > 0 => see_other(app.base(), "/account?done=withdrawn#applications"),
        Ok(_) => see_other(app.base(), "/account#applications"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}
