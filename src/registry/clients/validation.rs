//! Whether client metadata can be registered: every field's rules (redirect URIs, the URLs the
//! server fetches or shows, keys, subject types, CORS origins, resource indicators).

use super::*;
use crate::endpoints::authorize::response_type::IMPLICIT_GRANT;

/// A registered client's id: no ':' keeps it apart from document clients' URLs.
pub(super) fn validate_id(client_id: &str) -> Result<(), String> {
    if client_id.is_empty() || client_id.len() > 128 || !client_id.bytes().all(|b| b.is_ascii_graphic() && b != b':' && b != b'%') {
        return Err("client_id must be 1-128 printable ASCII characters without ':' or '%'".into());
    }
    if crate::endpoints::first_party::by_client_id(client_id).is_some() {
        return Err(format!("client_id {client_id} is reserved for Authrim's own pages"));
    }
    Ok(())
}

pub(super) fn validate(meta: &ClientMetadata) -> Result<(), String> {
    if let Some(sp) = &meta.saml {
        return validate_saml(meta, sp);
    }
    if !AUTH_METHODS.contains(&meta.token_endpoint_auth_method.as_str()) {
        return Err(format!("token_endpoint_auth_method must be one of {}", AUTH_METHODS.join(", ")));
    }
    for g in &meta.grant_types {
        if !supported_grant_types().contains(&g.as_str()) {
            return Err(format!("unsupported grant type {g:?}; supported: {}", supported_grant_types().join(", ")));
        }
    }
    if meta.grant_types.is_empty() {
        return Err("grant_types must not be empty".into());
    }
    if let Some(why) = crate::endpoints::authorize::response_type::registration_refusal(&meta.response_types, &meta.grant_types) {
        return Err(why);
    }
    if meta.token_endpoint_auth_method == AUTH_NONE
        && meta.grant_types.iter().any(|g| CONFIDENTIAL_ONLY_GRANTS.contains(&g.as_str()))
    {
        return Err(format!("a public client cannot use {}", CONFIDENTIAL_ONLY_GRANTS.join(" or ")));
    }
    if meta.grant_types.iter().any(|g| g == "authorization_code" || g == IMPLICIT_GRANT) && meta.redirect_uris.is_empty() {
        return Err("a client using authorization_code or implicit needs at least one redirect URI".into());
    }
    for uri in &meta.redirect_uris {
        validate_redirect_uri(uri)?;
    }
    for s in split_list(&meta.scope) {
        // RFC 6749 §3.3 scope-token: printable ASCII except space, '"' and '\\'.
        if !s.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\') {
            return Err(format!("scope {s:?} is not a valid scope token (RFC 6749 section 3.3)"));
        }
    }
    for r in &meta.allowed_resources {
        validate_resource(r)?;
    }
    if let Some(p) = &meta.token_exchange {
        for t in &p.subject_token_types {
            if ![TOKEN_TYPE_ACCESS_TOKEN, TOKEN_TYPE_JWT, TOKEN_TYPE_ID_TOKEN].contains(&t.as_str()) {
                return Err(format!("token_exchange.subject_token_types: {t:?} is not supported (refresh tokens never are)"));
            }
        }
    }
    if meta.allowed_audiences.iter().any(|a| a.is_empty() || a.chars().any(char::is_whitespace)) {
        return Err("allowed_audiences must be non-empty strings without spaces".into());
    }
    for o in &meta.allowed_cors_origins {
        validate_cors_origin(o)?;
    }
    for uri in &meta.post_logout_redirect_uris {
        validate_redirect_uri(uri).map_err(|e| format!("post_logout_redirect_uris: {e}"))?;
    }
    if meta.request_uris.len() > MAX_REQUEST_URIS {
        return Err(format!("request_uris: at most {MAX_REQUEST_URIS}"));
    }
    for uri in &meta.request_uris {
        validate_request_uri(uri)?;
    }
    for (name, uri) in [
        ("backchannel_logout_uri", &meta.backchannel_logout_uri),
        ("frontchannel_logout_uri", &meta.frontchannel_logout_uri),
        ("jwks_uri", &meta.jwks_uri),
    ] {
        if let Some(uri) = uri {
            validate_web_uri(uri).map_err(|e| format!("{name}: {e}"))?;
        }
    }
    validate_ciba(meta)?;
    for (name, uri) in [("client_uri", &meta.client_uri), ("logo_uri", &meta.logo_uri), ("tos_uri", &meta.tos_uri), ("policy_uri", &meta.policy_uri)] {
        // Shown as links: https only (a javascript: or data: URL must never reach a page).
        if let Some(uri) = uri {
            if !url::Url::parse(uri).is_ok_and(|u| u.scheme() == "https" || u.scheme() == "http") {
                return Err(format!("{name}: {uri:?} must be an http(s) URL"));
            }
        }
    }
    if let Some(uri) = &meta.initiate_login_uri {
        // OpenID Connect Dynamic Registration §2: https. It is shown to users as a link.
        if !url::Url::parse(uri).is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.username().is_empty() && u.fragment().is_none()) {
            return Err(format!("initiate_login_uri: {uri:?} must be an https URL without a fragment"));
        }
    }
    if meta.contacts.iter().any(|c| c.is_empty() || c.len() > 254 || c.chars().any(char::is_control)) || meta.contacts.len() > 10 {
        return Err("contacts: at most 10 addresses, each 1-254 characters".into());
    }
    if let Some(a) = meta.default_acr_values.iter().find(|a| !crate::factors::ACR_VALUES.contains(&a.as_str())) {
        return Err(format!("default_acr_values: {a:?} is not one of {}", crate::factors::ACR_VALUES.join(", ")));
    }
    meta.directory.validate()?;
    if let Some(g) = meta.refresh_reuse_grace.filter(|g| *g > crate::config::MAX_REFRESH_REUSE_GRACE) {
        return Err(format!("refresh_reuse_grace: at most {} seconds, got {g}", crate::config::MAX_REFRESH_REUSE_GRACE));
    }
    if meta.security_profile.as_deref().is_some_and(|p| p != "fapi2" && p != "fapi-ciba") {
        return Err("security_profile: fapi2 or fapi-ciba, or empty for the tenant's profile".into());
    }
    if meta.application_type.as_deref().is_some_and(|t| t != "web" && t != "native") {
        return Err("application_type must be web or native".into());
    }
    if meta.client_name.as_deref().is_some_and(|n| n.chars().count() > 200 || n.chars().any(char::is_control)) {
        return Err("client_name: at most 200 characters, no control characters".into());
    }
    super::mtls::validate(meta)?;
    validate_keys(meta)
}

