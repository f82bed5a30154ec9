#![no_main]
//! The `claims` request parameter. The body, and what it asserts, is `authrim::fuzzing::claims_request`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::claims_request(data));
