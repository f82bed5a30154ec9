#![no_main]
//! Refresh-token decoding (`Codec::locate`). The body, and what it asserts, is `authrim::fuzzing::refresh_token`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::refresh_token(data));
