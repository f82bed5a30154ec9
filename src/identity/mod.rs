//! Where users come from besides an operator's hand: upstream identity providers (OpenID
//! Connect or plain OAuth 2.0, `upstream`), and LDAP or Active Directory directories that
//! check a typed password themselves (`ldap`), whose identities are linked to our users
//! (`links`). A new provider or directory is configuration (`config::upstreams`,
//! `config::ldap`), not code.

pub mod ldap;
pub mod links;
pub mod upstream;
