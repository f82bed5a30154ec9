//! `Users` (RFC 7643 §4.1): read (one, or a list with the parameters of `query`), created,
//! replaced, patched and deleted, each change through the same path as the admin API's
//! (`operations`), audited with `via: scim`.
//!
//! - PUT replaces the user's SCIM attributes (§3.5.1): one left out is cleared, with its
//!   claim; the claims SCIM does not map (`birthdate`, `website`, …) and the password are
//!   kept unless sent.
//! - PATCH is applied to the user's representation (`scim::patch`), then written as a PUT.
//! - `active: false` disables the user: their sessions end and every token they hold is
//!   refused (as the admin API's disable). DELETE does the same, then removes them.
//! - `If-Match` is honoured on all three (412 when the user has changed since).

use super::query::Query;
use super::user_map::{self, etag, representation, Written};
use super::{body_json, check_if_match, read_one, written, ScimError};
use crate::endpoints::operations::{self, Actor};
use crate::http::params::Body;
use crate::registry::users::{self, Source, User};
use crate::scim::filter::{CompareOp, Filter};
use crate::scim::patch;
use crate::tenant::Issuer;
use crate::util::{now, random_token};
use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;

fn find(app: &Issuer, id: &str) -> Result<Arc<User>, ScimError> {
    app.registry().user(id).ok_or_else(|| ScimError::not_found("no such user"))
}

pub async fn one(app: Issuer, Path(id): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap) -> Result<Response, ScimError> {
    let q = Query::parse(query.as_deref())?;
    let u = find(&app, &id)?;
    Ok(read_one(&headers, &etag(&u), || q.project(representation(&app, &u))))
}

pub async fn list(app: Issuer, RawQuery(query): RawQuery) -> Result<Response, ScimError> {
    answer(&app, Query::parse(query.as_deref())?)
}

/// §3.4.3: the same as a list, its parameters in the body.
pub async fn search(app: Issuer, Body(body): Body) -> Result<Response, ScimError> {
    answer(&app, Query::from_search(&body_json(&body)?)?)
}

fn answer(app: &Issuer, q: Query) -> Result<Response, ScimError> {
    let filter = q.filter()?;
    let registry = app.registry();
    // What provisioning systems ask before each write (`userName eq "…"`) is found by the
    // login-name index, not by building every user's representation; the filter is still
    // applied to what is found.
    let users = match filter.as_ref().and_then(user_name_eq) {
        Some(name) => registry.user_by_login(name).filter(|u| u.username.eq_ignore_ascii_case(name)).into_iter().collect(),
        None => registry.list_users(),
    };
    q.answer(users.iter().map(|u| representation(app, u)), filter.as_ref())
}

/// The name of a filter `userName eq "…"`, alone or and-ed with others.
fn user_name_eq(f: &Filter) -> Option<&str> {
    match f {
        Filter::Compare(p, CompareOp::Eq, Value::String(name)) if p.in_core_schema() && p.sub.is_none() && p.name.eq_ignore_ascii_case("userName") => Some(name),
        Filter::And(a, b) => user_name_eq(a).or_else(|| user_name_eq(b)),
        _ => None,
    }
}

fn checked(w: &Written) -> Result<(), ScimError> {
    users::validate_username(&w.user_name).map_err(|e| ScimError::bad("invalidValue", e))
}

async fn hash(password: String) -> Result<String, ScimError> {
    tokio::task::spawn_blocking(move || users::hash_password(&password))
        .await
        .map_err(|_| ScimError::new(StatusCode::SERVICE_UNAVAILABLE, None, "try again"))?
        .map_err(|e| ScimError::bad("invalidValue", e))
}

pub async fn create(app: Issuer, actor: Actor, Body(body): Body) -> Result<Response, ScimError> {
    let mut w = user_map::read(&body_json(&body)?)?;
    checked(&w)?;
    if app.registry().user_by_login(&w.user_name).is_some() {
        return Err(ScimError::new(StatusCode::CONFLICT, Some("uniqueness"), "a user with this userName already exists"));
    }
    let password = w.password.take();
    let mut user = User { tenant: app.tenant.id, id: random_token()[..22].to_string(), source: Source::Scim, created_at: now(), updated_at: now(), ..Default::default() };
    user_map::apply(&mut user, w);
    if let Some(p) = password {
        user.password_hash = hash(p).await?;
    }
    app.registry().save_user(user.clone()).await?;
    app.audit(actor.event("user_created", json!({"via": "scim", "roles": []})).user(&user.id)).await;
    let saved = find(&app, &user.id)?;
    Ok(written(&app, "Users", &saved.id, true, &representation(&app, &saved), &etag(&saved)))
}

/// Write `w` over `before` (a PUT, or a PATCH's result).
async fn replace_with(app: &Issuer, actor: &Actor, before: &User, mut w: Written) -> Result<Response, ScimError> {
    checked(&w)?;
    let mut user = before.clone();
    let password = w.password.take();
    user_map::apply(&mut user, w);
    if let Some(p) = password {
        // A provisioning system may send the password with every PUT: the one the user has
        // already is no change (and must not sign them out everywhere).
        let current = before.password_hash.clone();
        let (same, p) = tokio::task::spawn_blocking(move || (users::argon2_matches(&current, &p), p))
            .await
            .map_err(|_| ScimError::new(StatusCode::SERVICE_UNAVAILABLE, None, "try again"))?;
        if !same {
            user.password_hash = hash(p).await?;
            // As every new password: whoever knew the old one keeps no token it got them.
            user.tokens_cutoff = now();
        }
    }
    user.updated_at = now();
    let saved = operations::save_user_change(app, actor, before, user, json!({"via": "scim"})).await?;
    Ok(written(app, "Users", &saved.id, false, &representation(app, &saved), &etag(&saved)))
}

pub async fn replace(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap, Body(body): Body) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &etag(&before))?;
    let w = user_map::read(&body_json(&body)?)?;
    replace_with(&app, &actor, &before, w).await
}

pub async fn modify(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap, Body(body): Body) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &etag(&before))?;
    let ops = patch::parse_body(&body_json(&body)?).map_err(|e| ScimError::bad(e.scim_type, e.detail))?;
    let mut resource = representation(&app, &before);
    patch::apply(&mut resource, &ops, &crate::scim::CoreSchema).map_err(|e| ScimError::bad(e.scim_type, e.detail))?;
    let obj = resource.as_object().expect("a representation is an object");
    if patch::member(obj, "id").and_then(Value::as_str) != Some(before.id.as_str()) {
        return Err(ScimError::bad("mutability", "id cannot be changed"));
    }
    let w = user_map::read(&resource)?;
    replace_with(&app, &actor, &before, w).await
}

pub async fn delete(app: Issuer, actor: Actor, Path(id): Path<String>, headers: HeaderMap) -> Result<Response, ScimError> {
    let before = find(&app, &id)?;
    check_if_match(&headers, &etag(&before))?;
    // Sessions ended (with their logout notifications) and tokens refused first: a user
    // deleted here leaves nothing signed in anywhere.
    operations::end_sessions(&app, &actor, &before.id, None).await?;
    operations::delete_user(&app, &actor, &before.id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
