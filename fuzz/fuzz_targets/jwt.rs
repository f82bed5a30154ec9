#![no_main]
//! Verification of presented JWTs: access tokens, our JWTs, id_token_hint. The body, and what it asserts, is `authrim::fuzzing::jwt`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::jwt(data));
