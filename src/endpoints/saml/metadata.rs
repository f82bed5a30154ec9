//! `GET /saml/metadata`: the tenant's IdP metadata, signed (`saml::metadata`). Signing costs
//! an RSA signature, so a document is made once and served until a quarter of its validity
//! has passed or the tenant's keys change: an unauthenticated client cannot make the server
//! sign at will.

use crate::saml;
use crate::tenant::{Issuer, TenantId};
use crate::util::now;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// Made documents by tenant: (made at, the key ids it lists, the document).
type Made = (u64, Vec<String>, Arc<str>);
static MADE: LazyLock<Mutex<HashMap<TenantId, Made>>> = LazyLock::new(Default::default);
const MAX_TENANTS_CACHED: usize = 4096;

pub async fn get(app: Issuer) -> Response {
    // The listed encryption keys' kids too (a retired one leaves the document).
    let enc = app.keys().rsa_encryption_keys().into_iter().filter(|(state, _, _)| *state != "retired").map(|(_, kid, _)| kid);
    let kids: Vec<String> = app.keys().rsa_keys().iter().map(|(_, k)| k.kid.clone()).chain(enc).collect();
    let t = now();
    let cached = MADE.lock().get(&app.tenant.id).filter(|(at, k, _)| *k == kids && t < at + saml::metadata::VALID_FOR / 4).map(|(_, _, d)| d.clone());
    let doc = match cached {
        Some(d) => d,
        None => {
            let keys = app.clone();
            let made = tokio::task::spawn_blocking(move || saml::metadata::document(keys.keys(), keys.issuer(), t)).await;
            let doc: Arc<str> = match made {
                Ok(Ok(d)) => d.into(),
                Ok(Err(e)) => return unavailable(&e.to_string()),
                Err(e) => return unavailable(&e.to_string()),
            };
            let mut m = MADE.lock();
            if m.len() >= MAX_TENANTS_CACHED {
                m.clear();
            }
            m.insert(app.tenant.id, (t, kids, doc.clone()));
            doc
        }
    };
    let mut res = (StatusCode::OK, doc.to_string()).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/samlmetadata+xml"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    res
}

fn unavailable(why: &str) -> Response {
    tracing::error!(error = why, "SAML metadata not made");
    (StatusCode::SERVICE_UNAVAILABLE, "SAML metadata is unavailable: see the server's log").into_response()
}
