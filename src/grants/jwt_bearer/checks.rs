//! The checks every assertion at the `jwt-bearer` grant passes, whichever its kind: the
//! signature against the issuer's published keys, `iss`, `aud`, `exp` with a bounded lifetime,
//! `nbf` and `iat` with leeway, `jti` spent once on every node, the subject mapped to an
//! enabled user, and the scope within every ceiling. The kinds (`id_jag`, `generic`) differ in
//! the claims they require and the `aud` values they accept, not in how these are checked.

use super::Presented;
use crate::client_auth::jwt::LEEWAY;
use crate::config::agents::{SubjectMapping, TrustedIssuer};
use crate::error::{OAuthError, OAuthResult};
use crate::registry::{Client, User};
use crate::tenant::Issuer;
use crate::util::{now, split_list};
use jsonwebtoken::Validation;
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub(super) fn refused(why: impl Into<std::borrow::Cow<'static, str>>) -> OAuthError {
    OAuthError::invalid_grant(why)
}

/// What each kind needs checked: the claims it requires and the audiences it accepts; the
/// error code an expired one gets (CIBA names its own for a login_hint_token).
pub(super) struct Expect<'a> {
    pub required: &'a [&'a str],
    pub audiences: &'a [String],
    pub expired: &'static str,
}

/// The assertion's claims, once its signature verifies with one of `issuer`'s keys and its
/// `iss`, `aud`, `exp` and `nbf` are right.
pub(super) async fn verify<T: DeserializeOwned>(p: &Presented<'_>, expect: Expect<'_>) -> OAuthResult<T> {
    let Presented { grant, app, issuer, assertion, header, .. } = *p;
    let jwks_uri = grant.jwks_uri(app, issuer).await?;
    let keys = app
        .client_keys
        .keys_at(app, &jwks_uri, &issuer.issuer, header.alg, header.kid.as_deref())
        .await
        .map_err(|e| refused(format!("the issuer's keys cannot be had: {e}")))?;
    let mut v = Validation::new(header.alg);
    v.leeway = LEEWAY;
    v.validate_nbf = true;
    v.set_required_spec_claims(expect.required);
    v.set_issuer(&[issuer.issuer.as_str()]);
    v.set_audience(expect.audiences);
    for k in &keys {
        use jsonwebtoken::errors::ErrorKind as K;
        match jsonwebtoken::decode::<T>(assertion, &k.key, &v) {
            Ok(d) => return Ok(d.claims),
            Err(e) if matches!(e.kind(), K::InvalidSignature | K::InvalidAlgorithm | K::InvalidKeyFormat) => continue,
            Err(e) => {
                if matches!(e.kind(), K::ExpiredSignature) {
                    return Err(refused("the assertion has expired").code_as(expect.expired));
                }
                return Err(refused(match e.kind() {
                    K::ImmatureSignature => "the assertion is not yet valid (nbf)".to_string(),
                    K::InvalidAudience => format!("the assertion is not for this server (aud must be {})", expect.audiences.join(" or ")),
                    K::MissingRequiredClaim(c) => format!("the assertion has no {c}"),
                    // A claim the kind needs, absent: serde says which ("missing field `jti`").
                    K::Json(e) => match e.to_string().split('`').nth(1) {
                        Some(c) if e.to_string().starts_with("missing field") => format!("the assertion has no {c}"),
                        _ => "the assertion's claims are malformed".to_string(),
                    },
                    _ => "the assertion is malformed".to_string(),
                }))
            }
        }
    }
    Err(refused("the assertion's signature does not verify with the issuer's keys"))
}

/// `iat` not in the future; `exp` within `client_assertion_max_lifetime`, since the `jti` is
/// remembered until then and a bounded lifetime bounds that memory.
pub(super) fn check_times(app: &Issuer, exp: u64, iat: Option<u64>) -> OAuthResult<()> {
    let t = now();
    if iat.is_some_and(|iat| iat > t + LEEWAY) {
        return Err(refused("the assertion was issued in the future (iat)"));
    }
    let max = app.config.client_assertion_max_lifetime;
    if exp > t + max + LEEWAY {
        return Err(refused(format!("the assertion must expire within {max} seconds")));
    }
    Ok(())
}

/// Spend the assertion's `jti` in the store every node shares; `kind` keeps the kinds'
/// namespaces apart, the issuer keeps issuers' apart.
pub(super) async fn spend_jti(app: &Issuer, kind: &str, issuer: &TrustedIssuer, jti: &str, exp: u64) -> OAuthResult<()> {
    if jti.is_empty() {
        return Err(refused("the assertion has no jti"));
    }
    let key = format!("{kind}\u{1f}{}\u{1f}{jti}", issuer.issuer);
    if !app.stores.challenges.first_use(app.tenant.id, &key, exp + LEEWAY).await? {
        return Err(refused("this assertion was already used (jti)"));
    }
    Ok(())
}

/// Who the assertion speaks for, in the claims the subject mapping reads.
pub(super) struct Subject<'a> {
    pub sub: &'a str,
    pub email: Option<&'a str>,
    pub email_verified: Option<bool>,
}

/// The issuer's rule: a verified e-mail address that one of our users has verified too, or
/// the issuer's `sub` as our user's id or username. Only an enabled user.
pub(super) fn map_subject(app: &Issuer, issuer: &TrustedIssuer, s: &Subject<'_>) -> OAuthResult<Arc<User>> {
    let user = match issuer.subject {
        SubjectMapping::Email => s.email.filter(|_| s.email_verified == Some(true)).and_then(|email| {
            let u = app.registry().user_by_login(email)?;
            let ours = u.claim("email").and_then(|v| v.as_str().map(str::to_string));
            let verified = u.claim("email_verified").and_then(|v| v.as_bool()) == Some(true);
            (ours.is_some_and(|e| e.eq_ignore_ascii_case(email)) && verified).then_some(u)
        }),
        // By id, or by username (not by e-mail: a login name may be either).
        SubjectMapping::Sub => app
            .registry()
            .user(s.sub)
            .or_else(|| app.registry().user_by_login(s.sub).filter(|u| u.username.eq_ignore_ascii_case(s.sub))),
    };
    match user {
        None => Err(refused("the assertion's subject is no user here")),
        Some(u) if u.disabled => Err(refused("the assertion's subject is a disabled account")),
        Some(u) => Ok(u),
    }
}

/// `wanted`, each scope within the assertion's own (`asserted`, an ID-JAG's), the issuer's
/// ceiling and what the client may have for `resources`.
pub(super) fn granted_scope(
    app: &Issuer,
    client: &Client,
    issuer: &TrustedIssuer,
    resources: &[String],
    asserted: Option<&str>,
    wanted: &str,
) -> OAuthResult<String> {
    let mut kept: Vec<&str> = Vec::new();
    for s in split_list(wanted) {
        if asserted.is_some_and(|a| !split_list(a).any(|x| x == s)) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} is beyond the assertion's")));
        }
        if issuer.scopes.as_ref().is_some_and(|c| !c.iter().any(|x| x == s)) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} is beyond what {}'s assertions may obtain here", issuer.issuer)));
        }
        if !crate::resources::allows_scope(app, client, s, resources) {
            return Err(OAuthError::invalid_scope(format!("scope {s:?} is not allowed for this client")));
        }
        if !kept.contains(&s) {
            kept.push(s);
        }
    }
    if kept.is_empty() {
        return Err(OAuthError::invalid_scope("empty scope"));
    }
    Ok(kept.join(" "))
}
