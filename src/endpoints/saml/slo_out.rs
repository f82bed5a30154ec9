//! What Single Logout sends to SPs (Profiles §4.4): the LogoutRequests the logout page loads
//! for each SAML SP of an ended session (`logout_requests`), the LogoutResponse an SP's own
//! LogoutRequest is answered with (`answer`), each by the SP's `slo_binding`:
//!
//! - HTTP-Redirect: a URL, the message signed over its query, made at once;
//! - HTTP-POST: a form, which only a page can send. The URL given instead is our own
//!   `GET /saml/slo/post?m=…` (`post`), the message's facts sealed into `m` (by the tenant's
//!   sealer, for `challenge_ttl`); that page makes the message, signs it in its XML and posts
//!   it, in the logout page's iframe (which may frame only our own pages and the SPs') or as
//!   the page the logout ends on. The RSA signature is made only when the page is loaded.

use super::sso;
use crate::http::pages;
use crate::registry::clients::saml::SloBinding;
use crate::registry::Client;
use crate::saml::logout::{self as slo, LogoutRequestOut, Message};
use crate::saml::{self, signer};
use crate::stores::Session;
use crate::tenant::Issuer;
use crate::ui::Msg;
use crate::util::now;
use axum::extract::RawQuery;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// Our page that posts a message to an SP whose SLO endpoint is HTTP-POST only.
pub const POST_PATH: &str = "/saml/slo/post";
const SEAL_KIND: &str = "saml-slo-post";

/// A message for an SP's HTTP-POST SLO endpoint, as sealed into our page's URL: what is
/// needed to make it when the page is loaded (the session is over by then).
#[derive(serde::Serialize, serde::Deserialize)]
enum Outbound {
    Request { client: String, name_id: String, session_index: String },
    Response { client: String, in_response_to: String, status: String, sub_status: Option<String>, relay_state: Option<String> },
}

/// What the logout page of an ended session loads for its SAML SPs.
#[derive(Default)]
pub struct Told {
    /// A URL per SP told: its signed LogoutRequest (Redirect) or our page posting it (POST).
    pub frames: Vec<String>,
    /// Origins those frames go on to: the SPs' (a POST leaves our page for the SP's) and ours
    /// (an SP's LogoutResponse comes back to `/saml/slo`); the page's CSP must let its
    /// frames go there.
    pub origins: Vec<String>,
    /// SPs of the session that could not be told (no SLO URL, one outside the address
    /// policy, a user without the e-mail its NameID is, or no signing key).
    pub untold: usize,
}

/// For the logout page of the ended `session`: a frame for each SAML SP of the session but
/// `except` (the SP whose own LogoutRequest this answers) and those told by SOAP.
pub fn logout_requests(app: &Issuer, session: &Session, except: Option<&str>) -> Told {
    let sps: Vec<Arc<Client>> = session
        .clients
        .iter()
        .filter(|id| Some(id.as_str()) != except)
        .filter_map(|id| app.client(id))
        // An SP with a SOAP endpoint is told from the server (`logout::saml_soap`, queued in
        // the commit that ended the session), not through the browser.
        .filter(|c| c.meta.saml.as_ref().is_some_and(|s| s.slo_soap_url.is_none()))
        .collect();
    if sps.is_empty() {
        return Told::default();
    }
    let user = app.registry().user(&session.user_id);
    let signer = signer::current(app.keys()).ok();
    let idp = saml::entity_id(app.issuer());
    let mut told = Told::default();
    for client in &sps {
        let sp = client.meta.saml.as_ref().expect("filtered");
        let frame = (|| {
            // The page makes the browser load it: under the server's address policy, as the
            // OpenID clients' front-channel URIs are.
            let allowed = |u: &&str| crate::http::fetch::check_target(u, app.config.fetch_allow_private_addresses).is_ok();
            let dest = sp.slo_url.as_deref().filter(allowed)?;
            let name_id = sso::issued_name_id(app, sp, &session.sid, user.as_ref()?)?;
            let url = match sp.slo_binding {
                SloBinding::Redirect => {
                    let out = LogoutRequestOut {
                        idp_entity_id: &idp,
                        destination: dest,
                        name_id: &name_id,
                        name_id_format: &sp.name_id_format,
                        session_index: &session.sid,
                        now: now(),
                    };
                    let (_, xml) = slo::request_xml(&out);
                    slo::redirect_url(signer.as_ref()?, dest, Message::Request, &xml, None).ok()?
                }
                SloBinding::Post => {
                    signer.as_ref()?;
                    let out = Outbound::Request { client: client.id().to_string(), name_id, session_index: session.sid.clone() };
                    post_page_url(app, &out)
                }
            };
            Some((url, origin(dest)?))
        })();
        if let Some((url, reaches)) = frame {
            told.frames.push(url);
            told.origins.push(reaches);
        }
    }
    told.untold = sps.len() - told.frames.len();
    if !told.frames.is_empty() {
        told.origins.extend(origin(app.issuer()));
    }
    told
}