/// OIDC Core §8.1: a pairwise client's sector is the host of its `sector_identifier_uri`
/// (https), or, without one, the one host all its redirect URIs share.
pub(super) fn validate_subject_type(meta: &ClientMetadata) -> Result<(), String> {
    match meta.subject_type.as_deref() {
        None | Some("public") => {}
        Some("pairwise") => {
            if let Some(uri) = &meta.sector_identifier_uri {
                validate_web_uri(uri).map_err(|e| format!("sector_identifier_uri: {e}"))?;
            } else {
                let mut hosts: Vec<String> =
                    meta.redirect_uris.iter().filter_map(|u| url::Url::parse(u).ok()?.host_str().map(str::to_string)).collect();
                hosts.dedup();
                if hosts.len() != 1 {
                    return Err("a pairwise client whose redirect URIs are not on one host needs a sector_identifier_uri".into());
                }
            }
        }
        Some(other) => return Err(format!("subject_type {other:?} is not public or pairwise")),
    }
    if meta.sector_identifier_uri.is_some() && meta.subject_type.as_deref() != Some("pairwise") {
        return Err("sector_identifier_uri is for pairwise clients".into());
    }
    Ok(())
}

/// RFC 7591 §2: `jwks` and `jwks_uri` are exclusive; `private_key_jwt` needs one of them;
/// inline keys are public keys we can use; the signing algorithm suits the method.
pub(super) fn validate_keys(meta: &ClientMetadata) -> Result<(), String> {
    if meta.jwks.is_some() && meta.jwks_uri.is_some() {
        return Err("jwks and jwks_uri must not both be present (RFC 7591 section 2)".into());
    }
    if let Some(jwks) = &meta.jwks {
        client_keys::parse_jwks(jwks).map_err(|e| format!("jwks: {e}"))?;
    }
    let method = meta.token_endpoint_auth_method.as_str();
    if method == AUTH_PRIVATE_KEY_JWT && meta.jwks.is_none() && meta.jwks_uri.is_none() {
        return Err("private_key_jwt needs the client's public keys: jwks or jwks_uri".into());
    }
    validate_subject_type(meta)?;
    for (name, alg) in [
        ("id_token_signed_response_alg", &meta.id_token_signed_response_alg),
        ("userinfo_signed_response_alg", &meta.userinfo_signed_response_alg),
        ("access_token_signing_alg", &meta.access_token_signing_alg),
        ("authorization_signed_response_alg", &meta.authorization_signed_response_alg),
        ("introspection_signed_response_alg", &meta.introspection_signed_response_alg),
    ] {
        if let Some(alg) = alg.as_deref().filter(|a| crate::keys::signing_alg(a).is_none()) {
            return Err(format!("{name} {alg:?} is not one of {}", crate::keys::SIGNING_ALGS.join(", ")));
        }
    }
    validate_encryption(meta)?;
    if let Some(alg) = &meta.request_object_signing_alg {
        // An HMAC needs a secret we can read back: only client_secret_jwt clients keep one.
        let allowed = if method == AUTH_SECRET_JWT { [client_keys::ASYMMETRIC_ALGS, client_keys::HMAC_ALGS].concat() } else { client_keys::ASYMMETRIC_ALGS.to_vec() };
        if !allowed.contains(&alg.as_str()) {
            return Err(format!("request_object_signing_alg {alg:?} is not one of {}", allowed.join(", ")));
        }
    }
    // CIBA Core §7.1.1: signed authentication requests use asymmetric algorithms only.
    if let Some(alg) = meta.backchannel_authentication_request_signing_alg.as_deref().filter(|a| !client_keys::ASYMMETRIC_ALGS.contains(a)) {
        return Err(format!("backchannel_authentication_request_signing_alg {alg:?} is not one of {}", client_keys::ASYMMETRIC_ALGS.join(", ")));
    }
    if let Some(alg) = &meta.token_endpoint_auth_signing_alg {
        let allowed = match method {
            AUTH_PRIVATE_KEY_JWT => client_keys::ASYMMETRIC_ALGS,
            AUTH_SECRET_JWT => client_keys::HMAC_ALGS,
            _ => return Err(format!("token_endpoint_auth_signing_alg applies only to {AUTH_PRIVATE_KEY_JWT} and {AUTH_SECRET_JWT}")),
        };
        if !allowed.contains(&alg.as_str()) {
            return Err(format!("token_endpoint_auth_signing_alg {alg:?} is not one of {}", allowed.join(", ")));
        }
    }
    Ok(())
}

