//! The new-client form in the product's words: application types that fill in the metadata
//! each kind of application needs, and the form's mistakes said as a person would say them
//! (the registry's own messages are the API's, and name parsers' reasons).

use crate::registry::clients::{self, UriProblem, AUTH_BASIC, AUTH_NONE, AUTH_PRIVATE_KEY_JWT, CONFIDENTIAL_ONLY_GRANTS};
use crate::ui::Msg;
use serde_json::{json, Value};

/// What redirect URIs an application type has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Redirects {
    /// A web page's: https (http only on the developer's own machine, a loopback host).
    Web,
    /// An installed app's (RFC 8252 §7): a private-use scheme, a loopback port, or https.
    App,
    /// None: nobody signs in (client credentials).
    None,
}

/// An application type: the metadata the form starts with, and its redirect URIs' rule.
#[derive(Debug)]
pub(crate) struct Preset {
    pub id: &'static str,
    pub grants: &'static [&'static str],
    pub method: &'static str,
    /// OIDC Dynamic Registration §2 `application_type`.
    pub application_type: Option<&'static str>,
    pub scope: &'static str,
    pub redirects: Redirects,
}

const CODE: &str = "authorization_code";
const REFRESH: &str = "refresh_token";
const DEVICE: &str = crate::grants::device_code::GRANT_TYPE;

/// Every type the form offers, in its order. Public clients (`none`) must use PKCE at
/// `/authorize` (as every client of this server may).
pub(crate) const PRESETS: &[Preset] = &[
    // A server-side application: keeps a secret.
    Preset { id: "web", grants: &[CODE, REFRESH], method: AUTH_BASIC, application_type: Some("web"), scope: "openid profile email offline_access", redirects: Redirects::Web },
    // JavaScript in the browser: no secret can be kept there; PKCE; CORS from its redirect URIs' origins.
    Preset { id: "spa", grants: &[CODE, REFRESH], method: AUTH_NONE, application_type: Some("web"), scope: "openid profile email offline_access", redirects: Redirects::Web },
    // A phone or desktop app: public, PKCE, its own scheme or a loopback port.
    Preset { id: "native", grants: &[CODE, REFRESH], method: AUTH_NONE, application_type: Some("native"), scope: "openid profile email offline_access", redirects: Redirects::App },
    // A service calling APIs as itself: a secret, no user, no redirect.
    Preset { id: "m2m", grants: &["client_credentials"], method: AUTH_BASIC, application_type: None, scope: "", redirects: Redirects::None },
    // An MCP client or agent acting for a user: public, PKCE, usually a loopback redirect;
    // refresh tokens keep it working without the browser each time.
    Preset { id: "mcp", grants: &[CODE, REFRESH], method: AUTH_NONE, application_type: Some("native"), scope: "openid profile offline_access", redirects: Redirects::App },
    // A TV, a command line or another device without a browser (RFC 8628): public, no
    // redirect; the user signs in on another screen with the code it shows.
    Preset { id: "device", grants: &[DEVICE, REFRESH], method: AUTH_NONE, application_type: Some("native"), scope: "openid profile offline_access", redirects: Redirects::None },
];

pub(crate) fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The form's starting values for an application type.
pub(crate) fn defaults(p: &Preset) -> Value {
    json!({"grant_types": p.grants, "method": p.method, "scope": p.scope, "type": p.id})
}

/// The grant types the form offers (others through the admin API), each with the key of its
/// words (`console-grant-<key>`).
pub(crate) const GRANTS: &[(&str, &str)] = &[
    (CODE, "code"),
    (REFRESH, "refresh"),
    ("client_credentials", "client-credentials"),
    ("urn:ietf:params:oauth:grant-type:token-exchange", "token-exchange"),
    (DEVICE, "device"),
    // CIBA: a new client polls (`backchannel_token_delivery_mode`); ping through the admin API.
    (crate::grants::ciba::GRANT_TYPE, "ciba"),
];

