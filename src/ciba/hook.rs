//! The HTTP hook notifier: a JSON notice of each request POSTed to `ciba_notify_hook_url`, for
//! a push service the operator runs (a phone app's backend), which tells the user's phone;
//! the app then opens the account page, where the user answers (docs/ciba.md).
//!
//! The notice rides the back-channel outbox (rows of kind `ciba_hook`), written in the
//! transaction that stores the request, so it is sent after the commit, at least once, with
//! the outbox's retries, timeout and address policy (the fetcher's: a hook on a private
//! address needs `fetch_allow_private_addresses`). It carries who is asked, by which
//! application, the binding message, until when and where to answer, never the
//! `auth_req_id` (the client's secret); sealed under the key-encryption key until sent, as it
//! names a user.

use super::{client_name, Notifier};
use crate::db::Sql;
use crate::http::fetch::FetchError;
use crate::logout::backchannel::{Deliverer, Due, Sending};
use crate::registry::{Client, User};
use crate::stores::ciba::{CibaRequest, Hook};
use crate::tenant::Issuer;
use crate::util::now;
use serde_json::json;
use std::time::Duration;

/// The outbox rows of this kind are notices to the hook.
pub const KIND: &str = "ciba_hook";
const LABEL: &str = "ciba-hook";

pub struct HookNotifier;

impl Notifier for HookNotifier {
    fn name(&self) -> &'static str {
        "hook"
    }

    fn notify(&self, app: &Issuer, user: &User, client: &Client, request: &CibaRequest) -> Option<Hook> {
        app.config.ciba_notify_hook_url.as_deref().filter(|u| !u.is_empty())?;
        let notice = json!({
            "event": "ciba_request",
            "issuer": app.issuer(),
            "user_id": user.id,
            "username": user.username,
            "client_id": client.id(),
            "client_name": client_name(client),
            "binding_message": request.binding_message,
            "scope": request.scope,
            "expires_at": request.expires_at,
            "answer_at": format!("{}#requests", app.endpoint("/account")),
        });
        let sealed = app.vault().seal(LABEL, notice.to_string().as_bytes());
        let (client_id, user_id, tenant) = (client.id().to_string(), user.id.clone(), app.tenant.id);
        Some(Box::new(move |sql: &mut dyn Sql| crate::logout::backchannel::enqueue_other(sql, tenant, KIND, &client_id, &user_id, sealed, now())))
    }
}

/// The outbox's deliverer of notices: to the deployment's `ciba_notify_hook_url`. A row that
/// cannot be opened never will be; a refusal is retried (the push service's, not a client's).
pub struct Notices;

impl Deliverer for Notices {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND]
    }

    fn endpoint(&self, app: &Issuer, _row: &Due) -> Option<String> {
        app.config.ciba_notify_hook_url.clone().filter(|u| !u.is_empty())
    }

    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(send(app, uri, row.payload.as_deref(), timeout))
    }

    fn our_error_is_final(&self) -> bool {
        true
    }

    fn refusal_is_final(&self) -> bool {
        false
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("ciba_notice_delivered", "ciba_notice_abandoned")
    }
}

/// Send one notice.
async fn send(app: &crate::app::App, uri: &str, sealed: Option<&[u8]>, timeout: Duration) -> Result<Result<(), FetchError>, String> {
    let notice: serde_json::Value = sealed
        .and_then(|s| app.vault.open_sealed(LABEL, s).ok())
        .and_then(|p| serde_json::from_slice(&p).ok())
        .ok_or("the notice in the outbox cannot be opened")?;
    Ok(app.fetcher.post_json(uri, &notice, None, timeout).await)
}
