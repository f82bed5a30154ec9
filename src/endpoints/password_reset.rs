//! A forgotten password: `/login/forgot` asks for the login name or e-mail and mails a
//! one-time link; `/login/reset` sets a new password with it. Only when mail is configured.
//!
//! The answer to a request is the same whether an account exists or not, and so is the work
//! done before it (see `forgot`); requests are throttled per address and per account
//! (`password_reset_max_requests` within `login_window`), and the mail per recipient
//! (`mail_max_per_recipient`). The link's token is random, stored as its SHA-256 only, spent
//! once, and works `password_reset_ttl` seconds. Using it spends every other link of the
//! account (any new password does), ends the user's sessions and revokes every token they had
//! (`logout::cut_off`). Forms carry a token sealed to the browser cookie (CSRF).

use super::interaction::{after_first_factor, client_address, resumable};
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::tenant::{Issuer, TenantId};
use crate::ui::{Msg, Page};
use crate::util::{now, random_token, sha256};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;

const KIND: &str = "password-reset-form";
pub const FORGOT: &str = "/login/forgot";
pub const RESET: &str = "/login/reset";

fn off() -> Response {
    error_page(StatusCode::NOT_FOUND, "err-reset-off")
}

/// The browser's cookie, and the form token sealed to it (a new cookie if it had none).
fn form_token(app: &Issuer, headers: &HeaderMap) -> (String, Option<String>) {
    let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let token = app.tenant.sealer.seal(KIND, &browser, app.config.challenge_ttl, &());
    (token, existing.is_none().then_some(browser))
}

fn with_cookie(app: &Issuer, page: Page, cookie: Option<String>) -> Response {
    let mut res = page.into_response();
    if let Some(c) = cookie {
        cookies::set(&mut res, app.base(), cookies::BROWSER, &c, None, app.config.secure_cookies());
    }
    res
}

fn form_ok(app: &Issuer, headers: &HeaderMap, params: &Params) -> bool {
    params.get("form").is_some_and(|t| app.tenant.sealer.open::<()>(KIND, cookies::get(headers, cookies::BROWSER), t).is_ok())
}

/// `GET /login/forgot[?challenge=…]`: from an application's sign-in page, `challenge` (its
/// sealed request) goes with the form, so that the new password resumes that request.
pub async fn forgot_page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if app.mailer.is_none() {
        return off();
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let challenge = params.get("challenge").filter(|c| resumable(&app, &headers, Some(c)).is_some());
    let (token, cookie) = form_token(&app, &headers);
    with_cookie(&app, Page::new(StatusCode::OK, "forgot.html", "forgot-title").with("form", token).with("challenge", challenge), cookie)
}

