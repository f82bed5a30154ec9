use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn defaults_are_valid() {
    let c = Config::from_sources(None, &[]).unwrap();
    assert_eq!(c.code_expiry, 60);
    assert_eq!(c.listen.port(), 8080);
    // A domain name, so that passkeys work on the README's run command (issue 36).
    assert_eq!(c.issuer, "http://localhost:8080");
}

#[test]
fn an_unset_issuer_follows_the_listen_port() {
    let c = Config::from_sources(None, &env(&[("AUTHRIM_LISTEN", "127.0.0.1:9123")])).unwrap();
    assert_eq!(c.issuer, "http://localhost:9123");
    let c = Config::from_sources(None, &env(&[("AUTHRIM_LISTEN", "127.0.0.1:9123"), ("AUTHRIM_ISSUER", "http://127.0.0.1:9123")])).unwrap();
    assert_eq!(c.issuer, "http://127.0.0.1:9123", "a configured issuer is kept");
}

#[test]
fn env_overrides_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authrim.toml");
    std::fs::write(&path, "code_expiry = 30\ncode_shards = 8\n").unwrap();
    let c = Config::from_sources(Some(&path), &env(&[("AUTHRIM_CODE_SHARDS", "4")])).unwrap();
    assert_eq!(c.code_expiry, 30);
    assert_eq!(c.code_shards, 4);
}

#[test]
fn plain_http_issuer_refused_unless_loopback() {
    let err = Config::from_sources(None, &env(&[("AUTHRIM_ISSUER", "http://id.example.com")])).unwrap_err();
    assert!(err.to_string().contains("https"));
    assert!(Config::from_sources(None, &env(&[("AUTHRIM_ISSUER", "https://id.example.com")])).is_ok());
    assert!(Config::from_sources(None, &env(&[("AUTHRIM_ISSUER", "http://localhost:9000")])).is_ok());
}

#[test]
fn bad_values_are_named_in_the_error() {
    let err = Config::from_sources(None, &env(&[("AUTHRIM_CODE_EXPIRY", "soon")])).unwrap_err();
    assert!(err.to_string().contains("AUTHRIM_CODE_EXPIRY"));
    let err = Config::from_sources(None, &env(&[("AUTHRIM_CODE_SHARDS", "0")])).unwrap_err();
    assert!(err.to_string().contains("code_shards"));
}

#[test]
fn test_endpoints_need_admin_token_and_loopback_or_force() {
    let err = Config::from_sources(None, &env(&[("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true")])).unwrap_err();
    assert!(err.to_string().contains("ADMIN_TOKEN"));
    let remote = [
        ("AUTHRIM_ENABLE_TEST_ENDPOINTS", "true"),
        ("AUTHRIM_ADMIN_TOKEN", "t"),
        ("AUTHRIM_ISSUER", "https://id.example.com"),
    ];
    assert!(Config::from_sources(None, &env(&remote)).unwrap_err().to_string().contains("refusing"));
    let mut forced = remote.to_vec();
    forced.push(("AUTHRIM_FORCE_TEST_ENDPOINTS", "true"));
    assert!(Config::from_sources(None, &env(&forced)).is_ok());
    assert!(Config::from_sources(None, &env(&remote[..2])).is_ok(), "localhost issuer");
}

#[test]
fn postgres_needs_a_shared_key_encryption_key() {
    let url = ("AUTHRIM_DATABASE_URL", "postgres://authrim@127.0.0.1/authrim");
    let err = Config::from_sources(None, &env(&[url])).unwrap_err();
    assert!(err.to_string().contains("AUTHRIM_KEY_ENCRYPTION_KEY"), "{err}");
    let kek = ("AUTHRIM_KEY_ENCRYPTION_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    assert!(Config::from_sources(None, &env(&[url, kek])).is_ok());
    let err = Config::from_sources(None, &env(&[("AUTHRIM_DATABASE_URL", "mysql://x"), kek])).unwrap_err();
    assert!(err.to_string().contains("postgres://"));
}

#[test]
fn a_key_signs_only_after_every_cache_has_seen_it() {
    let err = Config::from_sources(None, &env(&[("AUTHRIM_KEY_PUBLISH_DELAY", "60"), ("AUTHRIM_KEY_CACHE_TTL", "60")])).unwrap_err();
    assert!(err.to_string().contains("key_publish_delay"));
}

#[test]
fn connection_limits_are_read_and_checked() {
    let c = Config::from_sources(None, &env(&[("AUTHRIM_MAX_CONNECTIONS", "300"), ("AUTHRIM_IDLE_TIMEOUT", "5")])).unwrap();
    assert_eq!((c.max_connections, c.idle_timeout, c.header_read_timeout), (Some(300), 5, 10));
    let err = Config::from_sources(None, &env(&[("AUTHRIM_HEADER_READ_TIMEOUT", "0")])).unwrap_err();
    assert!(err.to_string().contains("header_read_timeout"), "{err}");
    assert!(Config::from_sources(None, &env(&[("AUTHRIM_MAX_CONNECTIONS", "0")])).is_err());
    assert!(Config::from_sources(None, &env(&[("AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS", "0")])).is_err());
}

#[test]
fn unknown_file_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authrim.toml");
    std::fs::write(&path, "code_expiri = 30\n").unwrap();
    assert!(Config::from_sources(Some(&path), &[]).is_err());
}

