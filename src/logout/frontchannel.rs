//! Front-Channel Logout 1.0: the end-session page loads each relying party's
//! `frontchannel_logout_uri` in an iframe, so that the RP can clear its own cookies in the
//! user's browser, and moves on once they have loaded. Only URIs that pass the fetcher's
//! address policy (`fetch::check_target`) are rendered.

use crate::stores::Session;
use crate::tenant::Issuer;

/// The iframe URLs for the clients of `session` that registered a front-channel URI, with
/// `iss` and `sid` added to each (§2: required when the client asks for them; always sent,
/// since neither is a secret and an RP that keeps several sessions needs them).
pub fn iframe_urls(app: &Issuer, session: &Session) -> Vec<String> {
    session
        .clients
        .iter()
        .filter_map(|id| app.client(id))
        .filter_map(|c| c.meta.frontchannel_logout_uri.clone())
        // The page makes the user's browser load these: under the server's address policy,
        // so that a client registered before the policy (or edited in the database) cannot
        // point the browser at a host inside its network. Registration refuses them first.
        .filter(|uri| crate::http::fetch::check_target(uri, app.config.fetch_allow_private_addresses).is_ok())
        .filter_map(|uri| {
            let mut url = url::Url::parse(&uri).ok()?;
            url.query_pairs_mut().append_pair("iss", app.issuer()).append_pair("sid", &session.sid);
            Some(url.to_string())
        })
        .collect()
}