/// Where the browser goes with our LogoutResponse to `client`'s LogoutRequest `in_response_to`
/// (its SLO URL `slo_url`, by its binding).
pub fn answer(
    app: &Issuer,
    client: &Client,
    slo_url: &str,
    in_response_to: &str,
    codes: (&str, Option<&str>),
    relay_state: Option<&str>,
) -> Result<String, saml::SamlError> {
    let binding = client.meta.saml.as_ref().map(|sp| sp.slo_binding).unwrap_or_default();
    match binding {
        SloBinding::Redirect => {
            let (_, xml) = slo::response_xml(&saml::entity_id(app.issuer()), slo_url, in_response_to, codes, now());
            signer::current(app.keys()).and_then(|s| slo::redirect_url(&s, slo_url, Message::Response, &xml, relay_state))
        }
        SloBinding::Post => {
            // Fail now rather than on the page if there is nothing to sign with.
            signer::current(app.keys())?;
            let out = Outbound::Response {
                client: client.id().to_string(),
                in_response_to: in_response_to.to_string(),
                status: codes.0.to_string(),
                sub_status: codes.1.map(str::to_string),
                relay_state: relay_state.map(str::to_string),
            };
            Ok(post_page_url(app, &out))
        }
    }
}

fn post_page_url(app: &Issuer, out: &Outbound) -> String {
    let sealed = app.tenant.sealer.seal(SEAL_KIND, SEAL_KIND, app.config.challenge_ttl, out);
    format!("{}?m={sealed}", app.endpoint(POST_PATH))
}

fn origin(url: &str) -> Option<String> {
    url::Url::parse(url).ok().map(|u| u.origin().ascii_serialization())
}

/// `GET /saml/slo/post?m=…`: the sealed message made, signed in its XML, and posted to the
/// SP's SLO URL by an auto-submitting form (a Continue button without scripts). A page that
/// our own logout page may frame. Its URL expired, forged, or its SP since changed or gone:
/// an error page, nothing sent.
pub async fn post(app: Issuer, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let m = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "m").map(|(_, v)| v.into_owned());
    let out = m.and_then(|m| app.tenant.sealer.open::<Outbound>(SEAL_KIND, Some(SEAL_KIND), &m).ok());
    let Some(out) = out else {
        return pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail("SAML: this logout link is expired or not ours"));
    };
    let client_id = match &out {
        Outbound::Request { client, .. } | Outbound::Response { client, .. } => client,
    };
    let sp = app.client(client_id).and_then(|c| c.meta.saml.clone());
    let Some((sp, slo_url)) = sp.and_then(|sp| Some((sp.clone(), sp.slo_url.filter(|_| sp.slo_binding == SloBinding::Post)?))) else {
        return pages::error_page(StatusCode::BAD_REQUEST, Msg::new("err-bad-request").detail("SAML: the service provider no longer takes logout messages by HTTP-POST"));
    };
    let idp = saml::entity_id(app.issuer());
    let (message, (id, xml), relay_state) = match &out {
        Outbound::Request { name_id, session_index, .. } => {
            let r = LogoutRequestOut {
                idp_entity_id: &idp,
                destination: &slo_url,
                name_id,
                name_id_format: &sp.name_id_format,
                session_index,
                now: now(),
            };
            (Message::Request, slo::request_xml(&r), None)
        }
        Outbound::Response { in_response_to, status, sub_status, relay_state, .. } => {
            let made = slo::response_xml(&idp, &slo_url, in_response_to, (status, sub_status.as_deref()), now());
            (Message::Response, made, relay_state.as_deref())
        }
    };
    let value = match signer::current(app.keys()).and_then(|s| slo::post_value(&s, &id, &xml)) {
        Ok(v) => v,
        Err(e) => return super::super::authorize::unavailable(e),
    };
    let mut fields = vec![(message.parameter(), value.as_str())];
    if let Some(r) = relay_state {
        fields.push(("RelayState", r));
    }
    pages::form_post_framed_by_self(&slo_url, &fields)
}
