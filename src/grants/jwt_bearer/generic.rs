//! Generic JWT bearer assertions (RFC 7523 §2.1, §3) from the trusted issuers that allow them
//! (`accept` naming `jwt-bearer`): any assertion not typed as an ID-JAG. RFC 7523 §3 requires
//! `iss`, `sub`, `aud` and `exp`; Authrim also requires `jti`, which RFC 7523 §3 item 7 lets a
//! server insist on, since without it an assertion could be replayed until it expires. `aud`
//! is our issuer identifier or our token endpoint (§3 item 3), each per tenant, so an
//! assertion made for one tenant is refused at another. The assertion carries no scope: the
//! request names it, within the issuer's ceiling and the client's scope.

use super::checks::{self, Expect, Subject};
use super::{Accepted, Presented};
use crate::error::{OAuthError, OAuthResult};
use crate::util::split_list;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Assertion {
    sub: String,
    jti: String,
    exp: u64,
    #[serde(default)]
    iat: Option<u64>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    email_verified: Option<bool>,
}

/// The `typ` values a generic assertion may carry (RFC 7519 §5.1 recommends `JWT`); any other
/// names another kind of JWT (`at+jwt`, `dpop+jwt`, `logout+jwt`...), refused so that no
/// token made for another purpose is taken for a grant (RFC 8725 §3.11).
pub(super) fn typ_is_generic(typ: Option<&str>) -> bool {
    typ.is_none_or(|t| t.eq_ignore_ascii_case("JWT") || t.eq_ignore_ascii_case("application/jwt"))
}

pub(super) async fn accept(p: &Presented<'_>) -> OAuthResult<Accepted> {
    let Presented { app, client, issuer, params, .. } = *p;
    if !typ_is_generic(p.header.typ.as_deref()) {
        return Err(checks::refused("the assertion's typ must be JWT or absent"));
    }
    let audiences = [app.issuer().to_string(), app.endpoint("/token")];
    let expect = Expect { required: &["exp", "iss", "aud", "sub", "jti"], audiences: &audiences, expired: "invalid_grant" };
    let a: Assertion = checks::verify(p, expect).await?;
    checks::check_times(app, a.exp, a.iat)?;
    checks::spend_jti(app, "jwt-bearer", issuer, &a.jti, a.exp).await?;
    let subject = Subject { sub: &a.sub, email: a.email.as_deref(), email_verified: a.email_verified };
    let user = checks::map_subject(app, issuer, &subject)?;

    let resources = crate::grants::allowed_targets_from(app, client, &[], params.get_all("resource"))?;
    // No scope requested: the client's registered scope, within the issuer's ceiling.
    let default_scope;
    let wanted = match params.get("scope") {
        Some(s) => s,
        None => {
            let within = |s: &&str| issuer.scopes.as_ref().is_none_or(|c| c.iter().any(|x| x == s));
            default_scope = split_list(&client.meta.scope).filter(within).collect::<Vec<_>>().join(" ");
            &default_scope
        }
    };
    if split_list(wanted).next().is_none() {
        return Err(OAuthError::invalid_scope("no scope: the request names none and the client has none within the issuer's"));
    }
    let scope = checks::granted_scope(app, client, issuer, &resources, None, wanted)?;
    Ok(Accepted {
        user,
        scope,
        auth_time: None,
        event: "jwt_bearer_accepted",
        detail: json!({"iss": issuer.issuer, "sub": a.sub, "jti": a.jti, "audience": resources}),
        resources,
    })
}
