//! SAML Single Logout's back channel (SOAP binding), on SQLite and PostgreSQL: an operator
//! ends Alice's sessions, with no browser anywhere; the SAML SP she signed into, whose
//! metadata lists a SingleLogoutService by SOAP, is sent a LogoutRequest from the server
//! through the durable outbox, signed in its XML by the key of the IdP metadata's
//! certificate, naming the NameID and SessionIndex of her sign-in. An answer that is not a
//! SOAP LogoutResponse is not a delivery: the request is sent again.
//! pysaml2 checks the same from outside in tests/e2e/test_saml_logout.py.

use crate::harness::*;
use crate::passkeys::{field, get, post};
use crate::saml::{authn_request_query_of, idp_certificate, unescape};
use axum::extract::State;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::Method;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

const SP: &str = "https://crm.example/saml";
const ACS: &str = "https://crm.example/saml/acs";

/// The SP's SOAP endpoint: records each request's SOAPAction and body; answers the first with
/// something that is not a LogoutResponse, then with one.
async fn soap_endpoint() -> (String, Arc<Mutex<Vec<(String, String)>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/slo/soap", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route(
            "/slo/soap",
            axum::routing::post(|State(got): State<Arc<Mutex<Vec<(String, String)>>>>, headers: axum::http::HeaderMap, body: String| async move {
                let action = headers.get("soapaction").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
                let mut g = got.lock().await;
                g.push((action, body));
                let answer = if g.len() == 1 {
                    "<html>an error page</html>".to_string()
                } else {
                    r#"<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_r" Version="2.0" IssueInstant="2026-01-01T00:00:00Z"><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status></samlp:LogoutResponse></S:Body></S:Envelope>"#.to_string()
                };
                ([("content-type", "text/xml")], answer)
            }),
        )
        .with_state(got.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

fn sp_metadata(soap: &str) -> String {
    format!(
        r#"<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="{SP}"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:SOAP" Location="{soap}"/><md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="{ACS}" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>"#
    )
}

#[tokio::test]
async fn an_operator_ending_the_session_sends_the_sp_a_soap_logout_request_on_sqlite() {
    told_by_soap(false).await;
}

#[tokio::test]
async fn an_operator_ending_the_session_sends_the_sp_a_soap_logout_request_on_postgres() {
    told_by_soap(true).await;
}

async fn told_by_soap(postgres: bool) {
    let s = TestServer::start_on(postgres, crate::logout::quick).await;
    let (soap, got) = soap_endpoint().await;
    let (st, alice) = s.admin(Method::POST, "/admin/users", Some(json!({"username": "alice", "password": PASSWORD, "claims": {"email": "alice@example.com"}}))).await;
    assert_eq!(st, 201, "{alice}");
    let (st, client) = s.admin(Method::POST, "/admin/saml/service-providers", Some(json!({"metadata": sp_metadata(&soap)}))).await;
    assert_eq!(st, 201, "{client}");
    assert_eq!((client["saml"]["slo_soap_url"].as_str(), client["saml"].get("slo_url")), (Some(soap.as_str()), None), "{client}");

    // Alice signs in to the SP: the session's index is in the assertion.
    let browser = s.browser();
    let login = get(&browser, &format!("/saml/sso?{}", authn_request_query_of(&s.issuer(), "_req-soap", SP, ACS))).await;
    let answer = post(&browser, "/login", &[("challenge", &login.challenge()), ("username", "alice"), ("password", PASSWORD)]).await;
    let xml = String::from_utf8(STANDARD.decode(unescape(&field(&answer, "SAMLResponse"))).unwrap()).unwrap();
    let sid = xml.split("SessionIndex=\"").nth(1).expect("a SessionIndex").split('"').next().unwrap().to_string();

    // An operator ends her sessions; nobody's browser is involved.
    let (st, _) = s.admin(Method::DELETE, &format!("/admin/users/{}/sessions", alice["id"].as_str().unwrap()), None).await;
    assert!(st == 200 || st == 204, "{st}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while got.lock().await.len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = got.lock().await.clone();
    assert_eq!(got.len(), 2, "the first answer was no LogoutResponse, so the request is sent again: {got:?}");

    let cert = idp_certificate(&s).await;
    let limits = authrim::saml::xml::Limits::default();
    for (action, body) in &got {
        assert_eq!(action, "\"http://www.oasis-open.org/committees/security\"");
        assert!(body.contains("<SOAP-ENV:Envelope") && body.contains("<SOAP-ENV:Body>"), "{body}");
        let inner = body.split("<SOAP-ENV:Body>").nth(1).unwrap().split("</SOAP-ENV:Body>").next().unwrap();
        let signed = authrim::saml::xml::verified_root(inner, std::slice::from_ref(&cert)).expect("signed by the IdP metadata's key");
        let request = authrim::saml::xml::parse_logout_request(&signed, &limits).unwrap();
        assert_eq!((request.name_id.as_str(), request.session_indexes.as_slice()), ("alice@example.com", std::slice::from_ref(&sid)));
        assert_eq!((request.destination.as_deref(), request.issuer.as_deref()), (Some(soap.as_str()), Some(format!("{}/saml/metadata", s.issuer()).as_str())));
        // Changed after signing, it verifies no more.
        assert!(authrim::saml::xml::verified_root(&inner.replace("alice@example.com", "bob@example.com"), std::slice::from_ref(&cert)).is_err());
    }
    // Each attempt is a request of its own (signed afresh), for the same session.
    assert_ne!(got[0].1, got[1].1);
    let mut delivered = None;
    while delivered.is_none() && tokio::time::Instant::now() < deadline {
        let (_, audit) = s.admin(Method::GET, "/admin/audit?event=saml_soap_logout_delivered", None).await;
        delivered = audit["events"].as_array().and_then(|e| e.first()).cloned();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let delivered = delivered.expect("audited as delivered");
    assert_eq!((delivered["client_id"].as_str(), delivered["detail"]["sid"].as_str(), delivered["detail"]["attempts"].as_u64()), (client["client_id"].as_str(), Some(sid.as_str()), Some(2)), "{delivered}");
}
