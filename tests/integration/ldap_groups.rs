//! LDAP group mapping against a real OpenLDAP (`crate::ldap::Slapd`): a user's directory
//! groups (`groupOfNames`, `groupOfUniqueNames`, or `memberOf`) become their memberships of Authrim's groups
//! at each sign-in, prefixed, created when missing, in tokens for a client that asks for
//! groups; a change in the directory is seen at the next sign-in; an operator's own
//! membership is never removed by the mapping.

use crate::harness::*;
use crate::ldap::{events, id_token, person, Slapd};
use authrim::registry::directory::Principal;
use authrim::tenant::TenantId;
use reqwest::Method;
use serde_json::json;

/// `ou=groups` with `devs` (groupOfNames: alice) and `ops` (groupOfUniqueNames: alice, bob).
pub(crate) const GROUPS: &str = "dn: ou=groups,dc=example,dc=org
objectClass: organizationalUnit
ou: groups

dn: cn=devs,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: devs
member: uid=alice,ou=people,dc=example,dc=org

dn: cn=ops,ou=groups,dc=example,dc=org
objectClass: groupOfUniqueNames
cn: ops
uniqueMember: uid=alice,ou=people,dc=example,dc=org
uniqueMember: uid=bob,ou=people,dc=example,dc=org
";

/// A token's groups in name order (tokens carry them in the order of the groups' ids).
pub(crate) fn sorted(groups: &serde_json::Value) -> serde_json::Value {
    let mut v = groups.as_array().cloned().unwrap_or_default();
    v.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    serde_json::Value::Array(v)
}

pub(crate) const MAPPING: &str = "group_mapping = \"search\"\ngroup_base_dn = \"ou=groups,dc=example,dc=org\"\ngroup_prefix = \"corp-\"\n";

#[tokio::test]
async fn directory_groups_map_onto_groups_at_each_sign_in_and_spare_an_operators_memberships_on_sqlite_and_postgres() {
    for postgres in [false, true] {
        let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org"), person("bob", "bob-directory-pw", "bob@example.org")], None);
        slapd.ldif("ldapadd", GROUPS);
        mapping_at_sign_in(slapd, postgres).await;
    }
}

