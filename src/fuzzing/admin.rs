//! Fuzz bodies for the admin API's JSON: a client's and a user's (see the parent module).

use super::*;

// ---------------------------------------------------------------------------------------------
// admin API bodies

fn test_vault() -> &'static crate::keys::Vault {
    static VAULT: OnceLock<crate::keys::Vault> = OnceLock::new();
    VAULT.get_or_init(|| crate::keys::Vault::from_key([7; 32]))
}

fn base_client() -> &'static clients::Client {
    static BASE: OnceLock<clients::Client> = OnceLock::new();
    BASE.get_or_init(|| {
        clients::new_client(ClientInput { client_id: Some("fz-existing".into()), redirect_uris: Some(vec!["https://rp.example/cb".into()]), ..Default::default() }, test_vault())
            .expect("base client")
            .0
    })
}

/// The client metadata JSON of `POST /admin/clients` and `PATCH|PUT /admin/clients/{id}`.
pub fn admin_client_json(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<ClientInput>(data) else { return };
    if let Ok((client, secret)) = clients::new_client(input.clone(), test_vault()) {
        check_client(&client, secret.as_deref(), true);
    }
    match clients::update_client(base_client(), input.clone(), test_vault()) {
        Ok((client, secret)) => {
            assert_eq!(client.id(), base_client().id(), "update changed the client_id");
            check_client(&client, secret.as_deref(), false);
        }
        Err(_) => {}
    }
}

fn check_client(c: &clients::Client, secret: Option<&str>, created: bool) {
    let id = c.id();
    assert!(!id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic() && b != b':' && b != b'%'), "client_id {id:?}");
    assert!(AUTH_METHODS.contains(&c.auth_method()));
    assert!(!c.meta.grant_types.is_empty());
    assert!(c.meta.grant_types.iter().all(|g| clients::supported_grant_types().contains(&g.as_str())));
    // Every response type is one we implement, with the grant types it needs.
    assert!(c.meta.response_types.iter().all(|r| crate::endpoints::authorize::response_type::ResponseType::parse(r).is_some()));
    assert!(crate::endpoints::authorize::response_type::registration_refusal(&c.meta.response_types, &c.meta.grant_types).is_none());
    if matches!(c.auth_method(), AUTH_NONE | clients::AUTH_PRIVATE_KEY_JWT) {
        assert!(secret.is_none() && !c.check_secret(""), "a client without a secret got one");
    } else if let Some(s) = secret {
        assert!(c.check_secret(s) && !c.check_secret(""), "the secret shown does not authenticate");
    } else {
        assert!(!created, "a new confidential client without a secret");
    }
    for uri in &c.meta.redirect_uris {
        let u = url::Url::parse(uri).unwrap_or_else(|e| panic!("redirect URI {uri:?} accepted: {e}"));
        assert!(u.fragment().is_none(), "redirect URI with a fragment accepted");
        assert!(!matches!(u.scheme(), "javascript" | "data" | "file" | "vbscript"), "redirect URI {uri:?} accepted");
    }
    // The registry stores the metadata as JSON and skips rows it cannot read back: an accepted
    // client must load again, or it silently disappears at the next start.
    let stored = serde_json::to_string(&c.meta).expect("metadata serialises");
    let loaded: ClientMetadata = serde_json::from_str(&stored).unwrap_or_else(|e| panic!("stored client does not load back: {e}: {stored}"));
    assert_eq!(loaded, c.meta, "stored client loads back different");
}

/// The user JSON of `POST /admin/users` and `PATCH|PUT /admin/users/{id}`. Passwords that would
/// be hashed are left out (Argon2 is deliberately slow); short and overlong ones are checked.
pub fn admin_user_json(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<UserInput>(data) else { return };
    if let Some(p) = &input.password {
        let hashable = p.chars().count() >= 8 && p.len() <= 1024;
        if !hashable {
            assert!(users::hash_password(p).is_err(), "a password of {} characters accepted", p.chars().count());
            assert!(users::new_user(input.clone()).is_err());
        }
    } else {
        assert!(users::new_user(input.clone()).is_err(), "a user without a password created");
    }
    let base = User {
        tenant: Default::default(),
        id: "fz-user".into(),
        username: "fz".into(),
        password_hash: String::new(),
        claims: Default::default(),
        disabled: false,
        updated_at: 0,
        roles: Vec::new(),
        tokens_cutoff: 0,
        ..Default::default()
    };
    let without_password = UserInput { password: None, ..input };
    if let Ok(u) = users::update_user(&base, without_password) {
        let name = &u.username;
        assert!(!name.is_empty() && name.len() <= 256 && !name.chars().any(char::is_control) && name.trim() == name, "username {name:?}");
        let supported = supported_claims();
        for (k, v) in u.claims.iter() {
            assert!(k != "sub" && k != "updated_at" && supported.contains(&k), "claim {k:?} stored");
            assert!(!v.is_null());
        }
        // Stored as a JSON column and read back.
        let stored = u.claims.to_json();
        assert_eq!(serde_json::from_str::<Map<String, Value>>(&stored).ok().as_ref(), Some(&u.claims.to_map()));
    }
}
