//! `GET|POST /saml/slo`: SAML 2.0 Single Logout (Profiles §4.4), front channel, by the
//! HTTP-Redirect and HTTP-POST bindings, joined to the OpenID logout:
//!
//! - an SP's **LogoutRequest** (signed: required, and checked): the SP by its
//!   `Issuer`, the `NameID` the one we issued it in the browser's session, the
//!   `SessionIndex` (if any) that session's `sid`; then the session ends as RP-initiated
//!   logout ends it (`end_session::leave`: back-channel tokens queued, front-channel iframes,
//!   the other SAML SPs' LogoutRequests) and the page goes on to the SP's `slo_url` with our
//!   signed LogoutResponse (Success, or PartialLogout when an SP of the session has no SLO
//!   URL to be told at);
//! - an SP's **LogoutResponse** (the answer to one of ours, in the logout page's iframe):
//!   checked like a request, audited, and answered with the signed-out page;
//!
//! What we send (LogoutRequests to a session's SPs, the LogoutResponse) is `slo_out`: by the
//! SP's binding, always as a URL, which is what the logout page's iframes load and what it
//! moves on to (docs/design/saml.md, "Slice 3 as built").
//! Until the SP and its signature are known good, a refusal is an audited page, never a
//! message to an address the sender chose.

use super::slo_out;
use super::sso::{self, limits, single, why, Binding, MAX_RELAY_STATE};
use crate::audit::AuditEvent;
use crate::endpoints::{authorize, end_session};
use crate::http::{cookies, pages};
use crate::logout::{end_session as end, EndedBy};
use crate::registry::clients::saml::NAMEID_UNSPECIFIED;
use crate::registry::Client;
use crate::saml::logout::Message;
use crate::saml::xml::{self, XmlError};
use crate::saml::{self, status};
use crate::stores::{Session, SessionRef};
use crate::tenant::Issuer;
use crate::ui::Msg;
use crate::util::now;
use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;
use std::sync::Arc;

/// The field our own re-post of a cookie-less POST adds (`post`).

/// How far an SP's clock may be ahead of ours, or a message late.
const CLOCK_SKEW: i64 = 180;
/// How old a LogoutRequest may be (by its `IssueInstant`): an SP makes one as the user signs
/// out and sends the browser with it at once; an old one, signed as it is, is a replay.
const MAX_AGE: i64 = 600;

/// A message as it came: the XML, whether a request or a response, RelayState.
struct Incoming {
    xml: String,
    message: Message,
    relay_state: Option<String>,
}

pub async fn get(app: Issuer, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let limits = limits(&app);
    if query.len() > limits.max_message_bytes * 2 {
        return refused(&app, None, "the message is larger than saml_max_message_bytes").await;
    }
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let incoming = match read_params(&params, |b64| xml::decode_redirect(b64, &limits)) {
        Ok(i) => i,
        Err(reason) => return refused(&app, None, &reason).await,
    };
    handle(&app, &headers, incoming, Binding::Redirect(&query), StatusCode::FOUND).await
}