/// authrim.example.toml (generated from docs/configuration.md's table by scripts/example-config.py) names
/// every setting the environment can set, and loads as it is (all comments).
#[test]
fn the_example_configuration_has_every_setting() {
    let example = include_str!("../../authrim.example.toml");
    let missing: Vec<&str> = ENV_VARS.iter().map(|(_, key)| *key).filter(|key| !example.contains(&format!("\n# {key} = "))).collect();
    assert!(missing.is_empty(), "not in authrim.example.toml (run scripts/example-config.py after documenting them in docs/configuration.md): {missing:?}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authrim.toml");
    std::fs::write(&path, example).unwrap();
    Config::from_sources(Some(&path), &[]).unwrap();
}

/// The upstream example of docs/upstream-providers.md is a valid configuration; the mistakes an operator makes are
/// refused at start with the setting named.
#[test]
fn identity_providers_from_the_readme_load_and_mistakes_are_named() {
    let readme = include_str!("../../docs/upstream-providers.md");
    let start = readme.find("   [[identity_providers]]").expect("the example in docs/upstream-providers.md");
    let block: String = readme[start..].lines().take_while(|l| !l.trim_start().starts_with("```")).map(|l| format!("{}\n", l.trim_start())).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authrim.toml");
    std::fs::write(&path, &block).unwrap();
    let c = Config::from_sources(Some(&path), &[]).unwrap();
    assert_eq!(c.identity_providers.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), ["corp", "github"]);
    assert_eq!(c.identity_providers[1].kind, upstreams::UpstreamKind::Oauth2);
    assert_eq!(c.identity_providers[0].claims.get("preferred_username").map(String::as_str), Some("upn"));

    let bad = |toml: &str, says: &str| {
        std::fs::write(&path, toml).unwrap();
        let err = Config::from_sources(Some(&path), &[]).unwrap_err().to_string();
        assert!(err.contains(says), "{toml}: {err}");
    };
    let ok = "[[identity_providers]]\nid = \"a\"\nname = \"A\"\nissuer = \"https://a.example\"\nclient_id = \"c\"\nclient_secret = \"s\"\n";
    bad(&format!("{ok}{ok}"), "used twice");
    bad("[[identity_providers]]\nid = \"a b\"\nname = \"A\"\nissuer = \"https://a.example\"\nclient_id = \"c\"\nclient_secret = \"s\"\n", "id must be");
    bad("[[identity_providers]]\nid = \"a\"\nname = \"A\"\nissuer = \"https://a.example\"\nclient_id = \"c\"\n", "client_secret is required");
    bad("[[identity_providers]]\nid = \"a\"\nname = \"A\"\nkind = \"oauth2\"\nclient_id = \"c\"\nclient_secret = \"s\"\n", "needs authorization_endpoint");
    bad("[[identity_providers]]\nid = \"a\"\nname = \"A\"\nclient_id = \"c\"\nclient_secret = \"s\"\n", "needs its issuer");
    bad("[[identity_providers]]\nid = \"a\"\nname = \"A\"\nissuer = \"https://a.example\"\nclient_id = \"c\"\nclient_secret = \"s\"\nsurprise = 1\n", "surprise");
}

/// docs/ldap.md's example (an OpenLDAP and an Active Directory) is a valid configuration;
/// `ldap_directories`' mistakes stop the start with the setting named.
#[test]
fn ldap_directories_from_the_docs_load_and_mistakes_are_named() {
    let doc = include_str!("../../docs/ldap.md");
    let start = doc.find("[[ldap_directories]]").expect("the example in docs/ldap.md");
    let block: String = doc[start..].lines().take_while(|l| !l.starts_with("```")).map(|l| format!("{l}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authrim.toml");
    // The example's CA file, made to exist here.
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "").unwrap();
    std::fs::write(&path, block.replace("/etc/authrim/corp-ca.pem", ca.to_str().unwrap())).unwrap();
    let c = Config::from_sources(Some(&path), &[]).unwrap();
    assert_eq!(c.ldap_directories.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["corp", "ad"]);
    assert_eq!((c.ldap_directories[1].subject_attribute.as_str(), c.ldap_directories[1].starttls), ("objectGUID", true));
    assert_eq!(c.ldap_directories[0].max_connections, 10);

    let ok = "[[ldap_directories]]\nid = \"a\"\nurl = \"ldaps://l.example\"\nbase_dn = \"dc=x\"\n";
    std::fs::write(&path, format!("{ok}{ok}")).unwrap();
    let err = Config::from_sources(Some(&path), &[]).unwrap_err().to_string();
    assert!(err.contains("used twice"), "{err}");
    std::fs::write(&path, ok.replace("ldaps://", "ldap://")).unwrap();
    let err = Config::from_sources(Some(&path), &[]).unwrap_err().to_string();
    assert!(err.contains("ldap_directories[0] (a)") && err.contains("in clear"), "{err}");
}

/// Every member of `[[ldap_directories]]` is in configuration.md's table of them.
#[test]
fn every_ldap_directory_member_is_documented() {
    let doc = include_str!("../../docs/configuration.md");
    let section = &doc[doc.find("## `[[ldap_directories]]`").expect("the section")..];
    let members = serde_json::to_value(ldap::LdapDirectory::default()).unwrap();
    for key in members.as_object().unwrap().keys() {
        assert!(section.contains(&format!("`{key}`")), "{key} is not in docs/configuration.md's [[ldap_directories]] table");
    }
}
