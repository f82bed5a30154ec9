//! SAML upstream identity providers over HTTP (`saml::sp` is the protocol): the AuthnRequest
//! sent (`start`, from `upstream_login::start` for `kind = "saml"`), its answer at
//! `POST /saml/acs`, and our SP metadata at `GET /saml/sp-metadata`.
//!
//! What travels through the IdP is `RelayState`: the pending request (or the account page's
//! link) and our AuthnRequest's ID, sealed and bound to this browser's cookie, as the OpenID
//! upstream's `state` is; nothing is stored before an answer comes. The request ID is then
//! spent once in the challenge store (a replayed Response or RelayState finds it spent), and
//! the assertion's ID too, until it expires.
//!
//! Every refusal is audited (`saml_assertion_refused`) and a 400 page: what arrives at the
//! ACS is the sender's, never our error.

use super::super::interaction::client_address;
use crate::audit::AuditEvent;
use crate::config::upstreams::{IdentityProvider, UpstreamKind};
use crate::endpoints::authorize::{unavailable, AuthorizationRequest};
use crate::endpoints::upstream_login::signed_in_upstream;
use crate::http::{cookies, pages};
use crate::identity::upstream::Identity;
use crate::saml::sp::{self, Expect, IdpConfig, SsoBinding};
use crate::saml::xml::{self, Limits, XmlError};
use crate::saml::{self, signer};
use crate::tenant::Issuer;
use crate::ui::Msg;
use crate::util::{now, random_token};
use axum::body::Bytes;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::SocketAddr;

const KIND: &str = "saml-upstream";
/// The field our own re-post of a Response carries (see `post`).

/// What the ACS needs, sealed into `RelayState`.
#[derive(Serialize, Deserialize)]
struct Pending {
    idp: String,
    /// Our AuthnRequest's `ID`: the Response's `InResponseTo`.
    request_id: String,
    req: Option<AuthorizationRequest>,
    /// A link from the account page: the user (and their session) it is for.
    link: Option<(String, String)>,
}

fn limits(app: &Issuer) -> Limits {
    Limits { max_message_bytes: app.config.saml_max_message_bytes, ..Limits::default() }
}

/// Send the browser to the IdP with an AuthnRequest (Redirect, or a page that posts it).
pub(crate) async fn start(app: &Issuer, headers: &HeaderMap, p: &IdentityProvider, req: Option<AuthorizationRequest>, link: Option<(String, String)>) -> Response {
    let idp = match IdpConfig::of(p) {
        Ok(c) => c,
        // Validated when configured: only a bug gets here.
        Err(e) => return unavailable(e),
    };
    let existing = cookies::get(headers, cookies::BROWSER).map(str::to_string);
    let browser = existing.clone().unwrap_or_else(random_token);
    let force_authn = req.as_ref().is_some_and(|r| r.prompts("login") || r.max_age == Some(0));
    let pending = Pending { idp: p.id.clone(), request_id: saml::new_id(), req, link };
    let relay = app.tenant.sealer.seal(KIND, &browser, app.config.challenge_ttl, &pending);
    let made = sp::authn_request(&idp, app.issuer(), &pending.request_id, now() as i64, force_authn).and_then(|request| {
        let signer = if idp.sign_requests { Some(signer::current(app.keys())?) } else { None };
        Ok(match idp.binding {
            SsoBinding::Redirect => crate::endpoints::first_party::see_other_url(&sp::redirect_url(&idp.sso_url, &request, &relay, signer.as_deref())?),
            SsoBinding::Post => {
                let request = match &signer {
                    Some(s) => sp::signed_enveloped(s, &request, &pending.request_id)?,
                    None => request,
                };
                let encoded = base64::engine::general_purpose::STANDARD.encode(request);
                pages::form_post(&idp.sso_url, &[("SAMLRequest", encoded.as_str()), ("RelayState", relay.as_str())])
            }
        })
    });
    let mut res = match made {
        Ok(res) => res,
        Err(e) => return unavailable(e),
    };
    if existing.is_none() {
        cookies::set(&mut res, app.base(), cookies::BROWSER, &browser, None, app.config.secure_cookies());
    }
    res
}

/// A refusal: audited, and a page.
async fn refused(app: &Issuer, address: &str, provider: Option<&str>, reason: &str) -> Response {
    app.audit(AuditEvent::new("saml_assertion_refused").address(address).detail(json!({"provider": provider, "reason": reason}))).await;
    pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(format!("SAML: {reason}")))
}

fn why(e: &XmlError) -> String {
    match e {
        XmlError::TooLarge => "the Response is larger than saml_max_message_bytes".into(),
        XmlError::Encoding(m) => format!("not encoded as the HTTP-POST binding says: {m}"),
        XmlError::Doctype => "a document type declaration (DTDs are refused)".into(),
        XmlError::TooDeep => "nested too deeply".into(),
        XmlError::Malformed(m) => format!("not a Response: {m}"),
        XmlError::Signature(m) => format!("signature: {m}"),
        XmlError::Wrapped => "the signature does not cover the assertion read (signature wrapping)".into(),
    }
}

