//! The authorization request (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1): its parameters
//! read and checked into an `AuthorizationRequest`, the state login and consent carry.

use crate::factors::Level;
use super::response::{ReplyTo, ResponseMode};
use super::response_type::ResponseType;
use crate::error::OAuthError;
use crate::http::params::Params;
use crate::registry::Client;
use crate::tenant::Issuer;
use crate::tokens::claims_request;
use crate::util::split_list;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A validated authorization request: what login and consent carry through their challenges.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthorizationRequest {
    pub client_id: String,
    pub redirect_uri: String,
    /// Requested scopes the client may have, space-separated.
    pub scope: String,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub prompt: Vec<String>,
    pub max_age: Option<u64>,
    pub login_hint: Option<String>,
    /// Authrim's `idp_hint`: sign in with this upstream identity provider (its `id`) at once,
    /// without the login page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_hint: Option<String>,
    /// OpenID Connect Core §3.1.2.1: the languages the pages should be in, preferred first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_locales: Option<String>,
    pub id_token_hint_sub: Option<String>,
    pub claims: Option<Value>,
    #[serde(default)]
    pub response_mode: ResponseMode,
    /// What the response returns: a code, tokens, or both (hybrid).
    #[serde(default, skip_serializing_if = "is_code")]
    pub response_type: ResponseType,
    /// RFC 9449 §10: the DPoP key the code must be redeemed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// Requested authentication context classes: `acr_values`, then the `claims` request's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acr_values: Vec<String>,
    /// The `claims` request marks its `acr` essential: not meeting it is an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acr_essential: bool,
    /// RFC 8707: the resources the tokens are to be for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource: Vec<String>,
    /// The `request_uri` this request was pushed as (RFC 9126), spent when its code is issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed: Option<String>,
    /// Authrim's `organization` (issue 31): the id of the organization (named by id or slug)
    /// the user signs in for; only a member may, and the tokens then say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// A sign-in that came as a SAML AuthnRequest (`endpoints::saml`): it ends in a SAML
    /// Response to this ACS instead of a redirect with a code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saml: Option<crate::saml::SamlReply>,
}

impl AuthorizationRequest {
    /// Where this request's response goes.
    pub fn reply_to(&self) -> ReplyTo<'_> {
        ReplyTo { client_id: &self.client_id, redirect_uri: &self.redirect_uri, state: self.state.as_deref(), mode: self.response_mode, saml: self.saml.as_ref() }
    }

    pub fn prompts(&self, p: &str) -> bool {
        self.prompt.iter().any(|x| x == p)
    }

    /// The level the client asks for: its first choice of `acr_values` (OpenID Connect Core
    /// §3.1.2.1: in order of preference), or, for an essential `acr`, the least of the values
    /// it accepts. `None`: nothing we know was asked for.
    pub fn wanted_level(&self) -> Option<Level> {
        match self.acr_essential {
            true => self.acr_values.iter().filter_map(|a| Level::of(a)).min(),
            false => self.acr_values.first().and_then(|a| Level::of(a)),
        }
    }

    /// An essential `acr` (the `claims` request) that a session of `acr` does not meet: an
    /// error to the client (OpenID Connect Core §5.5.1.1). A stronger session meets a weaker
    /// value (a passkey meets `mfa`).
    pub fn unmet_by(&self, acr: &str) -> bool {
        let have = Level::of(acr);
        self.acr_essential
            && !self.acr_values.is_empty()
            && !self.acr_values.iter().any(|a| a == acr || Level::of(a).zip(have).is_some_and(|(want, have)| want <= have))
    }

    /// The `acr` to tell the client for a session of `acr`: itself if it was asked for (or
    /// nothing was), otherwise the strongest asked-for value it meets (Core §5.5.1.1: one of
    /// the requested values), otherwise itself.
    pub fn reported_acr(&self, acr: &str) -> String {
        reported_acr(&self.acr_values, acr)
    }
}

fn is_code(t: &ResponseType) -> bool {
    *t == ResponseType::Code
}

/// `AuthorizationRequest::reported_acr` for any request that names `acr_values` (the device
/// grant's too).
pub fn reported_acr(acr_values: &[String], acr: &str) -> String {
    let Some(have) = Level::of(acr) else { return acr.to_string() };
    if acr_values.is_empty() || acr_values.iter().any(|a| a == acr) {
        return acr.to_string();
    }
    acr_values.iter().filter_map(|a| Level::of(a)).filter(|l| *l <= have).max().map_or(acr, |l| l.acr()).to_string()
}

/// The level a request's `acr_values` prefer (its first we know), as `wanted_level` reads a
/// non-essential request.
pub fn preferred_level(acr_values: &[String]) -> Option<Level> {
    acr_values.first().and_then(|a| Level::of(a))
}

