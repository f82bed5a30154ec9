//! Self-registration (`signup`, off by default): `/signup` makes an account from a username,
//! a password and what `signup_required` asks for.
//!
//! With `signup_verify_email` (the default) nobody is created yet: the sign-up waits in
//! `pending_signups` (the password already an Argon2 hash, the link's token a SHA-256) and a
//! link goes to the address; opening it and confirming (a POST, so that a mail scanner
//! following links does not confirm) creates the user with `email_verified`. Pending
//! sign-ups are bounded per tenant (`signup_max_pending`, the oldest dropped past it) and expire
//! (`email_verification_ttl`); sign-ups are throttled per client address
//! (`signup_max_per_address`) and their mail per recipient (`mail_max_per_recipient`). Forms
//! carry a token sealed to the browser cookie (CSRF).
//!
//! The answer does not tell whether an address or a username is taken: with verification
//! on, every sign-up gets the same "check your mail" page after the same work; a taken
//! address's owner gets a notice instead of a link, and a taken username is said to be only
//! on the confirmation page, to whoever proved the address, who chooses another there.

use super::interaction::{after_first_factor, client_address, resumable};
use crate::app::App;
use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::http::cookies;
use crate::http::pages::error_page;
use crate::http::params::{FormParams, Params};
use crate::registry::users::{self, login_key, looks_like_email, UserInput};
use crate::tenant::Issuer;
use crate::ui::{Msg, Page};
use crate::util::{now, random_token, sha256};
use axum::extract::{ConnectInfo, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use std::net::SocketAddr;

const KIND: &str = "signup-form";
pub const SIGNUP: &str = "/signup";
pub const VERIFY: &str = "/signup/verify";
const OPTIONAL: &[&str] = &["email", "name", "given_name", "family_name"];

fn off() -> Response {
    error_page(StatusCode::NOT_FOUND, "err-signup-off")
}

fn required(app: &Issuer) -> Vec<&str> {
    let mut r: Vec<&str> = app.tenant.policies.signup_required.iter().map(String::as_str).collect();
    if app.tenant.policies.signup_verify_email && !r.contains(&"email") {
        r.push("email");
    }
    r
}

fn form_page(app: &Issuer, headers: &HeaderMap, typed: &Map<String, Value>, error: Option<Msg>, status: StatusCode) -> Response {
    let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let token = app.tenant.sealer.seal(KIND, &browser, app.config.challenge_ttl, &());
    let req = required(app);
    let fields: Vec<Value> = OPTIONAL.iter().map(|f| serde_json::json!({"name": f, "required": req.contains(f)})).collect();
    let mut page = Page::new(status, "signup.html", "signup-title").with("form", token).with("fields", fields).with("v", typed).with("min", app.tenant.password_policy.min_length());
    if let Some(e) = error {
        page = page.msg("error", e);
    }
    let mut res = page.into_response();
    if existing.is_none() {
        cookies::set(&mut res, app.base(), cookies::BROWSER, &browser, None, app.config.secure_cookies());
    }
    res
}


/// `GET /signup[?challenge=…]`.
pub async fn page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if !app.tenant.policies.signup {
        return off();
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let mut typed = Map::new();
    if let Some(c) = params.get("challenge").filter(|c| resumable(&app, &headers, Some(c)).is_some()) {
        typed.insert("challenge".into(), Value::from(c));
    }
    form_page(&app, &headers, &typed, None, StatusCode::OK)
}

/// `POST /signup`.
pub async fn submit(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    if !app.tenant.policies.signup {
        return off();
    }
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, "err-form-expired") };
    if params.get("form").is_none_or(|t| app.tenant.sealer.open::<()>(KIND, cookies::get(&headers, cookies::BROWSER), t).is_err()) {
        return error_page(StatusCode::BAD_REQUEST, "err-form-expired");
    }
    let text = |n: &str| params.get(n).map(str::trim).unwrap_or_default().to_string();
    let username = text("username");
    let mut typed = Map::new();
    typed.insert("username".into(), Value::from(username.clone()));
    let resume = params.get("challenge").and_then(|c| resumable(&app, &headers, Some(c)).map(|req| (c.to_string(), req)));
    if let Some((c, _)) = &resume {
        typed.insert("challenge".into(), Value::from(c.as_str()));
    }
    let mut claims = Map::new();
    for f in OPTIONAL {
        let v = text(f);
        typed.insert(f.to_string(), Value::from(v.clone()));
        if !v.is_empty() {
            claims.insert(f.to_string(), Value::from(v));
        }
    }
    let again = |e: Msg, status: StatusCode| form_page(&app, &headers, &typed, Some(e), status);
    // The language the form was shown in: its messages' and the mail's.
    let lang = app.tenant.ui.language(None, headers.get(axum::http::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok())).to_string();
    if let Some(missing) = required(&app).into_iter().find(|f| !claims.contains_key(*f)) {
        let label = match missing {
            "email" => "signup-field-email",
            "name" => "signup-field-name",
            "given_name" => "signup-field-given_name",
            _ => "signup-field-family_name",
        };
        return again(Msg::new("signup-missing").arg("field", app.tenant.ui.plain_text(&lang, &Msg::new(label))), StatusCode::UNPROCESSABLE_ENTITY);
    }
    let email = claims.get("email").and_then(Value::as_str).map(str::to_string);
    if email.as_deref().is_some_and(|e| !looks_like_email(e)) {
        return again(Msg::new("profile-email-invalid"), StatusCode::UNPROCESSABLE_ENTITY);
    }
    let (password, confirm) = (params.get("password").unwrap_or_default(), params.get("confirm_password").unwrap_or_default());
    if password != confirm {
        return again(Msg::new("password-mismatch"), StatusCode::UNPROCESSABLE_ENTITY);
    }
    if let Err(why) = app.tenant.password_policy.check(password, &username) {
        let why = match why {
            "password-too-weak" => Msg::new("signup-password-length").arg("min", app.tenant.password_policy.min_length().to_string()),
            other => Msg::new(other),
        };
        return again(why, StatusCode::UNPROCESSABLE_ENTITY);
    }
    let address = client_address(&app, &headers, peer);
    // Throttled per address: every sign-up counts (the account key is the address too).
    let Some(attempt) = app.signup_limiter.begin(&format!("signup:{address}"), &address, now()) else {
        return error_page(StatusCode::TOO_MANY_REQUESTS, "err-too-many-requests");
    };
    attempt.failed(now());
    // A username that looks like an e-mail address must be the one given (it would be one to
    // sign in with): decided by what was typed alone, so it tells nothing about accounts.
    if username.contains('@') && Some(login_key(&username)) != email.as_deref().map(login_key) {
        return again(Msg::new("signup-username-taken"), StatusCode::CONFLICT);
    }
    // Both names looked up, and the password hashed, whatever the answer: the same work
    // whether or not they are taken.
    let name_taken = app.registry().user_by_login(&username).is_some();
    let owner = email.as_deref().and_then(|e| app.registry().user_by_login(e));
    // The account keeps the language it signed up in (its later mail, such as a reset, is in
    // it too), when the browser asked for one we have.
    if let Some(asked) = app.tenant.ui.asked_language(None, headers.get(axum::http::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok())) {
        claims.insert("locale".into(), Value::from(asked));
    }
    let input = UserInput { username: Some(username.clone()), password: Some(password.to_string()), claims: claims.clone(), ..Default::default() };
    let Some(built) = app.hash_slots.run(move || users::new_user(input)).await else { return error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy") };
    let mut user = match built {
        Ok(u) => u,
        Err(why) => return again(Msg::new("profile-invalid").detail(why), StatusCode::UNPROCESSABLE_ENTITY),
    };
    if !app.tenant.policies.signup_verify_email {
        // The account exists at once, so there is nobody to write to first: a taken name or
        // address is said to be (docs/security.md, "Self-registration").
        if name_taken {
            return again(Msg::new("signup-username-taken"), StatusCode::CONFLICT);
        }
        if owner.is_some() {
            return again(Msg::new("profile-email-taken"), StatusCode::CONFLICT);
        }
        return match app.registry().save_user(user.clone()).await {
            Ok(()) => {
                app.audit(AuditEvent::new("user_created").user(&user.id).address(&address).detail(serde_json::json!({"by": "signup"}))).await;
                match resume {
                    // Signed in with the password just set, on with the application's request.
                    Some((_, req)) => after_first_factor(&app, &headers, req, &user, &address, vec!["pwd".into()], None).await,
                    None => Page::new(StatusCode::OK, "signup_done.html", "signup-title").into_response(),
                }
            }
            Err(crate::db::StoreError::Conflict(_)) => again(Msg::new("signup-username-taken"), StatusCode::CONFLICT),
            Err(e) => crate::endpoints::authorize::unavailable(e),
        };
    }
    // Verification first, and one answer for all: the page, its status and the work done
    // here are the same whether or not the address (or the username) is taken. A free
    // address gets the link; a taken one gets, instead, a notice to its owner (who learns
    // that someone tried; whoever typed it learns nothing). A username is reserved only when
    // the link is confirmed, by someone who proved the address (`verify`): a taken one is
    // said to be then, not here. Each address gets at most `mail_max_per_recipient` such
    // mails per `mail_recipient_window`, whoever asks; past that nothing is sent or stored.
    let sent = Page::new(StatusCode::OK, "signup_sent.html", "signup-title").into_response();
    user.claims.insert("email_verified", Value::Bool(true));
    let email = email.unwrap_or_default();
    let mail_allowed = app.mail_limiter.allow(&email, now());
    let token = random_token();
    let (subject, sealed) = match &owner {
        None => {
            let link = format!("{}?token={token}", app.endpoint(VERIFY));
            let hours = app.config.email_verification_ttl.div_ceil(3600).to_string();
            crate::mail::compose(&app, &lang, "mail-verify-subject", "mail_verify.txt", serde_json::json!({"link": link, "hours": hours}))
        }
        Some(owner) => {
            let link = app.endpoint(crate::endpoints::password_reset::FORGOT);
            let values = serde_json::json!({"link": link, "username": owner.username});
            crate::mail::compose(&app, &crate::mail::language_of(&app, owner), "mail-signup-exists-subject", "mail_signup_exists.txt", values)
        }
    };
    let (hash, t, expires, max) = (sha256(token.as_bytes()).to_vec(), now() as i64, (now() + app.config.email_verification_ttl) as i64, app.config.signup_max_pending as i64);
    let pending_claims = user.claims.to_json();
    // The notice goes to the owner's address as the account has it (the typed one may differ
    // in case or width).
    let recipient = owner.as_ref().and_then(|o| o.email().map(str::to_string)).unwrap_or_else(|| email.clone());
    let (name, hashed, pending_to) = (user.username.clone(), user.password_hash.clone(), email.clone());
    let resume = resume.map(|(c, _)| c);
    let keep_pending = owner.is_none() && mail_allowed;
    let tenant = app.tenant.id;
    let written = app
        .db
        .write(move |sql| {
            sql.execute("DELETE FROM pending_signups WHERE expires_at <= ?1", crate::params![t])?;
            // Kept only for a free address whose mail goes out; for a taken one the same
            // statements run and are undone.
            let evicted = crate::mail::keep_if(sql, keep_pending, |sql| {
                // Full: the oldest waiting sign-ups make room (their links stop working), so
                // that a flood of sign-ups cannot keep the form shut for a link's lifetime.
                // Per tenant: one tenant's flood does not evict another's sign-ups.
                let over = sql.query("SELECT COUNT(*) FROM pending_signups WHERE tenant_id = ?1", crate::params![tenant])?[0].i64(0)? - max + 1;
                let evicted = if over > 0 {
                    sql.execute(
                        "DELETE FROM pending_signups WHERE tenant_id = ?2 AND token_hash IN
                           (SELECT token_hash FROM pending_signups WHERE tenant_id = ?2 ORDER BY expires_at, token_hash LIMIT ?1)",
                        crate::params![over, tenant],
                    )?
                } else {
                    0
                };
                sql.execute(
                    "INSERT INTO pending_signups (tenant_id, token_hash, username, email, password_hash, claims, created_at, expires_at, resume) VALUES (?9, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    crate::params![hash, name.as_str(), pending_to.as_str(), hashed.as_str(), pending_claims.as_str(), t, expires, resume, tenant],
                )?;
                Ok(evicted)
            })?;
            crate::mail::keep_if(sql, mail_allowed, |sql| crate::mail::enqueue(sql, tenant, &recipient, &subject, sealed))?;
            Ok(if keep_pending { evicted } else { 0 })
        })
        .await;
    let evicted = match written {
        Ok(n) => n,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    // The deliverer woken either way (with nothing due it only looks).
    if let Some(m) = &app.mailer {
        m.wake.notify_one();
    }
    let event = match (&owner, mail_allowed) {
        (None, true) => AuditEvent::new("signup_pending").detail(serde_json::json!({"evicted": evicted})),
        (None, false) => AuditEvent::new("signup_refused").detail(serde_json::json!({"reason": "recipient_throttled"})),
        (Some(o), notified) => AuditEvent::new("signup_refused").user(&o.id).detail(serde_json::json!({"reason": "email_taken", "owner_notified": notified})),
    };
    app.audit(event.address(&address)).await;
    sent
}

/// A pending sign-up (by its link's token), if its link still works.
struct Pending {
    username: String,
    password_hash: String,
    claims: Map<String, Value>,
    resume: Option<String>,
}

async fn pending(app: &Issuer, token: &str) -> Result<Option<Pending>, crate::db::StoreError> {
    let (hash, t, tenant) = (sha256(token.as_bytes()).to_vec(), now() as i64, app.tenant.id);
    let row = app
        .db
        .read(move |sql| {
            sql.query_opt(
                "SELECT username, password_hash, claims, resume FROM pending_signups WHERE tenant_id = ?1 AND token_hash = ?2 AND expires_at > ?3",
                crate::params![tenant, hash, t],
            )
        })
        .await?;
    Ok(row.and_then(|r| {
        let (Ok(username), Ok(password_hash), Ok(claims)) = (r.text(0), r.text(1), r.text(2)) else { return None };
        Some(Pending { username, password_hash, claims: serde_json::from_str(&claims).unwrap_or_default(), resume: r.opt_text(3).ok().flatten() })
    }))
}

/// What stands in the way of a pending sign-up now (told only to whoever holds its link,
/// i.e. proved the address): the address became an account's (a page saying so), or the
/// username was taken (the confirmation page asks for another).
fn obstacle(app: &Issuer, headers: &HeaderMap, token: &str, p: &Pending) -> Option<Response> {
    let email = p.claims.get("email").and_then(Value::as_str).unwrap_or_default();
    if app.registry().user_by_login(email).is_some() {
        return Some(error_page(StatusCode::CONFLICT, "err-signup-email-taken"));
    }
    app.registry().user_by_login(&p.username).is_some().then(|| choose_page(app, headers, token, &p.username, Msg::new("signup-verify-username-taken").arg("username", p.username.clone())))
}

/// The confirmation page asking for another username (and the sign-up's password, which
/// proves it is the same person and is checked against the new name).
fn choose_page(_app: &App, _headers: &HeaderMap, token: &str, username: &str, error: Msg) -> Response {
    Page::new(StatusCode::CONFLICT, "signup_verify.html", "signup-title").with("token", token).with("choose", username).msg("error", error).into_response()
}

/// `GET /signup/verify?token=…`: a button that confirms (link scanners only GET).
pub async fn verify_page(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if !app.tenant.policies.signup {
        return off();
    }
    let params = Params::parse(query.unwrap_or_default().as_bytes()).unwrap_or_default();
    let token = params.get("token").unwrap_or_default().to_string();
    // A link already used or expired, or one that cannot be confirmed as it is, says so now,
    // not after its button (only looked up here: the POST takes it).
    match pending(&app, &token).await {
        Ok(Some(p)) => obstacle(&app, &headers, &token, &p).unwrap_or_else(|| Page::new(StatusCode::OK, "signup_verify.html", "signup-title").with("token", token).into_response()),
        Ok(None) => error_page(StatusCode::BAD_REQUEST, "err-signup-link"),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// `POST /signup/verify` (`token`; after a username was taken, also `username` and
/// `password`): the pending sign-up becomes a user, once. Confirmed in the browser that
/// signed up while its application's request is still good, the user is signed in (with the
/// password they set there) and goes on with it; elsewhere, or later, the page says to
/// return to the application.
pub async fn verify(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    if !app.tenant.policies.signup {
        return off();
    }
    let Ok(FormParams(params)) = form else { return error_page(StatusCode::BAD_REQUEST, "err-signup-link") };
    let token = params.get("token").unwrap_or_default().to_string();
    let mut p = match pending(&app, &token).await {
        Ok(Some(p)) => p,
        Ok(None) => return error_page(StatusCode::BAD_REQUEST, "err-signup-link"),
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let address = client_address(&app, &headers, peer);
    if let Some(chosen) = params.get("username").map(str::trim).filter(|u| !u.is_empty()) {
        let chosen = chosen.to_string();
        let again = |e: Msg| choose_page(&app, &headers, &token, &chosen, e);
        let email = p.claims.get("email").and_then(Value::as_str).unwrap_or_default();
        if users::validate_username(&chosen).is_err() || chosen.contains('@') && login_key(&chosen) != login_key(email) {
            return again(Msg::new("signup-username-taken"));
        }
        // The sign-up's password, checked like a sign-in's (throttled per address, one hash
        // slot): whoever holds the link must also know it to rename the account.
        let Some(attempt) = app.login_limiter.begin(&format!("signup-verify:{}", login_key(&p.username)), &address, now()) else {
            return error_page(StatusCode::TOO_MANY_REQUESTS, "err-too-many-requests");
        };
        let password = params.get("password").unwrap_or_default().to_string();
        let candidate = crate::registry::User { password_hash: p.password_hash.clone(), ..placeholder() };
        let typed = password.clone();
        let Some(ok) = app.hash_slots.run(move || users::verify_password(Some(&candidate), &typed)).await else {
            attempt.unchecked();
            return error_page(StatusCode::SERVICE_UNAVAILABLE, "err-busy");
        };
        if !ok {
            attempt.failed(now());
            return again(Msg::new("signup-password-wrong"));
        }
        attempt.succeeded();
        if let Err(why) = app.tenant.password_policy.check(&password, &chosen) {
            return again(Msg::new(why));
        }
        p.username = chosen;
    }
    if let Some(refusal) = obstacle(&app, &headers, &token, &p) {
        return refusal;
    }
    let user = crate::registry::User { id: random_token()[..22].to_string(), username: p.username.clone(), password_hash: p.password_hash.clone(), claims: p.claims.clone().into(), ..placeholder() };
    // The pending row taken out and the user made in one transaction: of two confirmations
    // racing, one makes the account; an error leaves the sign-up pending, its link working.
    let (hash, t, tenant) = (sha256(token.as_bytes()).to_vec(), now() as i64, app.tenant.id);
    let spend = move |sql: &mut dyn crate::db::Sql| {
        Ok(sql.execute("DELETE FROM pending_signups WHERE tenant_id = ?1 AND token_hash = ?2 AND expires_at > ?3", crate::params![tenant, hash, t])? == 1)
    };
    match app.registry().save_user_if(user.clone(), spend).await {
        Ok(false) => error_page(StatusCode::BAD_REQUEST, "err-signup-link"),
        Ok(true) => {
            app.audit(AuditEvent::new("user_created").user(&user.id).address(&address).detail(serde_json::json!({"by": "signup", "email_verified": true}))).await;
            match resumable(&app, &headers, p.resume.as_deref()) {
                Some(req) => after_first_factor(&app, &headers, req, &user, &address, vec!["pwd".into()], None).await,
                None => Page::new(StatusCode::OK, "signup_done.html", "signup-title").into_response(),
            }
        }
        // Someone took the name or the address in the meantime: said as when opened.
        Err(crate::db::StoreError::Conflict(_)) => obstacle(&app, &headers, &token, &p).unwrap_or_else(|| error_page(StatusCode::CONFLICT, "signup-username-taken")),
        Err(e) => crate::endpoints::authorize::unavailable(e),
    }
}

/// A user with nothing in it yet.
fn placeholder() -> crate::registry::User {
    crate::registry::User { tenant: Default::default(), id: String::new(), username: String::new(), password_hash: String::new(), claims: Default::default(), disabled: false, updated_at: now(), roles: Vec::new(), tokens_cutoff: 0, created_at: now(), ..Default::default() }
}
