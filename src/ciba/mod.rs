//! CIBA's authentication device: how a user hears that a client asks them to approve a
//! backchannel authentication request (`endpoints::ciba`), and how a ping client hears the
//! answer (`ping`) and a push client receives it (`push`).
//!
//! The user answers on the account page (`endpoints::account::requests`), which lists every
//! request waiting for them: that works with no notifier at all. A `Notifier` tells the user
//! that one is waiting, through some channel of its own. Each is a module; `notifiers` is the
//! list the endpoint runs. A notifier does not send anything on the request path: it returns
//! SQL to run in the transaction that stores the request (a row of an outbox, which a
//! deliverer sends later), so a request that was not stored notifies nobody and a stored one
//! is never left unannounced by a crash. docs/ciba.md says how to plug in a phone app.

pub mod hook;
pub mod mail;
pub mod ping;
pub mod push;
pub mod user_code;

use crate::registry::{Client, User};
use crate::stores::ciba::{CibaRequest, Hook};
use crate::tenant::Issuer;

/// One way of telling a user that a request waits for them.
pub trait Notifier: Send + Sync {
    /// A name for the logs.
    fn name(&self) -> &'static str;
    /// What to write, in the transaction that stores `request`, so that `user` is told;
    /// `None` when this notifier has nothing to say to this user (no address, turned off).
    fn notify(&self, app: &Issuer, user: &User, client: &Client, request: &CibaRequest) -> Option<Hook>;
}

/// The notifiers this server runs, in order.
pub fn notifiers() -> &'static [&'static dyn Notifier] {
    &[&mail::MailNotifier, &hook::HookNotifier]
}

/// Every notifier's SQL for `request`, as one hook.
pub fn announce(app: &Issuer, user: &User, client: &Client, request: &CibaRequest) -> Hook {
    let hooks: Vec<Hook> = notifiers().iter().filter_map(|n| n.notify(app, user, client, request)).collect();
    Box::new(move |sql| {
        for h in hooks {
            h(sql)?;
        }
        Ok(())
    })
}

/// The name a user is shown for `client`: its registered name, else its id.
pub fn client_name(client: &Client) -> String {
    client.meta.client_name.clone().unwrap_or_else(|| client.id().to_string())
}
