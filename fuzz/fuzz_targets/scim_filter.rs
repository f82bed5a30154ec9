#![no_main]
//! SCIM filters and PATCH paths (RFC 7644 §3.4.2.2, §3.5.2). The body, and what it asserts, is `authrim::fuzzing::scim_filter`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::scim_filter(data));
