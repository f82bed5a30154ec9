//! Sign-in requests (CIBA): the account page is the user's authentication device. It lists
//! the backchannel authentication requests waiting for the signed-in user (which
//! application, since when, its binding message, what it asks for), and the user approves or
//! denies each with a form that carries the page's CSRF token.
//!
//! Approving is signing in to the application, so it needs a recent sign-in (`Change`:
//! `account_reauth_max_age`; the `auth_time` the application is told is that sign-in's) and
//! a session as strong as the client and the request's `acr_values` require; denying only
//! takes access away and needs the token alone (`Own`). The answer is recorded with, in the
//! same commit, the ping of a ping-mode client (`ciba::ping`) or the answer pushed to a
//! push-mode one (`ciba::push`), and audited. The user also sets here the code that clients
//! registered for `user_code` must send (`ciba::user_code`).

use super::{see_other, Change, Own};
use crate::audit::AuditEvent;
use crate::factors::Level;
use crate::http::account_pages::{date_time, iso};
use crate::stores::ciba::{Mode, Waiting};
use crate::stores::device::{Approval, Decision};
use crate::tenant::Issuer;
use crate::util::{now, split_list};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

/// The requests waiting for the user, for the overview.
pub(super) fn listed(app: &Issuer, waiting: &[Waiting]) -> Vec<Value> {
    waiting
        .iter()
        .map(|w| {
            let r = &w.request;
            json!({
                "handle": w.handle,
                "client": crate::endpoints::authorize::client_display_name(app, &r.client_id),
                "binding_message": r.binding_message,
                "scopes": split_list(&r.scope).filter(|s| *s != "openid").collect::<Vec<_>>(),
                "asked": date_time(r.created_at), "asked_iso": iso(r.created_at),
                "until": date_time(r.expires_at), "until_iso": iso(r.expires_at),
            })
        })
        .collect()
}

/// The request `handle` names, if it waits for `user_id`: only the user's own, still waiting,
/// can be answered; anything else changes nothing.
async fn find(app: &Issuer, user_id: &str, handle: &str) -> Result<Option<Waiting>, Response> {
    match app.stores.ciba.waiting_for(app.tenant.id, user_id).await {
        Ok(w) => Ok(w.into_iter().find(|w| w.handle == handle)),
        Err(e) => Err(crate::endpoints::authorize::unavailable(e)),
    }
}

/// `POST /account/requests/approve` (`handle`).
pub async fn approve(app: Issuer, Change { me, params }: Change) -> Response {
    let handle = params.get("handle").unwrap_or_default();
    let waiting = match find(&app, &me.user.id, handle).await {
        Ok(Some(w)) => w,
        Ok(None) => return see_other(app.base(), "/account#requests"),
        Err(page) => return page,
    };
    // What the client requires and the request asks for, against this session (as the device
    // page checks it); a weaker session is refused, and the page says to sign in again with a
    // stronger method.
    let request = &waiting.request;
    let required = crate::endpoints::authorize::required_level_of(&app, &request.client_id);
    let wanted = crate::endpoints::authorize::request::preferred_level(&request.acr_values).unwrap_or(Level::Password).max(required);
    if Level::of(&me.session.acr).unwrap_or(Level::Password) < wanted {
        return crate::http::pages::error_page(StatusCode::FORBIDDEN, "err-ciba-needs-stronger");
    }
    let acr = crate::endpoints::authorize::request::reported_acr(&request.acr_values, &me.session.acr);
    let approval = Approval { user_id: me.user.id.clone(), auth_time: me.session.auth_time, sid: me.session.sid.clone(), acr: Some(acr), amr: me.session.amr.clone() };
    answer(&app, &me.user.id, &waiting, Decision::Approved(approval)).await
}

/// `POST /account/requests/deny` (`handle`).
pub async fn deny(app: Issuer, Own { me, params }: Own) -> Response {
    let handle = params.get("handle").unwrap_or_default();
    match find(&app, &me.user.id, handle).await {
        Ok(Some(waiting)) => answer(&app, &me.user.id, &waiting, Decision::Denied).await,
        Ok(None) => see_other(app.base(), "/account#requests"),
        Err(page) => page,
    }
}

