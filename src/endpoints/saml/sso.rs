//! `GET|POST /saml/sso`: SAML 2.0 Web Browser SSO (Profiles §4.1), SP-initiated, by the
//! HTTP-Redirect and HTTP-POST bindings. An AuthnRequest becomes an authorization request of
//! the SP's client, carrying where its Response goes (`SamlReply`), and takes the same way
//! through sign-in as any client's: login, second factors, passkeys, upstream providers,
//! organizations, consent where the client needs it. `ForceAuthn` is `prompt=login`,
//! `IsPassive` is `prompt=none`. Where the flow would send a code, `respond` posts a signed
//! Response; where it would send an error, `refuse` posts a Response with a SAML status.
//!
//! Until the SP, its signature and its ACS URL are known good, a refusal is a page (audited),
//! never a Response: nothing may be posted to an address an attacker chose.

use crate::audit::AuditEvent;
use crate::endpoints::authorize::{self, AuthorizationRequest};
use crate::error::OAuthError;
use crate::http::pages;
use crate::registry::clients::saml::{self as sp_config, SamlServiceProvider, BINDING_POST};
use crate::registry::Client;
use crate::saml::response::{Attr, Grant};
use crate::saml::xml::{self, Limits, XmlError};
use crate::saml::{self, signer, status, SamlReply};
use crate::stores::Session;
use crate::tenant::Issuer;
use crate::ui::Msg;
use crate::util::now;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use serde_json::{json, Value};
use std::sync::Arc;

/// Bindings §3.4.3 says 80 bytes; SPs send more (a return URL), so a looser bound, still one.
pub(super) const MAX_RELAY_STATE: usize = 1024;

/// How a request came, for its signature check.
pub(super) enum Binding<'a> {
    /// The raw query string: the signature is over its octets as sent.
    Redirect(&'a str),
    Post,
}

pub async fn get(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let limits = limits(&app);
    // The encoded query is bounded before it is parsed (base64 of the DEFLATEd XML is never
    // larger than the XML bound, which `decode_redirect` enforces again after inflating).
    if query.len() > limits.max_message_bytes * 2 {
        return refused(&app, None, "the request is larger than saml_max_message_bytes").await;
    }
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let one = |name: &str| single(&params, name);
    let (request, relay) = match (one("SAMLRequest"), one("RelayState")) {
        (Ok(Some(r)), Ok(relay)) => (r, relay),
        (Ok(None), _) => return refused(&app, None, "no SAMLRequest").await,
        _ => return refused(&app, None, "a parameter is given twice").await,
    };
    let xml = match xml::decode_redirect(&request, &limits) {
        Ok(x) => x,
        Err(e) => return refused(&app, None, &why(&e)).await,
    };
    start(&app, &headers, &xml, Binding::Redirect(&query), relay).await
}

pub async fn post(app: Issuer, headers: HeaderMap, body: Result<Bytes, axum::extract::rejection::BytesRejection>) -> Response {
    let body = match pages::form_body(&headers, body, "SAML request") {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let params: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    // An SP's page posts from its own site: the session cookie comes only with our re-post
    // (without it a signed-in user would be asked to sign in again, and IsPassive refused).
    if let Some(again) = super::repost_for_cookies(&app, saml::SSO_PATH, &headers, crate::http::cookies::SESSION, &params) {
        return again;
    }
    let one = |name: &str| single(&params, name);
    let (request, relay) = match (one("SAMLRequest"), one("RelayState")) {
        (Ok(Some(r)), Ok(relay)) => (r, relay),
        (Ok(None), _) => return refused(&app, None, "no SAMLRequest").await,
        _ => return refused(&app, None, "a parameter is given twice").await,
    };
    let xml = match xml::decode_post(&request, &limits(&app)) {
        Ok(x) => x,
        Err(e) => return refused(&app, None, &why(&e)).await,
    };
    start(&app, &headers, &xml, Binding::Post, relay).await
}

pub(super) fn limits(app: &Issuer) -> Limits {
    Limits { max_message_bytes: app.config.saml_max_message_bytes, ..Limits::default() }
}

/// The one value of `name`; given twice is an error (which of two would the signature mean?).
pub(super) fn single(params: &[(String, String)], name: &str) -> Result<Option<String>, ()> {
    let mut found = params.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone());
    let first = found.next();
    match found.next() {
        Some(_) => Err(()),
        None => Ok(first),
    }
}

