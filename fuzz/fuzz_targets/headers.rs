#![no_main]
//! Cookie, Content-Type and operator-token headers. The body, and what it asserts, is `authrim::fuzzing::headers`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::headers(data));
