//! Integration tests: each starts the real server on an ephemeral port (in-process, or as a
//! real process where a crash is part of the test).

mod admin;
mod authorize;
mod crash;
mod exchange;
mod fuzz_endpoints;
mod harness;
mod multinode;
mod openidconnect_rp;
mod ops;
#[path = "../common/postgres.rs"]
mod pg_cluster;
mod refresh;
mod revocation;
mod token;
mod userinfo;
