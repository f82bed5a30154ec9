#![no_main]
//! Client metadata JSON of the admin API. The body, and what it asserts, is `authrim::fuzzing::admin_client_json`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::admin_client_json(data));
