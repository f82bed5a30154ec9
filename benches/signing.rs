//! `cargo bench --bench signing`: what a token issuance costs next to its RSA signature, and
//! what encrypting an ID token to a client (JWE) adds to it.
//! Prints median nanoseconds per operation over several rounds; no assertions (benchmarks
//! measure, tests assert).

use authrim::keys::SigningKey;
use aws_lc_rs::signature::KeyPair as _;
use std::time::Instant;

fn median_ns(rounds: usize, iters: u32, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[rounds / 2]
}

fn main() {
    let (key, pkcs8) = SigningKey::generate().unwrap();
    let claims = serde_json::json!({
        "iss": "https://id.example.com", "sub": "jVIn-ox50X9ES9IHHPW4Mt", "aud": ["https://id.example.com"],
        "exp": 4102444800u64, "iat": 1700000000u64, "jti": "9xETbZFnquFzRejg-ZjAoae_rasUnK76MTjKxBbEVsQ",
        "client_id": "rp", "scope": "openid profile email", "auth_time": 1700000000u64
    });

    // The raw RSA-2048 PKCS#1 v1.5 signature: the ceiling every issuance is measured against.
    let pair = aws_lc_rs::rsa::KeyPair::from_pkcs8(&pkcs8).unwrap();
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let msg = vec![b'x'; 400];
    let mut sig = vec![0u8; 256];
    let raw = median_ns(15, 200, || pair.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, &msg, &mut sig).unwrap());

    let ours = median_ns(15, 200, || {
        std::hint::black_box(key.sign_jwt("at+jwt", &claims).unwrap());
    });

    // jsonwebtoken::encode with the same key: it parses the DER key on every call.
    let pkcs1 = {
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pkcs8)
        );
        jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap()
    };
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(key.kid.clone());
    let theirs = median_ns(15, 200, || {
        std::hint::black_box(jsonwebtoken::encode(&header, &claims, &pkcs1).unwrap());
    });

    let token = key.sign_jwt("at+jwt", &claims).unwrap();
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(key.public_jwk.clone()).unwrap();
    let dk = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.validate_aud = false;
    let verify = median_ns(15, 2000, || {
        std::hint::black_box(jsonwebtoken::decode::<serde_json::Value>(&token, &dk, &v).unwrap());
    });

    // The RSA public operation alone, with the key rebuilt from (n, e) per call as jsonwebtoken
    // does, and with a key parsed once.
    let (message, signature) = token.rsplit_once('.').unwrap();
    let signature = authrim::util::b64_decode(signature).unwrap();
    let public = pair.public_key();
    let components = aws_lc_rs::signature::RsaPublicKeyComponents {
        n: public.modulus().big_endian_without_leading_zero().to_vec(),
        e: public.exponent().big_endian_without_leading_zero().to_vec(),
    };
    let raw_verify_components = median_ns(15, 2000, || {
        components.verify(&aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256, message.as_bytes(), &signature).unwrap();
    });
    let parsed = aws_lc_rs::signature::ParsedPublicKey::new(
        &aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256,
        pair.public_key().as_ref(),
    )
    .unwrap();
    let raw_verify_parsed = median_ns(15, 2000, || parsed.verify_sig(message.as_bytes(), &signature).unwrap());

    // What encrypting a signed ID token to a client adds (`tokens::encryption`): the JWE of
    // a JWS of the size an ID token has, to a key of each kind the client may register.
    let id_token = key.sign_jwt("JWT", &claims).unwrap();
    let jwe_cost = |kind: &str, alg: &str, enc: &str| {
        let (_, public) = authrim::keys::jwe::DecryptionKey::generate(kind).unwrap();
        let recipient = authrim::keys::jwe::RecipientKey::from_jwk(&public).unwrap().unwrap();
        median_ns(15, 200, || {
            std::hint::black_box(authrim::keys::jwe::encrypt(&recipient, alg, enc, Some("JWT"), id_token.as_bytes()).unwrap());
        })
    };
    let jwe_rows = [
        ("RSA", "RSA-OAEP-256", "A128CBC-HS256"),
        ("RSA", "RSA-OAEP", "A256GCM"),
        ("P-256", "ECDH-ES", "A128CBC-HS256"),
        ("P-256", "ECDH-ES+A128KW", "A128GCM"),
        ("X25519", "ECDH-ES+A256KW", "A256GCM"),
    ]
    .map(|(kind, alg, enc)| (kind, alg, enc, jwe_cost(kind, alg, enc)));

    println!("RSA-2048 PKCS#1 v1.5 sign (raw)      {:>9.1} µs", raw / 1e3);
    println!("JWT sign, KeyManager (parsed key)    {:>9.1} µs   {:.3}× raw", ours / 1e3, ours / raw);
    println!("JWT sign, jsonwebtoken::encode       {:>9.1} µs   {:.3}× raw", theirs / 1e3, theirs / raw);
    println!("JWT verify + claims, jsonwebtoken    {:>9.1} µs", verify / 1e3);
    println!("RS256 verify (raw), key from (n, e)  {:>9.1} µs", raw_verify_components / 1e3);
    println!("RS256 verify (raw), key parsed once  {:>9.1} µs", raw_verify_parsed / 1e3);
    for (kind, alg, enc, ns) in jwe_rows {
        println!("ID token JWE {kind:>6} {alg:<15} {enc:<14}{:>7.1} µs   {:.3}× raw signature", ns / 1e3, ns / raw);
    }
}
