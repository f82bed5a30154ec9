//! Clients in the console: the list, a form to register one (an application type first,
//! which fills in the metadata: `presets`) or change its main metadata (the rest is the admin
//! API's), what the application needs once created (the secret shown once), deletion.

use super::presets::{self, Preset, Typed, GRANTS};
use super::{Id, checked, lines, mistaken, not_found, notice, refused, text, Change, Viewer};
use crate::endpoints::first_party::see_other;
use crate::endpoints::authorize::response_type::{IMPLICIT_GRANT, RESPONSE_TYPES};
use crate::endpoints::operations;
use crate::registry::clients::AUTH_METHODS;
use crate::registry::{Client, ClientInput};
use crate::tenant::Issuer;
use crate::ui::Page;
use axum::extract::RawQuery;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

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
        "post_logout_redirect_uris": m.post_logout_redirect_uris.join("\n"), "grant_types": m.grant_types, "response_types": m.response_types,
        "method": m.token_endpoint_auth_method, "scope": m.scope, "jwks_uri": m.jwks_uri,
        "backchannel_logout_uri": m.backchannel_logout_uri, "require_mfa": m.require_mfa, "require_passkey": m.require_passkey,
        "application_type": m.application_type, "refresh_reuse_grace": m.refresh_reuse_grace, "initiate_login_uri": m.initiate_login_uri,
        "organization_required": m.organization_required,
        "groups_claim": m.directory.groups_claim, "groups_assigned_only": m.directory.groups_assigned_only,
        "groups_prefixes": m.directory.groups_prefixes.join("\n"), "groups_claim_name": m.directory.groups_claim_name,
        "roles_claim_name": m.directory.roles_claim_name,
    })
}

fn typed(params: &crate::http::params::Params) -> Value {
    let grants: Vec<&str> = GRANTS.iter().map(|(g, _)| *g).filter(|g| checked(params, &format!("grant:{g}"))).collect();
    json!({
        "type": text(params, "type"), "client_id": text(params, "client_id"), "client_name": text(params, "client_name"),
        "redirect_uris": params.get("redirect_uris").unwrap_or_default(), "post_logout_redirect_uris": params.get("post_logout_redirect_uris").unwrap_or_default(),
        "grant_types": grants, "response_types": front_channel_types(params), "method": text(params, "method"), "scope": text(params, "scope"), "jwks_uri": text(params, "jwks_uri"),
        "backchannel_logout_uri": text(params, "backchannel_logout_uri"), "require_mfa": checked(params, "require_mfa"), "require_passkey": checked(params, "require_passkey"),
        "refresh_reuse_grace": text(params, "refresh_reuse_grace"), "initiate_login_uri": text(params, "initiate_login_uri"),
        "organization_required": checked(params, "organization_required"),
        "groups_claim": text(params, "groups_claim"), "groups_assigned_only": checked(params, "groups_assigned_only"),
        "groups_prefixes": params.get("groups_prefixes").unwrap_or_default(), "groups_claim_name": text(params, "groups_claim_name"),
        "roles_claim_name": text(params, "roles_claim_name"),
    })
}

/// The grant types ticked.
fn grants(params: &crate::http::params::Params) -> Vec<String> {
    GRANTS.iter().map(|(g, _)| *g).filter(|g| checked(params, &format!("grant:{g}"))).map(str::to_string).collect()
}

/// The hybrid and implicit response types ticked (`response_type:<value>`).
fn front_channel_types(params: &crate::http::params::Params) -> Vec<String> {
    RESPONSE_TYPES[1..].iter().filter(|t| checked(params, &format!("response_type:{t}"))).map(|t| t.to_string()).collect()
}

