//! Identity Assertion JWT Authorization Grants (ID-JAG, `typ` oauth-id-jag+jwt): the
//! authorization server's half (`grants::id_jag` is the identity provider's). Beyond the
//! shared checks, an ID-JAG names the client it was issued for (`client_id`, which must be
//! the one presenting it), may carry the scope and resources the user allowed (ceilings for
//! the request), and the sign-in time.

use super::checks::{self, Expect, Subject};
use super::{Accepted, Presented};
use crate::error::OAuthResult;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize)]
struct IdJag {
    sub: String,
    client_id: String,
    jti: String,
    exp: u64,
    iat: u64,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    resource: Option<Value>,
    #[serde(default)]
    auth_time: Option<u64>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    email_verified: Option<bool>,
}

pub(super) async fn accept(p: &Presented<'_>) -> OAuthResult<Accepted> {
    let Presented { app, client, issuer, params, .. } = *p;
    // The draft addresses an ID-JAG to the authorization server's issuer identifier alone.
    let audiences = [app.issuer().to_string()];
    let expect = Expect { required: &["exp", "iat", "iss", "aud", "sub", "jti"], audiences: &audiences, expired: "invalid_grant" };
    let jag: IdJag = checks::verify(p, expect).await?;
    checks::check_times(app, jag.exp, Some(jag.iat))?;
    if jag.client_id != client.id() {
        return Err(checks::refused("the assertion was issued for another client"));
    }
    checks::spend_jti(app, "id-jag", issuer, &jag.jti, jag.exp).await?;
    let subject = Subject { sub: &jag.sub, email: jag.email.as_deref(), email_verified: jag.email_verified };
    let user = checks::map_subject(app, issuer, &subject)?;

    let resources = crate::grants::allowed_targets_from(app, client, &asserted_resources(&jag), params.get_all("resource"))?;
    // The request's scope, or without one the assertion's.
    let Some(wanted) = params.get("scope").or(jag.scope.as_deref()) else {
        return Err(crate::error::OAuthError::invalid_scope("neither the request nor the assertion names a scope"));
    };
    let scope = checks::granted_scope(app, client, issuer, &resources, jag.scope.as_deref(), wanted)?;
    Ok(Accepted {
        user,
        scope,
        auth_time: jag.auth_time,
        event: "id_jag_accepted",
        detail: json!({"iss": issuer.issuer, "sub": jag.sub, "jti": jag.jti, "audience": resources}),
        resources,
    })
}

fn asserted_resources(jag: &IdJag) -> Vec<String> {
    match &jag.resource {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}