pub enum Rejection {
    /// Shown to the user: the client or redirect URI cannot be trusted.
    Page(String),
    /// An error with no trusted redirect URI to send it to (a request object that cannot be
    /// used): shown to the user as a page, answered to a pushing client as itself.
    Unredirectable(OAuthError),
    /// Sent back to the client's redirect URI (the error boxed: a `Result` of this stays small).
    Redirect { client_id: String, redirect_uri: String, state: Option<String>, mode: ResponseMode, error: Box<OAuthError> },
}

/// How the request arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// In the browser's request to `/authorize`.
    FrontChannel,
    /// Pushed by the authenticated client to `/par`.
    Pushed,
}

/// Read the request in `p`: a signed request object if there is one (`request`), else the
/// parameters themselves.
pub async fn read(app: &Issuer, p: &Params, via: Via) -> Result<AuthorizationRequest, Rejection> {
    // A client named by a metadata document is fetched now (the checks below use memory).
    if let Some(id) = p.get("client_id") {
        app.resolve_client(id).await.map_err(|e| Rejection::Page(format!("The application cannot be used: {e}.")))?;
    }
    if p.contains("request") {
        let unpacked = super::request_object::unpack(app, p).await?;
        return validate(app, &unpacked, via, true);
    }
    validate(app, p, via, false)
}

/// `signed`: the parameters came from a verified request object.
fn validate(app: &Issuer, p: &Params, via: Via, signed: bool) -> Result<AuthorizationRequest, Rejection> {
    let client_id = p.get("client_id").ok_or_else(|| Rejection::Page("The request names no client (client_id is missing).".into()))?;
    let client = app
        .client(client_id)
        .ok_or_else(|| Rejection::Page("The application that sent you here is not registered.".into()))?;
    let redirect_uri = p
        .get("redirect_uri")
        .ok_or_else(|| Rejection::Page("The request has no redirect_uri.".into()))?;
    if !client.has_redirect_uri(redirect_uri) {
        return Err(Rejection::Page("The redirect_uri is not registered for this application.".into()));
    }
    let state = p.get("state").map(str::to_string);
    // The response mode first: every later error travels in it. An unknown one is reported
    // in the response type's default mode (the fragment for one that asks for a token).
    let raw_type = p.get("response_type");
    let mode = ResponseMode::parse(p.get("response_mode"), raw_type);
    let response_mode = mode.clone().unwrap_or_else(|_| ResponseMode::default_for(raw_type));
    let error_mode = response_mode.for_errors(raw_type);
    let fail = |error: OAuthError| Rejection::Redirect {
        client_id: client.id().to_string(),
        redirect_uri: redirect_uri.to_string(),
        state: state.clone(),
        mode: error_mode,
        error: Box::new(error),
    };
    mode.map_err(fail)?;

    if client.meta.require_signed_request_object && !signed {
        return Err(fail(OAuthError::invalid_request("this client's requests must be signed request objects (RFC 9101)")));
    }
    if via == Via::FrontChannel && (app.config.require_pushed_authorization_requests || app.profile().requires_par(&client)) {
        return Err(fail(OAuthError::invalid_request("authorization requests must be pushed to the PAR endpoint first (RFC 9126)")));
    }
    let response_type = super::response_type::check(app, &client, raw_type, response_mode).map_err(fail)?;
    let resource = crate::resources::allowed(app, &client, p.get_all("resource")).map_err(fail)?;
    let scope = requested_scope(app, &client, &resource, p.get("scope")).map_err(fail)?;
    // PKCE protects a code; an implicit response has none.
    let code_challenge = pkce_challenge(response_type.has_code() && app.profile().requires_pkce(&client), p).map_err(fail)?;
    if response_type.has_id_token() && !split_list(&scope).any(|s| s == "openid") {
        return Err(fail(OAuthError::invalid_scope(format!("response_type={} needs the openid scope", response_type.as_str()))));
    }
    let prompt = parse_prompt(p.get("prompt")).map_err(fail)?;
    let max_age = match p.get("max_age") {
        None => None,
        Some(v) => Some(v.parse::<u64>().map_err(|_| fail(OAuthError::invalid_request("max_age must be a non-negative integer")))?),
    };
    let claims = p.get("claims").map(claims_request::parse).transpose().map_err(fail)?;
    let (mut acr_values, acr_essential) = claims_request::requested_acr(claims.as_ref());
    acr_values.extend(p.get("acr_values").map(split_list).into_iter().flatten().map(str::to_string));
    if acr_values.is_empty() {
        acr_values = client.meta.default_acr_values.clone();
    }
    // A JWK SHA-256 thumbprint: base64url of 32 bytes.
    let dpop_jkt = match p.get("dpop_jkt") {
        Some(j) if j.len() == 43 && j.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') => Some(j.to_string()),
        Some(_) => return Err(fail(OAuthError::invalid_request("dpop_jkt is not a JWK SHA-256 thumbprint"))),
        None => None,
    };
    let id_token_hint_sub = match p.get("id_token_hint") {
        None => None,
        Some(hint) => {
            let claims = crate::tokens::verify_id_token_hint(app, hint)
                .map_err(|_| fail(OAuthError::invalid_request("id_token_hint is not an ID token issued here")))?;
            claims.get("sub").and_then(Value::as_str).map(str::to_string)
        }
    };
    // Named by id or slug, kept by id (a slug may change while the request waits).
    let organization = match p.get("organization") {
        None => None,
        Some(o) => Some(app.registry().organization(o).ok_or_else(|| fail(OAuthError::invalid_request("organization names no organization here")))?.id.clone()),
    };
    let nonce = p.get("nonce").map(str::to_string);
    // OpenID Connect Core §3.2.2.1, §3.3.2.11: an ID token from the authorization endpoint
    // needs a nonce, the client's only defence against its replay.
    if response_type.has_id_token() && nonce.is_none() {
        return Err(fail(OAuthError::invalid_request(format!("nonce is required for response_type={}", response_type.as_str()))));
    }
    Ok(AuthorizationRequest {
        client_id: client.id().to_string(),
        redirect_uri: redirect_uri.to_string(),
        scope,
        state,
        nonce,
        code_challenge,
        prompt,
        max_age,
        login_hint: p.get("login_hint").map(str::to_string),
        idp_hint: p.get("idp_hint").filter(|h| h.len() <= 64).map(str::to_string),
        // A few language tags; anything longer is ignored rather than carried in every form.
        ui_locales: p.get("ui_locales").filter(|l| l.len() <= 128).map(str::to_string),
        id_token_hint_sub,
        claims,
        response_mode,
        response_type,
        dpop_jkt,
        acr_values,
        acr_essential,
        resource,
        pushed: None,
        organization,
        saml: None,
    })
}

