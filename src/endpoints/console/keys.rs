//! Signing and encryption keys in the console: each key's algorithm, state and dates; a rotation per
//! algorithm (the new key is published at once and signs after `key_publish_delay`).

use super::{failed, notice, when, Change, Viewer};
use crate::endpoints::first_party::see_other;
use crate::endpoints::operations;
use crate::tenant::Issuer;
use axum::extract::RawQuery;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let tenant = app.tenant.id;
    let rows = app
        .db
        .read(move |sql| {
            sql.query(
                "SELECT kid, alg, state, created_at, activated_at, retired_at FROM signing_keys WHERE tenant_id = ?1 ORDER BY created_at DESC LIMIT 100",
                crate::params![tenant],
            )
        })
        .await;
    let rows = match rows {
        Ok(r) => r,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let keys: Vec<Value> = rows
        .iter()
        .map(|r| {
            let t = |i| r.i64(i).map_or(String::new(), |v| when(v as u64));
            json!({"kid": r.text(0).unwrap_or_default(), "alg": r.text(1).unwrap_or_default(), "state": r.text(2).unwrap_or_default(), "created": t(3), "activated": t(4), "retired": t(5)})
        })
        .collect();
    let mut page = viewer
        .page("console_keys.html", "console-keys", "keys")
        .with("keys", keys)
        .with("algs", app.keys().algorithms())
        // The encryption keys (what request objects are encrypted to) rotate the same way.
        .with("enc_algs", crate::keys::ENCRYPTION_KEY_ALGS)
        .with("publish_delay", app.config.key_publish_delay);
    if let Some(n) = notice(query.as_deref()) {
        page = page.msg("notice", n);
    }
    page.into_response()
}

pub async fn rotate(app: Issuer, Change { admin, params }: Change) -> Response {
    let alg = params.get("alg").unwrap_or_default().to_string();
    match operations::rotate_key(&app, &admin.actor(), &alg).await {
        Ok(_) => see_other(app.base(), "/console/keys?done=rotated"),
        Err(e) => failed(&e),
    }
}
