//! `POST /token` (RFC 6749 §3.2): authenticate the client, pick the grant handler, answer with
//! tokens and `Cache-Control: no-store` (RFC 6749 §5.1).

use crate::error::OAuthError;
use crate::http::cors::ServedClient;
use crate::http::params::FormParams;
use crate::tenant::Issuer;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Response extension naming the grant type, for the per-grant metrics.
#[derive(Clone, Copy, Debug)]
pub struct GrantTypeLabel(pub &'static str);

pub async fn token(app: Issuer, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut grant: &'static str = "";
    let mut served = None;
    let mut res = match handle(&app, &headers, form, &mut grant, &mut served).await {
        Ok(res) => res,
        Err(e) => {
            tracing::debug!(error = e.code, description = %e.description, "token request refused");
            e.into_response()
        }
    };
    res.extensions_mut().insert(GrantTypeLabel(grant));
    crate::dpop::offer_nonce(&app, &mut res);
    if let Some(client) = served {
        res.extensions_mut().insert(client);
    }
    res
}

/// `grant` and `served` (the authenticated client, for CORS) are set as soon as known, so that
/// an error answer carries them too.
async fn handle(
    app: &Issuer,
    headers: &HeaderMap,
    form: Result<FormParams, OAuthError>,
    grant: &mut &'static str,
    served: &mut Option<ServedClient>,
) -> Result<Response, OAuthError> {
    let FormParams(params) = form?;
    // The DPoP proof before the client: a proof refused for its nonce (RFC 9449 §8) is
    // answered before the client's assertion is spent, so that the client's retry of the same
    // request with the nonce is not refused as a replayed assertion. A proof that passes holds
    // its jti only until the request fails (`Proof`'s drop gives it back).
    let proof = crate::dpop::check(app, headers, &crate::dpop::Expected { method: "POST", url: &app.endpoint("/token"), access_token: None })?;
    let client = crate::client_auth::authenticate(app, headers, &params, "/token").await?;
    *served = Some(ServedClient(client.clone()));
    let grant_type = params.require("grant_type")?;
    let handler = app
        .grants
        .get(grant_type)
        .ok_or_else(|| OAuthError::unsupported_grant_type(format!("grant_type {grant_type:?} is not supported")))?;
    *grant = handler.grant_type();
    if !client.allows_grant(grant_type) {
        return Err(OAuthError::unauthorized_client(format!("this client may not use grant_type {grant_type}")));
    }
    if proof.is_none() && app.profile().requires_dpop(&client) {
        // RFC 9449 §5.2: refused. A missing proof is not an invalid one (invalid_dpop_proof,
        // §5), so the plain RFC 6749 §5.2 code (issue 34).
        return Err(OAuthError::invalid_request("this client's tokens must be DPoP-bound: send a DPoP proof"));
    }
    let tokens = handler.exchange(app, &client, &params, proof.as_deref()).await?;
    // Only now is the proof's jti spent for good (a refused request gives it back).
    proof.map(crate::dpop::Proof::keep);
    // Tokens issued: the client is in use, and a dynamically registered one no longer expires
    // (`registration_unused_client_ttl`). Counted here and not at /authorize: every flow
    // ends here, while a request at /authorize costs nothing and would let whoever floods
    // registration keep its clients alive.
    app.registry().note_client_used(&client).await;
    let mut res = tokens.into_json_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    Ok(res)
}