/// OpenID Connect Dynamic Registration §2: an encrypted response's `alg` without its `enc`
/// is encrypted with A128CBC-HS256 (said in the registration's answer, as any default).
pub(super) fn default_encryption(meta: &mut ClientMetadata) {
    for (alg, enc) in [
        (&meta.id_token_encrypted_response_alg, &mut meta.id_token_encrypted_response_enc),
        (&meta.userinfo_encrypted_response_alg, &mut meta.userinfo_encrypted_response_enc),
        (&meta.introspection_encrypted_response_alg, &mut meta.introspection_encrypted_response_enc),
        (&meta.authorization_encrypted_response_alg, &mut meta.authorization_encrypted_response_enc),
        (&meta.request_object_encryption_alg, &mut meta.request_object_encryption_enc),
    ] {
        if alg.is_some() && enc.is_none() {
            *enc = Some(crate::keys::jwe::DEFAULT_ENC.into());
        }
    }
}

/// Encrypted responses: an `alg` and `enc` we implement, no `enc` without its `alg`, and keys
/// to encrypt to (an inline set must hold one that fits; a `jwks_uri` is read when used).
fn validate_encryption(meta: &ClientMetadata) -> Result<(), String> {
    use crate::keys::jwe::{CONTENT_ENCS, KEY_ALGS};
    for (what, alg, enc) in [
        ("id_token", &meta.id_token_encrypted_response_alg, &meta.id_token_encrypted_response_enc),
        ("userinfo", &meta.userinfo_encrypted_response_alg, &meta.userinfo_encrypted_response_enc),
        ("introspection", &meta.introspection_encrypted_response_alg, &meta.introspection_encrypted_response_enc),
        ("authorization", &meta.authorization_encrypted_response_alg, &meta.authorization_encrypted_response_enc),
    ] {
        let Some(alg) = alg else {
            if enc.is_some() {
                return Err(format!("{what}_encrypted_response_enc needs {what}_encrypted_response_alg"));
            }
            continue;
        };
        if !KEY_ALGS.contains(&alg.as_str()) {
            return Err(format!("{what}_encrypted_response_alg {alg:?} is not one of {}", KEY_ALGS.join(", ")));
        }
        if let Some(enc) = enc.as_deref().filter(|e| !CONTENT_ENCS.contains(e)) {
            return Err(format!("{what}_encrypted_response_enc {enc:?} is not one of {}", CONTENT_ENCS.join(", ")));
        }
        match &meta.jwks {
            None if meta.jwks_uri.is_none() => return Err(format!("{what}_encrypted_response_alg needs the client's keys: jwks or jwks_uri")),
            None => {}
            Some(jwks) => {
                let keys = client_keys::parse_encryption_jwks(jwks, false).map_err(|e| format!("jwks: {e}"))?;
                if !keys.iter().any(|k| k.fits(alg)) {
                    let kind = if alg.starts_with("RSA") { "an RSA key" } else { "an EC (P-256, P-384, P-521) or X25519 key" };
                    return Err(format!("jwks has no key for {what}_encrypted_response_alg {alg}: {kind} with use \"enc\" (or none)"));
                }
            }
        }
    }
    // Request objects are encrypted to our keys, not the client's: only the algorithms.
    match (&meta.request_object_encryption_alg, &meta.request_object_encryption_enc) {
        (None, Some(_)) => return Err("request_object_encryption_enc needs request_object_encryption_alg".into()),
        (Some(alg), _) if !KEY_ALGS.contains(&alg.as_str()) => {
            return Err(format!("request_object_encryption_alg {alg:?} is not one of {}", KEY_ALGS.join(", ")))
        }
        (_, Some(enc)) if !CONTENT_ENCS.contains(&enc.as_str()) => {
            return Err(format!("request_object_encryption_enc {enc:?} is not one of {}", CONTENT_ENCS.join(", ")))
        }
        _ => {}
    }
    Ok(())
}

