//! Where users come from besides an operator's hand: upstream identity providers (OpenID
//! Connect or plain OAuth 2.0, `upstream`), whose identities are linked to our users
//! (`links`). A new provider is configuration (`config::upstreams`), not code.

pub mod links;
pub mod upstream;