async fn answer(app: &Issuer, user_id: &str, waiting: &Waiting, decision: Decision) -> Response {
    let (request, handle) = (&waiting.request, waiting.handle.as_str());
    let approved = matches!(decision, Decision::Approved(_));
    let t = now();
    // Push mode: the answer itself (the tokens, or the denial) is what the client is sent,
    // made now and queued in the answer's own transaction.
    let pushed = match request.mode {
        Mode::Push => match app.client(&request.client_id) {
            Some(client) => match crate::ciba::push::answer(app, &client, request, waiting.sealed.as_deref(), &decision).await {
                Ok(sealed) => Some(sealed),
                Err(e) => {
                    tracing::warn!(client = %request.client_id, error = %e.description, "CIBA push: the answer cannot be made");
                    return crate::http::pages::error_page(StatusCode::SERVICE_UNAVAILABLE, "err-ciba-push-failed");
                }
            },
            // The client is gone: nobody to tell, the answer is recorded all the same.
            None => None,
        },
        _ => None,
    };
    // Should the answer lose a race (another tab answered first), the tokens just made are
    // never delivered: no one holds them, and their refresh family lapses unused.
    let (owner, tenant, pings) = (user_id.to_string(), app.tenant.id, request.mode == Mode::Ping);
    let hook = Box::new(move |sql: &mut dyn crate::db::Sql, client_id: &str, ping: Option<Vec<u8>>| match (pushed, ping) {
        (Some(answer), _) => crate::ciba::push::enqueue(sql, tenant, client_id, &owner, answer, t),
        (None, Some(sealed)) if pings => crate::ciba::ping::enqueue(sql, tenant, client_id, &owner, sealed, t),
        _ => Ok(()),
    });
    match app.stores.ciba.decide(app.tenant.id, handle, user_id, decision, hook).await {
        Ok(true) => {
            app.backchannel.wake();
            let event = if approved { "ciba_approved" } else { "ciba_denied" };
            let detail = json!({"scope": request.scope, "binding_message": request.binding_message});
            app.audit(AuditEvent::new(event).user(user_id).client(&request.client_id).detail(detail)).await;
            see_other(app.base(), if approved { "/account?done=request-approved#requests" } else { "/account?done=request-denied#requests" })
        }
        Ok(false) => see_other(app.base(), "/account#requests"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /account/user-code` (`user_code`): the code clients registered for
/// `backchannel_user_code_parameter` must send with a request for this user
/// (`ciba::user_code`). Setting one is a change to how the account is reached: it needs a
/// recent sign-in, as a new password does.
pub async fn set_user_code(app: Issuer, Change { me, params }: Change) -> Response {
    let code = params.get("user_code").unwrap_or_default().to_string();
    if !crate::ciba::user_code::acceptable(&code) {
        return see_other(app.base(), "/account?done=user-code-invalid#user-code");
    }
    let hash = match app.hash_slots.run(move || crate::registry::users::argon2_hash(&code)).await {
        Some(Ok(h)) => h,
        Some(Err(e)) => return crate::endpoints::authorize::unavailable(e),
        None => return crate::http::pages::error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy"),
    };
    if let Err(e) = crate::ciba::user_code::set(&app.db, app.tenant.id, &me.user.id, hash).await {
        return crate::endpoints::authorize::unavailable(e);
    }
    app.audit(AuditEvent::new("ciba_user_code_set").user(&me.user.id)).await;
    see_other(app.base(), "/account?done=user-code#user-code")
}

/// `POST /account/user-code/remove`.
pub async fn remove_user_code(app: Issuer, Change { me, .. }: Change) -> Response {
    match crate::ciba::user_code::remove(&app.db, app.tenant.id, &me.user.id).await {
        Ok(true) => {
            app.audit(AuditEvent::new("ciba_user_code_removed").user(&me.user.id)).await;
            see_other(app.base(), "/account?done=user-code-removed#user-code")
        }
        Ok(false) => see_other(app.base(), "/account#user-code"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}