/// `POST /login/forgot` (`login`): the same answer whatever it names.
pub async fn forgot(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    if app.mailer.is_none() {
        return off();
    }
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, "err-form-expired") };
    if !form_ok(&app, &headers, &params) {
        return error_page(StatusCode::BAD_REQUEST, "err-form-expired");
    }
    let typed = params.get("login").unwrap_or_default().trim().to_string();
    let address = client_address(&app, &headers, peer);
    let user = app.registry().user_by_login(&typed);
    let account = crate::ratelimit::account_key(user.as_ref().map(|u| u.id.as_str()), &typed);
    let Some(attempt) = app.reset_limiter.begin(&account, &address, now()) else {
        return error_page(StatusCode::TOO_MANY_REQUESTS, "err-too-many-requests");
    };
    // Every request counts, whether or not it names an account.
    attempt.failed(now());
    // The same work whether or not it names an account (enabled, with an address): a link
    // and its mail composed, the same statements run (kept only for an account whose address
    // is under `mail_max_per_recipient`, else undone), one audit record. Its time does not
    // tell whether the account exists.
    // A user whose password is a directory's gets no link: the directory keeps it. (A user
    // provisioned without a password, by SCIM, sets their first one by a link.)
    let target = user.filter(|u| !u.disabled && !u.source.is_directory()).and_then(|u| u.email().map(|e| (u.clone(), e.to_string())));
    let mail = target.as_ref().is_some_and(|(_, e)| app.mail_limiter.allow(e, now()));
    let token = random_token();
    let link = format!("{}?token={token}", app.endpoint(RESET));
    let minutes = app.config.password_reset_ttl.div_ceil(60).to_string();
    let lang = target.as_ref().map_or_else(|| app.tenant.ui.language(None, None).to_string(), |(u, _)| crate::mail::language_of(&app, u));
    let (subject, sealed) = crate::mail::compose(&app, &lang, "mail-reset-subject", "mail_reset.txt", serde_json::json!({"link": link, "minutes": minutes}));
    let (id, email) = target.as_ref().map_or((String::new(), String::new()), |(u, e)| (u.id.clone(), e.clone()));
    let (hash, expires, tenant) = (sha256(token.as_bytes()).to_vec(), (now() + app.config.password_reset_ttl) as i64, app.tenant.id);
    // The application's request it came from (checked, so only a sealed request of this
    // browser's is kept): resumed when the new password is set in this browser.
    let resume = params.get("challenge").filter(|c| resumable(&app, &headers, Some(c)).is_some()).map(str::to_string);
    let written = app
        .db
        .write(move |sql| {
            crate::mail::keep_if(sql, mail, |sql| {
                sql.execute(
                    "INSERT INTO password_resets (tenant_id, token_hash, user_id, expires_at, resume) VALUES (?1, ?2, ?3, ?4, ?5)",
                    crate::params![tenant, hash, id.as_str(), expires, resume],
                )?;
                crate::mail::enqueue(sql, tenant, &email, &subject, sealed)
            })
        })
        .await;
    if let Err(e) = written {
        return crate::endpoints::authorize::unavailable(e);
    }
    // The deliverer woken either way (with nothing due it only looks).
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    let event = match &target {
        Some((u, _)) => AuditEvent::new("password_reset_requested").user(&u.id).detail(serde_json::json!({"mailed": mail})),
        None => AuditEvent::new("password_reset_requested").detail(serde_json::json!({"mailed": false, "account": false})),
    };
    app.audit(event.address(&address)).await;
    Page::new(StatusCode::OK, "forgot_sent.html", "forgot-title").into_response()
}

/// A reset link that still works: whose it is, and the request it resumes, if any.
struct Link {
    user_id: String,
    resume: Option<String>,
}

/// The link a reset token is, if it is good (unused, unexpired).
async fn token_user(app: &Issuer, token: &str) -> Result<Option<Link>, crate::db::StoreError> {
    let (hash, t, tenant) = (sha256(token.as_bytes()).to_vec(), now() as i64, app.tenant.id);
    let row = app
        .db
        .read(move |sql| {
            sql.query_opt(
                "SELECT user_id, resume FROM password_resets WHERE tenant_id = ?1 AND token_hash = ?2 AND used_at IS NULL AND expires_at > ?3",
                crate::params![tenant, hash, t],
            )
        })
        .await?;
    row.map(|r| Ok(Link { user_id: r.text(0)?, resume: r.opt_text(1)? })).transpose()
}

fn reset_form(app: &Issuer, headers: &HeaderMap, token: &str, error: Option<&'static str>, status: StatusCode) -> Response {
    let (form, cookie) = form_token(app, headers);
    let min = app.tenant.password_policy.min_length();
    let mut page = Page::new(status, "reset.html", "reset-title").with("form", form).with("token", token).with("min", min);
    if let Some(e) = error {
        page = page.msg("error", Msg::new(e).arg("min", min.to_string()));
    }
    with_cookie(app, page, cookie)
}

