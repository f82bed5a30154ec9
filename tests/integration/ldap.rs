//! LDAP as a user source, against a real OpenLDAP: each test starts its own `slapd`
//! (`scripts/slapd.sh`: a config and an mdb database in a temporary directory, a free loopback
//! port; installed from Debian's packages when missing, and a test that cannot start it
//! fails), seeds it with `ldapadd`, and stops it at the end (or when a test takes it down on
//! purpose). Sign-in on the password form, just-in-time import and linking, the mapped e-mail
//! in the ID token, wrong and empty passwords, unknown and locked users, a user disabled here,
//! a directory down (local users unaffected), two directories in order, an Active
//! Directory-like entry (objectGUID, userAccountControl), StartTLS and LDAPS with a test CA.

use crate::harness::*;
use authrim::config::ldap::LdapDirectory;
use reqwest::Method;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

const ROOT: &str = "cn=admin,dc=example,dc=org";
const ROOT_PW: &str = "admin-secret";

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slapd.sh")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A running slapd; stopped when dropped.
pub(crate) struct Slapd {
    dir: tempfile::TempDir,
    pub url: String,
    pub tls_port: u16,
}

/// The tree every test's directory starts with: the base, `ou=people`, a password policy
/// (ppolicy: a user with `pwdAccountLockedTime` cannot bind).
const BASE: &str = "dn: dc=example,dc=org
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,dc=example,dc=org
objectClass: organizationalUnit
ou: people

dn: ou=services,dc=example,dc=org
objectClass: organizationalUnit
ou: services

dn: cn=authrim,ou=services,dc=example,dc=org
objectClass: inetOrgPerson
cn: authrim
sn: service
userPassword: search-account-pw

dn: ou=policies,dc=example,dc=org
objectClass: organizationalUnit
ou: policies

dn: cn=default,ou=policies,dc=example,dc=org
objectClass: pwdPolicy
objectClass: device
cn: default
pwdAttribute: userPassword
pwdLockout: TRUE
";

/// An inetOrgPerson under `ou=people`.
pub(crate) fn person(uid: &str, password: &str, mail: &str) -> String {
    format!("dn: uid={uid},ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid} Person\nsn: Person\ngivenName: {uid}\nmail: {mail}\nuserPassword: {password}\n")
}

impl Slapd {
    /// Started with `BASE` and `people`; with `tls` (certificate and key PEM), StartTLS on its
    /// port and LDAPS on `tls_port`.
    pub(crate) fn start(people: &[String], tls: Option<(String, String)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        if let Some((cert, key)) = tls {
            std::fs::create_dir_all(dir.path().join("tls")).unwrap();
            std::fs::write(dir.path().join("tls/cert.pem"), cert).unwrap();
            std::fs::write(dir.path().join("tls/key.pem"), key).unwrap();
        }
        let (port, tls_port) = (free_port(), free_port());
        let out = Command::new("bash").arg(script()).args(["start", dir.path().to_str().unwrap(), &port.to_string(), &tls_port.to_string()]).output().expect("run scripts/slapd.sh");
        assert!(out.status.success(), "slapd did not start (scripts/slapd.sh installs Debian's slapd and ldap-utils): {}", String::from_utf8_lossy(&out.stderr));
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let s = Self { dir, url, tls_port };
        s.ldif("ldapadd", &format!("{BASE}\n{}", people.join("\n")));
        s
    }

