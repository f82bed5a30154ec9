//! SAML 2.0's HTTP endpoints (issue 33), per tenant: the IdP's metadata (`metadata`), its
//! single sign-on service (`sso`) and its single logout service (`slo`); and, as a service
//! provider of SAML upstream identity providers, its assertion consumer service and metadata
//! (`acs`). The protocol itself is `crate::saml`; these translate it to the sign-in every
//! client goes through (`authorize::continue_authorization`) and the logout (`end_session`),
//! and back.

pub mod acs;
pub mod metadata;
pub mod slo;
pub mod slo_out;
pub mod sso;

use crate::http::{cookies, pages};
use crate::tenant::Issuer;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;

/// The field that marks a form as posted again by our own page (`repost_for_cookies`).
pub(crate) const REPOSTED: &str = "authrim_reposted";

/// A SAML message posted from another site's page (an SP's, an IdP's) arrives without our
/// cookies: they are SameSite=Lax, which a browser leaves off a cross-site POST, so the
/// session (or the browser binding) would not be found. Without `cookie`, and unless this is
/// already our re-post, answer with our own page posting the same fields to `path` once more:
/// that POST is same-site and carries them. Nothing of the message has been read yet.
pub(crate) fn repost_for_cookies(app: &Issuer, path: &str, headers: &HeaderMap, cookie: &str, params: &[(String, String)]) -> Option<Response> {
    if cookies::get(headers, cookie).is_some() || params.iter().any(|(k, _)| k == REPOSTED) {
        return None;
    }
    let mut fields: Vec<(&str, &str)> = params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    fields.push((REPOSTED, "1"));
    let mut res = pages::form_post(&app.endpoint(path), &fields);
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Some(res)
}
