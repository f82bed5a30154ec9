//! The e-mail notifier: a message through the mail outbox (`crate::mail`) with the client's
//! name, the binding message and a link to the account page, where the user approves or
//! denies. Only for users with an address, when `smtp_url` and `ciba_notify_mail` are set;
//! counted per recipient (`mail_max_per_recipient`) like every mail a request of someone
//! else's causes, so a client cannot flood an inbox: past the limit the request still waits
//! on the account page, unannounced.

use super::{client_name, Notifier};
use crate::registry::{Client, User};
use crate::stores::ciba::{CibaRequest, Hook};
use crate::tenant::Issuer;
use crate::util::now;
use serde_json::json;

pub struct MailNotifier;

impl Notifier for MailNotifier {
    fn name(&self) -> &'static str {
        "mail"
    }

    fn notify(&self, app: &Issuer, user: &User, client: &Client, request: &CibaRequest) -> Option<Hook> {
        if !app.config.ciba_notify_mail || app.mailer.is_none() {
            return None;
        }
        let to = user.email()?.to_string();
        if !app.mail_limiter.allow(&to, now()) {
            tracing::info!(client = %client.id(), "CIBA request not mailed: the recipient's limit is reached");
            return None;
        }
        let values = json!({
            "link": format!("{}#requests", app.endpoint("/account")),
            "client": client_name(client),
            "binding_message": request.binding_message.clone().unwrap_or_default(),
        });
        let (subject, sealed) = crate::mail::compose(app, &crate::mail::language_of(app, user), "mail-ciba-subject", "mail_ciba.txt", values);
        let tenant = app.tenant.id;
        Some(Box::new(move |sql| crate::mail::enqueue(sql, tenant, &to, &subject, sealed)))
    }
}
