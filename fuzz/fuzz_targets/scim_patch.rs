#![no_main]
//! SCIM PATCH bodies (RFC 7644 §3.5.2). The body, and what it asserts, is `authrim::fuzzing::scim_patch`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::scim_patch(data));
