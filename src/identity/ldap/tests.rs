use super::*;
use std::collections::HashMap;

fn directory() -> LdapDirectory {
    toml::from_str("id = \"corp\"\nurl = \"ldaps://ldap.corp.example\"\nbase_dn = \"dc=corp,dc=example\"\n").unwrap()
}

#[test]
fn filter_values_are_escaped_as_rfc_4515_says() {
    // RFC 4515 §4's examples: the values of `(o=Parens R Us \28for all your parenthetical
    // needs\29)`, `(cn=*\2A*)`, `(filename=C:\5cMyFile)`, `(sn=Lu\c4\8di\c4\87)` (UTF-8 as it
    // is: only the five special characters need escaping).
    assert_eq!(escape_filter_value("Parens R Us (for all your parenthetical needs)"), "Parens R Us \\28for all your parenthetical needs\\29");
    assert_eq!(escape_filter_value("*"), "\\2a");
    assert_eq!(escape_filter_value("C:\\MyFile"), "C:\\5cMyFile");
    assert_eq!(escape_filter_value("Lučić"), "Lučić");
    assert_eq!(escape_filter_value("a\0b"), "a\\00b");
    // What a person types cannot widen the filter.
    let f = user_filter(crate::config::ldap::DEFAULT_FILTER, "*)(uid=*))(|(uid=*");
    assert_eq!(f, "(&(objectClass=inetOrgPerson)(uid=\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a))");
    assert!(!f[..f.len() - 2].contains("*"));
}

#[test]
fn a_group_is_named_by_its_dns_first_rdn() {
    use groups::first_rdn_value;
    assert_eq!(first_rdn_value("CN=Domain Admins,OU=Groups,DC=ad,DC=example").as_deref(), Some("Domain Admins"));
    assert_eq!(first_rdn_value("cn=R\\2CD \\+ Ops,ou=groups,dc=x").as_deref(), Some("R,D + Ops"));
    assert_eq!(first_rdn_value("cn=L\\C3\\BCbeck+ou=x,dc=x").as_deref(), Some("Lübeck"));
    assert_eq!(first_rdn_value("no rdn"), None);
    assert_eq!(first_rdn_value("cn=,dc=x"), None);
}

#[test]
fn an_entry_maps_to_a_user_and_an_active_directory_guid_to_its_text_form() {
    let d = directory();
    let mut text: HashMap<String, Vec<String>> = HashMap::new();
    for (k, v) in [("entryuuid", "6b29fc40-ca47-1067-b31d-00dd010662da"), ("uid", "alice"), ("mail", "alice@corp.example"), ("givenName", "Alice"), ("sn", "Liddell"), ("cn", "Alice Liddell")] {
        text.insert(k.into(), vec![v.into()]);
    }
    let binary = HashMap::new();
    let e = Entry { text: &text, binary: &binary };
    let u = e.user(&d).unwrap();
    assert_eq!((u.provider.as_str(), u.subject.as_str(), u.username.as_str()), ("ldap:corp", "6b29fc40-ca47-1067-b31d-00dd010662da", "alice"));
    assert_eq!((u.email.as_deref(), u.email_verified), (Some("alice@corp.example"), false));
    assert_eq!((u.given_name.as_deref(), u.family_name.as_deref(), u.name.as_deref()), (Some("Alice"), Some("Liddell"), Some("Alice Liddell")));
    assert!(!e.disabled_in_active_directory());
    // Verified only when the directory is trusted for it, and only a plausible address.
    let trusted = LdapDirectory { email_verified: true, ..d.clone() };
    assert!(e.user(&trusted).unwrap().email_verified);
    text.insert("mail".into(), vec!["not an address".into()]);
    let e = Entry { text: &text, binary: &binary };
    assert_eq!((e.user(&trusted).unwrap().email, e.user(&trusted).unwrap().email_verified), (None, false));
    // No subject: no user.
    text.remove("entryuuid");
    assert!(Entry { text: &text, binary: &binary }.user(&d).is_none());

    // Active Directory: objectGUID is binary, its first three fields little-endian.
    let ad = LdapDirectory { subject_attribute: "objectGUID".into(), username_attribute: "sAMAccountName".into(), ..d };
    let mut text: HashMap<String, Vec<String>> = HashMap::new();
    text.insert("sAMAccountName".into(), vec!["bob".into()]);
    text.insert("userAccountControl".into(), vec!["514".into()]);
    let guid: Vec<u8> = vec![0x40, 0xfc, 0x29, 0x6b, 0x47, 0xca, 0x67, 0x10, 0xb3, 0x1d, 0x00, 0xdd, 0x01, 0x06, 0x62, 0xda];
    let binary = HashMap::from([("objectGUID".to_string(), vec![guid])]);
    let e = Entry { text: &text, binary: &binary };
    assert_eq!(e.user(&ad).unwrap().subject, "6b29fc40-ca47-1067-b31d-00dd010662da");
    assert!(e.disabled_in_active_directory(), "514 = NORMAL_ACCOUNT | ACCOUNTDISABLE");
    text.insert("userAccountControl".into(), vec!["512".into()]);
    assert!(!Entry { text: &text, binary: &binary }.disabled_in_active_directory());
}

