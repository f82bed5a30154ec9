//! The key manager's tests: first start, rotation and publication, encryption keys, verification.

use super::*;

async fn open(dir: &std::path::Path, publish_delay: u64) -> (Database, KeyManager) {
    let config = crate::config::Config { data_dir: dir.into(), ..Default::default() };
    let db = Database::open(&config).await.unwrap();
    let km = KeyManager::init(db.clone(), Vault::open(None, dir).unwrap().into(), 3600, publish_delay).await.unwrap();
    (db, km)
}

#[tokio::test]
async fn first_start_generates_one_key_and_later_starts_reuse_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, km) = open(dir.path(), 600).await;
    let kid = km.active_kid();
    let again = KeyManager::init(db, Vault::open(None, dir.path()).unwrap().into(), 3600, 600).await.unwrap();
    assert_eq!(again.active_kid(), kid);
    let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
    let keys = jwks["keys"].as_array().unwrap();
    let signing: Vec<_> = keys.iter().filter(|k| k["use"] == "sig").collect();
    assert_eq!(signing.len(), 1);
    assert_eq!(signing[0]["kid"], kid.as_str());
    assert!(keys.iter().all(|k| k.get("d").is_none()), "private part published");
    // With it, one encryption key of each kind, and again the same ones.
    let mut enc: Vec<(&str, &str)> = keys.iter().filter(|k| k["use"] == "enc").map(|k| (k["alg"].as_str().unwrap(), k["kty"].as_str().unwrap())).collect();
    enc.sort();
    assert_eq!(enc, [("ECDH-ES", "EC"), ("RSA-OAEP-256", "RSA")]);
    assert_eq!(again.encryption_kids(), km.encryption_kids());
}

/// A JWE to the tenant's key published under `alg`, as a client would make it from the JWKS.
fn encrypt_to(km: &KeyManager, alg: &str, key_alg: &str, plaintext: &[u8]) -> String {
    encrypt_with(km, alg, key_alg, true, plaintext)
}

fn encrypt_with(km: &KeyManager, alg: &str, key_alg: &str, kid: bool, plaintext: &[u8]) -> String {
    let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
    let mut jwk = jwks["keys"].as_array().unwrap().iter().find(|k| k["alg"] == key_alg && k["use"] == "enc").unwrap().clone();
    jwk.as_object_mut().unwrap().remove("alg");
    if !kid {
        jwk.as_object_mut().unwrap().remove("kid");
    }
    jwe::encrypt(&jwe::RecipientKey::from_jwk(&jwk).unwrap().unwrap(), alg, "A128CBC-HS256", Some("JWT"), plaintext).unwrap()
}

#[tokio::test]
async fn rsa_encryption_keys_come_active_then_next_with_their_private_keys() {
    let dir = tempfile::tempdir().unwrap();
    // A long publication delay: the rotated key stays `next`.
    let (db, km) = open(dir.path(), 3600).await;
    let keys = km.rsa_encryption_keys();
    let [(state, kid, pkcs8)] = keys.as_slice() else { panic!("{:?}", keys.len()) };
    assert_eq!(*state, "active");
    // The PKCS#8 is the private half of the key the JWKS publishes under that kid.
    let (_, jwk) = jwe::DecryptionKey::from_pkcs8("RSA", pkcs8).unwrap();
    let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
    let published = jwks["keys"].as_array().unwrap().iter().find(|k| k["kid"] == kid.as_str()).unwrap();
    assert_eq!((published["alg"].as_str(), &published["n"]), (Some("RSA-OAEP-256"), &jwk["n"]));
    let vault = Arc::new(Vault::open(None, dir.path()).unwrap());
    let new = KeyManager::rotate_alg(&db, &vault, TenantId::DEFAULT, "RSA-OAEP-256").await.unwrap();
    km.refresh().await.unwrap();
    let listed: Vec<(&str, String)> = km.rsa_encryption_keys().into_iter().map(|(s, k, _)| (s, k)).collect();
    assert_eq!(listed, [("active", kid.clone()), ("next", new)]);
}

