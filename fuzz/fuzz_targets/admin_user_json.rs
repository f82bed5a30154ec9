#![no_main]
//! User JSON of the admin API. The body, and what it asserts, is `authrim::fuzzing::admin_user_json`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::admin_user_json(data));
