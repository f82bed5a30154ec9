//! SAML upstream identity providers (issue 33, slice 4), on SQLite and PostgreSQL: an IdP
//! whose Responses are made here with Authrim's own IdP code (`saml::response::success`,
//! signed with a key of the test's), configured by its fields. The AuthnRequest read back
//! (`idp_hint`, HTTP-Redirect), the Response posted to `/saml/acs`, the code and ID token of
//! the client `rp`; the user provisioned, then found again; a replay, an answer to another
//! request and one signed by another key refused (400, audited), no user made by them.
//! pysaml2 as the IdP: tests/e2e/test_saml_upstream.py.

use crate::harness::*;
use crate::upstream::submit;
use authrim::keys::SigningKey;
use authrim::saml::response::{success, Attr, Grant};
use authrim::saml::signer::Signer;
use authrim::saml::xml::{self, Limits};
use base64::Engine as _;
use reqwest::Method;
use serde_json::json;
use std::sync::Arc;

const IDP: &str = "https://idp.test/saml/idp";
const SSO: &str = "https://idp.test/saml/sso";

fn idp_signer() -> Arc<Signer> {
    let (key, _) = SigningKey::generate().unwrap();
    authrim::saml::signer::of(&key).unwrap()
}

/// The AuthnRequest `rp`'s sign-in sends to the IdP: (its ID, the RelayState).
async fn to_idp(browser: &Browser, down: &TestServer) -> (String, String) {
    to_idp_by(browser, down, "&idp_hint=corp").await
}

/// As `to_idp`, the authorization request with `extra` (what sends it to the IdP).
async fn to_idp_by(browser: &Browser, down: &TestServer, extra: &str) -> (String, String) {
    let url = down.url(&format!(
        "/authorize?response_type=code&client_id=rp&redirect_uri={}&scope=openid%20email%20profile&state=st&nonce=n{extra}",
        url::form_urlencoded::byte_serialize(REDIRECT.as_bytes()).collect::<String>()
    ));
    // `idp_hint`: straight to the IdP (not followed: it is nowhere).
    request_of(down, Page::from(browser.client.get(&url).send().await.unwrap()).await)
}

/// The redirect to the IdP `page` is: (the AuthnRequest's ID, the RelayState).
fn request_of(down: &TestServer, page: Page) -> (String, String) {
    let location = page.location.clone().expect("sent to the IdP");
    assert!(location.starts_with(&format!("{SSO}?")), "{location}");
    let query = location.split_once('?').unwrap().1;
    let params: std::collections::HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    assert_eq!(params["SigAlg"], "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    let request = xml::parse_authn_request(&xml::decode_redirect(&params["SAMLRequest"], &Limits::default()).unwrap(), &Limits::default()).unwrap();
    assert_eq!(request.issuer.as_deref(), Some(format!("{}/saml/sp", down.issuer()).as_str()));
    assert_eq!(request.acs_url.as_deref(), Some(format!("{}/saml/acs", down.issuer()).as_str()));
    (request.id, params["RelayState"].clone())
}

fn response(signer: &Signer, down: &TestServer, in_response_to: &str, name_id: &str) -> String {
    let issuer = down.issuer();
    let (sp, acs) = (format!("{issuer}/saml/sp"), format!("{issuer}/saml/acs"));
    let now = authrim::util::now();
    let grant = Grant {
        idp_entity_id: IDP,
        sp_entity_id: &sp,
        acs_url: &acs,
        in_response_to: Some(in_response_to),
        name_id,
        name_id_format: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
        session_index: "s1",
        authn_instant: now,
        authn_context: "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport",
        attributes: vec![
            Attr { name: "urn:oid:0.9.2342.19200300.100.1.3".into(), name_format: None, friendly_name: Some("mail".into()), values: vec!["sam@corp.test".into()] },
            Attr { name: "displayName".into(), name_format: None, friendly_name: None, values: vec!["Sam <Saml> & Co".into()] },
            Attr { name: "emailVerified".into(), name_format: None, friendly_name: None, values: vec!["true".into()] },
        ],
        now,
        lifetime: 300,
        sign_response: true,
        encrypt_to: None,
    };
    base64::engine::general_purpose::STANDARD.encode(success(signer, &grant).unwrap())
}

async fn acs(browser: &Browser, down: &TestServer, response: &str, relay: &str) -> Page {
    submit(browser, &down.url(""), "/saml/acs", &[("SAMLResponse", response), ("RelayState", relay)]).await
}

async fn code_of(browser: &Browser, down: &TestServer, rp_secret: &str, mut page: Page) -> serde_json::Value {
    if page.is_consent() {
        page = submit(browser, &down.url(""), "/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
    }
    let code = page.redirect_params()["code"].clone();
    let (st, tokens, _) = down.token(Some(("rp", rp_secret)), &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)]).await;
    assert_eq!(st, 200, "{tokens}");
    jwt_parts(tokens["id_token"].as_str().unwrap()).1
}

async fn refusals(down: &TestServer) -> usize {
    let (_, audit) = down.admin(Method::GET, "/admin/audit?event=saml_assertion_refused", None).await;
    audit["events"].as_array().unwrap().len()
}