/// What is wrong with a form, in the product's words: the field (its id in the form) and
/// the message.
pub(crate) type Mistake = (&'static str, Msg);

fn uri_message(problem: &UriProblem) -> &'static str {
    match problem {
        UriProblem::Spaces => "console-uri-spaces",
        UriProblem::NotAbsolute(_) => "console-uri-not-absolute",
        UriProblem::Fragment => "console-uri-fragment",
        UriProblem::Userinfo => "console-uri-userinfo",
        UriProblem::Http => "console-uri-http",
        UriProblem::Forbidden | UriProblem::OtherScheme => "console-uri-scheme",
    }
}

fn uri_mistake(field: &'static str, id: &'static str, uri: &str) -> Mistake {
    (field, Msg::new(id).arg("uri", uri.to_string()))
}

/// A redirect URI (or a post-logout one) under the registry's rules and the type's.
fn check_redirect(field: &'static str, uri: &str, redirects: Redirects) -> Result<(), Mistake> {
    if let Some(problem) = clients::redirect_uri_problem(uri) {
        return Err(uri_mistake(field, uri_message(&problem), uri));
    }
    let web = url::Url::parse(uri).is_ok_and(|u| u.scheme() == "https" || u.scheme() == "http");
    if redirects == Redirects::Web && !web {
        return Err(uri_mistake(field, "console-uri-web-only", uri));
    }
    Ok(())
}

/// A URL the server itself calls (JWK Set, back-channel logout): https, or http on loopback.
fn check_web_url(field: &'static str, uri: &str) -> Result<(), Mistake> {
    match url::Url::parse(uri) {
        Ok(u) if u.scheme() == "https" || u.scheme() == "http" => match clients::redirect_uri_problem(uri) {
            Some(problem) => Err(uri_mistake(field, uri_message(&problem), uri)),
            None => Ok(()),
        },
        Ok(_) => Err(uri_mistake(field, "console-uri-web-only", uri)),
        Err(_) => Err(uri_mistake(field, "console-uri-not-absolute", uri)),
    }
}

/// The form's refresh-token reuse grace, if it is a number of seconds the registry takes.
pub(crate) fn grace_seconds(typed: &str) -> Option<u64> {
    typed.trim().parse::<u64>().ok().filter(|g| *g <= crate::config::MAX_REFRESH_REUSE_GRACE)
}

/// What the form says, read.
pub(crate) struct Typed<'a> {
    pub client_id: Option<&'a str>,
    pub name: Option<&'a str>,
    pub redirect_uris: &'a [String],
    pub post_logout_redirect_uris: &'a [String],
    pub grants: &'a [String],
    pub method: &'a str,
    pub scope: Option<&'a str>,
    pub jwks_uri: Option<&'a str>,
    pub backchannel_logout_uri: Option<&'a str>,
    pub refresh_reuse_grace: Option<&'a str>,
}