/// CIBA Core §4: a client of the CIBA grant names its delivery mode, `poll`, `ping` or
/// `push`; a ping or push client its notification endpoint. Pushed tokens cannot be bound to
/// a key the client proves when it receives them, so a client whose tokens must be bound
/// (DPoP, mTLS) cannot use push.
fn validate_ciba(meta: &ClientMetadata) -> Result<(), String> {
    let ciba = meta.grant_types.iter().any(|g| g == crate::grants::ciba::GRANT_TYPE);
    match (ciba, meta.backchannel_token_delivery_mode.as_deref()) {
        (_, Some(m)) if !crate::endpoints::ciba::DELIVERY_MODES.contains(&m) => {
            return Err(format!("backchannel_token_delivery_mode {m:?} is not one of {}", crate::endpoints::ciba::DELIVERY_MODES.join(", ")));
        }
        (true, None) => return Err("a client of the CIBA grant needs a backchannel_token_delivery_mode (poll, ping or push)".into()),
        (_, Some("push")) if meta.dpop_bound_access_tokens || meta.mtls.tls_client_certificate_bound_access_tokens => {
            return Err("push mode cannot deliver sender-constrained tokens (dpop_bound_access_tokens, tls_client_certificate_bound_access_tokens): use poll or ping".into());
        }
        _ => {}
    }
    match (meta.backchannel_token_delivery_mode.as_deref(), &meta.backchannel_client_notification_endpoint) {
        (Some(mode @ ("ping" | "push")), None) => Err(format!("a {mode} client needs a backchannel_client_notification_endpoint")),
        // https, or http on a loopback host as for every URI the server calls (a loopback
        // address is refused by the fetcher anyway unless `fetch_allow_private_addresses`).
        (_, Some(uri)) => validate_web_uri(uri).map_err(|e| format!("backchannel_client_notification_endpoint: {e}")),
        _ => Ok(()),
    }
}

/// The URIs of a client that the server requests (`backchannel_logout_uri`, `jwks_uri`,
/// `sector_identifier_uri`) or has the user's browser load in a page of ours
/// (`frontchannel_logout_uri`), under the fetcher's address policy: unless
/// `allow_private` (`fetch_allow_private_addresses`), none may name a loopback, private,
/// link-local, unique-local, shared, multicast or unspecified address, nor a local name such
/// as `localhost` (SSRF). Redirect URIs are not among them: the browser follows those, and a
/// native app's are loopback by design (RFC 8252 §7.3).
pub fn check_targets(meta: &ClientMetadata, allow_private: bool) -> Result<(), String> {
    for (name, uri) in [
        ("backchannel_logout_uri", &meta.backchannel_logout_uri),
        ("frontchannel_logout_uri", &meta.frontchannel_logout_uri),
        ("jwks_uri", &meta.jwks_uri),
        ("sector_identifier_uri", &meta.sector_identifier_uri),
        ("backchannel_client_notification_endpoint", &meta.backchannel_client_notification_endpoint),
    ] {
        if let Some(uri) = uri {
            crate::http::fetch::check_target(uri, allow_private)
                .map_err(|e| format!("{name}: {e} (the server sends requests only to public addresses)"))?;
        }
    }
    for uri in &meta.request_uris {
        crate::http::fetch::check_target(uri, allow_private).map_err(|e| format!("request_uris: {e} (the server sends requests only to public addresses)"))?;
    }
    Ok(())
}