/// Ours, with the SAML upstream `corp` (by its fields) whose key `signer` is, and the client
/// `rp` (its secret).
async fn start(postgres: bool) -> (TestServer, Arc<Signer>, String) {
    let signer = idp_signer();
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    if postgres {
        config.database_url = crate::pg_cluster::fresh_database().await;
        config.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
    }
    config.identity_providers = vec![toml::from_str(&format!(
        "id = \"corp\"\nname = \"Corp\"\nkind = \"saml\"\nentity_id = \"{IDP}\"\nsso_url = \"{SSO}\"\ncertificates = [\"{}\"]\nclaims = {{ email_verified = \"emailVerified\" }}",
        signer.cert_base64()
    ))
    .unwrap()];
    let down = TestServer::start_in(dir, config).await;
    let (_, rp_secret) = down.client("rp", json!({})).await;
    (down, signer, rp_secret.unwrap())
}

async fn sign_in(postgres: bool) {
    let (down, signer, rp_secret) = start(postgres).await;
    let browser = down.browser();
    let (id, relay) = to_idp(&browser, &down).await;
    let genuine = response(&signer, &down, &id, "sam-1");
    // Answers that sign nobody in: another IdP's key, another request.
    let page = acs(&browser, &down, &response(&idp_signer(), &down, &id, "sam-1"), &relay).await;
    assert_eq!(page.status, 400, "{}", page.html);
    let (id2, relay2) = to_idp(&browser, &down).await;
    let page = acs(&browser, &down, &genuine, &relay2).await;
    assert!(page.status == 400 && page.html.contains("InResponseTo"), "{}", page.html);
    assert_eq!(refusals(&down).await, 2);

    let claims = code_of(&browser, &down, &rp_secret, acs(&browser, &down, &genuine, &relay).await).await;
    assert_eq!(claims["amr"], json!(["fed"]), "{claims}");
    let registry = down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT);
    let user = registry.user(claims["sub"].as_str().unwrap()).expect("provisioned");
    assert_eq!(user.email(), Some("sam@corp.test"));
    assert_eq!(user.claims["name"], "Sam <Saml> & Co");
    assert_eq!(user.claims["email_verified"], true, "mapped by `claims`");

    // Replayed: refused.
    let page = acs(&browser, &down, &genuine, &relay).await;
    assert_eq!(page.status, 400, "{}", page.html);
    assert_eq!(refusals(&down).await, 3);

    // The other request answered, in its own right: the same user (linked by NameID).
    let again = code_of(&browser, &down, &rp_secret, acs(&browser, &down, &response(&signer, &down, &id2, "sam-1"), &relay2).await).await;
    assert_eq!(again["sub"], claims["sub"]);
    assert_eq!(down.server.app.registry.of(authrim::tenant::TenantId::DEFAULT).list_users().len(), 1);

    // Our SP metadata.
    let md = reqwest::get(down.url("/saml/sp-metadata")).await.unwrap().text().await.unwrap();
    let m = xml::parse_sp_metadata(&md, &Limits::default()).unwrap();
    assert_eq!(m.entity_id, format!("{}/saml/sp", down.issuer()));
    assert!(m.want_assertions_signed && m.authn_requests_signed);
}

#[tokio::test]
async fn a_saml_idp_signs_users_in_once_per_response() {
    sign_in(false).await;
}

#[tokio::test]
async fn a_saml_idp_signs_users_in_once_per_response_on_postgres() {
    sign_in(true).await;
}

/// An organization whose provider is the SAML upstream: `organization=` and an address at its
/// domain (home-realm discovery) both go to the IdP; the member signed in joins it.
#[tokio::test]
async fn an_organizations_saml_idp_signs_its_members_in() {
    let (down, signer, rp_secret) = start(false).await;
    let body = json!({"slug": "corp", "display_name": "Corp", "upstream": "corp", "domains": ["corp.test"]});
    let (status, org) = down.admin(Method::POST, "/admin/organizations", Some(body)).await;
    assert_eq!(status, 201, "{org}");
    let browser = down.browser();
    to_idp_by(&browser, &down, "&login_hint=someone%40Corp.test").await;
    let (id, relay) = to_idp_by(&browser, &down, "&organization=corp").await;
    let claims = code_of(&browser, &down, &rp_secret, acs(&browser, &down, &response(&signer, &down, &id, "sam-1"), &relay).await).await;
    assert_eq!(claims["org_id"], org["id"], "{claims}");
    let (_, members) = down.admin(Method::GET, "/admin/organizations/corp/members", None).await;
    assert_eq!(members["members"].as_array().map(Vec::len), Some(1), "{members}");
}

/// From the account page, a signed-in user links their identity at the SAML IdP; it then
/// signs them in (provisioning off: no one else is made).
#[tokio::test]
async fn a_signed_in_user_links_a_saml_identity_from_the_account_page() {
    let (down, signer, rp_secret) = start(false).await;
    let dora = down.user("dora", json!({})).await;
    let browser = down.browser();
    let login = crate::upstream::follow(&browser, &down.url("/account")).await;
    let account = submit(&browser, &down.url(""), "/login", &[("challenge", &login.challenge()), ("username", "dora"), ("password", PASSWORD)]).await;
    assert!(account.html.contains("Corp"), "{}", account.html);
    let csrf = crate::passkeys::field(&account, "csrf");
    let sent = Page::from(browser.client.post(down.url("/account/links/new")).form(&[("csrf", csrf.as_str()), ("idp", "corp")]).send().await.unwrap()).await;
    let (id, relay) = request_of(&down, sent);
    let linked = acs(&browser, &down, &response(&signer, &down, &id, "dora-at-corp"), &relay).await;
    assert!(linked.html.contains("The account was linked"), "{}", linked.html);

    let other = down.browser();
    let (id, relay) = to_idp(&other, &down).await;
    let claims = code_of(&other, &down, &rp_secret, acs(&other, &down, &response(&signer, &down, &id, "dora-at-corp"), &relay).await).await;
    assert_eq!(claims["sub"], dora.as_str());
}