#[tokio::test]
async fn encryption_keys_decrypt_rotate_and_come_to_tenants_that_predate_them() {
    let dir = tempfile::tempdir().unwrap();
    let (db, km) = open(dir.path(), 2).await;
    let vault = || Arc::new(Vault::open(None, dir.path()).unwrap());
    for (alg, key_alg) in [("RSA-OAEP-256", "RSA-OAEP-256"), ("RSA-OAEP", "RSA-OAEP-256"), ("ECDH-ES", "ECDH-ES"), ("ECDH-ES+A128KW", "ECDH-ES"), ("ECDH-ES+A256KW", "ECDH-ES")] {
        let jwe = encrypt_to(&km, alg, key_alg, b"a.b.c");
        assert_eq!(km.decrypt(&jwe).unwrap().plaintext, b"a.b.c", "{alg}");
        // Without a kid, the keys that suit the alg are tried.
        let anonymous = encrypt_with(&km, alg, key_alg, false, b"d.e.f");
        assert!(!jwe::protected_header(&anonymous).unwrap().contains_key("kid"));
        assert_eq!(km.decrypt(&anonymous).unwrap().plaintext, b"d.e.f", "{alg} without kid");
    }
    // Another tenant's key set does not know this tenant's kids.
    let other = KeyManager::init_with(db.clone(), vault(), TenantId(7), 3600, 2, &["RS256"], "RS256").await.unwrap();
    assert_eq!(other.decrypt(&encrypt_to(&km, "ECDH-ES", "ECDH-ES", b"x")).unwrap_err(), DecryptError::UnknownKey);
    // A JWE to a stranger's key, or a JWS, is refused without a panic.
    let (_, stranger) = jwe::DecryptionKey::generate("P-256").unwrap();
    let to_stranger = jwe::encrypt(&jwe::RecipientKey::from_jwk(&stranger).unwrap().unwrap(), "ECDH-ES", "A128GCM", None, b"x").unwrap();
    assert!(matches!(km.decrypt(&to_stranger), Err(DecryptError::Jwe(_))));
    assert!(km.decrypt(&km.sign("JWT", &serde_json::json!({})).unwrap()).is_err());

    // Rotation: the old key keeps decrypting what was encrypted to it while published.
    let before = encrypt_to(&km, "RSA-OAEP-256", "RSA-OAEP-256", b"old");
    let new = KeyManager::rotate_alg(&db, &vault(), TenantId::DEFAULT, "RSA-OAEP-256").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    km.refresh().await.unwrap();
    let states: Vec<(String, String)> = db
        .read(|sql| sql.query("SELECT kid, state FROM signing_keys WHERE alg = 'RSA-OAEP-256'", crate::params![]))
        .await
        .unwrap()
        .iter()
        .map(|r| (r.text(0).unwrap(), r.text(1).unwrap()))
        .collect();
    assert!(states.contains(&(new.clone(), "active".into())) && states.iter().any(|(_, s)| s == "retired"), "{states:?}");
    assert_eq!(km.decrypt(&before).unwrap().plaintext, b"old");
    let to_new = encrypt_to(&km, "RSA-OAEP-256", "RSA-OAEP-256", b"new");
    assert_eq!(jwe::protected_header(&to_new).unwrap()["kid"].as_str(), Some(new.as_str()), "the active key is published first");
    assert_eq!(km.decrypt(&to_new).unwrap().plaintext, b"new");

    // A tenant whose keys predate encryption keys: not made at start (cheap), but at the
    // first refresh.
    db.write(|sql| sql.execute("DELETE FROM signing_keys WHERE alg IN ('RSA-OAEP-256', 'ECDH-ES')", crate::params![]).map(|_| ())).await.unwrap();
    let just_made = KeyManager::init(db.clone(), vault(), 3600, 2).await.unwrap();
    assert_eq!(just_made.encryption_kids().len(), 2, "a tenant whose first key is minutes old is new: its encryption keys come at once");
    db.write(|sql| {
        sql.execute("DELETE FROM signing_keys WHERE alg IN ('RSA-OAEP-256', 'ECDH-ES')", crate::params![])?;
        sql.execute("UPDATE signing_keys SET created_at = created_at - 3600", crate::params![]).map(|_| ())
    })
    .await
    .unwrap();
    let old = KeyManager::init(db.clone(), vault(), 3600, 2).await.unwrap();
    assert!(old.encryption_kids().is_empty());
    old.refresh().await.unwrap();
    assert_eq!(old.encryption_kids().len(), 2);
}

