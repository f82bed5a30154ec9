#![no_main]
//! `{shard}_{random}` values: codes, session ids, challenges. The body, and what it asserts, is `authrim::fuzzing::shard_prefix`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::shard_prefix(data));