/// The most `request_uris` one client may register.
pub const MAX_REQUEST_URIS: usize = 10;
/// OpenID Connect Core §6.2: a `request_uri` should not exceed 512 ASCII characters.
pub const MAX_REQUEST_URI_LEN: usize = 512;

/// A `request_uris` entry: an absolute https URL (http only on a loopback host), at most
/// `MAX_REQUEST_URI_LEN` characters, no userinfo; a fragment is allowed (the client's cache
/// marker, OpenID Connect Dynamic Registration §2).
pub(super) fn validate_request_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_REQUEST_URI_LEN {
        return Err(format!("request_uris: {uri:?} is longer than {MAX_REQUEST_URI_LEN} characters"));
    }
    let mut without = url::Url::parse(uri).map_err(|e| format!("request_uris: {uri:?}: {e}"))?;
    without.set_fragment(None);
    match without.scheme() {
        "https" | "http" => validate_redirect_uri(without.as_str()).map_err(|e| format!("request_uris: {e}")),
        _ => Err(format!("request_uris: {uri:?} must use https (http only for loopback hosts)")),
    }
}

/// OpenID Connect Core §4: the client's `initiate_login_uri` with `iss` (this server's
/// issuer) and, if given, `target_link_uri` added to its query: where a sign-in into the
/// client starts from a link of ours.
pub fn login_initiation(meta: &ClientMetadata, issuer: &str, target_link_uri: Option<&str>) -> Option<String> {
    // A SAML service provider is signed into from here (IdP-initiated SSO), if it allows that.
    if let Some(sp) = &meta.saml {
        let id: String = url::form_urlencoded::byte_serialize(meta.client_id.as_bytes()).collect();
        return sp.idp_initiated.then(|| format!("{issuer}{}/{id}", crate::saml::IDP_INITIATED_PATH));
    }
    let mut url = url::Url::parse(meta.initiate_login_uri.as_deref()?).ok()?;
    url.query_pairs_mut().append_pair("iss", issuer);
    if let Some(t) = target_link_uri {
        url.query_pairs_mut().append_pair("target_link_uri", t);
    }
    Some(url.into())
}

/// Whether `uri` (a `request_uri` at /authorize) is one the client registered, fragments
/// aside.
pub fn registered_request_uri(meta: &ClientMetadata, uri: &str) -> bool {
    let base = |u: &str| u.split('#').next().unwrap_or(u).to_string();
    let wanted = base(uri);
    meta.request_uris.iter().any(|r| base(r) == wanted)
}

/// An absolute https URL (http only on a loopback host) without a fragment: the logout
/// endpoints of a relying party (Back-Channel Logout 1.0 §2.2, Front-Channel Logout 1.0 §2).
pub(super) fn validate_web_uri(uri: &str) -> Result<(), String> {
    match url::Url::parse(uri).map(|u| u.scheme().to_string()) {
        Ok(s) if s == "https" || s == "http" => validate_redirect_uri(uri),
        Ok(_) => Err(format!("{uri:?} must use https (http only for loopback hosts)")),
        Err(e) => Err(format!("{uri:?}: {e}")),
    }
}

/// The web origin of a URI (RFC 6454 §6.2 serialisation), for http and https only.
pub(super) fn web_origin(uri: &str) -> Option<String> {
    let u = url::Url::parse(uri).ok()?;
    matches!(u.scheme(), "https" | "http").then(|| u.origin().ascii_serialization())
}

/// An origin exactly as a browser sends it in `Origin`, so that the check is a string
/// comparison: scheme, lower-case host, port only if not the default, nothing after. The
/// scheme rule is the redirect URIs': https, or http on a loopback host.
pub(super) fn validate_cors_origin(o: &str) -> Result<(), String> {
    let u = url::Url::parse(o).map_err(|_| format!("allowed_cors_origins: {o:?} is not an origin (scheme://host[:port])"))?;
    let loopback = matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if !(u.scheme() == "https" || u.scheme() == "http" && loopback) {
        return Err(format!("allowed_cors_origins: {o:?} must use https (http only for loopback hosts)"));
    }
    let canonical = u.origin().ascii_serialization();
    if canonical != o {
        return Err(format!("allowed_cors_origins: {o:?} is not an origin as browsers send it; write {canonical:?}"));
    }
    Ok(())
}

