//! Authrim: an OpenID Connect Provider.
//!
//! Layers, from the wire inwards: `http` (the axum shell: routing, extractors, pages, server),
//! `endpoints` (one module per endpoint), `grants` (one module per grant type), `tokens`
//! (JWT claims), `keys` (KeyManager), `registry` (clients, users, consents: cached in memory),
//! `stores` (the sharded state stores), `db` (SQLite with its group-commit journal, or
//! PostgreSQL), `node_sync` (how a PostgreSQL node follows the others).

pub mod app;
pub mod audit;
pub mod bounded;
pub mod ciba;
pub mod client_auth;
pub mod cli;
pub mod config;
pub mod consent;
pub mod db;
pub mod dpop;
pub mod endpoints;
pub mod error;
pub mod factors;
/// Fuzz-target bodies (for `fuzz/` and the unit tests); not an API.
#[doc(hidden)]
pub mod fuzzing;
pub mod grants;
pub mod http;
pub mod identity;
pub mod keys;
pub mod logout;
pub mod mail;
pub mod metrics;
pub mod node_sync;
pub mod profile;
pub mod provisioning;
pub mod ratelimit;
pub mod registry;
pub mod resources;
pub mod saml;
pub mod scim;
pub mod stores;
pub mod tenant;
pub mod tokens;
pub mod ui;
pub mod util;
