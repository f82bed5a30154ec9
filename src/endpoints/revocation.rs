//! `POST /revoke` (RFC 7009). The client authenticates; `token_type_hint` only decides which
//! kind is tried first. Unknown, expired or already-invalid tokens answer 200. A client may
//! revoke only its own tokens (§2.1): anyone else's is refused, and nothing is revoked.

use crate::audit::AuditEvent;
use crate::error::OAuthError;
use crate::grants::refresh_token::revoke_family;
use crate::http::cors::ServedClient;
use crate::http::params::FormParams;
use crate::stores::Presented;
use crate::http::client_cert::{ClientCertificate, PresentedCertificate};
use crate::tenant::Issuer;
use crate::tokens::verify_access_token;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn revoke(app: Issuer, PresentedCertificate(cert): PresentedCertificate, headers: HeaderMap, form: Result<FormParams, OAuthError>) -> Response {
    let mut served = None;
    let mut res = match handle(&app, &headers, cert.as_ref(), form, &mut served).await {
        Ok(()) => {
            let mut res = StatusCode::OK.into_response();
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => e.into_response(),
    };
    if let Some(client) = served {
        res.extensions_mut().insert(client);
    }
    res
}

/// Which of our token kinds a presented string is.
pub enum Known {
    Access(crate::tokens::AccessTokenClaims),
    Refresh(crate::stores::Family),
    Neither,
}

/// Classify `token`, trying the hinted kind first (RFC 7009 §2.1, RFC 7662 §2.1).
pub async fn classify(app: &Issuer, token: &str, hint: Option<&str>) -> Result<Known, OAuthError> {
    let access = || verify_access_token(app, token).ok().map(Known::Access);
    let refresh = || async {
        match app.stores.refresh.peek(app.tenant.id, token).await {
            Ok(Presented::Current(f)) => Ok(Some(Known::Refresh(f))),
            Ok(_) => Ok(None),
            Err(e) => Err(OAuthError::from(e)),
        }
    };
    if hint == Some("refresh_token") {
        if let Some(k) = refresh().await? {
            return Ok(k);
        }
        return Ok(access().unwrap_or(Known::Neither));
    }
    if let Some(k) = access() {
        return Ok(k);
    }
    Ok(refresh().await?.unwrap_or(Known::Neither))
}

/// `served`: the authenticated client (for CORS), set before anything else can fail.
async fn handle(
    app: &Issuer,
    headers: &HeaderMap,
    cert: Option<&ClientCertificate>,
    form: Result<FormParams, OAuthError>,
    served: &mut Option<ServedClient>,
) -> Result<(), OAuthError> {
    let FormParams(params) = form?;
    let client = crate::client_auth::authenticate(app, headers, &params, "/revoke", cert).await?;
    *served = Some(ServedClient(client.clone()));
    let token = params.require("token")?;
    let not_yours = || OAuthError::unauthorized_client("the token was not issued to this client");
    match classify(app, token, params.get("token_type_hint")).await? {
        Known::Access(claims) => {
            if claims.client_id != client.id() {
                return Err(not_yours());
            }
            if crate::tokens::is_revoked(app, &claims).await? {
                return Ok(()); // already invalid: nothing to do, nothing to record
            }
            app.stores.revocations.revoke(app.tenant.id, &claims.jti, claims.exp).await?;
            app.audit(AuditEvent::new("token_revocation").client(client.id()).user(&claims.sub).detail(json!({"kind": "access_token"})))
                .await;
        }
        Known::Refresh(family) => {
            if family.client_id != client.id() {
                return Err(not_yours());
            }
            revoke_family(app, &family, "revoked_by_client").await?;
            app.audit(AuditEvent::new("token_revocation").client(client.id()).user(&family.user_id).detail(json!({"kind": "refresh_token"})))
                .await;
        }
        Known::Neither => {}
    }
    Ok(())
}
