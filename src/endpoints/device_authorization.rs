//! `POST /device_authorization` (RFC 8628 §3.1, §3.2): a device without a browser (a TV, a
//! command line, an agent) asks for a device code to poll `/token` with and a user code for
//! its user to enter at the verification page (`endpoints::device`).
//!
//! The client authenticates as at `/token` (a public client with its `client_id` alone) and
//! must be registered for the grant. Public clients reach this endpoint without any secret, so
//! what it stores is bounded: per client (`device_max_pending_per_client`) and in all
//! (`device_max_pending`), counted over the requests still waiting for their user.

use crate::error::OAuthError;
use crate::grants::device_code::GRANT_TYPE;
use crate::http::cors::ServedClient;
use crate::http::params::FormParams;
use crate::registry::Client;
use crate::stores::device::{display_user_code, DeviceRequest, Issued, Limits};
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use crate::util::{now, split_list};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub const PATH: &str = "/device_authorization";

pub async fn device_authorization(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut served = None;
    let result = handle(&app, &headers, cert.as_ref(), form, &mut served).await;
    answer(result, served, "device authorization refused")
}

/// The JSON answer of a client's request for a grant to come (`no-store`), or its error, marked
/// with the client it served (CORS).
pub(crate) fn answer(result: Result<serde_json::Value, OAuthError>, served: Option<ServedClient>, refused: &'static str) -> Response {
    let mut res = match result {
        Ok(body) => {
            let mut res = axum::Json(body).into_response();
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => {
            tracing::debug!(error = e.code, description = %e.description, "{refused}");
            e.into_response()
        }
    };
    if let Some(client) = served {
        res.extensions_mut().insert(client);
    }
    res
}

async fn handle(app: &Issuer, headers: &HeaderMap, cert: Option<&ClientCertificate>, form: Result<FormParams, OAuthError>, served: &mut Option<ServedClient>) -> Result<serde_json::Value, OAuthError> {
    let FormParams(params) = form?;
    let client = crate::client_auth::authenticate(app, headers, &params, PATH, cert).await?;
    *served = Some(ServedClient(client.clone()));
    if !client.allows_grant(GRANT_TYPE) {
        return Err(OAuthError::unauthorized_client("this client is not registered for the device authorization grant"));
    }
    // Every authorization of such a client is for an organization, and this grant has no way
    // to ask which (issue 31): refused rather than tokens for none.
    if client.meta.organization_required {
        return Err(OAuthError::unauthorized_client("this client needs an organization, which this grant cannot give"));
    }
    let resources = crate::resources::allowed(app, &client, params.get_all("resource"))?;
    let scope = requested_scope(app, &client, &resources, params.get("scope"))?;
    let mut acr_values: Vec<String> = params.get("acr_values").map(split_list).into_iter().flatten().map(str::to_string).collect();
    if acr_values.is_empty() {
        acr_values = client.meta.default_acr_values.clone();
    }
    let ttl = app.config.device_code_ttl;
    let request = DeviceRequest { client_id: client.id().to_string(), scope, resources, acr_values, expires_at: now() + ttl };
    let limits = Limits { per_client: app.config.device_max_pending_per_client, total: app.config.device_max_pending };
    let interval = app.config.device_poll_interval;
    let (device_code, user_code) = match app.stores.device.issue(app.tenant.id, request, interval, limits).await? {
        Issued::Codes { device_code, user_code } => (device_code, user_code),
        Issued::Full => {
            return Err(OAuthError::temporarily_unavailable("too many device authorization requests are waiting for their users; try again later"))
        }
    };
    let shown = display_user_code(&user_code);
    let verification_uri = app.endpoint(crate::endpoints::device::PAGE);
    let complete = format!("{verification_uri}?user_code={shown}");
    Ok(json!({
        "device_code": device_code,
        "user_code": shown,
        "verification_uri": verification_uri,
        "verification_uri_complete": complete,
        "expires_in": ttl,
        "interval": interval,
    }))
}

/// The scope asked for, each value one the client may have (RFC 6749 §5.2: otherwise
/// `invalid_scope`); none asked for: the client's registered scope (RFC 6749 §3.3's
/// pre-defined default).
pub(crate) fn requested_scope(app: &Issuer, client: &Client, resources: &[String], scope: Option<&str>) -> Result<String, OAuthError> {
    let mut kept: Vec<&str> = Vec::new();
    match scope {
        Some(asked) => {
            for s in split_list(asked) {
                if !crate::resources::allows_scope(app, client, s, resources) {
                    return Err(OAuthError::invalid_scope(format!("scope {s:?} is not available to this client")));
                }
                if !kept.contains(&s) {
                    kept.push(s);
                }
            }
        }
        None => kept.extend(split_list(&client.meta.scope)),
    }
    if kept.is_empty() {
        return Err(OAuthError::invalid_scope("no scope was asked for and the client has none registered"));
    }
    Ok(kept.join(" "))
}