/// The form's mistakes, first one first, as the registry would find them but in the words
/// of the page; what the registry checks beyond the form's fields is its own to say.
pub(crate) fn check(f: &Typed, preset: Option<&Preset>) -> Result<(), Mistake> {
    if let Some(id) = f.client_id {
        if id.len() > 128 || !id.bytes().all(|b| b.is_ascii_graphic() && b != b':' && b != b'%') {
            return Err(("client_id", Msg::new("console-err-client-id")));
        }
    }
    if f.name.is_some_and(|n| n.chars().count() > 200 || n.chars().any(char::is_control)) {
        return Err(("client_name", Msg::new("console-err-name")));
    }
    let redirects = preset.map_or(Redirects::App, |p| p.redirects);
    if redirects == Redirects::None && !f.redirect_uris.is_empty() {
        return Err(("redirect_uris", Msg::new("console-err-no-redirects")));
    }
    for uri in f.redirect_uris {
        check_redirect("redirect_uris", uri, redirects)?;
    }
    for uri in f.post_logout_redirect_uris {
        check_redirect("post_logout_redirect_uris", uri, redirects)?;
    }
    if f.grants.is_empty() {
        return Err(("grants", Msg::new("console-err-no-grants")));
    }
    if f.grants.iter().any(|g| g == CODE) && f.redirect_uris.is_empty() {
        return Err(("redirect_uris", Msg::new("console-err-needs-redirect")));
    }
    if f.method == AUTH_NONE && f.grants.iter().any(|g| CONFIDENTIAL_ONLY_GRANTS.contains(&g.as_str())) {
        return Err(("method", Msg::new("console-err-public-grant")));
    }
    if f.method == AUTH_PRIVATE_KEY_JWT && f.jwks_uri.is_none() {
        return Err(("jwks_uri", Msg::new("console-err-needs-keys")));
    }
    if let Some(bad) = f.scope.into_iter().flat_map(crate::util::split_list).find(|s| !s.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')) {
        return Err(("scope", Msg::new("console-err-scope").arg("scope", bad.to_string())));
    }
    if let Some(uri) = f.jwks_uri {
        check_web_url("jwks_uri", uri)?;
    }
    if let Some(uri) = f.backchannel_logout_uri {
        check_web_url("backchannel_logout_uri", uri)?;
    }
    if f.refresh_reuse_grace.is_some_and(|g| grace_seconds(g).is_none()) {
        let max = crate::config::MAX_REFRESH_REUSE_GRACE.to_string();
        return Err(("refresh_reuse_grace", Msg::new("console-err-grace").arg("max", max)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset's metadata is one the registry takes (with a redirect URI of its kind).
    #[test]
    fn every_preset_makes_a_valid_client() {
        let vault = crate::keys::Vault::from_key([7; 32]);
        for p in PRESETS {
            let redirect = match p.redirects {
                Redirects::Web => vec!["https://app.example/cb".to_string()],
                Redirects::App => vec!["com.example.app:/cb".to_string(), "http://127.0.0.1/cb".to_string()],
                Redirects::None => vec![],
            };
            for g in p.grants {
                assert!(crate::grants::GRANT_TYPES.contains(g), "{}: {g}", p.id);
            }
            let grants: Vec<String> = p.grants.iter().map(|g| g.to_string()).collect();
            let typed = Typed { client_id: None, name: None, redirect_uris: &redirect, post_logout_redirect_uris: &[], grants: &grants, method: p.method, scope: Some(p.scope), jwks_uri: None, backchannel_logout_uri: None, refresh_reuse_grace: None };
            assert!(check(&typed, Some(p)).is_ok(), "{}", p.id);
            let input = crate::registry::ClientInput {
                redirect_uris: Some(redirect),
                grant_types: Some(grants),
                token_endpoint_auth_method: Some(p.method.into()),
                scope: Some(p.scope.into()),
                application_type: p.application_type.map(str::to_string),
                ..Default::default()
            };
            clients::new_client(input, &vault).unwrap_or_else(|e| panic!("{}: {e}", p.id));
        }
    }

    #[test]
    fn mistakes_are_named_by_field_and_never_carry_a_parsers_words() {
        let code = vec![CODE.to_string()];
        let base = |uris: &'static [String]| Typed { client_id: None, name: None, redirect_uris: uris, post_logout_redirect_uris: &[], grants: &[], method: AUTH_BASIC, scope: None, jwks_uri: None, backchannel_logout_uri: None, refresh_reuse_grace: None };
        let uris = |u: &str| -> &'static [String] { Box::leak(vec![u.to_string()].into_boxed_slice()) };
        let mut t = base(uris("not a uri"));
        t.grants = &code;
        let (field, msg) = check(&t, preset("web")).unwrap_err();
        assert_eq!((field, msg.id), ("redirect_uris", "console-uri-spaces"));
        let mut t = base(uris("/callback"));
        t.grants = &code;
        assert_eq!(check(&t, preset("web")).unwrap_err().1.id, "console-uri-not-absolute");
        let mut t = base(uris("com.example.app:/cb"));
        t.grants = &code;
        assert_eq!(check(&t, preset("spa")).unwrap_err().1.id, "console-uri-web-only");
        assert!(check(&t, preset("native")).is_ok());
        let mut t = base(uris("http://app.example/cb"));
        t.grants = &code;
        assert_eq!(check(&t, preset("web")).unwrap_err().1.id, "console-uri-http");
        let mut t = base(&[]);
        t.grants = &code;
        let (field, msg) = check(&t, preset("web")).unwrap_err();
        assert_eq!((field, msg.id), ("redirect_uris", "console-err-needs-redirect"));
        let t = base(&[]);
        assert_eq!(check(&t, preset("m2m")).unwrap_err().1.id, "console-err-no-grants");
    }
}
