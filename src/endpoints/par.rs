//! `POST /par` (RFC 9126): a client pushes its authorization request over an authenticated
//! back channel and gets a `request_uri` to send the browser to `/authorize` with. The
//! request is checked exactly as `/authorize` would check it, but errors are answered here,
//! as JSON (§2.3), since there is no browser to redirect.

use super::authorize::{pushed, request};
use crate::error::OAuthError;
use crate::http::params::FormParams;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn par(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut res = match handle(&app, &headers, cert.as_ref(), form).await {
        Ok((request_uri, expires_in)) => {
            let mut res = (StatusCode::CREATED, axum::Json(json!({"request_uri": request_uri, "expires_in": expires_in}))).into_response();
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => e.into_response(),
    };
    crate::dpop::offer_nonce(&app, &mut res);
    res
}

async fn handle(app: &Issuer, headers: &HeaderMap, cert: Option<&ClientCertificate>, form: Result<FormParams, OAuthError>) -> Result<(String, u64), OAuthError> {
    let FormParams(params) = form?;
    // The request itself within /authorize's bound (RFC 9126 §2.3: 413), checked before any
    // work is done for it; client authentication is not part of the request.
    let max = app.config.max_authorization_request_bytes;
    if params.encoded_len_without(CLIENT_AUTHENTICATION) > max {
        return Err(too_large(max));
    }
    // RFC 9449 §10.1: a DPoP proof sent with the push binds the code to its key. Checked
    // before the client is authenticated, as at /token: a proof refused for its nonce must not
    // spend the client's assertion, which the client sends again with the nonce.
    let expected = crate::dpop::Expected { method: "POST", url: &app.endpoint("/par"), access_token: None };
    let proof = crate::dpop::check(app, headers, &expected)?;
    let client = crate::client_auth::authenticate(app, headers, &params, "/par", cert).await?;
    // §2.1: a request_uri cannot itself be pushed.
    if params.contains("request_uri") {
        return Err(OAuthError::invalid_request("request_uri is not allowed in a pushed request"));
    }
    // The authenticated client is the request's client, whether or not it named itself.
    let mut params = params;
    params.set("client_id", client.id());
    let params = params;
    let mut req = request::read(app, &params, request::Via::Pushed).await.map_err(|rejection| match rejection {
        request::Rejection::Page(message) => OAuthError::invalid_request(message),
        request::Rejection::Unredirectable(error) => error,
        request::Rejection::Redirect { error, .. } => *error,
    })?;
    // Applied to the request as read (a signed request object's parameters replace the
    // form's, so setting the form's dpop_jkt would be lost).
    if let Some(proof) = &proof {
        if req.dpop_jkt.as_ref().is_some_and(|j| *j != proof.jkt) {
            return Err(OAuthError::invalid_request("dpop_jkt differs from the DPoP proof's key").code_as("invalid_dpop_proof"));
        }
        req.dpop_jkt = Some(proof.jkt.clone());
    }
    // Nothing is kept: the request_uri is the sealed request (see `pushed`), so a public
    // client, which authenticates with nothing, cannot fill memory or disk by pushing.
    let request_uri = pushed::push(app, &req).ok_or_else(|| too_large(max))?;
    proof.map(crate::dpop::Proof::keep);
    Ok((request_uri, app.config.pushed_request_ttl))
}

/// The parameters that authenticate the client rather than describe the request.
const CLIENT_AUTHENTICATION: &[&str] = &["client_secret", "client_assertion", "client_assertion_type"];

fn too_large(max: usize) -> OAuthError {
    OAuthError::invalid_request(format!("the authorization request is larger than {max} bytes")).with_status(StatusCode::PAYLOAD_TOO_LARGE)
}