/// RFC 8707 §2: a resource indicator is an absolute URI without a fragment.
pub fn validate_resource(r: &str) -> Result<(), String> {
    let u = url::Url::parse(r).map_err(|_| format!("resource {r:?} is not an absolute URI"))?;
    if u.fragment().is_some() {
        return Err(format!("resource {r:?} must not have a fragment"));
    }
    Ok(())
}

/// Why a redirect URI is refused: `validate_redirect_uri` words it for the API, the console
/// in its own words (one set of rules for both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriProblem {
    /// Control characters or whitespace.
    Spaces,
    /// Not an absolute URI (the parser's reason, for the API's message).
    NotAbsolute(String),
    Fragment,
    Userinfo,
    /// http on a host other than a loopback one.
    Http,
    /// javascript:, data:, file:, vbscript:.
    Forbidden,
    /// A scheme that is neither https, loopback http nor a reverse-domain private one.
    OtherScheme,
}

/// RFC 6749 §3.1.2: absolute, no fragment. Web clients use https (http only on loopback);
/// native apps may use a private-use scheme (RFC 8252 §7.1). Redirect URIs are compared as
/// exact strings (`has_redirect_uri`), so one is kept only as a URI parser would: no control
/// characters, spaces or other whitespace (which a parser strips or rejects, and which would
/// otherwise be stored as sent), no userinfo (RFC 3986 §7.6: it only disguises the host).
pub fn redirect_uri_problem(uri: &str) -> Option<UriProblem> {
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Some(UriProblem::Spaces);
    }
    let parsed = match url::Url::parse(uri) {
        Ok(p) => p,
        Err(e) => return Some(UriProblem::NotAbsolute(e.to_string())),
    };
    if parsed.fragment().is_some() {
        return Some(UriProblem::Fragment);
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(UriProblem::Userinfo);
    }
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match parsed.scheme() {
        "https" => None,
        "http" if loopback => None,
        "http" => Some(UriProblem::Http),
        "javascript" | "data" | "file" | "vbscript" => Some(UriProblem::Forbidden),
        s if s.contains('.') => None, // reverse-DNS private-use scheme, RFC 8252 §7.1
        _ => Some(UriProblem::OtherScheme),
    }
}

/// `redirect_uri_problem`, in the API's words.
pub fn validate_redirect_uri(uri: &str) -> Result<(), String> {
    let Some(problem) = redirect_uri_problem(uri) else { return Ok(()) };
    Err(match problem {
        UriProblem::Spaces => format!("redirect URI {uri:?} must not contain control characters or spaces"),
        UriProblem::NotAbsolute(e) => format!("redirect URI {uri:?}: {e}"),
        UriProblem::Fragment => format!("redirect URI {uri:?} must not have a fragment"),
        UriProblem::Userinfo => format!("redirect URI {uri:?} must not have userinfo"),
        UriProblem::Http => format!("redirect URI {uri:?}: http is allowed only for loopback hosts"),
        UriProblem::Forbidden => format!("redirect URI {uri:?}: scheme not allowed"),
        UriProblem::OtherScheme => format!("redirect URI {uri:?}: use https, loopback http, or a reverse-domain private scheme"),
    })
}

/// A SAML service provider: its own settings, and nothing of an OAuth client that would let
/// it use `/authorize` or `/token`.
fn validate_saml(meta: &ClientMetadata, sp: &super::saml::SamlServiceProvider) -> Result<(), String> {
    let oauth = !meta.grant_types.is_empty()
        || !meta.response_types.is_empty()
        || !meta.redirect_uris.is_empty()
        || meta.token_endpoint_auth_method != AUTH_NONE
        || meta.jwks.is_some()
        || meta.jwks_uri.is_some()
        || meta.backchannel_logout_uri.is_some()
        || meta.frontchannel_logout_uri.is_some();
    if oauth {
        return Err("a SAML service provider has no grant types, response types, redirect URIs, keys, logout URIs or secret (token_endpoint_auth_method none)".into());
    }
    for u in [&meta.client_uri, &meta.logo_uri, &meta.tos_uri, &meta.policy_uri].into_iter().flatten() {
        validate_web_uri(u)?;
    }
    sp.validate()
}