/// What the form sets: every field it shows (an emptied list or text is emptied); a new
/// client's type sets its `application_type`.
fn input(params: &crate::http::params::Params, new: bool, preset: Option<&Preset>) -> ClientInput {
    let mut grants = grants(params);
    let has_code = grants.iter().any(|g| g == "authorization_code");
    // The hybrid and implicit types (RFC 9700 §2.1.2 discourages them) are opt-in; ticking
    // one registers the implicit grant they need (RFC 7591 §2.1).
    let front = front_channel_types(params);
    if !front.is_empty() {
        grants.push(IMPLICIT_GRANT.to_string());
    }
    let response_types: Vec<String> = has_code.then(|| "code".to_string()).into_iter().chain(front).collect();
    // A new CIBA client polls (it needs no endpoint); an edited one keeps its mode.
    let ciba_mode = (new && grants.iter().any(|g| g == crate::grants::ciba::GRANT_TYPE)).then(|| "poll".to_string());
    ClientInput {
        backchannel_token_delivery_mode: ciba_mode,
        application_type: preset.and_then(|p| p.application_type).map(str::to_string),
        client_id: if new { text(params, "client_id") } else { None },
        client_name: Some(text(params, "client_name").unwrap_or_default()),
        redirect_uris: Some(lines(params, "redirect_uris")),
        post_logout_redirect_uris: Some(lines(params, "post_logout_redirect_uris")),
        response_types: Some(response_types),
        grant_types: Some(grants),
        token_endpoint_auth_method: text(params, "method"),
        scope: text(params, "scope"),
        jwks_uri: text(params, "jwks_uri").or((!new).then(String::new)),
        backchannel_logout_uri: text(params, "backchannel_logout_uri").or((!new).then(String::new)),
        initiate_login_uri: text(params, "initiate_login_uri").or((!new).then(String::new)),
        require_mfa: Some(checked(params, "require_mfa")),
        require_passkey: Some(checked(params, "require_passkey")),
        organization_required: Some(checked(params, "organization_required")),
        // The groups claim (`tokens::directory`): empty is none, or the default name.
        groups_claim: Some(text(params, "groups_claim").unwrap_or_default()),
        groups_assigned_only: Some(checked(params, "groups_assigned_only")),
        groups_prefixes: Some(lines(params, "groups_prefixes")),
        groups_claim_name: Some(text(params, "groups_claim_name").unwrap_or_default()),
        roles_claim_name: Some(text(params, "roles_claim_name").unwrap_or_default()),
        // Empty: the deployment's grace (a new client has none of its own; an edited one
        // loses its own).
        refresh_reuse_grace: match text(params, "refresh_reuse_grace").as_deref().and_then(presets::grace_seconds) {
            Some(g) => Some(g as i64),
            None => (!new).then_some(-1),
        },
        ..Default::default()
    }
}

fn form_page(viewer: &Viewer, client: Value, new: bool) -> Page {
    let grants: Vec<Value> = GRANTS.iter().map(|(g, key)| json!({"value": g, "key": key})).collect();
    // An m2m client signs no user in: no redirect URIs, no sign-in policy on its form.
    let redirects = client.get("type").and_then(Value::as_str).and_then(presets::preset).is_none_or(|p| p.redirects != presets::Redirects::None);
    viewer
        .page("console_client.html", if new { "console-client-new" } else { "console-client-title" }, "clients")
        .with("client", client)
        .with("new", new)
        .with("redirects", redirects)
        .with("grants", grants)
        .with("response_types", &RESPONSE_TYPES[1..])
        .with("methods", AUTH_METHODS)
}

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let rows: Vec<Value> = app.registry().list_clients().iter().map(|c| row(c)).collect();
    let mut page = viewer.page("console_clients.html", "console-clients", "clients").with("clients", rows);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// `GET /console/clients/new`: what kind of application (a form that asks again for this
