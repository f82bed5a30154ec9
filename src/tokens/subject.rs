//! Subject identifiers (OpenID Connect Core §8): `public` (the user's id, the same for every
//! client) or `pairwise` (a different, unlinkable value per sector, so that two clients
//! cannot join their users by `sub`).
//!
//! A pairwise `sub` is HMAC-SHA256(key derived from the KEK for the tenant, sector ‖ user id):
//! stable, not reversible, and unlinkable across tenants too. Where Authrim itself must find the user again from a token it issued to a
//! pairwise client (an access token at userinfo, introspection, token exchange), the token
//! also carries `uid`: the user id sealed under the KEK with a fresh nonce, opaque to the
//! client and different in every token, so it links nothing either; sealed for the tenant, so
//! it opens in no other.

use crate::registry::Client;
use crate::tenant::Issuer;
use crate::util::{b64, b64_decode};

pub const PAIRWISE: &str = "pairwise";
const SEAL_LABEL: &str = "access-token-subject";

/// The sector of a pairwise client (OIDC Core §8.1): the host of its
/// `sector_identifier_uri`, else of its redirect URIs (validated to be one host). `None` for
/// a public-subject client.
pub fn sector(client: &Client) -> Option<String> {
    if client.meta.subject_type.as_deref() != Some(PAIRWISE) {
        return None;
    }
    let from = client.meta.sector_identifier_uri.as_deref().or(client.meta.redirect_uris.first().map(String::as_str))?;
    url::Url::parse(from).ok()?.host_str().map(str::to_string)
}

/// The `sub` that `client` knows `user_id` by.
pub fn subject(app: &Issuer, client: Option<&Client>, user_id: &str) -> String {
    match client.and_then(sector) {
        None => user_id.to_string(),
        Some(sector) => {
            let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &app.tenant.pairwise_key);
            let mut ctx = aws_lc_rs::hmac::Context::with_key(&key);
            ctx.update(sector.as_bytes());
            ctx.update(&[0x1f]);
            ctx.update(user_id.as_bytes());
            b64(ctx.sign().as_ref())
        }
    }
}

/// The `sub` that the client `client_id` knows `user_id` by (a registry lookup).
pub fn subject_for(app: &Issuer, client_id: &str, user_id: &str) -> String {
    subject(app, app.client(client_id).as_deref(), user_id)
}

/// The label a `uid` is sealed under: the tenant's (the default tenant's is the label every
/// token had before tenants, so tokens in flight at an upgrade still open).
fn seal_label(app: &Issuer) -> std::borrow::Cow<'static, str> {
    match app.tenant.id.is_default() {
        true => SEAL_LABEL.into(),
        false => format!("{SEAL_LABEL}/{}", app.tenant.id.0).into(),
    }
}

/// `user_id` sealed for an access token's `uid` claim.
pub fn seal_user(app: &Issuer, user_id: &str) -> String {
    b64(&app.vault().seal(&seal_label(app), user_id.as_bytes()))
}

/// The user id sealed in a `uid` claim, if it is one of ours (this tenant's).
pub fn open_user(app: &Issuer, sealed: &str) -> Option<String> {
    let raw = b64_decode(sealed)?;
    String::from_utf8(app.vault().open_sealed(&seal_label(app), &raw).ok()?).ok()
}