    /// `ldapadd` or `ldapmodify` as the root DN.
    pub(crate) fn ldif(&self, tool: &str, ldif: &str) {
        use std::io::Write;
        let mut child = Command::new(tool).args(["-x", "-H", &self.url, "-D", ROOT, "-w", ROOT_PW]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect(tool);
        child.stdin.take().unwrap().write_all(ldif.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    }

    pub(crate) fn stop(&self) {
        let _ = Command::new("bash").arg(script()).args(["stop", self.dir.path().to_str().unwrap()]).status();
    }

    /// A directory setting for it: `extra` is TOML on top (the URL's scheme with it).
    pub(crate) fn directory(&self, id: &str, extra: &str) -> LdapDirectory {
        let insecure = if extra.contains("url") { String::new() } else { format!("url = \"{}\"\nallow_insecure = true\n", self.url) };
        let toml = format!(
            "id = \"{id}\"\n{insecure}bind_dn = \"cn=authrim,ou=services,dc=example,dc=org\"\nbind_password = \"search-account-pw\"\nbase_dn = \"ou=people,dc=example,dc=org\"\nemail_verified = true\nconnect_timeout = 2\noperation_timeout = 2\n{extra}"
        );
        let d: LdapDirectory = toml::from_str(&toml).unwrap();
        d.validate(0).unwrap();
        d
    }
}

impl Drop for Slapd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The password form, answered; the page after it (a consent page or a redirect, followed).
pub(crate) async fn sign_in(browser: &Browser, username: &str, password: &str) -> Page {
    let page = Page::from(browser.authorize(&request_query("code", "rp", &[("prompt", "login")])).await).await;
    assert!(page.is_login(), "{}", page.html);
    browser.post("/login", &[("challenge", &page.challenge()), ("username", username), ("password", password)]).await
}

/// Signed in through the directory and on to the client: the ID token's claims (asked for
/// the e-mail in it too), and userinfo's.
pub(crate) async fn id_token(s: &TestServer, secret: &str, username: &str, password: &str) -> Value {
    let browser = s.browser();
    let res = browser.authorize(&request_query("code", "rp", &[("claims", r#"{"id_token":{"email":null,"email_verified":null}}"#)])).await;
    let params = browser.finish_login(res, username, password).await;
    let (status, body, _) = s.token(Some(("rp", secret)), &[("grant_type", "authorization_code"), ("code", &params["code"]), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(status, 200, "{body}");
    // The scopes' claims come from userinfo (a code flow with an access token: OpenID
    // Connect Core §5.4), beside the ID token's own.
    let mut claims = jwt_parts(body["id_token"].as_str().unwrap()).1;
    claims["id_token_email"] = claims["email"].clone();
    let (status, info, _) = s.userinfo(body["access_token"].as_str().unwrap()).await;
    assert_eq!((status, &info["sub"]), (200, &claims["sub"]), "{info}");
    for (k, v) in info.as_object().unwrap() {
        claims[k] = v.clone();
    }
    claims
}

pub(crate) fn incorrect(page: &Page) {
    assert_eq!(page.status, 401, "{}", page.html);
    assert!(page.html.contains("Incorrect username or password") && page.is_login(), "{}", page.html);
}

pub(crate) async fn events(s: &TestServer, event: &str) -> Vec<Value> {
    let (_, v) = s.admin(Method::GET, &format!("/admin/audit?event={event}"), None).await;
    v["events"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn directory_users_sign_in_are_imported_and_linked_on_sqlite_and_postgres() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org"), person("locked", "locked-directory-pw", "locked@example.org") + "pwdAccountLockedTime: 000001010000Z\n"], None);
    for postgres in [false, true] {
        let corp = slapd.directory("corp", "");
        let s = TestServer::start_on(postgres, |c| c.ldap_directories = vec![corp]).await;
        let (_, secret) = s.client("rp", json!({})).await;
        let secret = secret.unwrap();
        s.user("lou", json!({"email": "lou@example.net"})).await;

        // First sign-in: the user is created, without a local password, and linked.
        let claims = id_token(&s, &secret, "alice", "alice-directory-pw").await;
        assert_eq!((claims["email"].as_str(), claims["email_verified"].as_bool()), (Some("alice@example.org"), Some(true)), "{claims}");
        assert_eq!(claims["id_token_email"], "alice@example.org", "{claims}");
        assert_eq!(claims["amr"], json!(["pwd"]));
        let registry = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT);
        let user = registry.user(claims["sub"].as_str().unwrap()).expect("imported");
        assert_eq!((user.username.as_str(), user.claims["family_name"].as_str()), ("alice", Some("Person")));
        assert!(user.password_hash.is_empty());
        let linked = authrim::identity::links::of_user(&s.server.app.db, user.tenant, &user.id).await.unwrap();
        assert_eq!(linked.len(), 1);
        assert_eq!(linked[0].provider, "ldap:corp");
        assert_eq!(linked[0].subject.len(), 36, "entryUUID: {}", linked[0].subject);
        let created = events(&s, "user_created").await;
        assert_eq!(created[0]["detail"], json!({"by": "ldap", "provider": "ldap:corp"}), "{created:?}");
        assert_eq!(events(&s, "directory_sign_in").await.len(), 1);

        // The directory changes her address: the next sign-in (by her address here) carries it,
        // and she is still one user.
        slapd.ldif("ldapmodify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: modify\nreplace: mail\nmail: alice.l@example.org\n");
        let again = id_token(&s, &secret, "alice@example.org", "alice-directory-pw").await;
        assert_eq!((again["sub"].as_str(), again["email"].as_str()), (claims["sub"].as_str(), Some("alice.l@example.org")));
        slapd.ldif("ldapmodify", "dn: uid=alice,ou=people,dc=example,dc=org\nchangetype: modify\nreplace: mail\nmail: alice@example.org\n");
        assert_eq!(registry.list_users().len(), 2);

        // A directory user's password is the directory's: not changed here.
        let browser = s.browser();
        let res = browser.authorize(&request_query("code", "rp", &[])).await;
        browser.finish_login(res, "alice", "alice-directory-pw").await;
        let page = Page::from(browser.client.get(s.url("/account/password")).send().await.unwrap()).await;
        assert_eq!(page.status, 409, "{}", page.html);
        assert!(page.html.contains("kept by your organization"), "{}", page.html);
        // Nor is its link to the directory removed (the account page offers no button; a
        // forged form is refused).
        let account = Page::from(browser.client.get(s.url("/account")).send().await.unwrap()).await;
        let csrf = crate::passkeys::field(&account, "csrf");
        let page = browser.post("/account/links/remove", &[("csrf", csrf.as_str()), ("idp", "ldap:corp")]).await;
        assert!(page.status == 409 && page.html.contains("cannot be removed"), "{}", page.html);
        assert_eq!(authrim::identity::links::of_user(&s.server.app.db, user.tenant, &user.id).await.unwrap().len(), 1);

        // Wrong password, unknown user, a user locked in the directory (ppolicy): the local
        // form's message, and audited. An empty password is never sent as a bind.
        let browser = s.browser();
        incorrect(&sign_in(&browser, "alice", "not-her-password").await);
        incorrect(&sign_in(&browser, "nobody", "whatever-pw").await);
        incorrect(&sign_in(&browser, "locked", "locked-directory-pw").await);
        let empty = sign_in(&browser, "alice", "").await;
        assert_eq!(empty.status, 400, "{}", empty.html);
        let failures = events(&s, "login_failure").await;
        let reasons: Vec<_> = failures.iter().map(|e| e["detail"]["reason"].as_str().unwrap_or_default().to_string()).collect();
        assert!(reasons.contains(&"password".into()) && reasons.contains(&"unknown".into()), "{failures:?}");
        assert!(failures.iter().all(|e| e["detail"]["kind"] == "ldap"), "{failures:?}");

        // Disabled here: refused, whatever the directory says.
        let (status, _) = s.admin(Method::PATCH, &format!("/admin/users/{}", user.id), Some(json!({"disabled": true}))).await;
        assert_eq!(status, 200);
        incorrect(&sign_in(&s.browser(), "alice", "alice-directory-pw").await);
        let (status, _) = s.admin(Method::PATCH, &format!("/admin/users/{}", user.id), Some(json!({"disabled": false}))).await;
        assert_eq!(status, 200);

        // A local user signs in as ever, and is never looked up in the directory.
        let browser = s.browser();
        let params = s.code_for(&browser, "rp", "lou", &[]).await;
        assert!(params.contains_key("code"));
        assert_eq!(events(&s, "directory_sign_in").await.len(), 3);
    }
}

/// Wrong directory passwords count in the login throttle as local ones do: past the limit,
/// even the right password is refused for a while.
#[tokio::test]
async fn directory_failures_are_throttled_as_local_ones() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org")], None);
    let corp = slapd.directory("corp", "");
    let s = TestServer::start_with(|c| {
        c.ldap_directories = vec![corp];
        c.login_max_failures_per_account = 3;
        c.login_max_failures_per_address = 10_000;
    })
    .await;
    s.client("rp", json!({})).await;
    for _ in 0..3 {
        incorrect(&sign_in(&s.browser(), "alice", "guess-pw").await);
    }
    let locked = sign_in(&s.browser(), "alice", "alice-directory-pw").await;
    assert_eq!(locked.status, 429, "{}", locked.html);
    assert!(events(&s, "directory_sign_in").await.is_empty());
}

#[tokio::test]
async fn a_directory_down_is_said_so_and_local_users_are_unaffected() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org")], None);
    let corp = slapd.directory("corp", "");
    let s = TestServer::start_with(|c| c.ldap_directories = vec![corp]).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();
    s.user("lou", json!({})).await;
    id_token(&s, &secret, "alice", "alice-directory-pw").await;

    slapd.stop();
    let page = sign_in(&s.browser(), "alice", "alice-directory-pw").await;
    assert_eq!(page.status, 503, "{}", page.html);
    assert!(page.html.contains("not reachable") && page.is_login(), "{}", page.html);
    let down = events(&s, "directory_unreachable").await;
    assert_eq!(down[0]["detail"]["directory"], "corp", "{down:?}");
    // Not counted against the account: many tries while it is down lock nobody out.
    for _ in 0..6 {
        assert_eq!(sign_in(&s.browser(), "alice", "alice-directory-pw").await.status, 503);
    }
    // The local user: signed in, unaffected.
    let params = s.code_for(&s.browser(), "rp", "lou", &[]).await;
    assert!(params.contains_key("code"));
    // A directory that does not even accept connections (nothing listens): the same.
    let nothing = format!("url = \"ldap://127.0.0.1:{}\"\nallow_insecure = true\n", free_port());
    let gone = slapd.directory("gone", &nothing);
    let s = TestServer::start_with(|c| c.ldap_directories = vec![gone]).await;
    s.client("rp", json!({})).await;
    assert_eq!(sign_in(&s.browser(), "alice", "alice-directory-pw").await.status, 503);
}

#[tokio::test]
async fn two_directories_are_asked_in_order_and_an_active_directory_entry_maps() {
    let first = Slapd::start(&[person("alice", "alice-first-pw", "alice@example.org"), person("erin", "erin-first-pw", "erin@example.org")], None);
    // The second: an alice of its own (never reached: the first knows alice), carol, and bob
    // as Active Directory has users: objectGUID, sAMAccountName, userAccountControl 514
    // (ACCOUNTDISABLE).
    let bob = "dn: cn=bob,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nobjectClass: extensibleObject\ncn: bob\nsn: Builder\nsAMAccountName: bob\nmail: bob@example.com\nuserAccountControl: 514\nobjectGUID:: QPwpa0fKZxCzHQDdAQZi2g==\nuserPassword: bob-directory-pw\n";
    let second = Slapd::start(&[person("alice", "alice-second-pw", "alice2@example.com"), person("carol", "carol-directory-pw", "carol@example.com"), person("erin", "erin-second-pw", "erin2@example.com"), bob.to_string()], None);
    let dirs = vec![
        first.directory("first", ""),
        second.directory("second", ""),
        second.directory("ad", "user_filter = \"(&(objectClass=inetOrgPerson)(cn={username}))\"\nsubject_attribute = \"objectGUID\"\nusername_attribute = \"sAMAccountName\""),
    ];
    let s = TestServer::start_with(|c| c.ldap_directories = dirs).await;
    let (_, secret) = s.client("rp", json!({})).await;
    let secret = secret.unwrap();

    let carol = id_token(&s, &secret, "carol", "carol-directory-pw").await;
    assert_eq!(carol["email"], "carol@example.com");
    let alice = id_token(&s, &secret, "alice", "alice-first-pw").await;
    assert_eq!(alice["email"], "alice@example.org");
    incorrect(&sign_in(&s.browser(), "alice", "alice-second-pw").await);

    // erin, imported from the first, then gone from it: the second's erin is another entry,
    // and is not handed the first one's account.
    id_token(&s, &secret, "erin", "erin-first-pw").await;
    first.ldif("ldapmodify", "dn: uid=erin,ou=people,dc=example,dc=org\nchangetype: delete\n");
    let taken = sign_in(&s.browser(), "erin", "erin-second-pw").await;
    assert_eq!(taken.status, 409, "{}", taken.html);
    assert!(taken.html.contains("already uses this name"), "{}", taken.html);
    incorrect(&sign_in(&s.browser(), "erin", "erin-first-pw").await);

    // Disabled in "AD": refused without a bind; enabled, signed in, linked by its GUID.
    incorrect(&sign_in(&s.browser(), "bob", "bob-directory-pw").await);
    let refused = events(&s, "login_failure").await;
    assert!(refused.iter().any(|e| e["detail"]["directory"] == "ad" && e["detail"]["reason"].as_str().unwrap().contains("userAccountControl")), "{refused:?}");
    second.ldif("ldapmodify", "dn: cn=bob,ou=people,dc=example,dc=org\nchangetype: modify\nreplace: userAccountControl\nuserAccountControl: 512\n");
    let bob = id_token(&s, &secret, "bob", "bob-directory-pw").await;
    let user = s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user(bob["sub"].as_str().unwrap()).unwrap();
    let linked = authrim::identity::links::of_user(&s.server.app.db, user.tenant, &user.id).await.unwrap();
    assert_eq!((linked[0].provider.as_str(), linked[0].subject.as_str()), ("ldap:ad", "6b29fc40-ca47-1067-b31d-00dd010662da"));
}

/// A CA and a certificate for 127.0.0.1 it issued: (CA PEM, certificate PEM, key PEM).
fn test_ca() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap().signed_by(&key, &issuer).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

#[tokio::test]
async fn starttls_and_ldaps_with_a_private_ca() {
    let (ca, cert, key) = test_ca();
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org")], Some((cert, key)));
    let files = tempfile::tempdir().unwrap();
    let ca_file = files.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let (other_ca, _, _) = test_ca();
    let other_file = files.path().join("other-ca.pem");
    std::fs::write(&other_file, other_ca).unwrap();
    let port = slapd.url.rsplit(':').next().unwrap().to_string();
    let starttls = format!("url = \"ldap://127.0.0.1:{port}\"\nstarttls = true\nca_file = \"{}\"\n", ca_file.display());
    let ldaps = format!("url = \"ldaps://127.0.0.1:{}\"\nca_file = \"{}\"\n", slapd.tls_port, ca_file.display());
    let untrusted = format!("url = \"ldaps://127.0.0.1:{}\"\nca_file = \"{}\"\n", slapd.tls_port, other_file.display());
    for (extra, works) in [(starttls, true), (ldaps, true), (untrusted, false)] {
        let d = slapd.directory("corp", &extra);
        let s = TestServer::start_with(|c| c.ldap_directories = vec![d]).await;
        let (_, secret) = s.client("rp", json!({})).await;
        if works {
            let claims = id_token(&s, &secret.unwrap(), "alice", "alice-directory-pw").await;
            assert_eq!(claims["email"], "alice@example.org", "{extra}");
        } else {
            // A certificate of a CA not trusted: no password is sent, and it is "not reachable".
            let page = sign_in(&s.browser(), "alice", "alice-directory-pw").await;
            assert_eq!(page.status, 503, "{extra}: {}", page.html);
            let down = events(&s, "directory_unreachable").await;
            assert!(down[0]["detail"]["error"].as_str().unwrap().contains("connect"), "{down:?}");
        }
    }
}

/// A tenant's own directory (`ldap_directories` in its settings): its bind password sealed and
/// never shown, its users signing in at that tenant only.
#[tokio::test]
async fn a_tenant_has_directories_of_its_own() {
    let slapd = Slapd::start(&[person("alice", "alice-directory-pw", "alice@example.org")], None);
    let s = TestServer::start().await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let dir = json!({"id": "corp", "url": slapd.url, "allow_insecure": true, "bind_dn": "cn=authrim,ou=services,dc=example,dc=org",
        "bind_password": "search-account-pw", "base_dn": "ou=people,dc=example,dc=org"});
    let (status, body) = s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": {"ldap_directories": [dir]}}))).await;
    assert_eq!(status, 200, "{body}");
    let (_, shown) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert_eq!(shown["settings"]["ldap_directories"][0]["bind_password_set"], true, "{shown}");
    assert!(!shown.to_string().contains("search-account-pw"), "{shown}");
    // More than the tenant may have: refused, nothing changed.
    let many: Vec<Value> = (0..6).map(|i| json!({"id": format!("d{i}"), "url": "ldaps://ldap.example", "base_dn": "dc=x"})).collect();
    let (status, body) = s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": {"ldap_directories": many}}))).await;
    assert!(status == 400 && body.to_string().contains("tenant_max_ldap_directories"), "{status} {body}");

    let status_at = |prefix: &'static str| {
        let s = &s;
        async move {
            let b = crate::tenants::browser();
            let (_, _) = crate::tenants::admin_at(s, prefix, Method::POST, "/admin/clients", Some(json!({"client_id": "rp", "redirect_uris": [REDIRECT]}))).await;
            let login = Page::from(b.get(s.url(&format!("{prefix}/authorize"))).query(&request_query("code", "rp", &[])).send().await.unwrap()).await;
            let form = [("challenge", login.challenge()), ("username", "alice".into()), ("password", "alice-directory-pw".into())];
            b.post(s.url(&format!("{prefix}/login"))).form(&form).send().await.unwrap().status().as_u16()
        }
    };
    // Signed in at acme (on to consent), unknown at the default tenant.
    assert_eq!(status_at("/t/acme").await, 303);
    assert_eq!(status_at("").await, 401);
    let acme = s.server.app.tenants.all().into_iter().find(|t| t.slug == "acme").unwrap();
    let alice = s.server.app.registry.of(acme.id).user_by_login("alice").expect("imported into acme");
    let linked = authrim::identity::links::of_user(&s.server.app.db, acme.id, &alice.id).await.unwrap();
    assert_eq!(linked[0].provider, "ldap:corp");
    assert!(s.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).user_by_login("alice").is_none());
}
