#![no_main]
//! SAML messages (SAML 2.0 Bindings §3.4, §3.5; Core §3.2.2, §3.4.1, §3.7; Metadata §2.4.4). The body, and what it asserts, is `authrim::fuzzing::saml_message`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| authrim::fuzzing::saml_message(data));
