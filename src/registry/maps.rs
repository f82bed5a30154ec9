//! One tenant's clients and users in memory, with the indexes lookups need.

use super::{users, Client, User};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default)]
pub(super) struct Clients {
    pub(super) by_id: HashMap<String, Arc<Client>>,
    /// How many clients allow each CORS origin. A preflight names no client, so it is
    /// answered from this set; counts keep an update O(origins of one client), not O(clients).
    pub(super) cors_origins: HashMap<String, usize>,
    /// SAML service providers by entity id (an AuthnRequest names its sender by its `Issuer`).
    pub(super) by_entity_id: HashMap<String, Arc<Client>>,
}

impl Clients {
    pub(super) fn put(&mut self, client: Client) {
        self.remove(client.id());
        for o in client.cors_origins() {
            *self.cors_origins.entry(o.clone()).or_default() += 1;
        }
        let client = Arc::new(client);
        if let Some(sp) = &client.meta.saml {
            self.by_entity_id.insert(sp.entity_id.clone(), client.clone());
        }
        self.by_id.insert(client.id().to_string(), client);
    }

    pub(super) fn remove(&mut self, id: &str) -> bool {
        let Some(old) = self.by_id.remove(id) else { return false };
        if let Some(sp) = &old.meta.saml {
            // Only if it is still this client's (a second registration of the entity id was
            // refused, but an index never points at a client that is gone).
            if self.by_entity_id.get(&sp.entity_id).is_some_and(|c| c.id() == id) {
                self.by_entity_id.remove(&sp.entity_id);
            }
        }
        for o in old.cors_origins() {
            if let Some(n) = self.cors_origins.get_mut(o) {
                *n -= 1;
                if *n == 0 {
                    self.cors_origins.remove(o);
                }
            }
        }
        true
    }
}

/// The login indexes hold the user itself rather than two more copies of its id, and answer a
/// login in one probe instead of two.
#[derive(Default)]
pub(super) struct Users {
    pub(super) by_id: HashMap<String, Arc<User>>,
    pub(super) by_username: HashMap<String, Arc<User>>,
    pub(super) by_email: HashMap<String, Arc<User>>,
}

impl Users {
    pub(super) fn put(&mut self, user: User) {
        self.remove(&user.id);
        let user = Arc::new(user);
        self.by_username.insert(users::login_key(&user.username), user.clone());
        if let Some(e) = user.email() {
            self.by_email.insert(users::login_key(e), user.clone());
        }
        self.by_id.insert(user.id.clone(), user);
    }

    pub(super) fn remove(&mut self, id: &str) {
        if let Some(old) = self.by_id.remove(id) {
            self.by_username.remove(&users::login_key(&old.username));
            if let Some(e) = old.email() {
                self.by_email.remove(&users::login_key(e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{clients, ClientInput};

    fn spa(id: &str, redirect: &str) -> Client {
        let input = ClientInput { client_id: Some(id.into()), redirect_uris: Some(vec![redirect.into()]), ..Default::default() };
        clients::new_client(input, &crate::keys::Vault::from_key([7; 32])).unwrap().0
    }

    fn user(id: &str, username: &str, email: &str, updated_at: u64) -> User {
        User {
            tenant: crate::tenant::TenantId::DEFAULT,
            id: id.into(),
            username: username.into(),
            password_hash: String::new(),
            claims: serde_json::from_value(serde_json::json!({ "email": email })).unwrap(),
            disabled: false,
            updated_at,
            roles: Vec::new(),
            tokens_cutoff: 0,
            ..Default::default()
        }
    }

    #[test]
    fn the_login_indexes_follow_every_user_change() {
        let mut u = Users::default();
        u.put(user("1", "Alice", "alice@a.example", 1));
        u.put(user("2", "bob", "bob@a.example", 1));
        assert_eq!(u.by_username["alice"].id, "1");
        assert_eq!(u.by_email["bob@a.example"].id, "2");
        // Renamed, with a new e-mail: the old names lead nowhere, the new ones to the new value.
        u.put(user("1", "alicia", "alicia@a.example", 5));
        assert!(!u.by_username.contains_key("alice") && !u.by_email.contains_key("alice@a.example"));
        assert_eq!(u.by_username["alicia"].updated_at, 5);
        assert_eq!(u.by_email["alicia@a.example"].updated_at, 5);
        u.remove("2");
        assert!(!u.by_username.contains_key("bob") && !u.by_email.contains_key("bob@a.example"));
        assert_eq!((u.by_id.len(), u.by_username.len(), u.by_email.len()), (1, 1, 1));
    }

    #[test]
    fn the_cors_origin_set_follows_every_client_change() {
        let mut c = Clients::default();
        c.put(spa("a", "https://shared.example/a"));
        c.put(spa("b", "https://shared.example/b"));
        c.put(spa("c", "https://c.example/cb"));
        let has = |c: &Clients, o: &str| c.cors_origins.contains_key(o);
        assert!(has(&c, "https://shared.example") && has(&c, "https://c.example"));
        // Replacing a client drops the origins it no longer has.
        c.put(spa("c", "https://c2.example/cb"));
        assert!(!has(&c, "https://c.example") && has(&c, "https://c2.example"));
        // A shared origin stays while any client still has it.
        assert!(c.remove("a"));
        assert!(has(&c, "https://shared.example"));
        assert!(c.remove("b") && !c.remove("b"));
        assert!(!has(&c, "https://shared.example"));
        assert_eq!(c.cors_origins.len(), 1);
    }
}
