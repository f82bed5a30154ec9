//! The account page's changes to the user's own sign-in methods: add a passkey, add an
//! authenticator app (confirmed by its first code before it is kept), new recovery codes,
//! remove a factor. Each needs a recent sign-in and the form's CSRF token (the `Change`
//! extractor).

use super::{see_other, Change, Own, SignedIn};
use crate::audit::AuditEvent;
use crate::factors::{passkey, recovery, totp};
use crate::http::account_pages as pages;
use crate::tenant::Issuer;
use crate::util::now;
use crate::ui::Msg;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

const REGISTER_KIND: &str = "passkey-register";
const TOTP_KIND: &str = "totp-enrol";
const RECOVERY_KIND: &str = "recovery-codes";
/// The longest name of a factor.
const MAX_NAME: usize = 64;

fn audit<'a>(app: &'a Issuer, me: &SignedIn, event: &'static str, detail: serde_json::Value) -> impl std::future::Future<Output = ()> + 'a {
    let e = AuditEvent::new(event).user(&me.user.id).detail(detail);
    app.audit(e)
}

fn clean_name(name: Option<&str>, default: &str) -> String {
    let name: String = name.unwrap_or("").trim().chars().filter(|c| !c.is_control()).take(MAX_NAME).collect();
    if name.is_empty() { default.into() } else { name }
}