pub(super) fn why(e: &XmlError) -> String {
    match e {
        XmlError::TooLarge => "the message is larger than saml_max_message_bytes".into(),
        XmlError::Encoding(m) => format!("not encoded as the binding says: {m}"),
        XmlError::Doctype => "a document type declaration (DTDs are refused)".into(),
        XmlError::TooDeep => "nested too deeply".into(),
        XmlError::Malformed(m) => format!("not the SAML message expected: {m}"),
        XmlError::Signature(m) => format!("signature: {m}"),
        XmlError::Wrapped => "the signature does not cover the request (signature wrapping)".into(),
    }
}

/// An AuthnRequest, decoded: checked, then handed to the sign-in.
async fn start(app: &Issuer, headers: &HeaderMap, xml: &str, binding: Binding<'_>, relay_state: Option<String>) -> Response {
    let limits = limits(app);
    let request = match xml::parse_authn_request(xml, &limits) {
        Ok(r) => r,
        Err(e) => return refused(app, None, &why(&e)).await,
    };
    let Some(client) = request.issuer.as_deref().and_then(|i| app.registry().saml_provider(i)) else {
        return refused(app, None, "the Issuer is not a registered SAML service provider").await;
    };
    let sp = client.meta.saml.as_ref().expect("indexed by its saml settings");
    // The signature, if any, or if required: by one of the SP's registered certificates.
    let certs = sp.signing_certs_der();
    let request = match binding {
        Binding::Redirect(query) if query.contains("Signature=") || sp.require_signed_requests => {
            if let Err(e) = xml::verify_redirect_signature(query, &certs) {
                return refused(app, Some(&client), &why(&e)).await;
            }
            request
        }
        Binding::Post if request.has_signature || sp.require_signed_requests => {
            // What is read is what the signature covers, and nothing else.
            match xml::verified_root(xml, &certs).and_then(|signed| xml::parse_authn_request(&signed, &limits)) {
                Ok(r) => r,
                Err(e) => return refused(app, Some(&client), &why(&e)).await,
            }
        }
        _ => request,
    };
    let sso = format!("{}{}", app.issuer(), saml::SSO_PATH);
    if request.destination.as_deref().is_some_and(|d| d != sso) {
        return refused(app, Some(&client), "Destination is not this server's SSO address").await;
    }
    if request.protocol_binding.as_deref().is_some_and(|b| b != BINDING_POST) {
        return refused(app, Some(&client), "only the HTTP-POST binding is supported for the Response").await;
    }
    let Some(acs) = sp.acs_for(request.acs_url.as_deref(), request.acs_index) else {
        return refused(app, Some(&client), "the AssertionConsumerServiceURL (or index) is not one the service provider registered").await;
    };
    if relay_state.as_ref().is_some_and(|r| r.len() > MAX_RELAY_STATE) {
        return refused(app, Some(&client), "RelayState is longer than 1024 bytes").await;
    }
    let reply = SamlReply { request_id: Some(request.id.clone()), acs_url: acs.url.clone(), relay_state, authn_contexts: request.authn_context_class_refs.clone() };
    // From here on, the SP and where its answers go are known good: errors are Responses.
    // SAML Core §3.4.1.1: a NameID format we cannot give is InvalidNameIDPolicy.
    if let Some(f) = request.name_id_format.as_deref().filter(|f| *f != sp_config::NAMEID_UNSPECIFIED && *f != sp.name_id_format) {
        let e = OAuthError::invalid_request(format!("NameIDPolicy Format {f} is not the one this service provider is registered for"));
        return answer_error(app, &client, &reply, (status::REQUESTER, Some(status::INVALID_NAMEID_POLICY)), &e).await;
    }
    // RequestedAuthnContext: the level the sign-in must reach, as an essential acr (a step-up
    // if the session is weaker; NoAuthnContext if it cannot be reached).
    let wanted = match saml::authn_context::required(&request.authn_context_class_refs, request.authn_context_comparison.as_deref()) {
        Ok(w) => w,
        Err(()) => {
            let e = OAuthError::access_denied("no authentication context asked for is one this server gives");
            return answer_error(app, &client, &reply, (status::RESPONDER, Some(status::NO_AUTHN_CONTEXT)), &e).await;
        }
    };
    let mut prompt = Vec::new();
    if request.force_authn {
        prompt.push("login".to_string());
    }
    if request.is_passive {
        prompt.push("none".to_string());
    }
    let req = authorization_request(&client, &acs.url, reply, prompt, wanted);
    let session = authorize::current_session(app, headers).await;
    authorize::continue_authorization(app, headers, req, session, false, StatusCode::FOUND).await
}

