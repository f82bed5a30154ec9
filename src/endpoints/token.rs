//! `POST /token` (RFC 6749 §3.2): authenticate the client, pick the grant handler, answer with
//! tokens and `Cache-Control: no-store` (RFC 6749 §5.1).

use crate::error::OAuthError;
use crate::http::cors::ServedClient;
use crate::http::params::FormParams;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Response extension naming the grant type, for the per-grant metrics.
#[derive(Clone, Copy, Debug)]
pub struct GrantTypeLabel(pub &'static str);

pub async fn token(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut grant: &'static str = "";
    let mut served = None;
    let mut res = match handle(&app, &headers, cert.as_ref(), form, &mut grant, &mut served).await {
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
    cert: Option<&ClientCertificate>,
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
    let client = crate::client_auth::authenticate(app, headers, &params, "/token", cert).await?;
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
    // RFC 8705 §3: the client's tokens are bound to the certificate of this request.
    let x5t = match (client.meta.mtls.tls_client_certificate_bound_access_tokens, cert) {
        (true, Some(cert)) => Some(cert.thumbprint()),
        (true, None) => return Err(OAuthError::invalid_request("this client's tokens are bound to its TLS client certificate: present one")),
        (false, _) => None,
    };
    // FAPI 1.0 Part 2 §5.2.2 items 5-6 (fapi-ciba): bound to the certificate, DPoP or not. A
    // client registered before its tenant was held to the profile gets here without the flag.
    if x5t.is_none() && app.profile().requires_certificate_bound(&client) {
        return Err(OAuthError::unauthorized_client(
            "this server's security profile (FAPI-CIBA) issues only certificate-bound access tokens: the client must register tls_client_certificate_bound_access_tokens",
        ));
    }
    // FAPI 2.0 §5.3.2.1: sender-constrained by DPoP or by mTLS; a client that registered
    // dpop_bound_access_tokens itself always needs a proof.
    let constrained_by_certificate = x5t.is_some() && !client.meta.dpop_bound_access_tokens;
    if proof.is_none() && !constrained_by_certificate && app.profile().requires_dpop(&client) {
        // RFC 9449 §5.2: refused. A missing proof is not an invalid one (invalid_dpop_proof,
        // §5), so the plain RFC 6749 §5.2 code (issue 34).
        return Err(OAuthError::invalid_request("this client's tokens must be DPoP-bound: send a DPoP proof"));
    }
    let holder = crate::grants::Holder { dpop: proof.as_deref(), x5t: x5t.as_deref() };
    let tokens = handler.exchange(app, &client, &params, holder).await?;
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