async fn mapping_at_sign_in(slapd: Slapd, postgres: bool) {
    let corp = slapd.directory("corp", MAPPING);
    let s = TestServer::start_on(postgres, |c| c.ldap_directories = vec![corp]).await;
    let (_, secret) = s.client("rp", json!({"groups_claim": "names"})).await;
    let secret = secret.unwrap();
    let registry = s.server.app.registry.of(TenantId::DEFAULT);
    let names = |user: &str| {
        let mut v: Vec<String> = registry.direct_groups(&Principal::User(user.to_string())).iter().map(|g| g.display_name.clone()).collect();
        v.sort();
        v
    };

    // First sign-in: both groups made, alice in them, and in her tokens.
    let claims = id_token(&s, &secret, "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&claims["groups"]), json!(["corp-devs", "corp-ops"]), "{claims}");
    let alice = claims["sub"].as_str().unwrap().to_string();
    assert_eq!(names(&alice), ["corp-devs", "corp-ops"]);
    let mapped = events(&s, "directory_groups_mapped").await;
    assert_eq!(mapped[0]["detail"]["added"], json!(["corp-devs", "corp-ops"]), "{mapped:?}");
    assert_eq!(mapped[0]["detail"]["directory"], "ldap:corp");

    // An operator's group of a mapped name is the one joined (bob's ops is the same group),
    // and an operator puts alice in a group of their own and in corp-devs themselves.
    assert_eq!(s.admin(Method::POST, "/admin/groups", Some(json!({"display_name": "reviewers"}))).await.0, 201);
    for group in ["reviewers", "corp-devs"] {
        let (status, body) = s.admin(Method::PUT, &format!("/admin/groups/{group}/members/users/{alice}"), None).await;
        assert_eq!(status, 204, "{body}");
    }
    let bob = id_token(&s, &secret, "bob", "bob-directory-pw").await;
    assert_eq!(sorted(&bob["groups"]), json!(["corp-ops"]), "{bob}");
    assert_eq!(registry.list_groups().len(), 3);
    // Whose each membership is, as the admin API lists them.
    let source = |group: &'static str| {
        let s = &s;
        async move {
            let (st, v) = s.admin(Method::GET, &format!("/admin/groups/{group}/members"), None).await;
            assert_eq!(st, 200, "{v}");
            let mut all: Vec<(String, String)> = v["members"].as_array().unwrap().iter().map(|m| (m["username"].as_str().unwrap().to_string(), m["source"].as_str().unwrap().to_string())).collect();
            all.sort();
            all
        }
    };
    assert_eq!(source("corp-ops").await, [("alice".to_string(), "ldap:corp".to_string()), ("bob".to_string(), "ldap:corp".to_string())]);
    assert_eq!(source("corp-devs").await, [("alice".to_string(), "local".to_string())], "the operator's now");

    // The directory changes: alice leaves devs and ops, joins qa. At her next sign-in the
    // mapping drops its own (ops), keeps the operator's (devs, which the operator took over,
    // and reviewers), and adds qa.
    slapd.ldif("ldapmodify", "dn: cn=devs,ou=groups,dc=example,dc=org\nchangetype: modify\ndelete: member\nmember: uid=alice,ou=people,dc=example,dc=org\n-\nadd: member\nmember: uid=bob,ou=people,dc=example,dc=org\n");
    slapd.ldif("ldapmodify", "dn: cn=ops,ou=groups,dc=example,dc=org\nchangetype: modify\ndelete: uniqueMember\nuniqueMember: uid=alice,ou=people,dc=example,dc=org\n");
    slapd.ldif("ldapadd", "dn: cn=qa,ou=groups,dc=example,dc=org\nobjectClass: groupOfNames\ncn: qa\nmember: uid=alice,ou=people,dc=example,dc=org\n");
    let again = id_token(&s, &secret, "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&again["groups"]), json!(["corp-devs", "corp-qa", "reviewers"]), "{again}");
    assert_eq!(names(&alice), ["corp-devs", "corp-qa", "reviewers"]);
    let mapped = events(&s, "directory_groups_mapped").await;
    assert!(mapped.iter().any(|e| e["detail"]["removed"] == json!(["corp-ops"]) && e["detail"]["added"] == json!(["corp-qa"])), "{mapped:?}");
    // Bob's membership of ops is untouched by alice's; devs is now his too.
    let bob = id_token(&s, &secret, "bob", "bob-directory-pw").await;
    assert_eq!(sorted(&bob["groups"]), json!(["corp-devs", "corp-ops"]), "{bob}");

    // The operator removes the group they gave: the mapping does not bring it back (it is
    // not in the directory), and the mapped ones stay.
    assert_eq!(s.admin(Method::DELETE, &format!("/admin/groups/reviewers/members/users/{alice}"), None).await.0, 204);
    let again = id_token(&s, &secret, "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&again["groups"]), json!(["corp-devs", "corp-qa"]), "{again}");
}

/// The bounds of the directory hold for the mapping: past `directory_max_groups`, a group is
/// refused (and audited), the sign-in goes on with the others.
#[tokio::test]
async fn the_mapping_stays_within_the_directory_bounds() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org")], None);
    slapd.ldif("ldapadd", GROUPS);
    let corp = slapd.directory("corp", MAPPING);
    let s = TestServer::start_with(|c| {
        c.ldap_directories = vec![corp];
        c.directory_max_groups = 1;
    })
    .await;
    let (_, secret) = s.client("rp", json!({"groups_claim": "names"})).await;
    let claims = id_token(&s, &secret.unwrap(), "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&claims["groups"]), json!(["corp-devs"]), "{claims}");
    let mapped = events(&s, "directory_groups_mapped").await;
    assert_eq!(mapped[0]["detail"]["refused"][0]["group"], "corp-ops", "{mapped:?}");
    assert!(mapped[0]["detail"]["refused"][0]["reason"].as_str().unwrap().contains("directory_max_groups"), "{mapped:?}");
}

/// `member_of`: the group DNs in the user's `memberOf`, each named by its first RDN's value.
/// The entry holds them as Active Directory's do (slapd's msuser schema has the attribute).
#[tokio::test]
async fn groups_from_member_of_are_named_by_their_dns() {
    let alice = person("alice", "alice-directory-pw", "alice@example.org").replace("objectClass: inetOrgPerson\n", "objectClass: inetOrgPerson\nobjectClass: extensibleObject\n")
        + "memberOf: CN=Domain Admins,OU=Groups,DC=example,DC=org\nmemberOf: cn=R\\2CD,ou=groups,dc=example,dc=org\n";
    let slapd = Slapd::start(&[alice], None);
    let corp = slapd.directory("corp", "group_mapping = \"member_of\"\ngroup_prefix = \"m-\"\n");
    let s = TestServer::start_with(|c| c.ldap_directories = vec![corp]).await;
    let (_, secret) = s.client("rp", json!({"groups_claim": "names"})).await;
    let secret = secret.unwrap();
    let claims = id_token(&s, &secret, "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&claims["groups"]), json!(["m-Domain Admins", "m-R,D"]), "{claims}");
    slapd.ldif("ldapmodify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: modify\nreplace: memberOf\nmemberOf: cn=qa,ou=groups,dc=example,dc=org\n");
    let again = id_token(&s, &secret, "alice", "alice-directory-pw").await;
    assert_eq!(sorted(&again["groups"]), json!(["m-qa"]), "{again}");
}