/// `GET /saml/start/{client}`: IdP-initiated SSO (Profiles §4.1.5), the start page's link to
/// an SP that allows it: the same sign-in, then an unsolicited Response to its default ACS,
/// with the operator's RelayState (never one from the request: an open redirect at the SP).
pub async fn initiate(app: Issuer, headers: HeaderMap, axum::extract::Path(client_id): axum::extract::Path<String>) -> Response {
    let client = app.client(&client_id).filter(|c| c.meta.saml.as_ref().is_some_and(|sp| sp.idp_initiated));
    let Some(client) = client else {
        return pages::error_page(StatusCode::NOT_FOUND, "err-not-found");
    };
    let sp = client.meta.saml.as_ref().expect("filtered above");
    let Some(acs) = sp.acs_for(None, None) else {
        return pages::error_page(StatusCode::NOT_FOUND, "err-not-found");
    };
    let reply = SamlReply { request_id: None, acs_url: acs.url.clone(), relay_state: sp.default_relay_state.clone(), authn_contexts: vec![] };
    let req = authorization_request(&client, &acs.url, reply, vec![], None);
    let session = authorize::current_session(&app, &headers).await;
    authorize::continue_authorization(&app, &headers, req, session, false, StatusCode::FOUND).await
}

/// The authorization request a SAML sign-in goes through the flow as.
fn authorization_request(client: &Client, acs_url: &str, reply: SamlReply, prompt: Vec<String>, wanted: Option<crate::factors::Level>) -> AuthorizationRequest {
    AuthorizationRequest {
        client_id: client.id().to_string(),
        redirect_uri: acs_url.to_string(),
        // Empty (nothing to consent to) unless the SP asks consent for its attributes.
        scope: client.meta.saml.as_ref().map(SamlServiceProvider::consent_scope).unwrap_or_default(),
        state: None,
        nonce: None,
        code_challenge: None,
        prompt,
        max_age: None,
        login_hint: None,
        idp_hint: None,
        ui_locales: None,
        id_token_hint_sub: None,
        claims: None,
        response_mode: Default::default(),
        response_type: Default::default(),
        dpop_jkt: None,
        acr_values: wanted.map_or_else(|| client.meta.default_acr_values.clone(), |l| vec![l.acr().to_string()]),
        acr_essential: wanted.is_some(),
        resource: vec![],
        pushed: None,
        organization: None,
        saml: Some(reply),
    }
}

/// A refusal before anything can be answered to the SP: audited, and a page.
async fn refused(app: &Issuer, client: Option<&Client>, reason: &str) -> Response {
    let mut event = AuditEvent::new("saml_request_refused").detail(json!({"reason": reason}));
    if let Some(c) = client {
        event = event.client(c.id());
    }
    app.audit(event).await;
    pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(format!("SAML: {reason}")))
}

