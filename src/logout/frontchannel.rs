//! Front-Channel Logout 1.0: the end-session page loads each relying party's
//! `frontchannel_logout_uri` in an iframe, so that the RP can clear its own cookies in the
//! user's browser, and moves on once they have loaded.

use crate::app::App;
use crate::stores::Session;

/// The iframe URLs for the clients of `session` that registered a front-channel URI, with
/// `iss` and `sid` added to each (§2: required when the client asks for them; always sent,
/// since neither is a secret and an RP that keeps several sessions needs them).
pub fn iframe_urls(app: &App, session: &Session) -> Vec<String> {
    session
        .clients
        .iter()
        .filter_map(|id| app.client(id))
        .filter_map(|c| c.meta.frontchannel_logout_uri.clone())
        .filter_map(|uri| {
            let mut url = url::Url::parse(&uri).ok()?;
            url.query_pairs_mut().append_pair("iss", app.issuer()).append_pair("sid", &session.sid);
            Some(url.to_string())
        })
        .collect()
}