#[test]
fn directories_are_checked_and_mistakes_named() {
    let ok = "id = \"corp\"\nbase_dn = \"dc=corp,dc=example\"\n";
    let check = |extra: &str| toml::from_str::<LdapDirectory>(&format!("{ok}{extra}")).map_err(|e| e.to_string()).and_then(|d| d.validate(0).map_err(|e| e.to_string()));
    assert!(check("url = \"ldaps://ldap.corp.example\"").is_ok());
    assert!(check("url = \"ldap://ldap.corp.example:389\"\nstarttls = true\nbind_dn = \"cn=s\"\nbind_password = \"p\"").is_ok());
    assert!(check("url = \"ldap://127.0.0.1:3389\"\nallow_insecure = true").is_ok());
    assert!(check("url = \"ldaps://x.example\"\nmode = \"sync\"\ngroup_mapping = \"search\"\ngroup_base_dn = \"ou=groups,dc=x\"").is_ok());
    for (extra, says) in [
        ("url = \"ldap://ldap.corp.example\"", "in clear"),
        ("url = \"ldaps://ldap.corp.example\"\nstarttls = true", "starttls is for ldap://"),
        ("url = \"http://ldap.corp.example\"", "not ldaps or ldap"),
        ("url = \"ldapi:///var/run/slapd.sock\"", "names no host"),
        ("url = \"ldaps://x.example\"\nbind_dn = \"cn=s\"", "go together"),
        ("url = \"ldaps://x.example\"\nbind_password = \"p\"", "go together"),
        ("url = \"ldaps://x.example\"\nuser_filter = \"(uid=alice)\"", "{username}"),
        ("url = \"ldaps://x.example\"\nsubject_attribute = \"entry UUID\"", "not an attribute name"),
        ("url = \"ldaps://x.example\"\nmode = \"push\"", "jit"),
        ("url = \"ldaps://x.example\"\nmode = \"sync\"\nsync_interval = 5", "sync_interval"),
        ("url = \"ldaps://x.example\"\ngroup_mapping = \"search\"", "needs group_base_dn"),
        ("url = \"ldaps://x.example\"\ngroup_mapping = \"search\"\ngroup_base_dn = \"ou=g\"\ngroup_filter = \"(cn=x)\"", "{dn}"),
        ("url = \"ldaps://x.example\"\ngroup_mapping = \"nested\"", "none, search or member_of"),
        ("url = \"ldaps://x.example\"\noperation_timeout = 0", "operation_timeout"),
        ("url = \"ldaps://x.example\"\nmax_connections = 0", "max_connections"),
        ("url = \"ldaps://x.example\"\nsurprise = 1", "surprise"),
    ] {
        let e = check(extra).unwrap_err();
        assert!(e.contains(says), "{extra}: {e}");
    }
    let secret = LdapDirectory { bind_dn: Some("cn=s".into()), bind_password: Some("pw-never-printed".into()), ..directory() };
    assert!(!format!("{secret:?}").contains("pw-never-printed"), "{secret:?}");
    let bad_id = toml::from_str::<LdapDirectory>("id = \"a b\"\nurl = \"ldaps://x.example\"\nbase_dn = \"dc=x\"").unwrap();
    assert!(bad_id.validate(0).unwrap_err().to_string().contains("id must be"));
    // The required members, left out, are named.
    for (toml, says) in [("url = \"ldaps://x.example\"\nbase_dn = \"dc=x\"", "id must be"), ("id = \"a\"\nbase_dn = \"dc=x\"", "url is required"), ("id = \"a\"\nurl = \"ldaps://x.example\"", "base_dn is required")] {
        let e = toml::from_str::<LdapDirectory>(toml).unwrap().validate(0).unwrap_err().to_string();
        assert!(e.contains(says), "{toml}: {e}");
    }
}