/// The end of a sign-in for a SAML SP: the signed Response, posted to its ACS.
pub async fn respond(app: &Issuer, req: &AuthorizationRequest, reply: &SamlReply, session: &Session) -> Response {
    let Some(client) = app.client(&req.client_id) else {
        return pages::error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    };
    let Some(sp) = client.meta.saml.as_ref() else {
        return pages::error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    };
    let Some(user) = app.registry().user(&session.user_id) else {
        return answer_error(app, &client, reply, (status::RESPONDER, Some(status::REQUEST_DENIED)), &OAuthError::access_denied("the user is gone")).await;
    };
    let Some(name_id) = issued_name_id(app, sp, &session.sid, &user) else {
        let e = OAuthError::access_denied("the user has no e-mail address, which this service provider's NameID is");
        return answer_error(app, &client, reply, (status::RESPONDER, Some(status::INVALID_NAMEID_POLICY)), &e).await;
    };
    let attributes = attributes(app, &client, sp, &user);
    let encrypt_to = sp.encryption_cert_der();
    let grant = Grant {
        idp_entity_id: &saml::entity_id(app.issuer()),
        sp_entity_id: &sp.entity_id,
        acs_url: &reply.acs_url,
        in_response_to: reply.request_id.as_deref(),
        name_id: &name_id,
        name_id_format: &sp.name_id_format,
        session_index: &session.sid,
        authn_instant: session.auth_time,
        authn_context: &saml::authn_context::reported(&reply.authn_contexts, crate::factors::Level::of(&session.acr).unwrap_or(crate::factors::Level::Password)),
        attributes,
        now: now(),
        lifetime: app.config.saml_assertion_lifetime,
        sign_response: sp.sign_response,
        encrypt_to: encrypt_to.as_deref(),
    };
    let made = signer::current(app.keys()).and_then(|s| saml::response::success(&s, &grant));
    let xml = match made {
        Ok(x) => x,
        Err(e) => return authorize::unavailable(e),
    };
    app.audit(AuditEvent::new("saml_response_issued").user(&user.id).client(client.id()).detail(json!({"sp": sp.entity_id, "acs": reply.acs_url})))
        .await;
    post_to_acs(reply, &xml)
}

/// The flow's error `e` as a SAML Response: `login_required` and its kind (IsPassive could
/// not be honoured) are NoPassive; a refusal is RequestDenied; an unmet authentication
/// context NoAuthnContext (SAML Core §3.2.2.2).
pub async fn refuse(app: &Issuer, client_id: &str, reply: &SamlReply, e: &OAuthError) -> Response {
    let Some(client) = app.client(client_id) else {
        return pages::error_page(StatusCode::BAD_REQUEST, "err-client-gone");
    };
    let codes = match e.code {
        "login_required" | "consent_required" | "interaction_required" | "account_selection_required" => (status::RESPONDER, Some(status::NO_PASSIVE)),
        "unmet_authentication_requirements" => (status::RESPONDER, Some(status::NO_AUTHN_CONTEXT)),
        "access_denied" => (status::RESPONDER, Some(status::REQUEST_DENIED)),
        "invalid_request" => (status::REQUESTER, None),
        _ => (status::RESPONDER, None),
    };
    answer_error(app, &client, reply, codes, e).await
}

async fn answer_error(app: &Issuer, client: &Arc<Client>, reply: &SamlReply, codes: (&str, Option<&str>), e: &OAuthError) -> Response {
    let sign = client.meta.saml.as_ref().is_none_or(|sp| sp.sign_response);
    let made = signer::current(app.keys()).and_then(|s| {
        saml::response::failure(&s, &saml::entity_id(app.issuer()), &reply.acs_url, reply.request_id.as_deref(), codes, Some(&e.description), sign, now())
    });
    let xml = match made {
        Ok(x) => x,
        Err(err) => return authorize::unavailable(err),
    };
    app.audit(AuditEvent::new("saml_response_refused").client(client.id()).detail(json!({"status": codes.1.unwrap_or(codes.0), "reason": e.description})))
        .await;
    let mut res = post_to_acs(reply, &xml);
    res.extensions_mut().insert(crate::error::ErrorCode(e.code));
    res
}

