//! CIBA's `login_hint_token` (CIBA Core §7.1): a JWT, made by an issuer the operator trusts
//! for it (`trusted_issuers` whose `accept` names `login-hint-token`), that names the user a
//! backchannel authentication request is for. It is checked as an assertion of this grant is
//! (`checks::verify`: the issuer's published keys, `iss`, `aud` our issuer identifier, `exp`
//! with a bounded lifetime, `nbf`, `iat`); only the clients the issuer lists may present it.
//! It grants nothing (the user still approves on their device), so its `jti` is not spent.
//!
//! The user is named by `sub`, mapped by the issuer's `subject` rule as an assertion's is, or
//! by an RFC 9493 subject identifier in `sub_id`: format `iss_sub` (its `iss` the token's,
//! its `sub` our user's id or username) or `email` (a user whose verified address it is).
//! Errors are CIBA's: `expired_login_hint_token`, `unknown_user_id`, else `invalid_request`.

use super::checks::{self, Expect, Subject};
use super::generic::typ_is_generic;
use super::{Claimed, JwtBearerGrant, Presented};
use crate::client_auth::keys::ASYMMETRIC_ALGS;
use crate::client_auth::signed::alg_name;
use crate::config::agents::{AssertionKind, SubjectMapping, TrustedIssuer};
use crate::error::OAuthError;
use crate::http::params::Params;
use crate::registry::{Client, User};
use crate::tenant::Issuer;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

#[derive(Deserialize)]
struct Hint {
    exp: u64,
    #[serde(default)]
    iat: Option<u64>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    sub_id: Option<Value>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    email_verified: Option<bool>,
}

fn invalid(why: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_request(why)
}

/// The checks' own refusals (the assertion's `invalid_grant`) as this endpoint's
/// `invalid_request`; an expiry keeps its code.
fn as_request_error(e: OAuthError) -> OAuthError {
    match e.code {
        "invalid_grant" => invalid(format!("login_hint_token: {}", e.description.replace("the assertion", "the token"))),
        _ => e.with_status(StatusCode::BAD_REQUEST),
    }
}

/// The enabled user `token` names, for `client`.
pub async fn user(grant: &JwtBearerGrant, app: &Issuer, client: &Client, token: &str) -> Result<Arc<User>, OAuthError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("login_hint_token is not a JWS"))?;
    if !ASYMMETRIC_ALGS.contains(&alg_name(header.alg)) || !typ_is_generic(header.typ.as_deref()) {
        return Err(invalid("login_hint_token: its alg or typ is not accepted"));
    }
    // Unverified: only to know whose keys to check it with.
    let claimed: Claimed = jsonwebtoken::dangerous::insecure_decode_claims(token).map_err(|_| invalid("login_hint_token has no iss"))?;
    let issuer = app
        .config
        .trusted_issuer(&claimed.iss)
        .filter(|i| i.accept.contains(&AssertionKind::LoginHintToken))
        .ok_or_else(|| invalid("login_hint_token: its issuer is not trusted for login hints here"))?;
    if issuer.clients.as_ref().is_some_and(|c| !c.iter().any(|id| id == client.id())) {
        return Err(invalid("login_hint_token: this client may not present this issuer's tokens"));
    }
    let params = Params::default();
    let presented = Presented { grant, app, client, issuer, assertion: token, header: &header, params: &params };
    let audiences = [app.issuer().to_string()];
    let expect = Expect { required: &["exp", "iss", "aud"], audiences: &audiences, expired: "expired_login_hint_token" };
    let hint: Hint = checks::verify(&presented, expect).await.map_err(as_request_error)?;
    checks::check_times(app, hint.exp, hint.iat).map_err(as_request_error)?;

    let by = |subject: SubjectMapping| TrustedIssuer { subject, ..issuer.clone() };
    let (rule, subject) = match (&hint.sub_id, &hint.sub) {
        (Some(id), _) => {
            let text = |name: &str| id.get(name).and_then(Value::as_str);
            match text("format") {
                Some("email") => {
                    let email = text("email").ok_or_else(|| invalid("login_hint_token: sub_id of format email has no email"))?;
                    // The issuer asserts the address as the user's identifier.
                    (by(SubjectMapping::Email), Subject { sub: "", email: Some(email), email_verified: Some(true) })
                }
                Some("iss_sub") if text("iss") == Some(issuer.issuer.as_str()) => {
                    let sub = text("sub").ok_or_else(|| invalid("login_hint_token: sub_id of format iss_sub has no sub"))?;
                    (by(SubjectMapping::Sub), Subject { sub, email: None, email_verified: None })
                }
                Some("iss_sub") => return Err(invalid("login_hint_token: sub_id names another issuer")),
                _ => return Err(invalid("login_hint_token: sub_id must have format iss_sub or email")),
            }
        }
        (None, Some(sub)) => (issuer.clone(), Subject { sub, email: hint.email.as_deref(), email_verified: hint.email_verified }),
        (None, None) => return Err(invalid("login_hint_token names no user (sub or sub_id)")),
    };
    checks::map_subject(app, &rule, &subject).map_err(|_| {
        OAuthError::invalid_request("the login_hint_token names no user of this server").code_as("unknown_user_id").with_status(StatusCode::BAD_REQUEST)
    })
}
