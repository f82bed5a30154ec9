#![no_main]
//! Client authentication at /token, /revoke, /introspect, Basic decoding included. The body, and what it asserts, is `authrim::fuzzing::client_auth`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::client_auth(data));