pub async fn post(app: Issuer, headers: HeaderMap, body: Result<Bytes, axum::extract::rejection::BytesRejection>) -> Response {
    let body = match pages::form_body(&headers, body, "SAML message") {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    let limits = limits(&app);
    let params: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let incoming = match read_params(&params, |b64| xml::decode_post(b64, &limits)) {
        Ok(i) => i,
        Err(reason) => return refused(&app, None, &reason).await,
    };
    // The session cookie is SameSite=Lax: a browser leaves it off an SP's cross-site POST, and
    // the request would find no session to end. Posted once more from our own page, the POST
    // is same-site and carries it (the marker stops a second round).
    if matches!(incoming.message, Message::Request) {
        if let Some(again) = super::repost_for_cookies(&app, saml::SLO_PATH, &headers, cookies::SESSION, &params) {
            return again;
        }
    }
    handle(&app, &headers, incoming, Binding::Post, StatusCode::SEE_OTHER).await
}

/// Exactly one of `SAMLRequest` and `SAMLResponse`, each parameter at most once, decoded.
fn read_params(params: &[(String, String)], decode: impl Fn(&str) -> Result<String, XmlError>) -> Result<Incoming, String> {
    let one = |name: &str| single(params, name).map_err(|_| "a parameter is given twice".to_string());
    let (message, b64) = match (one("SAMLRequest")?, one("SAMLResponse")?) {
        (Some(r), None) => (Message::Request, r),
        (None, Some(r)) => (Message::Response, r),
        _ => return Err("not exactly one of SAMLRequest and SAMLResponse".into()),
    };
    let relay_state = one("RelayState")?;
    if relay_state.as_ref().is_some_and(|r| r.len() > MAX_RELAY_STATE) {
        return Err("RelayState is longer than 1024 bytes".into());
    }
    let xml = decode(&b64).map_err(|e| why(&e))?;
    Ok(Incoming { xml, message, relay_state })
}

/// Why a message was refused, and by whom it came if that is known.
type Refusal = (Option<Arc<Client>>, String);

/// The SP that sent a message, its signature checked (when it signed, or must sign), and the
/// message read from what the signature covers (POST) or the query it signs (Redirect).
/// A LogoutRequest must be signed (`must_sign`; Profiles §4.4.3.1: the requester MUST
/// authenticate itself, and the front-channel bindings have only the signature for it):
/// unsigned, anyone who knows a user's NameID (a username, an e-mail address) could make any
/// page sign them out. A LogoutResponse changes nothing here, so is checked only if signed or
/// if the SP `require_signed_requests`.
fn sender<T>(
    app: &Issuer,
    xml: &str,
    binding: &Binding<'_>,
    parse: impl Fn(&str) -> Result<T, XmlError>,
    issuer_of: impl Fn(&T) -> Option<&str>,
    signed_in_xml: impl Fn(&T) -> bool,
    must_sign: bool,
) -> Result<(Arc<Client>, T), Refusal> {
    let message = parse(xml).map_err(|e| (None, why(&e)))?;
    let client = issuer_of(&message).and_then(|i| app.registry().saml_provider(i));
    let Some(client) = client else {
        return Err((None, "the Issuer is not a registered SAML service provider".into()));
    };
    let sp = client.meta.saml.as_ref().expect("indexed by its saml settings");
    let certs = sp.signing_certs_der();
    let must_sign = must_sign || sp.require_signed_requests;
    if must_sign && certs.is_empty() {
        return Err((Some(client), "the service provider must sign this message and registered no signing certificate".into()));
    }
    let message = match binding {
        Binding::Redirect(query) if query.contains("Signature=") || must_sign => {
            xml::verify_redirect_signature(query, &certs).map(|_| message)
        }
        Binding::Post if signed_in_xml(&message) || must_sign => xml::verified_root(xml, &certs).and_then(|signed| parse(&signed)),
        _ => Ok(message),
    };
    message.map(|m| (client.clone(), m)).map_err(|e| (Some(client), why(&e)))
}

async fn handle(app: &Issuer, headers: &HeaderMap, incoming: Incoming, binding: Binding<'_>, status: StatusCode) -> Response {
    let limits = limits(app);
    let here = format!("{}{}", app.issuer(), saml::SLO_PATH);
    let t = now() as i64;
    match incoming.message {
        Message::Response => {
            let parse = |x: &str| xml::parse_logout_response(x, &limits);
            let checked = sender(app, &incoming.xml, &binding, parse, |r| r.issuer.as_deref(), |r| r.has_signature, false);
            let (client, response) = match checked {
                Ok(c) => c,
                Err((client, reason)) => return refused(app, client.as_deref(), &reason).await,
            };
            if response.destination.as_deref().is_some_and(|d| d != here) {
                return refused(app, Some(&client), "Destination is not this server's logout address").await;
            }
            let detail = json!({
                "sp": client.id(), "response": response.status, "sub_status": response.sub_status,
                "in_response_to": response.in_response_to,
            });
            app.audit(AuditEvent::new("saml_logout").client(client.id()).detail(detail)).await;
            // It came back into the logout page's iframe (our LogoutRequest went there), so the
            // answer must be framable by that page; the page goes on by itself.
            pages::signed_out_in_our_frame()
        }
        Message::Request => {
            let parse = |x: &str| xml::parse_logout_request(x, &limits);
            let checked = sender(app, &incoming.xml, &binding, parse, |r| r.issuer.as_deref(), |r| r.has_signature, true);
            let (client, request) = match checked {
                Ok(c) => c,
                Err((client, reason)) => return refused(app, client.as_deref(), &reason).await,
            };
            if request.destination.as_deref().is_some_and(|d| d != here) {
                return refused(app, Some(&client), "Destination is not this server's logout address").await;
            }
            let stale = request.issue_instant + MAX_AGE + CLOCK_SKEW < t || request.not_on_or_after.is_some_and(|n| n + CLOCK_SKEW <= t);
            if stale || request.issue_instant > t + CLOCK_SKEW {
                return refused(app, Some(&client), "the LogoutRequest is expired or not yet valid").await;
            }
            let sp = client.meta.saml.as_ref().expect("a SAML provider");
            let Some(slo_url) = sp.slo_url.clone() else {
                return refused(app, Some(&client), "the service provider registered no slo_url to answer at").await;
            };
            let session = authorize::current_session(app, headers).await;
            if let Some((_, s)) = &session {
                if let Err(reason) = names_this_session(app, &client, &request, s) {
                    return refused(app, Some(&client), reason).await;
                }
            }
            // No session here (ended already, or its cookie not sent): nothing is left to end,
            // which is what the SP asked for.
            let ended = match session {
                Some((cookie, _)) => match end(app, app.tenant.id, SessionRef::Cookie(cookie), EndedBy::Saml(client.id().to_string())).await {
                    Ok(e) => e,
                    Err(e) => return authorize::unavailable(e),
                },
                None => None,
            };
            let untold = ended.as_ref().map(|s| slo_out::logout_requests(app, s, Some(client.id())).untold).unwrap_or(0);
            let codes = (status::SUCCESS, (untold > 0).then_some(status::PARTIAL_LOGOUT));
            let url = match slo_out::answer(app, &client, &slo_url, &request.id, codes, incoming.relay_state.as_deref()) {
                Ok(u) => u,
                Err(e) => return authorize::unavailable(e),
            };
            let detail = json!({
                "sp": client.id(), "request": request.id, "sid": ended.as_ref().map(|s| &s.sid),
                "status": codes.1.unwrap_or(codes.0),
            });
            let mut event = AuditEvent::new("saml_logout").client(client.id()).detail(detail);
            if let Some(s) = &ended {
                event = event.user(&s.user_id);
            }
            app.audit(event).await;
            end_session::leave(app, ended.as_ref(), Some(url), None, status, Some(client.id())).await
        }
    }
}

/// Whether an SP's LogoutRequest names the browser's session: the SP signed into it, the
/// NameID is the one it was issued there, and a SessionIndex (if any) is its `sid`.
fn names_this_session(app: &Issuer, client: &Client, request: &xml::LogoutRequestIn, session: &Session) -> Result<(), &'static str> {
    let sp = client.meta.saml.as_ref().expect("a SAML provider");
    if !session.clients.iter().any(|c| c == client.id()) {
        return Err("the service provider has not signed in in this session");
    }
    let user = app.registry().user(&session.user_id).ok_or("the session's user is gone")?;
    if sso::issued_name_id(app, sp, &session.sid, &user).as_deref() != Some(request.name_id.as_str()) {
        return Err("the NameID is not the one issued to this service provider in this session");
    }
    if request.name_id_format.as_deref().is_some_and(|f| f != sp.name_id_format && f != NAMEID_UNSPECIFIED) {
        return Err("the NameID Format is not the one this service provider is registered for");
    }
    if !request.session_indexes.is_empty() && !request.session_indexes.contains(&session.sid) {
        return Err("the SessionIndex is not this session's");
    }
    Ok(())
}

/// A message refused: audited, and a page (never a message to an address the sender chose).
async fn refused(app: &Issuer, client: Option<&Client>, reason: &str) -> Response {
    let mut event = AuditEvent::new("saml_logout_refused").detail(json!({"reason": reason}));
    if let Some(c) = client {
        event = event.client(c.id());
    }
    app.audit(event).await;
    pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail(format!("SAML: {reason}")))
}
