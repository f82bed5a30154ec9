//! SAML 2.0 as an identity provider (issue 33), on SQLite and PostgreSQL: a service provider
//! registered in the console from its metadata, changed there, its page its own (not the
//! OpenID form); then an AuthnRequest by the HTTP-Redirect binding signs Alice in and comes
//! back as a Response that verifies against the certificate in the IdP metadata only, with
//! the settings the console gave (attributes, NameID).
//! pysaml2 checks the same from outside in tests/e2e/test_saml.py.

use crate::console::{csrf, enter, operator, totp};
use crate::harness::*;
use crate::passkeys::{field, get, post};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::Method;
use serde_json::{json, Value};
use std::io::Write as _;

const SP: &str = "https://wiki.example/saml";
const ACS: &str = "https://wiki.example/saml/acs";

/// An SP's metadata, with a signing certificate of its own.
fn sp_metadata() -> String {
    let key = openssl::pkey::PKey::from_rsa(openssl::rsa::Rsa::generate(2048).unwrap()).unwrap();
    let mut name = openssl::x509::X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "wiki").unwrap();
    let name = name.build();
    let mut b = openssl::x509::X509Builder::new().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).unwrap()).unwrap();
    b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(2).unwrap()).unwrap();
    b.sign(&key, openssl::hash::MessageDigest::sha256()).unwrap();
    let cert = STANDARD.encode(b.build().to_der().unwrap());
    format!(
        r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{SP}"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://wiki.example/artifact" index="0"/><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="{ACS}" index="1"/></md:SPSSODescriptor></md:EntityDescriptor>"#
    )
}

/// The query of an AuthnRequest sent by HTTP-Redirect (unsigned).
fn authn_request_query(issuer: &str, id: &str) -> String {
    authn_request_query_of(issuer, id, SP, ACS)
}

/// The same from the SP `sp` with its ACS `acs`.
pub(crate) fn authn_request_query_of(issuer: &str, id: &str, sp: &str, acs: &str) -> String {
    let xml = format!(
        r#"<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{id}" Version="2.0" IssueInstant="2026-01-01T00:00:00Z" Destination="{issuer}/saml/sso" AssertionConsumerServiceURL="{acs}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>{sp}</saml:Issuer></samlp:AuthnRequest>"#
    );
    let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    deflated.write_all(xml.as_bytes()).unwrap();
    let encoded = STANDARD.encode(deflated.finish().unwrap());
    format!("SAMLRequest={}&RelayState=page%2F1", url::form_urlencoded::byte_serialize(encoded.as_bytes()).collect::<String>())
}

/// The certificate of the IdP metadata (its signing key's).
pub(crate) async fn idp_certificate(s: &TestServer) -> Vec<u8> {
    let md = reqwest::get(s.url("/saml/metadata")).await.unwrap().text().await.unwrap();
    let cert = md.split("<ds:X509Certificate>").nth(1).unwrap().split('<').next().unwrap();
    STANDARD.decode(cert.split_whitespace().collect::<String>()).unwrap()
}

#[tokio::test]
async fn a_service_provider_from_the_console_signs_alice_in_on_sqlite() {
    registered_in_the_console_and_signed_into(false).await;
}

#[tokio::test]
async fn a_service_provider_from_the_console_signs_alice_in_on_postgres() {
    registered_in_the_console_and_signed_into(true).await;
}