/// `POST /account/passkeys/new`: the page that runs the registration ceremony.
pub async fn passkey_start(app: Issuer, Change { me, .. }: Change) -> Response {
    let Some(passkeys) = &app.tenant.passkeys else { return see_other(app.base(), "/account") };
    let (options, state) = match passkeys.start_registration(&app.db, &me.user).await {
        Ok(started) => started,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let sealed = app.tenant.sealer.seal(REGISTER_KIND, &me.cookie, app.config.challenge_ttl, &state);
    pages::passkey_setup(&serde_json::to_string(&options).expect("options serialise"), &sealed, &me.csrf(&app))
}

/// `POST /account/passkeys`: the authenticator's answer; the passkey is kept if it verifies.
pub async fn passkey_finish(app: Issuer, Change { me, params }: Change) -> Response {
    let Some(passkeys) = &app.tenant.passkeys else { return see_other(app.base(), "/account") };
    let state = params.get("passkey_state").and_then(|s| app.tenant.sealer.open::<passkey::RegistrationState>(REGISTER_KIND, Some(&me.cookie), s).ok());
    let (Some(state), Some(credential)) = (state, params.get("credential")) else {
        return pages::failed("failed-passkey-expired");
    };
    let name = clean_name(params.get("name"), "Passkey");
    match passkeys.finish_registration(&app.db, app.vault(), &me.user.id, &name, credential, &state).await {
        Ok(id) => {
            audit(&app, &me, "factor_enrolled", serde_json::json!({"kind": "passkey", "id": id, "by": "user"})).await;
            see_other(app.base(), "/account?done=passkey")
        }
        Err(passkey::PasskeyError::Refused(why)) => {
            audit(&app, &me, "factor_enrolment_failed", serde_json::json!({"kind": "passkey", "reason": why})).await;
            pages::failed("failed-passkey-refused")
        }
        Err(passkey::PasskeyError::Store(e)) => crate::endpoints::authorize::unavailable(e),
    }
}

/// A TOTP enrolment in progress: the secret, sealed to the session until its first code.
#[derive(Serialize, Deserialize)]
struct PendingTotp {
    secret: Vec<u8>,
    uri: String,
    encoded: String,
}

/// `POST /account/totp/new`: a new secret, shown as a QR code; kept only once confirmed.
pub async fn totp_start(app: Issuer, Change { me, .. }: Change) -> Response {
    let (secret, encoded, uri) = totp::new_secret(&issuer_label(&app), &me.user.username);
    let pending = PendingTotp { secret, uri, encoded };
    let sealed = app.tenant.sealer.seal(TOTP_KIND, &me.cookie, app.config.challenge_ttl, &pending);
    pages::totp_setup(&pending.uri, &pending.encoded, &sealed, &me.csrf(&app), None, StatusCode::OK)
}

/// `POST /account/totp`: the first code proves the app has the secret; then it is stored.
pub async fn totp_finish(app: Issuer, Change { me, params }: Change) -> Response {
    let Some(pending) = params.get("totp_state").and_then(|s| app.tenant.sealer.open::<PendingTotp>(TOTP_KIND, Some(&me.cookie), s).ok()) else {
        return pages::failed("failed-totp-expired");
    };
    let code: String = params.get("code").unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
    let Some(step) = totp::step_of(&pending.secret, &code, now()) else {
        audit(&app, &me, "factor_enrolment_failed", serde_json::json!({"kind": "totp", "reason": "wrong code"})).await;
        let sealed = params.get("totp_state").unwrap_or_default();
        return pages::totp_setup(&pending.uri, &pending.encoded, sealed, &me.csrf(&app), Some("totp-wrong"), StatusCode::UNPROCESSABLE_ENTITY);
    };
    let name = clean_name(params.get("name"), "Authenticator app");
    match totp::store(&app.db, app.vault(), app.tenant.id, &me.user.id, &name, pending.secret, step).await {
        Ok(id) => {
            audit(&app, &me, "factor_enrolled", serde_json::json!({"kind": "totp", "id": id, "by": "user"})).await;
            see_other(app.base(), "/account?done=totp")
        }
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /account/recovery-codes`: a new set (the old one stops working), shown once.
pub async fn recovery_codes(app: Issuer, Change { me, .. }: Change) -> Response {
    match recovery::regenerate(&app.db, app.tenant.id, &me.user.id).await {
        Ok(codes) => {
            audit(&app, &me, "recovery_codes_created", serde_json::json!({"count": codes.len(), "by": "user"})).await;
            // The download form carries the codes sealed to this session, for as long as a
            // sign-in form lasts: only this page, in this browser, can download them.
            let sealed = app.tenant.sealer.seal(RECOVERY_KIND, &me.cookie, app.config.challenge_ttl, &codes);
            pages::recovery_codes(&codes, &sealed, &me.csrf(&app))
        }
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /account/recovery-codes/download` (`codes`: sealed by `recovery_codes`): the codes
/// just shown as a text file to keep, in the page's language.
pub async fn download_recovery_codes(app: Issuer, headers: HeaderMap, Own { me, params }: Own) -> Response {
    let Some(codes) = params.get("codes").and_then(|s| app.tenant.sealer.open::<Vec<String>>(RECOVERY_KIND, Some(&me.cookie), s).ok()) else {
        return pages::failed("failed-recovery-download");
    };
    let lang = app.tenant.ui.language(None, headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok())).to_string();
    let text = |msg: Msg| app.tenant.ui.plain_text(&lang, &msg);
    let host = issuer_label(&app);
    let mut body = format!(
        "{}\n{}\n{}\n\n",
        text(Msg::new("recovery-file-heading").arg("user", me.user.username.clone()).arg("issuer", host.clone())),
        text(Msg::new("recovery-file-made").arg("date", pages::date_time(now()))),
        text(Msg::new("recovery-file-body")),
    );
    for c in &codes {
        body.push_str(c);
        body.push('\n');
    }
    let file = format!("recovery-codes-{}.txt", host.replace(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-', "_"));
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
        ],
        body,
    )
        .into_response()
}

/// `POST /account/factors/remove`: one factor of the user's own.
pub async fn remove(app: Issuer, Change { me, params }: Change) -> Response {
    let id = params.get("id").unwrap_or_default();
    match crate::factors::remove(&app.db, app.tenant.id, &me.user.id, id).await {
        Ok(true) => {
            audit(&app, &me, "factor_removed", serde_json::json!({"id": id, "by": "user"})).await;
            see_other(app.base(), "/account?done=removed")
        }
        Ok(false) => see_other(app.base(), "/account"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// The issuer as authenticator apps show it: its host.
pub(crate) fn issuer_label(app: &Issuer) -> String {
    url::Url::parse(app.issuer()).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_else(|| "Authrim".into())
}

/// `POST /account/password`: a new password, given the current one (besides the recent
/// sign-in every change needs). Wrong current passwords count in the login throttle. A
/// password is changed when it may be known to someone else: the user's other sessions end,
/// and every token issued before the change is revoked (`logout::cut_off`); this session stays.
pub async fn change_password(app: Issuer, axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>, headers: axum::http::HeaderMap, Change { me, params }: Change) -> Response {
    let (current, new, confirm) = (params.get("current_password").unwrap_or(""), params.get("new_password").unwrap_or(""), params.get("confirm_password").unwrap_or(""));
    if let Some(refused) = crate::endpoints::directory_login::read_only(&me.user) {
        return refused;
    }
    let again = |error: &'static str, status: StatusCode| pages::password_form(&me.csrf(&app), app.tenant.password_policy.min_length(), Some(error), status);
    if new != confirm {
        return again("password-mismatch", StatusCode::UNPROCESSABLE_ENTITY);
    }
    // The same policy as at sign-up (length, not the username, not breached).
    if let Err(why) = app.tenant.password_policy.check(new, &me.user.username) {
        return again(why, StatusCode::UNPROCESSABLE_ENTITY);
    }
    let address = crate::endpoints::interaction::client_address(&app, &headers, peer);
    let account = crate::ratelimit::account_key(Some(&me.user.id), &me.user.username);
    let Some(attempt) = app.login_limiter.begin(&account, &address, now()) else {
        return again("err-too-many", StatusCode::TOO_MANY_REQUESTS);
    };
    // Both Argon2 computations (the check, the new hash) on the hashing slots, off the workers.
    let (user, current, new) = (me.user.clone(), current.to_string(), new.to_string());
    let outcome = app
        .hash_slots
        .run(move || {
            if !crate::registry::users::verify_password(Some(&user), &current) {
                return Err("password-current-wrong");
            }
            let input = crate::registry::UserInput { password: Some(new), ..Default::default() };
            crate::registry::users::update_user(&user, input).map_err(|_| "password-too-weak")
        })
        .await;
    let updated = match outcome {
        None => {
            attempt.unchecked();
            return crate::http::pages::error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy");
        }
        Some(Err("password-current-wrong")) => {
            attempt.failed(now());
            audit(&app, &me, "password_change_failed", serde_json::json!({"reason": "current password"})).await;
            return again("password-current-wrong", StatusCode::UNAUTHORIZED);
        }
        Some(Err(why)) => {
            attempt.unchecked();
            return again(why, StatusCode::UNPROCESSABLE_ENTITY);
        }
        Some(Ok(user)) => user,
    };
    attempt.succeeded();
    // The new password spends every outstanding reset link, in its own transaction.
    let (id, cutoff, tenant) = (me.user.id.clone(), updated.tokens_cutoff, app.tenant.id);
    let spend = move |sql: &mut dyn crate::db::Sql| crate::endpoints::password_reset::spend_links(sql, tenant, &id).map(|_| true);
    if let Err(e) = app.registry().save_user_if(updated, spend).await {
        return crate::endpoints::authorize::unavailable(e);
    }
    // This session stays (the user is here, with the new password); every other one ends, and
    // every token issued before the change is refused, wherever it is.
    let done = crate::logout::cut_off(&app, app.tenant.id, &me.user.id, cutoff, Some(&me.session.sid), crate::logout::EndedBy::User).await;
    let detail = match &done {
        Ok(c) => serde_json::json!({"by": "user", "other_sessions_ended": c.sessions, "families_revoked": c.families}),
        Err(e) => serde_json::json!({"by": "user", "error": e.to_string()}),
    };
    audit(&app, &me, "password_changed", detail).await;
    match done {
        Ok(_) => see_other(app.base(), "/account?done=password"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `GET /account/password`: the form.
pub async fn password_page(app: Issuer, headers: axum::http::HeaderMap) -> Response {
    match super::signed_in(&app, &headers).await {
        Some(me) => crate::endpoints::directory_login::read_only(&me.user)
            .unwrap_or_else(|| pages::password_form(&me.csrf(&app), app.tenant.password_policy.min_length(), None, StatusCode::OK)),
        None => see_other(app.base(), "/account/login"),
    }
}
