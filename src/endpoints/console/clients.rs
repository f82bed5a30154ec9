//! Clients in the console: the list, a form to register one or change its main metadata
//! (the rest is the admin API's), a new secret shown once, deletion.

use super::{Id, checked, lines, not_found, notice, refused, text, Change, Viewer};
use crate::app::AppState;
use crate::endpoints::first_party::see_other;
use crate::endpoints::operations;
use crate::registry::clients::AUTH_METHODS;
use crate::registry::{Client, ClientInput};
use crate::ui::Page;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The grant types the form offers (others through the admin API).
const GRANTS: &[&str] = &["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"];

fn row(c: &Client) -> Value {
    let m = &c.meta;
    json!({
        "id": m.client_id, "name": m.client_name, "method": m.token_endpoint_auth_method,
        "grants": m.grant_types.join(" "), "redirects": m.redirect_uris.len(), "created": super::when(m.client_id_issued_at),
    })
}

/// The form's values: a client's, or what was typed.
fn values(m: &crate::registry::clients::ClientMetadata) -> Value {
    json!({
        "client_id": m.client_id, "client_name": m.client_name, "redirect_uris": m.redirect_uris.join("\n"),
        "post_logout_redirect_uris": m.post_logout_redirect_uris.join("\n"), "grant_types": m.grant_types,
        "method": m.token_endpoint_auth_method, "scope": m.scope, "jwks_uri": m.jwks_uri,
        "backchannel_logout_uri": m.backchannel_logout_uri, "require_mfa": m.require_mfa, "require_passkey": m.require_passkey,
    })
}

fn typed(params: &crate::http::params::Params) -> Value {
    let grants: Vec<&str> = GRANTS.iter().copied().filter(|g| checked(params, &format!("grant:{g}"))).collect();
    json!({
        "client_id": text(params, "client_id"), "client_name": text(params, "client_name"),
        "redirect_uris": params.get("redirect_uris").unwrap_or_default(), "post_logout_redirect_uris": params.get("post_logout_redirect_uris").unwrap_or_default(),
        "grant_types": grants, "method": text(params, "method"), "scope": text(params, "scope"), "jwks_uri": text(params, "jwks_uri"),
        "backchannel_logout_uri": text(params, "backchannel_logout_uri"), "require_mfa": checked(params, "require_mfa"), "require_passkey": checked(params, "require_passkey"),
    })
}

/// What the form sets: every field it shows (an emptied list or text is emptied).
fn input(params: &crate::http::params::Params, new: bool) -> ClientInput {
    let grants: Vec<String> = GRANTS.iter().filter(|g| checked(params, &format!("grant:{g}"))).map(|g| g.to_string()).collect();
    let has_code = grants.iter().any(|g| g == "authorization_code");
    ClientInput {
        client_id: if new { text(params, "client_id") } else { None },
        client_name: Some(text(params, "client_name").unwrap_or_default()),
        redirect_uris: Some(lines(params, "redirect_uris")),
        post_logout_redirect_uris: Some(lines(params, "post_logout_redirect_uris")),
        response_types: Some(if has_code { vec!["code".into()] } else { Vec::new() }),
        grant_types: Some(grants),
        token_endpoint_auth_method: text(params, "method"),
        scope: text(params, "scope"),
        jwks_uri: text(params, "jwks_uri").or((!new).then(String::new)),
        backchannel_logout_uri: text(params, "backchannel_logout_uri").or((!new).then(String::new)),
        require_mfa: Some(checked(params, "require_mfa")),
        require_passkey: Some(checked(params, "require_passkey")),
        ..Default::default()
    }
}

fn form_page(viewer: &Viewer, client: Value, new: bool) -> Page {
    viewer
        .page("console_client.html", if new { "console-client-new" } else { "console-client-title" }, "clients")
        .with("client", client)
        .with("new", new)
        .with("grants", GRANTS)
        .with("methods", AUTH_METHODS)
}

pub async fn list(State(app): State<AppState>, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let rows: Vec<Value> = app.registry.list_clients().iter().map(|c| row(c)).collect();
    let mut page = viewer.page("console_clients.html", "console-clients", "clients").with("clients", rows);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

pub async fn new_form(viewer: Viewer) -> Response {
    let defaults = json!({"grant_types": ["authorization_code", "refresh_token"], "method": "client_secret_basic", "scope": "openid profile email"});
    form_page(&viewer, defaults, true).into_response()
}

/// A secret, shown once: never cached, never in a URL.
fn secret_page(viewer: &Viewer, client_id: &str, secret: &str, created: bool) -> Response {
    let mut res = viewer
        .page("console_secret.html", "console-secret-title", "clients")
        .with("client_id", client_id)
        .with("secret", secret)
        .with("created", created)
        .into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

pub async fn create(State(app): State<AppState>, Change { admin, params }: Change) -> Response {
    match operations::create_client(&app, &admin.actor(), input(&params, true)).await {
        Ok((client, Some(secret))) => secret_page(&admin, &client.meta.client_id, &secret, true),
        Ok((client, None)) => see_other(app.base(), &format!("/console/clients/{}?done=created", enc(&client.meta.client_id))),
        Err(e) => refused(form_page(&admin, typed(&params), true), &e),
    }
}

pub async fn show(State(app): State<AppState>, viewer: Viewer, Id(id): Id, RawQuery(query): RawQuery) -> Response {
    let Some(client) = app.registry.client(&id) else { return not_found() };
    let mut page = form_page(&viewer, values(&client.meta), false).with("has_secret", client.meta.token_endpoint_auth_method.starts_with("client_secret"));
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

pub async fn update(State(app): State<AppState>, Id(id): Id, Change { admin, params }: Change) -> Response {
    if app.registry.client(&id).is_none() {
        return not_found();
    }
    match operations::update_client(&app, &admin.actor(), &id, input(&params, false)).await {
        // A change to a method with a secret made one: shown once, like a rotation.
        Ok((client, Some(secret))) => secret_page(&admin, &client.meta.client_id, &secret, false),
        Ok(_) => see_other(app.base(), &format!("/console/clients/{}?done=saved", enc(&id))),
        Err(e) => {
            let mut typed = typed(&params);
            typed["client_id"] = id.into();
            refused(form_page(&admin, typed, false), &e)
        }
    }
}

pub async fn rotate_secret(State(app): State<AppState>, Id(id): Id, Change { admin, .. }: Change) -> Response {
    match operations::rotate_secret(&app, &admin.actor(), &id).await {
        Ok((_, secret)) => secret_page(&admin, &id, &secret, false),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => not_found(),
        Err(e) => refused(form_page(&admin, app.registry.client(&id).map(|c| values(&c.meta)).unwrap_or_default(), false), &e),
    }
}

pub async fn delete(State(app): State<AppState>, Id(id): Id, Change { admin, .. }: Change) -> Response {
    match operations::delete_client(&app, &admin.actor(), &id).await {
        Ok(()) => see_other(app.base(), "/console/clients?done=deleted"),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => not_found(),
        Err(e) => super::failed(&e),
    }
}

/// A path segment.
pub(crate) fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