/// Bindings §3.5.4: an auto-submitting form that posts the Response (and RelayState).
fn post_to_acs(reply: &SamlReply, xml: &str) -> Response {
    let encoded = base64::engine::general_purpose::STANDARD.encode(xml);
    let mut fields = vec![("SAMLResponse", encoded.as_str())];
    if let Some(r) = &reply.relay_state {
        fields.push(("RelayState", r.as_str()));
    }
    pages::form_post(&reply.acs_url, &fields)
}

/// The NameID `sp` is given for `user` in the login session `sid`, in its format: what
/// Single Logout compares an SP's LogoutRequest with and names the user by in ours. `None`:
/// the format is the e-mail address and the user has none.
pub fn issued_name_id(app: &Issuer, sp: &SamlServiceProvider, sid: &str, user: &crate::registry::User) -> Option<String> {
    match sp.name_id_format.as_str() {
        sp_config::NAMEID_EMAIL => user.email().map(str::to_string),
        sp_config::NAMEID_UNSPECIFIED => Some(user.username.clone()),
        _ => Some(name_id(app, sp, sid, &user.id)),
    }
}

/// The opaque NameIDs (SAML Core §8.3.6, §8.3.7), made again rather than stored: a
/// `persistent` one is the same for one SP and user whenever asked, and unlinkable across SPs
/// (HMAC under the tenant's pairwise key, as a pairwise `sub`); a `transient` one is that and
/// the login session's id too, so it changes with every session but is the same for a Single
/// Logout of this one.
pub fn name_id(app: &Issuer, sp: &SamlServiceProvider, sid: &str, user_id: &str) -> String {
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &app.tenant.pairwise_key);
    let mut ctx = aws_lc_rs::hmac::Context::with_key(&key);
    ctx.update(b"saml\x1f");
    ctx.update(sp.entity_id.as_bytes());
    ctx.update(&[0x1f]);
    ctx.update(user_id.as_bytes());
    if sp.name_id_format == sp_config::NAMEID_TRANSIENT {
        ctx.update(&[0x1f]);
        ctx.update(sid.as_bytes());
    }
    crate::util::b64(ctx.sign().as_ref())
}

/// The assertion's attributes: each of the SP's, from the user's claim it names (absent or
/// empty: left out).
fn attributes(app: &Issuer, client: &Client, sp: &SamlServiceProvider, user: &crate::registry::User) -> Vec<Attr> {
    let directory = sp.attributes.iter().any(|a| a.claim == "groups" || a.claim == "roles").then(|| {
        // Groups by name unless the client says how.
        let mut c = client.clone();
        c.meta.directory.groups_claim.get_or_insert_with(|| "names".into());
        crate::tokens::directory::DirectoryClaims::of(app, &c, &user.id)
    });
    let directory = directory.flatten();
    sp.attributes
        .iter()
        .filter_map(|a| {
            let values: Vec<String> = match a.claim.as_str() {
                "groups" => directory.as_ref().map(|d| d.groups.clone()).unwrap_or_default(),
                "roles" => directory.as_ref().map(|d| d.roles.clone()).unwrap_or_default(),
                "username" => vec![user.username.clone()],
                "sub" => vec![crate::tokens::subject::subject_for(app, client.id(), &user.id)],
                claim => user.claim(claim).map(values_of).unwrap_or_default(),
            };
            (!values.is_empty()).then(|| Attr { name: a.name.clone(), name_format: a.name_format.clone(), friendly_name: a.friendly_name.clone(), values })
        })
        .collect()
}

/// A claim's value as attribute values: an array's items each, a string as is, anything
/// else as its JSON.
fn values_of(v: Value) -> Vec<String> {
    match v {
        Value::Null => vec![],
        Value::String(s) if s.is_empty() => vec![],
        Value::String(s) => vec![s],
        Value::Array(items) => items.into_iter().flat_map(values_of).collect(),
        other => vec![other.to_string()],
    }
}