/// `POST /saml/acs`: an IdP's Response (HTTP-POST binding, Bindings §3.5).
pub async fn post(app: Issuer, ConnectInfo(peer): ConnectInfo<SocketAddr>, headers: HeaderMap, body: Result<Bytes, axum::extract::rejection::BytesRejection>) -> Response {
    let address = client_address(&app, &headers, peer);
    let body = match pages::form_body(&headers, body, "SAML response") {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let params: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let one = |name: &str| {
        let mut found = params.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let first = found.next();
        if found.next().is_some() { Err(()) } else { Ok(first) }
    };
    let (Ok(Some(response)), Ok(relay)) = (one("SAMLResponse"), one("RelayState")) else {
        return refused(&app, &address, None, "no SAMLResponse, or a parameter given twice").await;
    };
    let Some(relay) = relay else {
        // Ours always carry one: an unsolicited (IdP-initiated) Response is not accepted.
        return refused(&app, &address, None, "no RelayState (unsolicited Responses are not accepted)").await;
    };
    // The IdP's page posts here from another site: the browser binding's cookie comes only
    // with our own re-post.
    if let Some(again) = super::repost_for_cookies(&app, sp::ACS_PATH, &headers, cookies::BROWSER, &params) {
        return again;
    }
    let cookie = cookies::get(&headers, cookies::BROWSER);
    let Ok(pending) = app.tenant.sealer.open::<Pending>(KIND, cookie, relay) else {
        return refused(&app, &address, None, "RelayState does not open here (altered, expired, or another browser's)").await;
    };
    let p = match app.tenant.upstreams.get(&pending.idp) {
        Some(p) if p.kind == UpstreamKind::Saml => p,
        _ => return refused(&app, &address, Some(&pending.idp), "the identity provider is no longer configured").await,
    };
    let Ok(idp) = IdpConfig::of(p) else {
        return refused(&app, &address, Some(&p.id), "the identity provider's configuration does not read").await;
    };
    let limits = limits(&app);
    // Only the configured IdP's certificates: never one the message carries.
    // Our RSA encryption keys, for an EncryptedAssertion: each tried (the IdP may have read
    // our metadata before a rotation).
    let decrypt_with = signer::decryption_keys(app.keys());
    let verified = xml::decode_post(response, &limits).and_then(|x| xml::verified_response_decrypting(&x, &idp.certs_der, &limits, &decrypt_with));
    let resp = match verified {
        Ok(r) => r,
        Err(e) => return refused(&app, &address, Some(&p.id), &why(&e)).await,
    };
    if p.want_assertions_encrypted && resp.assertion.is_some() && !resp.assertion_encrypted {
        return refused(&app, &address, Some(&p.id), "the assertion came unencrypted (want_assertions_encrypted)").await;
    }
    let (issuer, skew, t) = (app.issuer().to_string(), app.config.saml_clock_skew as i64, now());
    let (sp_entity_id, acs) = (sp::sp_entity_id(&issuer), sp::acs_url(&issuer));
    let expect = Expect { idp: &idp, sp_entity_id: &sp_entity_id, acs_url: &acs, request_id: &pending.request_id, now: t as i64, skew };
    let assertion = match sp::check(&resp, &expect) {
        Ok(a) => a,
        Err(reason) => return refused(&app, &address, Some(&p.id), &reason).await,
    };
    // Single use: the request (this RelayState) answered once, the assertion used once.
    let request_mark = format!("saml-request:{}", pending.request_id);
    match app.stores.challenges.first_use(app.tenant.id, &request_mark, t + app.config.challenge_ttl + skew as u64).await {
        Ok(true) => {}
        Ok(false) => return refused(&app, &address, Some(&p.id), "this request was answered already (a replayed Response)").await,
        Err(e) => return unavailable(e),
    }
    let assertion_mark = format!("saml-assertion:{}:{}", p.id, assertion.id);
    match app.stores.challenges.first_use(app.tenant.id, &assertion_mark, sp::usable_until(assertion, skew).max(0) as u64).await {
        Ok(true) => {}
        Ok(false) => return refused(&app, &address, Some(&p.id), "this assertion was used already (replay)").await,
        Err(e) => return unavailable(e),
    }
    let identity = Identity { subject: assertion.name_id.trim().to_string(), claims: sp::claims(assertion, &p.claims), id_token: None };
    app.audit(AuditEvent::new("saml_assertion_accepted").address(&address).detail(json!({"provider": p.id, "assertion": assertion.id}))).await;
    // No session at the IdP is ended from ours yet (SAML Single Logout is slice 3's).
    let upstream = crate::stores::sessions::UpstreamLogin { provider: p.id.clone(), id_token: None };
    signed_in_upstream(&app, &headers, &address, p, &identity, pending.req, pending.link, Some(upstream)).await
}

/// `GET /saml/sp-metadata`: our SP metadata, for an IdP's registration of Authrim.
pub async fn metadata(app: Issuer) -> Response {
    let certs = match signer::all(app.keys()) {
        Ok(all) => all.into_iter().map(|(_, s)| s.cert_base64()).collect(),
        Err(e) => return unavailable(e),
    };
    let encryption = match signer::encryption_certs(app.keys()) {
        Ok(all) => all.into_iter().map(|s| s.cert_base64()).collect(),
        Err(e) => return unavailable(e),
    };
    // AuthnRequestsSigned: true unless one of our SAML upstreams is set not to sign.
    let signed = app.tenant.upstreams.list().iter().filter(|p| p.kind == UpstreamKind::Saml).all(|p| p.sign_requests);
    match sp::metadata(certs, encryption, app.issuer(), signed) {
        Ok(xml) => {
            let mut res = xml.into_response();
            let h = res.headers_mut();
            h.insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static("application/samlmetadata+xml"));
            h.insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("public, max-age=300"));
            res
        }
        Err(e) => unavailable(e),
    }
}