/// The requested scopes this client may have. Values we do not know or the client may not
/// use are dropped (RFC 6749 §3.3 lets the server narrow the request); nothing left is an error.
fn requested_scope(app: &crate::tenant::Issuer, client: &Client, resources: &[String], scope: Option<&str>) -> Result<String, OAuthError> {
    let scope = scope.ok_or_else(|| OAuthError::invalid_scope("missing parameter: scope"))?;
    let mut kept: Vec<&str> = Vec::new();
    for s in split_list(scope) {
        if crate::resources::allows_scope(app, client, s, resources) && !kept.contains(&s) {
            kept.push(s);
        }
    }
    if kept.is_empty() {
        return Err(OAuthError::invalid_scope("none of the requested scopes is available to this client"));
    }
    Ok(kept.join(" "))
}

/// RFC 7636: S256 only; `required` for public clients (and every client under FAPI 2.0).
fn pkce_challenge(required: bool, p: &Params) -> Result<Option<String>, OAuthError> {
    match (p.get("code_challenge"), p.get("code_challenge_method")) {
        (None, Some(_)) => Err(OAuthError::invalid_request("code_challenge_method without code_challenge")),
        (None, None) if required => Err(OAuthError::invalid_request("this client must use PKCE (code_challenge with S256)")),
        (None, None) => Ok(None),
        (Some(_), None | Some("plain")) => Err(OAuthError::invalid_request("code_challenge_method must be S256; plain is not allowed")),
        (Some(_), Some(m)) if m != "S256" => Err(OAuthError::invalid_request("unsupported code_challenge_method; use S256")),
        (Some(c), Some(_)) => {
            // An S256 challenge is base64url of 32 bytes: exactly 43 characters.
            if c.len() != 43 || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
                return Err(OAuthError::invalid_request("code_challenge is not a base64url SHA-256 value"));
            }
            Ok(Some(c.to_string()))
        }
    }
}

fn parse_prompt(prompt: Option<&str>) -> Result<Vec<String>, OAuthError> {
    let values: Vec<String> = prompt.map(|p| split_list(p).map(str::to_string).collect()).unwrap_or_default();
    for v in &values {
        if !matches!(v.as_str(), "none" | "login" | "consent" | "select_account") {
            return Err(OAuthError::invalid_request(format!("unsupported prompt value {v:?}")));
        }
    }
    if values.iter().any(|v| v == "none") && values.len() > 1 {
        return Err(OAuthError::invalid_request("prompt=none cannot be combined with other values"));
    }
    Ok(values)
}

