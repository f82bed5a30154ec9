use super::*;
use serde_json::json;

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../tests/vectors/rfc7520_jwe.json")).unwrap()
}

/// RFC 7520 §5.2 (RSA-OAEP, A256GCM), §5.4 (ECDH-ES+A128KW on P-384, A128GCM) and §5.5
/// (ECDH-ES on P-256, A128CBC-HS256): the RFC's JWEs decrypt with its keys to its plaintext.
#[test]
fn rfc7520_examples_decrypt() {
    let v = vectors();
    for case in v["cases"].as_array().unwrap() {
        let key = DecryptionKey::from_jwk(&case["key"]).unwrap();
        let out = decrypt(&key, case["compact"].as_str().unwrap()).unwrap_or_else(|e| panic!("{}: {e}", case["section"]));
        assert_eq!(std::str::from_utf8(&out.plaintext).unwrap(), v["plaintext"], "{}", case["section"]);
        assert_eq!((&out.header["alg"], &out.header["enc"]), (&case["alg"], &case["enc"]));
        // Any change of the protected header, the key, the IV, the ciphertext or the tag is refused.
        let compact = case["compact"].as_str().unwrap();
        for i in 0..5 {
            let mut parts: Vec<String> = compact.split('.').map(String::from).collect();
            let mut bytes = b64_decode(&parts[i]).unwrap();
            if bytes.is_empty() {
                continue; // ECDH-ES: no encrypted key
            }
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            parts[i] = b64(&bytes);
            assert!(decrypt(&key, &parts.join(".")).is_err(), "{}: part {i} changed", case["section"]);
        }
    }
}

/// Every pair we offer, to a key of each kind, decrypts to what went in; the header says what
/// a client needs (alg, enc, kid, cty, and epk for ECDH).
#[test]
fn every_alg_and_enc_round_trips() {
    let kinds: &[(&str, &[&str])] = &[
        ("RSA", &["RSA-OAEP", "RSA-OAEP-256"]),
        ("P-256", &["ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW"]),
        ("P-384", &["ECDH-ES", "ECDH-ES+A256KW"]),
        ("P-521", &["ECDH-ES+A128KW"]),
        ("X25519", &["ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW"]),
    ];
    for (kind, algs) in kinds {
        let (private, mut public) = DecryptionKey::generate(kind).unwrap();
        public["kid"] = "k1".into();
        let recipient = RecipientKey::from_jwk(&public).unwrap().unwrap();
        for alg in *algs {
            for enc in CONTENT_ENCS {
                let jwe = encrypt(&recipient, alg, enc, Some("JWT"), b"header.payload.signature").unwrap();
                let out = decrypt(&private, &jwe).unwrap_or_else(|e| panic!("{kind} {alg} {enc}: {e}"));
                assert_eq!(out.plaintext, b"header.payload.signature");
                assert_eq!((out.header["alg"].as_str(), out.header["enc"].as_str()), (Some(*alg), Some(*enc)));
                assert_eq!((out.header["kid"].as_str(), out.header["cty"].as_str()), (Some("k1"), Some("JWT")));
                assert_eq!(out.header.contains_key("epk"), alg.starts_with("ECDH"));
                // Another key of the same kind cannot read it.
                let (stranger, _) = DecryptionKey::generate(kind).unwrap();
                assert!(decrypt(&stranger, &jwe).is_err(), "{kind} {alg} {enc}");
            }
        }
    }
}

#[test]
fn a_key_serves_only_its_family_and_headers_we_do_not_understand_are_refused() {
    let (rsa, rsa_public) = DecryptionKey::generate("RSA").unwrap();
    let (ec, ec_public) = DecryptionKey::generate("P-256").unwrap();
    let rsa_recipient = RecipientKey::from_jwk(&rsa_public).unwrap().unwrap();
    let ec_recipient = RecipientKey::from_jwk(&ec_public).unwrap().unwrap();
    assert_eq!(encrypt(&rsa_recipient, "ECDH-ES", "A128GCM", None, b"x"), Err(JweError::WrongKey));
    assert_eq!(encrypt(&ec_recipient, "RSA-OAEP-256", "A128GCM", None, b"x"), Err(JweError::WrongKey));
    assert!(matches!(encrypt(&rsa_recipient, "RSA1_5", "A128GCM", None, b"x"), Err(JweError::Unsupported(_))));
    assert!(matches!(encrypt(&rsa_recipient, "RSA-OAEP", "A192GCM", None, b"x"), Err(JweError::Unsupported(_))));
    let jwe = encrypt(&rsa_recipient, "RSA-OAEP-256", "A256GCM", None, b"x").unwrap();
    assert_eq!(decrypt(&ec, &jwe).unwrap_err(), JweError::WrongKey);
    // The same JWE with `zip` or `crit` added to its (re-encoded) header: refused before any
    // decryption (and the tag would fail anyway, the header being the AAD).
    let parts: Vec<&str> = jwe.split('.').collect();
    for extra in [json!({"zip": "DEF"}), json!({"crit": ["exp"], "exp": 1})] {
        let mut header: Map<String, Value> = serde_json::from_slice(&b64_decode(parts[0]).unwrap()).unwrap();
        header.extend(extra.as_object().unwrap().clone());
        let forged = [b64(&serde_json::to_vec(&header).unwrap()).as_str(), parts[1], parts[2], parts[3], parts[4]].join(".");
        assert!(matches!(decrypt(&rsa, &forged), Err(JweError::Unsupported(_))));
    }
    for malformed in ["", "a.b.c.d", "a.b.c.d.e.f", "!!.b.c.d.e"] {
        assert!(matches!(decrypt(&rsa, malformed), Err(JweError::Malformed(_))), "{malformed}");
    }
    assert_eq!(decrypt(&rsa, &jwe).unwrap().plaintext, b"x");
}