#[tokio::test]
async fn a_rotated_key_is_published_before_it_signs_and_the_old_one_stays_published() {
    let dir = tempfile::tempdir().unwrap();
    let (db, km) = open(dir.path(), 2).await;
    let old = km.active_kid();
    let mut v = Validation::new(jsonwebtoken::Algorithm::RS256);
    v.validate_aud = false;
    v.set_required_spec_claims(&["exp"]);
    let before = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
    let new = KeyManager::rotate(&db, &Vault::open(None, dir.path()).unwrap()).await.unwrap();
    km.refresh().await.unwrap();
    let kids = |km: &KeyManager| -> Vec<String> {
        let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
        jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_string()).collect()
    };
    assert!(kids(&km).contains(&new), "published at once");
    assert_eq!(km.active_kid(), old, "but not signing yet");
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    km.refresh().await.unwrap();
    assert_eq!(km.active_kid(), new, "signing after the publish delay");
    assert!(kids(&km).contains(&old), "the retired key stays published");
    assert!(km.verify::<serde_json::Value>(&before, None, &v).is_ok(), "tokens of the old key still verify");
    let after = km.sign("JWT", &serde_json::json!({"exp": now() + 600})).unwrap();
    assert_eq!(jsonwebtoken::decode_header(&after).unwrap().kid.as_deref(), Some(new.as_str()));
}

#[tokio::test]
async fn each_algorithm_rotates_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::config::Config { data_dir: dir.path().into(), ..Default::default() };
    let db = Database::open(&config).await.unwrap();
    let vault = || Arc::new(Vault::open(None, dir.path()).unwrap());
    let km = KeyManager::init_with(db.clone(), vault(), TenantId::DEFAULT, 3600, 2, &["RS256", "ES256", "EdDSA"], "ES256").await.unwrap();
    let (rs, es, ed) = (km.active_kid_for("RS256").unwrap(), km.active_kid_for("ES256").unwrap(), km.active_kid_for("EdDSA").unwrap());
    assert_eq!(km.active_kid(), es, "the default algorithm signs by default");
    let new_es = KeyManager::rotate_alg(&db, &vault(), TenantId::DEFAULT, "ES256").await.unwrap();
    assert!(KeyManager::rotate_alg(&db, &vault(), TenantId::DEFAULT, "HS256").await.is_err());
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    km.refresh().await.unwrap();
    assert_eq!(km.active_kid_for("ES256"), Some(new_es), "the rotated algorithm moved on");
    assert_eq!((km.active_kid_for("RS256"), km.active_kid_for("EdDSA")), (Some(rs), Some(ed)), "the others did not");
    let jwks: serde_json::Value = serde_json::from_str(&km.jwks_json()).unwrap();
    let kids: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap()).collect();
    assert!(kids.contains(&es.as_str()), "the retired ES256 key stays published");
    // Restarting with the same list keeps every key; a new algorithm gets its first key.
    let again = KeyManager::init_with(db, vault(), TenantId::DEFAULT, 3600, 2, &["RS256", "ES256", "EdDSA", "PS256"], "RS256").await.unwrap();
    assert_eq!(again.active_kid_for("ES256"), km.active_kid_for("ES256"));
    assert!(again.active_kid_for("PS256").is_some());
}

#[tokio::test]
async fn verify_checks_kid_typ_and_signature() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, km) = open(dir.path(), 600).await;
    let claims = serde_json::json!({"sub": "u", "exp": now() + 60, "iss": "me"});
    let token = km.sign("at+jwt", &claims).unwrap();
    let mut v = Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_issuer(&["me"]);
    v.validate_aud = false;
    assert!(km.verify::<serde_json::Value>(&token, Some("at+jwt"), &v).is_ok());
    assert_eq!(km.verify::<serde_json::Value>(&token, Some("JWT"), &v).unwrap_err(), VerifyError::Malformed);
    assert_eq!(km.verify::<serde_json::Value>("a.b.c", None, &v).unwrap_err(), VerifyError::Malformed);
    // The same claims signed by a key we do not publish.
    let (stranger, _) = SigningKey::generate().unwrap();
    let forged = stranger.sign_jwt("at+jwt", &claims).unwrap();
    assert_eq!(km.verify::<serde_json::Value>(&forged, None, &v).unwrap_err(), VerifyError::UnknownKey);
    v.set_issuer(&["someone-else"]);
    assert!(matches!(km.verify::<serde_json::Value>(&token, None, &v), Err(VerifyError::Invalid(_))));
}
