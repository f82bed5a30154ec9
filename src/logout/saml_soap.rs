//! SAML Single Logout's back channel (Profiles §4.4, Bindings §3.2): a signed LogoutRequest,
//! in a SOAP envelope, POSTed from the server to each SAML SP of an ended session that has an
//! `slo_soap_url`. A row of the durable outbox (`backchannel`), written in the commit that
//! ends the session: whoever ends it (the user at the logout page, an operator, a password
//! change, the account page, a directory sync), the SP is told, and a crash loses nothing.
//!
//! The message is made at each attempt, signed enveloped with the tenant's current key: the
//! NameID made again for the row's user and session (`sso::issued_name_id`), the session's
//! `sid` as the SessionIndex. The SP answers with a LogoutResponse in a SOAP envelope; any
//! 2xx whose body is one is a delivery (its status is audited: an SP that could not end its
//! session says so, and there is nothing more to do for it).

use super::backchannel::{Deliverer, Due, Sending};
use crate::endpoints::saml::sso;
use crate::http::fetch::FetchError;
use crate::saml::logout::{self as slo, LogoutRequestOut};
use crate::saml::{self, signer, xml};
use crate::tenant::Issuer;
use crate::util::now;
use std::time::Duration;

/// The `kind` of its outbox rows.
pub const KIND: &str = "saml_soap_logout";

pub struct SoapLogouts;

impl Deliverer for SoapLogouts {
    fn kinds(&self) -> &'static [&'static str] {
        &[KIND]
    }

    fn endpoint(&self, app: &Issuer, row: &Due) -> Option<String> {
        app.client(&row.client_id).and_then(|c| c.meta.saml.as_ref().and_then(|s| s.slo_soap_url.clone()))
    }

    fn send<'a>(&'a self, app: &'a Issuer, uri: &'a str, row: &'a Due, timeout: Duration) -> Sending<'a> {
        Box::pin(async move {
            let envelope = request(app, uri, row)?;
            let answer = match app.fetcher.post_soap(uri, slo::SOAP_ACTION, envelope, timeout).await {
                Ok(body) => body,
                Err(e) => return Ok(Err(e)),
            };
            // Delivered; what the SP answered is said, not acted on.
            let limits = xml::Limits { max_message_bytes: app.config.saml_max_message_bytes, ..Default::default() };
            let read = std::str::from_utf8(&answer).ok().and_then(|a| xml::parse_soap_logout_response(a, &limits).ok());
            Ok(match read {
                Some(r) => {
                    if r.status != saml::status::SUCCESS {
                        tracing::info!(client = %row.client_id, status = %r.status, "a SAML SP could not end its session");
                    }
                    Ok(())
                }
                None => Err(FetchError::Transport("the answer is not a SOAP LogoutResponse".into())),
            })
        })
    }

    /// There is no key to sign with (there may be later), or the NameID cannot be made (the
    /// user whose e-mail address it was is gone: it never will be, and is tried until
    /// `backchannel_logout_max_attempts` runs out, as a key would be).
    fn our_error_is_final(&self) -> bool {
        false
    }

    /// An SP that refuses the request (its signature, its NameID) will refuse it again, but
    /// the attempts are bounded (`backchannel_logout_max_attempts`) and a refusal may be a
    /// misconfiguration being fixed.
    fn refusal_is_final(&self) -> bool {
        false
    }

    fn events(&self) -> (&'static str, &'static str) {
        ("saml_soap_logout_delivered", "saml_soap_logout_abandoned")
    }
}

/// The SOAP envelope of the LogoutRequest for `row`, to `uri`.
fn request(app: &Issuer, uri: &str, row: &Due) -> Result<String, String> {
    let client = app.client(&row.client_id).ok_or("the service provider is gone")?;
    let sp = client.meta.saml.as_ref().ok_or("the client is no SAML service provider any more")?;
    let name_id = match app.registry().user(&row.sub) {
        Some(user) => sso::issued_name_id(app, sp, &row.sid, &user),
        // A deleted user's opaque NameIDs can still be made: they are of their id.
        None => matches!(sp.name_id_format.as_str(), crate::registry::clients::saml::NAMEID_PERSISTENT | crate::registry::clients::saml::NAMEID_TRANSIENT)
            .then(|| sso::name_id(app, sp, &row.sid, &row.sub)),
    }
    .ok_or("no NameID for this user (the SP's is the e-mail address, or the username, and the user has none any more)")?;
    let out = LogoutRequestOut {
        idp_entity_id: &saml::entity_id(app.issuer()),
        destination: uri,
        name_id: &name_id,
        name_id_format: &sp.name_id_format,
        session_index: &row.sid,
        now: now(),
    };
    let (id, xml) = slo::request_xml(&out);
    signer::current(app.keys()).and_then(|s| slo::soap_envelope(&s, &id, &xml)).map_err(|e| format!("cannot sign the LogoutRequest: {e}"))
}