/// page); `?type=…`: the form, filled in for that kind.
pub async fn new_form(viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let params = crate::http::params::Params::parse(query.as_deref().unwrap_or_default().as_bytes()).unwrap_or_default();
    if params.get("type") == Some("saml") {
        return super::saml::new_form(&viewer);
    }
    match params.get("type").and_then(presets::preset) {
        Some(p) => form_page(&viewer, presets::defaults(p), true).into_response(),
        None => {
            // The OpenID application types, then a SAML service provider.
            let types: Vec<&str> = presets::PRESETS.iter().map(|p| p.id).chain(["saml"]).collect();
            viewer.page("console_client_type.html", "console-client-new", "clients").with("types", types).into_response()
        }
    }
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

/// The form's mistakes in the page's words (`presets::check`), before the registry's.
fn check(params: &crate::http::params::Params, new: bool, preset: Option<&Preset>) -> Result<(), presets::Mistake> {
    let (redirect_uris, post_logout) = (lines(params, "redirect_uris"), lines(params, "post_logout_redirect_uris"));
    let (grants, client_id) = (grants(params), if new { text(params, "client_id") } else { None });
    let (name, method, scope) = (text(params, "client_name"), text(params, "method").unwrap_or_default(), text(params, "scope"));
    let (jwks_uri, backchannel) = (text(params, "jwks_uri"), text(params, "backchannel_logout_uri"));
    let grace = text(params, "refresh_reuse_grace");
    presets::check(
        &Typed {
            client_id: client_id.as_deref(),
            name: name.as_deref(),
            redirect_uris: &redirect_uris,
            post_logout_redirect_uris: &post_logout,
            grants: &grants,
            method: &method,
            scope: scope.as_deref(),
            jwks_uri: jwks_uri.as_deref(),
            backchannel_logout_uri: backchannel.as_deref(),
            refresh_reuse_grace: grace.as_deref(),
        },
        preset,
    )
}

pub async fn create(app: Issuer, Change { admin, params }: Change) -> Response {
    let preset = params.get("type").and_then(presets::preset);
    if let Err(m) = check(&params, true, preset) {
        return mistaken(form_page(&admin, typed(&params), true), m);
    }
    if text(&params, "client_id").is_some_and(|id| app.registry().client(&id).is_some()) {
        return mistaken(form_page(&admin, typed(&params), true), ("client_id", crate::ui::Msg::new("console-err-client-id-taken")));
    }
    match operations::create_client(&app, &admin.actor(), input(&params, true, preset)).await {
        Ok((client, secret)) => created_page(&app, &admin, &client, secret.as_deref()),
        Err(e) => refused(form_page(&admin, typed(&params), true), &e),
    }
}

/// After creation, what the application needs: the issuer and its discovery document, the
/// client id, the secret (shown this once), and all of it as settings to copy.
fn created_page(app: &Issuer, viewer: &Viewer, client: &Client, secret: Option<&str>) -> Response {
    let issuer = app.issuer();
    let discovery = format!("{issuer}/.well-known/openid-configuration");
    let m = &client.meta;
    let mut snippet = format!("OIDC_ISSUER={issuer}\nOIDC_DISCOVERY_URL={discovery}\nOIDC_CLIENT_ID={}\n", m.client_id);
    if let Some(s) = secret {
        snippet.push_str(&format!("OIDC_CLIENT_SECRET={s}\n"));
    }
    if let Some(r) = m.redirect_uris.first() {
        snippet.push_str(&format!("OIDC_REDIRECT_URI={r}\n"));
    }
    if !m.scope.is_empty() {
        snippet.push_str(&format!("OIDC_SCOPE=\"{}\"\n", m.scope));
    }
    // A device without a browser signs in at the device authorization endpoint (RFC 8628).
    let device = client.allows_grant(crate::grants::device_code::GRANT_TYPE);
    if device {
        snippet.push_str(&format!("OIDC_DEVICE_AUTHORIZATION_URL={}\n", app.endpoint(crate::endpoints::device_authorization::PATH)));
    }
    let mut res = viewer
        .page("console_created.html", "console-client-created", "clients")
        .with("issuer", issuer)
        .with("discovery", discovery)
        .with("client_id", &m.client_id)
        .with("secret", secret)
        .with("public", client.is_public())
        .with("device", device && m.redirect_uris.is_empty())
        .with("snippet", snippet.trim_end())
        .into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// A client's page: its settings' form, its roles with their assignees (`roles`), its
/// outbound provisioning (`provisioning`).
pub(super) async fn edit_page(app: &Issuer, viewer: &Viewer, client: &Client) -> Page {
    form_page(viewer, values(&client.meta), false)
        .with("has_secret", client.meta.token_endpoint_auth_method.starts_with("client_secret"))
        .with("roles", super::roles::rows(app, client.id()))
        .with("provisioning", super::provisioning::state(app, client.id()).await)
        .with("provisioning_scopes", super::provisioning::scopes())
}

pub async fn show(app: Issuer, viewer: Viewer, Id(id): Id, RawQuery(query): RawQuery) -> Response {
    let Some(client) = app.registry().client(&id) else { return not_found() };
    let mut page = match client.meta.saml {
        Some(_) => super::saml::edit_page(&app, &viewer, &client),
        None => edit_page(&app, &viewer, &client).await,
    };
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

pub async fn update(app: Issuer, Id(id): Id, Change { admin, params }: Change) -> Response {
    let Some(client) = app.registry().client(&id) else { return not_found() };
    if client.meta.saml.is_some() {
        return super::saml::update(&app, &admin, &client, &params).await;
    }
    if let Err(m) = check(&params, false, None) {
        let mut typed = typed(&params);
        typed["client_id"] = id.into();
        return mistaken(edit_page(&app, &admin, &client).await.with("client", typed), m);
    }
    match operations::update_client(&app, &admin.actor(), &id, input(&params, false, None)).await {
        // A change to a method with a secret made one: shown once, like a rotation.
        Ok((client, Some(secret))) => secret_page(&admin, &client.meta.client_id, &secret, false),
        Ok(_) => see_other(app.base(), &format!("/console/clients/{}?done=saved", enc(&id))),
        Err(e) => {
            let mut typed = typed(&params);
            typed["client_id"] = id.into();
            refused(edit_page(&app, &admin, &client).await.with("client", typed), &e)
        }
    }
}

pub async fn rotate_secret(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
    match operations::rotate_secret(&app, &admin.actor(), &id).await {
        Ok((_, secret)) => secret_page(&admin, &id, &secret, false),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => not_found(),
        Err(e) => match app.registry().client(&id) {
            Some(client) => refused(edit_page(&app, &admin, &client).await, &e),
            None => super::failed(&e),
        },
    }
}

pub async fn delete(app: Issuer, Id(id): Id, Change { admin, .. }: Change) -> Response {
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