struct Fixed(&'static str, Outcome);

#[async_trait]
impl PasswordSource for Fixed {
    fn id(&self) -> &str {
        self.0
    }
    async fn authenticate(&self, _: &str, _: &str) -> Outcome {
        self.1.clone()
    }
}

#[tokio::test]
async fn sources_are_asked_in_order_and_an_unreachable_one_is_not_passed_off_as_unknown() {
    let user = SourceUser { provider: "ldap:b".into(), subject: "s".into(), username: "u".into(), email: None, email_verified: false, name: None, given_name: None, family_name: None, groups: None };
    let of = |v: Vec<(&'static str, Outcome)>| Sources::from_sources(v.into_iter().map(|(id, o)| Arc::new(Fixed(id, o)) as Arc<dyn PasswordSource>).collect());
    let a = of(vec![("a", Outcome::Unknown), ("b", Outcome::Authenticated(user.clone()))]).authenticate("u", "pw").await;
    assert_eq!((a.source.as_deref(), a.outcome), (Some("b"), Outcome::Authenticated(user.clone())));
    let a = of(vec![("a", Outcome::WrongPassword), ("b", Outcome::Authenticated(user.clone()))]).authenticate("u", "pw").await;
    assert_eq!((a.source.as_deref(), a.outcome), (Some("a"), Outcome::WrongPassword));
    let a = of(vec![("a", Outcome::Unreachable("down".into())), ("b", Outcome::Unknown)]).authenticate("u", "pw").await;
    assert_eq!((a.source.as_deref(), a.outcome), (Some("a"), Outcome::Unreachable("down".into())));
    let a = of(vec![("a", Outcome::Unknown)]).authenticate("u", "pw").await;
    assert_eq!((a.source, a.outcome), (None, Outcome::Unknown));
    // An empty password reaches no source, nor does a name or password longer than any here.
    let a = of(vec![("a", Outcome::Authenticated(user.clone()))]).authenticate("u", "").await;
    assert_eq!((a.source, a.outcome), (None, Outcome::WrongPassword));
    let a = of(vec![("a", Outcome::Authenticated(user.clone()))]).authenticate(&"u".repeat(257), "pw").await;
    assert_eq!((a.source, a.outcome), (None, Outcome::Unknown));
    let a = of(vec![("a", Outcome::Authenticated(user))]).authenticate("u", &"p".repeat(1025)).await;
    assert_eq!((a.source, a.outcome), (None, Outcome::Unknown));
}

#[test]
fn a_ca_file_that_cannot_be_used_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    for (path, says) in [(dir.path().join("missing.pem"), "ca_file"), (empty, "no CA certificate")] {
        let d = LdapDirectory { ca_file: Some(path), ..directory() };
        let e = LdapSource::new(d).err().expect("refused").to_string();
        assert!(e.contains(says) && e.contains("(corp)"), "{e}");
    }
    // Plain LDAP needs no TLS settings at all.
    let plain = LdapDirectory { url: "ldap://127.0.0.1:1".into(), allow_insecure: true, ca_file: Some(dir.path().join("missing.pem")), ..directory() };
    assert!(LdapSource::new(plain).is_ok());
}

/// A directory that accepts connections and never answers: each sign-in is "unreachable"
/// after `operation_timeout`, and with `max_connections = 1` a second one at the same time
/// waits no longer than that for the connection before being told the directory is busy.
#[tokio::test]
async fn a_silent_directory_times_out_and_the_connection_cap_holds() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let d = LdapDirectory { url: format!("ldap://127.0.0.1:{port}"), allow_insecure: true, operation_timeout: 1, connect_timeout: 1, max_connections: 1, ..directory() };
    let source = Arc::new(LdapSource::new(d).unwrap());
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(source.authenticate("alice", "pw"), source.authenticate("bob", "pw"));
    let took = started.elapsed();
    let mut why: Vec<String> = [a, b].into_iter().map(|o| match o {
        Outcome::Unreachable(why) => why,
        other => panic!("{other:?}"),
    }).collect();
    why.sort();
    assert!(why[0].contains("connections to the directory are in use"), "{why:?}");
    assert!(why[1].contains("search failed") || why[1].contains("in time"), "{why:?}");
    assert!(took < std::time::Duration::from_secs(4), "{took:?}");
}
