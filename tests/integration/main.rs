//! Integration tests: each starts the real server on an ephemeral port (in-process, or as a
//! real process where a crash is part of the test).

mod account_access;
mod admin;
mod algorithms;
mod authorize;
mod client_jwt;
mod consent;
mod console;
mod cors;
mod crash;
mod demo;
mod disk_full;
mod documents;
mod dpop;
mod exchange;
mod form_post;
mod fuzz_endpoints;
mod harness;
mod id_jag;
mod json_errors;
mod lockout;
mod logout;
mod mail;
mod multinode;
mod openidconnect_rp;
mod pairwise;
mod pages;
mod par;
mod passkeys;
mod ops;
#[path = "../common/postgres.rs"]
mod pg_cluster;
mod preauth;
mod refresh;
mod registration;
mod request_object;
mod resources;
mod second_factor;
mod signup;
mod signup_abuse;
mod revocation;
mod slow_clients;
mod throttle;
mod token;
mod upstream;
mod userinfo;
