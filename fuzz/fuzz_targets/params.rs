#![no_main]
//! Form bodies and query strings: `Params::parse`. The body, and what it asserts, is `authrim::fuzzing::params`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::params(data));