/// `GET /login/reset?token=…`: the form, if the link still works.
pub async fn reset_page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if app.mailer.is_none() {
        return off();
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let token = params.get("token").unwrap_or_default().to_string();
    match token_user(&app, &token).await {
        Ok(Some(_)) => reset_form(&app, &headers, &token, None, StatusCode::OK),
        Ok(None) => error_page(StatusCode::BAD_REQUEST, "err-reset-link"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /login/reset` (`token`, `new_password`, `confirm_password`). A reset asked for from
/// an application's sign-in page, finished in the browser that asked, goes on with that
/// request (signed in with the new password, as after a sign-up; a second factor still
/// asked for); any other ends on a page that says it is done.
pub async fn reset(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    if app.mailer.is_none() {
        return off();
    }
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, "err-form-expired") };
    if !form_ok(&app, &headers, &params) {
        return error_page(StatusCode::BAD_REQUEST, "err-form-expired");
    }
    let token = params.get("token").unwrap_or_default().to_string();
    let (new, confirm) = (params.get("new_password").unwrap_or_default(), params.get("confirm_password").unwrap_or_default());
    let (user, resume) = match token_user(&app, &token).await {
        Ok(Some(link)) => (app.registry().user(&link.user_id), link.resume),
        Ok(None) => (None, None),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let Some(user) = user.filter(|u| !u.disabled) else { return error_page(StatusCode::BAD_REQUEST, "err-reset-link") };
    if new != confirm {
        return reset_form(&app, &headers, &token, Some("password-mismatch"), StatusCode::UNPROCESSABLE_ENTITY);
    }
    if let Err(why) = app.tenant.password_policy.check(new, &user.username) {
        return reset_form(&app, &headers, &token, Some(why), StatusCode::UNPROCESSABLE_ENTITY);
    }
    let (u, new) = (user.clone(), new.to_string());
    let updated = match app.hash_slots.run(move || crate::registry::users::update_user(&u, crate::registry::UserInput { password: Some(new), ..Default::default() })).await {
        None => return error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy"),
        Some(Err(_)) => return reset_form(&app, &headers, &token, Some("password-too-weak"), StatusCode::UNPROCESSABLE_ENTITY),
        Some(Ok(u)) => u,
    };
    // The link spent and the password set in one transaction: of two uses racing, one wins;
    // an error leaves the old password and the link working.
    let (hash, t, id, tenant) = (sha256(token.as_bytes()).to_vec(), now() as i64, user.id.clone(), app.tenant.id);
    let cutoff = updated.tokens_cutoff;
    let spend = move |sql: &mut dyn crate::db::Sql| {
        if sql.execute(
            "UPDATE password_resets SET used_at = ?1 WHERE tenant_id = ?2 AND token_hash = ?3 AND used_at IS NULL AND expires_at > ?1",
            crate::params![t, tenant, hash],
        )? != 1
        {
            return Ok(false);
        }
        spend_links(sql, tenant, &id)?;
        Ok(true)
    };
    match app.registry().save_user_if(updated, spend).await {
        Ok(true) => {}
        Ok(false) => return error_page(StatusCode::BAD_REQUEST, "err-reset-link"),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    }
    // Whoever knew the old password is signed out and keeps no token.
    let done = crate::logout::cut_off(&app, app.tenant.id, &user.id, cutoff, None, crate::logout::EndedBy::User).await;
    let detail = match &done {
        Ok(c) => serde_json::json!({"sessions_ended": c.sessions, "families_revoked": c.families}),
        Err(e) => serde_json::json!({"error": e.to_string()}),
    };
    app.audit(AuditEvent::new("password_reset").user(&user.id).detail(detail)).await;
    match done {
        Ok(_) => match resumable(&app, &headers, resume.as_deref()) {
            Some(req) => {
                let address = client_address(&app, &headers, peer);
                after_first_factor(&app, &headers, req, &user, &address, vec!["pwd".into()], None).await
            }
            None => Page::new(StatusCode::OK, "reset_done.html", "reset-title").into_response(),
        },
        // The password is changed and the tokens are refused by the cutoff; the sessions may
        // not all have ended: the user is told to try again (a new link, or a sign-in).
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// Spend every outstanding reset link of `user_id`: in the transaction of any new password,
/// so that no link sent before it (to a mailbox someone else may read) sets another.
pub(crate) fn spend_links(sql: &mut dyn crate::db::Sql, tenant: TenantId, user_id: &str) -> crate::db::StoreResult<u64> {
    let t = now() as i64;
    sql.execute(
        "UPDATE password_resets SET used_at = ?1 WHERE tenant_id = ?2 AND user_id = ?3 AND used_at IS NULL",
        crate::params![t, tenant, user_id],
    )
}
