//! Integration tests: each starts the real server on an ephemeral port.

mod admin;
mod authorize;
mod harness;
mod ops;
mod token;
mod userinfo;
