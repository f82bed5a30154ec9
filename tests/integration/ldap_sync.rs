//! LDAP periodic sync against a real OpenLDAP (`crate::ldap::Slapd`): a round (called
//! directly, not waited for) imports the directory's users and maps their groups; a user
//! deleted from the directory, or disabled there, is disabled here with their tokens refused;
//! local users are never touched; a directory that is down, or lists nobody, skips the round
//! and disables nobody.

use crate::harness::*;
use crate::ldap::{events, person, Slapd};
use crate::ldap_groups::{GROUPS, MAPPING};
use authrim::endpoints::directory_sync::round;
use authrim::registry::directory::Principal;
use authrim::tenant::{Issuer, TenantId};
use serde_json::json;

/// An entry as Active Directory has users (`userAccountControl`), enabled (512).
fn ad_person(uid: &str) -> String {
    format!("dn: uid={uid},ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nobjectClass: extensibleObject\nuid: {uid}\ncn: {uid}\nsn: Person\nuserAccountControl: 512\nuserPassword: {uid}-directory-pw\n")
}

#[tokio::test]
async fn a_sync_round_imports_maps_groups_and_disables_users_gone_from_the_directory() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org"), person("bob", "bob-directory-pw", "bob@example.org"), ad_person("carol")], None);
    slapd.ldif("ldapadd", GROUPS);
    // A day between rounds: the test's rounds are the only ones.
    let corp = slapd.directory("corp", &format!("mode = \"sync\"\nsync_interval = 86400\n{MAPPING}"));
    let s = TestServer::start_with(|c| c.ldap_directories = vec![corp]).await;
    let (_, secret) = s.client("rp", json!({"grant_types": ["authorization_code", "refresh_token"]})).await;
    let secret = secret.unwrap();
    s.user("lou", json!({})).await;
    let app = Issuer::default_of(&s.server.app);
    let source = app.tenant.directories.syncing().next().expect("a syncing directory").clone();
    let registry = s.server.app.registry.of(TenantId::DEFAULT);

    // The first round imports everyone, without a sign-in, and maps their groups.
    let first = round(&app, &source).await;
    assert_eq!((first.listed, first.disabled.len(), first.skipped.as_deref()), (3, 0, None), "{first:?}");
    let user = |name: &str| registry.user_by_login(name).unwrap_or_else(|| panic!("{name} imported"));
    for name in ["alice", "bob", "carol"] {
        assert_eq!(user(name).source.as_str(), "ldap:corp");
    }
    let groups = |name: &str| {
        let mut v: Vec<String> = registry.direct_groups(&Principal::User(user(name).id.clone())).iter().map(|g| g.display_name.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(groups("bob"), ["corp-ops"]);
    assert_eq!(groups("alice"), ["corp-devs", "corp-ops"]);

    // Alice signs in and holds tokens; the directory then loses her, and disables carol.
    let browser = s.browser();
    let res = browser.authorize(&request_query("code", "rp", &[("scope", "openid offline_access")])).await;
    let params = browser.finish_login(res, "alice", "alice-directory-pw").await;
    let (status, tokens, _) = s.token(Some(("rp", &secret)), &[("grant_type", "authorization_code"), ("code", &params["code"]), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(s.userinfo(access).await.0, 200);
    slapd.ldif("ldapmodify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: delete\n");
    slapd.ldif("ldapmodify", "dn: uid=carol,ou=people,dc=example,dc=org\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: 514\n");

    let second = round(&app, &source).await;
    assert_eq!((second.listed, second.skipped.as_deref()), (2, None), "{second:?}");
    assert!(user("alice").disabled && user("carol").disabled, "{second:?}");
    assert!(!user("bob").disabled && !user("lou").disabled);
    // As the admin API's disable: her sessions ended, her tokens refused.
    assert_eq!(s.userinfo(access).await.0, 401);
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token (offline_access)");
    let (status, body, _) = s.token(Some(("rp", &secret)), &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "{body}");
    let updated = events(&s, "user_updated").await;
    let by_sync: Vec<_> = updated.iter().filter(|e| e["detail"]["by"] == "ldap").collect();
    assert_eq!(by_sync.len(), 2, "{updated:?}");
    assert!(by_sync.iter().any(|e| e["user_id"] == json!(user("alice").id) && e["detail"]["reason"] == "gone from the directory"), "{by_sync:?}");
    assert!(!events(&s, "sessions_ended").await.is_empty());
    // Refused at the form as every disabled user is.
    crate::ldap::incorrect(&crate::ldap::sign_in(&s.browser(), "carol", "carol-directory-pw").await);
    assert_eq!(events(&s, "directory_sync").await.len(), 2);

    // A directory that lists nobody while it has users here (a wrong base, a search account
    // that lost its rights look the same): skipped, bob kept.
    for uid in ["bob", "carol"] {
        slapd.ldif("ldapmodify", &format!("dn: uid={uid},ou=people,dc=example,dc=org\nchangetype: delete\n"));
    }
    let empty = round(&app, &source).await;
    assert!(empty.skipped.as_deref().is_some_and(|w| w.contains("lists no user")), "{empty:?}");
    assert!(!user("bob").disabled);

    // The directory down: the round is skipped, audited, and nobody is disabled.
    slapd.stop();
    let down = round(&app, &source).await;
    assert!(down.skipped.as_deref().is_some_and(|w| w.contains("connect")), "{down:?}");
    assert!(down.disabled.is_empty());
    assert!(!user("bob").disabled && !user("lou").disabled);
    let skipped = events(&s, "directory_sync_skipped").await;
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped.iter().all(|e| e["detail"]["directory"] == "ldap:corp"), "{skipped:?}");
}
