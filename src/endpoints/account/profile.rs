//! The user's own profile on the account page: name, given and family name, e-mail, locale.
//! A changed e-mail is no longer verified (and must not be someone else's sign-in name); with
//! mail configured, a link to verify it goes to it (`email`).
//! Like every change of the page: a recent sign-in and the form's CSRF token (`Change`).

use super::{see_other, Change};
use crate::audit::AuditEvent;
use crate::registry::{users, UserInput};
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// The claims the form edits.
const FIELDS: &[&str] = &["name", "given_name", "family_name", "email", "locale"];

fn form(mail: bool, csrf: &str, values: &Map<String, Value>, error: Option<Msg>, status: StatusCode) -> Response {
    let mut page = Page::new(status, "account_profile.html", "profile-title").with("csrf", csrf).with("v", values).with("mail", mail);
    if let Some(e) = error {
        page = page.msg("error", e);
    }
    page.into_response()
}

/// `GET /account/profile`.
pub async fn page(app: Issuer, headers: HeaderMap) -> Response {
    match super::signed_in(&app, &headers).await {
        Some(me) => {
            let values: Map<String, Value> = FIELDS.iter().filter_map(|f| me.user.claims.get(*f).map(|v| (f.to_string(), v.clone()))).collect();
            form(app.mailer.is_some(), &me.csrf(&app), &values, None, StatusCode::OK)
        }
        None => see_other(app.base(), "/account/login"),
    }
}

/// `POST /account/profile`: an emptied field removes the claim.
pub async fn change(app: Issuer, Change { me, params }: Change) -> Response {
    let mut claims = Map::new();
    let mut typed = Map::new();
    for f in FIELDS {
        let v = params.get(f).map(str::trim).unwrap_or_default();
        if v.chars().count() > 256 || v.chars().any(char::is_control) {
            typed.insert(f.to_string(), Value::from(v));
            return form(app.mailer.is_some(), &me.csrf(&app), &typed, Some(Msg::new("profile-too-long")), StatusCode::UNPROCESSABLE_ENTITY);
        }
        typed.insert(f.to_string(), Value::from(v));
        claims.insert(f.to_string(), if v.is_empty() { Value::Null } else { Value::from(v) });
    }
    let email = params.get("email").map(str::trim).unwrap_or_default();
    if !email.is_empty() && !users::looks_like_email(email) {
        return form(app.mailer.is_some(), &me.csrf(&app), &typed, Some(Msg::new("profile-email-invalid")), StatusCode::UNPROCESSABLE_ENTITY);
    }
    let email_changed = !me.user.email().unwrap_or_default().eq_ignore_ascii_case(email);
    if email_changed {
        // A new address is not known to be theirs until it is verified.
        claims.insert("email_verified".into(), if email.is_empty() { Value::Null } else { Value::Bool(false) });
    }
    let updated = match users::update_user(&me.user, UserInput { claims, ..Default::default() }) {
        Ok(u) => u,
        Err(why) => return form(app.mailer.is_some(), &me.csrf(&app), &typed, Some(Msg::new("profile-invalid").detail(why)), StatusCode::UNPROCESSABLE_ENTITY),
    };
    let changed: Vec<&str> = FIELDS.iter().copied().filter(|f| me.user.claims.get(*f) != updated.claims.get(*f)).collect();
    match app.registry().save_user(updated).await {
        Ok(()) => {}
        // Another user signs in with this e-mail.
        Err(crate::db::StoreError::Conflict(_)) => return form(app.mailer.is_some(), &me.csrf(&app), &typed, Some(Msg::new("profile-email-taken")), StatusCode::CONFLICT),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    }
    app.audit(AuditEvent::new("profile_changed").user(&me.user.id).detail(json!({"by": "user", "changed": changed}))).await;
    // A new address gets its link at once (`email`); should that fail, the account page
    // offers to send one.
    if let Some(old) = me.user.email().filter(|_| email_changed && app.mailer.is_some()) {
        if let Err(e) = super::email::notify_old_address(&app, &me.user, old, if email.is_empty() { "-" } else { email }).await {
            tracing::warn!(error = %e, "cannot queue the notice to the old e-mail address");
        }
    }
    if email_changed && !email.is_empty() && app.mailer.is_some() {
        if let Some(user) = app.registry().user(&me.user.id) {
            if let Err(e) = super::email::send_link(&app, &user).await {
                tracing::warn!(error = %e, "cannot queue the e-mail verification link");
                return see_other(app.base(), "/account?done=profile");
            }
            return see_other(app.base(), "/account?done=profile-verify");
        }
    }
    see_other(app.base(), "/account?done=profile")
}
