//! One module per endpoint. Handlers are thin: parse, call the grant or store, answer.

pub mod account;
pub mod admin;
pub mod admin_factors;
pub mod admin_openapi;
pub mod authorize;
pub mod check_session;
pub mod console;
pub mod device;
pub mod device_authorization;
pub mod discovery;
pub mod end_session;
pub mod first_party;
pub mod interaction;
pub mod introspection;
pub mod operations;
pub mod par;
pub mod password_reset;
pub mod passkey_login;
pub mod registration;
pub mod revocation;
pub mod second_factor;
pub mod signup;
pub mod testing;
pub mod token;
pub mod upstream_login;
pub mod userinfo;