async fn registered_in_the_console_and_signed_into(postgres: bool) {
    let s = TestServer::start_on(postgres, |_| {}).await;
    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let (st, _) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "alice", "password": PASSWORD, "claims": {"email": "alice@example.com", "name": "Alice <L>"}}))).await;
    assert_eq!(st, 201);
    let admin = s.browser();
    enter(&admin, "root", Some(&secret)).await;

    // The type chooser offers it; its form takes the metadata.
    let types = get(&admin, "/console/clients/new").await;
    assert!(types.html.contains("value=\"saml\""), "{}", types.html);
    let form = get(&admin, "/console/clients/new?type=saml").await;
    assert!(form.html.contains("name=\"metadata\""), "{}", form.html);
    let bad = post(&admin, "/console/saml", &[("csrf", &csrf(&form)), ("metadata", "<!DOCTYPE x []><x/>"), ("sign_response", "on")]).await;
    assert_eq!(bad.status, 400, "{}", bad.html);
    let created = post(
        &admin,
        "/console/saml",
        &[
            ("csrf", &csrf(&form)),
            ("client_name", "Wiki"),
            ("metadata", &sp_metadata()),
            ("name_id_format", "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"),
            ("attributes", "mail=email\r\ndisplayName=name\r\n"),
            ("sign_response", "on"),
        ],
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.html);
    assert!(created.html.contains(SP) && created.html.contains(ACS) && !created.html.contains("https://wiki.example/artifact"), "{}", created.html);
    assert!(!created.html.contains("name=\"grant:"), "a SAML client's page is not the OpenID form: {}", created.html);
    let (_, clients) = s.admin(Method::GET, "/admin/clients", None).await;
    let client = clients["clients"].as_array().unwrap().iter().find(|c| c["saml"]["entity_id"] == SP).cloned().expect("registered");
    let id = client["client_id"].as_str().unwrap().to_string();
    assert_eq!(client["grant_types"], json!([]), "{client}");
    assert_eq!(client["saml"]["acs"], json!([{"index": 1, "url": ACS}]), "{client}");

    // Changed on its page: one more attribute; the metadata's settings kept.
    let page = get(&admin, &format!("/console/clients/{id}")).await;
    let saved = post(&admin, &format!("/console/clients/{id}"), &[("csrf", &field(&page, "csrf")), ("client_name", "Team wiki"), ("name_id_format", "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"), ("attributes", "mail=email\ndisplayName=name\nuid=username"), ("sign_response", "on")]).await;
    assert_eq!(saved.status, 200, "{}", saved.html);
    let (_, after) = s.admin(Method::GET, &format!("/admin/clients/{id}"), None).await;
    assert_eq!((after["client_name"].as_str(), after["saml"]["attributes"].as_array().map(Vec::len)), (Some("Team wiki"), Some(3)), "{after}");
    assert_eq!(after["saml"]["entity_id"], SP);

    let cert = idp_certificate(&s).await;
    let browser = s.browser();
    let login = get(&browser, &format!("/saml/sso?{}", authn_request_query(&s.issuer(), "_req-1"))).await;
    assert!(login.is_login(), "{}", login.html);
    assert!(login.html.contains("Team wiki"), "the login page names the application: {}", login.html);
    let answer = post(&browser, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(answer.status, 200, "{}", answer.html);
    assert!(answer.html.contains(&format!("action=\"{ACS}\"")), "{}", answer.html);
    assert_eq!(field(&answer, "RelayState"), "page/1");
    let xml = String::from_utf8(STANDARD.decode(unescape(&field(&answer, "SAMLResponse"))).unwrap()).unwrap();
    let limits = authrim::saml::xml::Limits::default();
    let response = authrim::saml::xml::verified_response(&xml, &[cert], &limits).expect("verifies with the IdP metadata's certificate");
    assert_eq!(response.in_response_to.as_deref(), Some("_req-1"));
    let a = response.assertion.expect("an assertion");
    assert_eq!((a.name_id.as_str(), a.name_id_format.as_deref()), ("alice@example.com", Some("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress")));
    assert_eq!(a.audiences, [SP]);
    assert_eq!(a.recipient.as_deref(), Some(ACS));
    let attrs: Value = a.attributes.iter().map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>().into();
    assert_eq!(attrs, json!({"mail": ["alice@example.com"], "displayName": ["Alice <L>"], "uid": ["alice"]}));
    // Not with another key.
    let (other, _) = authrim::keys::SigningKey::generate().unwrap();
    let pkcs8 = other.rsa_pkcs8().unwrap();
    let other_cert = {
        let pkey = openssl::pkey::PKey::private_key_from_pkcs8(&pkcs8).unwrap();
        let mut b = openssl::x509::X509Builder::new().unwrap();
        b.set_pubkey(&pkey).unwrap();
        b.sign(&pkey, openssl::hash::MessageDigest::sha256()).unwrap();
        b.build().to_der().unwrap()
    };
    assert!(authrim::saml::xml::verified_response(&xml, &[other_cert], &limits).is_err());

    // The SAML client is no OpenID client: /authorize with its ACS is refused with a page.
    let refused = get(&browser, &format!("/authorize?client_id={id}&redirect_uri={}&response_type=code&scope=openid", url::form_urlencoded::byte_serialize(ACS.as_bytes()).collect::<String>())).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
}

pub(crate) fn unescape(s: &str) -> String {
    s.replace("&#x2f;", "/").replace("&#x3d;", "=").replace("&#x2b;", "+").replace("&amp;", "&").replace("&#43;", "+").replace("&#47;", "/").replace("&#61;", "=")
}

/// The same factors as an OpenID client's: an SP that requires a second factor gets Alice
/// asked for her authenticator's code after her password, and the assertion says so
/// (REFEDS MFA); without the code, no Response.
#[tokio::test]
async fn a_service_provider_requiring_mfa_gets_a_second_factor_sign_in() {
    let s = TestServer::start_on(false, |_| {}).await;
    let (st, alice) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "alice", "password": PASSWORD, "claims": {"email": "alice@example.com"}}))).await;
    assert_eq!(st, 201, "{alice}");
    let secret = totp(&s, alice["id"].as_str().unwrap()).await;
    let saml = json!({"entity_id": SP, "acs": [{"index": 0, "url": ACS}], "attributes": [{"name": "mail", "claim": "email"}]});
    let (st, client) = s.admin(Method::POST, "/admin/clients", Some(json!({"client_name": "Wiki", "require_mfa": true, "saml": saml}))).await;
    assert_eq!(st, 201, "{client}");
    let cert = idp_certificate(&s).await;
    let browser = s.browser();
    let login = get(&browser, &format!("/saml/sso?{}", authn_request_query(&s.issuer(), "_mfa-1"))).await;
    let asked = post(&browser, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    assert!(asked.html.contains("action=\"/login/second-factor\"") && !asked.html.contains("SAMLResponse"), "{}", asked.html);
    let wrong = post(&browser, "/login/second-factor", &[("challenge", &asked.challenge()), ("code", "000000")]).await;
    assert!(!wrong.html.contains("SAMLResponse"), "{}", wrong.html);
    let code = authrim::factors::totp::code_at(&secret, authrim::util::now()).unwrap();
    let answer = post(&browser, "/login/second-factor", &[("challenge", &wrong.challenge()), ("code", &code)]).await;
    let xml = String::from_utf8(STANDARD.decode(unescape(&field(&answer, "SAMLResponse"))).unwrap()).unwrap();
    let response = authrim::saml::xml::verified_response(&xml, &[cert], &authrim::saml::xml::Limits::default()).expect("verifies");
    let a = response.assertion.expect("an assertion");
    assert_eq!(a.authn_context_class_ref.as_deref(), Some("https://refeds.org/profile/mfa"));
    assert_eq!(a.in_response_to.as_deref(), Some("_mfa-1"));
}
