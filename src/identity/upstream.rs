//! Talking to upstream identity providers: the authorization request (code flow, PKCE,
//! `state`, `nonce`), the code exchange, and who the user is there: an ID token checked in
//! full against the provider's keys (OpenID), or its user-info answer (plain OAuth 2.0).
//!
//! Providers are the operator's configuration, not a client's input, so their URLs are
//! fetched through the fetcher's operator policy (`Fetcher::for_operator`: an identity
//! provider inside the operator's network is fine), bounded in time and size, without
//! redirects or proxies. Discovery documents and key sets are
//! cached; an ID token signed by a key we do not have refetches the set, at most once per
//! `client_jwks_min_refetch`.

use crate::client_auth::keys::{parse_jwks, ClientKey, ASYMMETRIC_ALGS};
use crate::config::upstreams::{IdentityProvider, UpstreamKind};
use crate::http::fetch::{FetchError, Fetcher};
use crate::keys::SigningKey;
use jsonwebtoken::Validation;
use parking_lot::Mutex;
use reqwest::Method;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Standard claims taken as they come (same name here and there) unless mapped otherwise.
const STANDARD: &[&str] = &["email", "email_verified", "name", "given_name", "family_name", "preferred_username", "picture", "locale"];
/// The largest answer read from a provider.
const MAX_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// The provider could not be reached or answered nonsense: not the user's doing.
    #[error("{0}")]
    Unavailable(String),
    /// What came back must not sign anyone in (a bad ID token, a wrong issuer, an error).
    #[error("{0}")]
    Refused(String),
}

/// Where a provider's endpoints are: discovered (OpenID) or configured.
#[derive(Debug)]
struct Endpoints {
    authorization: String,
    token: String,
    userinfo: Option<String>,
    jwks_uri: Option<String>,
    /// Its RP-Initiated Logout endpoint, if it has one.
    end_session: Option<String>,
    /// Whether its authorization responses carry `iss` (RFC 9207 §3): then one without is
    /// refused.
    iss_parameter: bool,
}

/// Who the user is at the provider.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The provider's stable identifier for the user (`sub`, or the configured member).
    pub subject: String,
    /// Our standard claims, mapped from theirs.
    pub claims: Map<String, Value>,
    /// The ID token as it came (OpenID): the hint that ends the session there.
    pub id_token: Option<String>,
}

impl Identity {
    pub fn email(&self) -> Option<&str> {
        self.claims.get("email").and_then(Value::as_str)
    }
    pub fn email_verified(&self) -> bool {
        self.claims.get("email_verified").and_then(Value::as_bool).unwrap_or(false)
    }
}

pub struct Upstreams {
    providers: Vec<IdentityProvider>,
    /// Shared by every tenant's `Upstreams`: building a client reads the system's root
    /// certificates, which for 1,000 tenants was half of the start time.
    http: Arc<Fetcher>,
    /// What tenants' own providers are reached through: the fetcher's address policy
    /// (`fetch_allow_private_addresses`), since a tenant's settings are not the operator's
    /// configuration file. Shared as `http` is.
    tenant_http: Arc<Fetcher>,
    endpoints: Mutex<HashMap<String, Arc<Endpoints>>>,
    keys: Mutex<HashMap<String, CachedKeys>>,
    min_refetch: Duration,
    /// `private_key_jwt`: our key for each such provider, by its id.
    assertion_keys: HashMap<String, SigningKey>,
}

/// A provider's key set and when it was fetched.
type CachedKeys = (Arc<[ClientKey]>, Instant);

/// What came back to the callback, and what the request going out had kept for it.
pub struct Answer<'a> {
    pub code: &'a str,
    /// The response's `iss` (RFC 9207), if any.
    pub iss: Option<&'a str>,
    pub verifier: &'a str,
    pub redirect_uri: &'a str,
    pub nonce: &'a str,
    /// The sign-in must be at most this old (`prompt=login`: 0).
    pub max_age: Option<u64>,
}

/// What the authorization request carries, kept (sealed) until the callback.
pub struct Started {
    pub url: String,
}

impl Upstreams {
    pub fn new(config: &crate::config::Config) -> anyhow::Result<Self> {
        Self::from_list(config, config.identity_providers.clone())
    }

    /// `providers`, with the deployment's fetch settings.
    pub fn from_list(config: &crate::config::Config, providers: Vec<IdentityProvider>) -> anyhow::Result<Self> {
        let timeout = Duration::from_secs(config.fetch_timeout.max(1));
        let tenant_http = Arc::new(Fetcher::new(timeout, MAX_BYTES, config.fetch_allow_private_addresses, tokio::sync::Semaphore::MAX_PERMITS)?);
        Self::with_client(config, providers, Arc::new(Fetcher::for_operator(timeout, MAX_BYTES)?), tenant_http)
    }

    /// A tenant's own `providers`, on the HTTP client with the address policy (shared by
    /// every tenant).
    pub fn for_tenant(&self, config: &crate::config::Config, providers: Vec<IdentityProvider>) -> anyhow::Result<Self> {
        Self::with_client(config, providers, self.tenant_http.clone(), self.tenant_http.clone())
    }

    fn with_client(config: &crate::config::Config, providers: Vec<IdentityProvider>, http: Arc<Fetcher>, tenant_http: Arc<Fetcher>) -> anyhow::Result<Self> {
        let mut assertion_keys = HashMap::new();
        for p in &providers {
            if let Some(file) = &p.private_key_file {
                assertion_keys.insert(p.id.clone(), assertion_key(file, p.client_assertion_alg.as_deref()).map_err(|e| anyhow::anyhow!("identity provider {}: {e}", p.id))?);
            }
        }
        Ok(Self {
            assertion_keys,
            providers,
            http,
            tenant_http,
            endpoints: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
            min_refetch: Duration::from_secs(config.client_jwks_min_refetch),
        })
    }

    pub fn list(&self) -> &[IdentityProvider] {
        &self.providers
    }

    pub fn get(&self, id: &str) -> Option<&IdentityProvider> {
        self.providers.iter().find(|p| p.id == id)
    }

    /// `private_key_jwt`: the public key a provider checks our assertions with, as a JWK
    /// Set (for its client registration: the document, or the URL serving it).
    pub fn assertion_jwks(&self, id: &str) -> Option<Value> {
        self.assertion_keys.get(id).map(|k| serde_json::json!({"keys": [k.public_jwk]}))
    }

    /// RFC 7523 §3, OpenID Connect Core §9: a short-lived assertion naming us (`iss`, `sub`)
    /// and the token endpoint (`aud`), unique by `jti`.
    fn client_assertion(&self, p: &IdentityProvider, token_endpoint: &str) -> Result<String, UpstreamError> {
        let key = self.assertion_keys.get(&p.id).ok_or_else(|| UpstreamError::Unavailable("no assertion key".into()))?;
        let now = crate::util::now();
        let claims = serde_json::json!({"iss": p.client_id, "sub": p.client_id, "aud": token_endpoint, "jti": crate::util::random_token(), "iat": now, "exp": now + 60});
        key.sign_jwt("JWT", &claims).map_err(|e| UpstreamError::Unavailable(format!("cannot sign the client assertion: {e}")))
    }

    /// The URL that sends the browser to the provider. `max_age`: the request asked for a
    /// sign-in at most this old (0 for `prompt=login`), which only the provider can give: it
    /// is asked for the same (OpenID Connect Core §3.1.2.1), and its answer checked.
    /// `login_hint`: the address the user gave (home-realm discovery), passed on so that they
    /// need not type it again.
    pub async fn authorization_url(&self, p: &IdentityProvider, redirect_uri: &str, state: &str, nonce: &str, challenge: &str, max_age: Option<u64>, login_hint: Option<&str>) -> Result<Started, UpstreamError> {
        let ep = self.endpoints(p).await?;
        let mut url = url::Url::parse(&ep.authorization).map_err(|e| UpstreamError::Unavailable(format!("authorization endpoint: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &p.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("scope", &p.scopes)
                .append_pair("state", state)
                .append_pair("code_challenge", challenge)
                .append_pair("code_challenge_method", "S256");
            if p.kind == UpstreamKind::Oidc {
                q.append_pair("nonce", nonce);
                if max_age == Some(0) {
                    q.append_pair("prompt", "login");
                }
                if let Some(age) = max_age {
                    q.append_pair("max_age", &age.to_string());
                }
                if let Some(hint) = login_hint {
                    q.append_pair("login_hint", hint);
                }
            }
        }
        Ok(Started { url: url.into() })
    }

    /// The callback's answer: `iss` checked (RFC 9207), the code exchanged with its PKCE
    /// verifier, the user identified.
    pub async fn finish(&self, p: &IdentityProvider, answer: Answer<'_>) -> Result<Identity, UpstreamError> {
        let Answer { code, iss, verifier, redirect_uri, nonce, max_age } = answer;
        let ep = self.endpoints(p).await?;
        match (iss, p.issuer.as_deref()) {
            (Some(got), Some(expected)) if got != expected => return Err(UpstreamError::Refused(format!("the response's iss {got:?} is not {expected:?} (RFC 9207)"))),
            (Some(_), None) => return Err(UpstreamError::Refused("an iss came from a provider configured without an issuer".into())),
            (None, _) if ep.iss_parameter => return Err(UpstreamError::Refused("the provider sends iss, and this response has none (RFC 9207)".into())),
            _ => {}
        }
        let assertion;
        let mut form = vec![("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect_uri), ("code_verifier", verifier)];
        let mut req = self.http.request(Method::POST, &ep.token).map_err(unavailable)?.header(reqwest::header::ACCEPT, "application/json");
        match p.token_endpoint_auth_method.as_str() {
            "client_secret_basic" => {
                // RFC 6749 §2.3.1: the id and secret form-encoded before Basic.
                let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                req = req.basic_auth(enc(&p.client_id), Some(enc(p.client_secret.as_deref().unwrap_or_default())));
            }
            "client_secret_post" => {
                form.push(("client_id", &p.client_id));
                form.push(("client_secret", p.client_secret.as_deref().unwrap_or_default()));
            }
            "private_key_jwt" => {
                assertion = self.client_assertion(p, &ep.token)?;
                form.push(("client_id", &p.client_id));
                form.push(("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"));
                form.push(("client_assertion", &assertion));
            }
            _ => form.push(("client_id", &p.client_id)),
        }
        let tokens = read_json(req.form(&form).send().await).await?;
        if let Some(e) = tokens.get("error").and_then(Value::as_str) {
            return Err(UpstreamError::Refused(format!("the token endpoint answered {e}")));
        }
        let access_token = tokens.get("access_token").and_then(Value::as_str);
        let id_token = tokens.get("id_token").and_then(Value::as_str).map(str::to_string);
        let raw = match p.kind {
            UpstreamKind::Oidc => {
                let id_token = tokens.get("id_token").and_then(Value::as_str).ok_or_else(|| UpstreamError::Refused("no ID token in the token response".into()))?;
                let mut claims = self.verify_id_token(p, &ep, id_token, nonce).await?;
                // §3.1.2.1: a sign-in asked to be recent must say when it was, and be so
                // (a minute's leeway for clocks).
                if let Some(age) = max_age {
                    let at = claims.get("auth_time").and_then(Value::as_u64);
                    if at.is_none_or(|t| crate::util::now().saturating_sub(t) > age + 60) {
                        return Err(UpstreamError::Refused(format!("asked for a sign-in at most {age} s old, the ID token's auth_time is {at:?}")));
                    }
                }
                // Claims the ID token left out, from user-info, for the same subject only.
                if !claims.contains_key("email") {
                    if let (Some(userinfo), Some(at)) = (&ep.userinfo, access_token) {
                        let info = self.userinfo(userinfo, at).await?;
                        if info.get("sub") == claims.get("sub") {
                            for (k, v) in info {
                                claims.entry(k).or_insert(v);
                            }
                        }
                    }
                }
                claims
            }
            UpstreamKind::Oauth2 => {
                let at = access_token.ok_or_else(|| UpstreamError::Refused("no access token in the token response".into()))?;
                self.userinfo(ep.userinfo.as_deref().unwrap_or_default(), at).await?
            }
            // Never sent here (`upstream_login::start` hands SAML to `endpoints::saml::acs`).
            UpstreamKind::Saml => return Err(UpstreamError::Refused("a SAML identity provider answers at /saml/acs".into())),
        };
        let subject_claim = if p.kind == UpstreamKind::Oidc { "sub" } else { p.subject_claim.as_str() };
        let subject = match raw.get(subject_claim) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(UpstreamError::Refused(format!("the user has no {subject_claim}"))),
        };
        if subject.len() > 255 {
            return Err(UpstreamError::Refused("the subject is longer than 255 characters".into()));
        }
        Ok(Identity { subject, claims: map_claims(p, &raw), id_token: id_token.filter(|_| p.kind == UpstreamKind::Oidc) })
    }

    /// RP-Initiated Logout 1.0 at the provider: where to send the browser so that its session
    /// ends too, and comes back to `post_logout_redirect_uri` with `state`. `None` when the
    /// provider has no end-session endpoint (or cannot be reached: our logout goes on).
    pub async fn logout_url(&self, provider: &str, id_token: Option<&str>, post_logout_redirect_uri: &str, state: &str) -> Option<String> {
        let p = self.get(provider)?;
        let ep = self.endpoints(p).await.ok()?;
        let mut url = url::Url::parse(ep.end_session.as_deref()?).ok()?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(hint) = id_token {
                q.append_pair("id_token_hint", hint);
            }
            q.append_pair("client_id", &p.client_id).append_pair("post_logout_redirect_uri", post_logout_redirect_uri).append_pair("state", state);
        }
        Some(url.into())
    }

    async fn userinfo(&self, url: &str, access_token: &str) -> Result<Map<String, Value>, UpstreamError> {
        let res = self.http.request(Method::GET, url).map_err(unavailable)?.bearer_auth(access_token).header(reqwest::header::ACCEPT, "application/json").send().await;
        match read_json(res).await? {
            Value::Object(m) => Ok(m),
            _ => Err(UpstreamError::Unavailable("the user-info answer is not a JSON object".into())),
        }
    }

    /// OpenID Connect Core §3.1.3.7: signature by one of the provider's keys (no `none`, no
    /// MAC), `iss`, `aud` (and `azp` when there are several), `exp`, `iat`, and our `nonce`.
    async fn verify_id_token(&self, p: &IdentityProvider, ep: &Endpoints, token: &str, nonce: &str) -> Result<Map<String, Value>, UpstreamError> {
        let refused = |m: String| UpstreamError::Refused(format!("ID token: {m}"));
        let header = jsonwebtoken::decode_header(token).map_err(|e| refused(e.to_string()))?;
        let alg_name = serde_json::to_value(header.alg).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        if !ASYMMETRIC_ALGS.contains(&alg_name.as_str()) {
            return Err(refused(format!("alg {alg_name} is not a signature algorithm we accept")));
        }
        let jwks_uri = ep.jwks_uri.as_deref().ok_or_else(|| UpstreamError::Unavailable("the provider publishes no jwks_uri".into()))?;
        let mut keys = self.keys(jwks_uri, false).await?;
        if !keys.iter().any(|k| k.fits(header.alg, header.kid.as_deref())) {
            keys = self.keys(jwks_uri, true).await?;
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[p.issuer.as_deref().unwrap_or_default()]);
        validation.set_audience(&[&p.client_id]);
        validation.set_required_spec_claims(&["iss", "aud", "exp", "sub"]);
        validation.leeway = 60;
        let mut last = refused("no key of the provider fits it".into());
        for key in keys.iter().filter(|k| k.fits(header.alg, header.kid.as_deref())) {
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => {
                    let claims = data.claims;
                    if claims.get("nonce").and_then(Value::as_str) != Some(nonce) {
                        return Err(refused("the nonce is not ours".into()));
                    }
                    if let Some(Value::Array(aud)) = claims.get("aud") {
                        if aud.len() > 1 && claims.get("azp").and_then(Value::as_str) != Some(&p.client_id) {
                            return Err(refused("several audiences and azp is not us".into()));
                        }
                    }
                    let now = crate::util::now() as i64;
                    if claims.get("iat").and_then(Value::as_i64).is_some_and(|iat| iat > now + 300) {
                        return Err(refused("issued in the future".into()));
                    }
                    return Ok(claims);
                }
                Err(e) => last = refused(e.to_string()),
            }
        }
        Err(last)
    }

    /// The provider's keys, cached; `refresh` refetches unless that was done very recently.
    async fn keys(&self, uri: &str, refresh: bool) -> Result<Arc<[ClientKey]>, UpstreamError> {
        if let Some((keys, at)) = self.keys.lock().get(uri).cloned() {
            if !refresh || at.elapsed() < self.min_refetch {
                return Ok(keys);
            }
        }
        let set = read_json(self.http.request(Method::GET, uri).map_err(unavailable)?.header(reqwest::header::ACCEPT, "application/json").send().await).await?;
        let keys: Arc<[ClientKey]> = parse_jwks(&set).map_err(UpstreamError::Unavailable)?.into();
        self.keys.lock().insert(uri.to_string(), (keys.clone(), Instant::now()));
        Ok(keys)
    }

    async fn endpoints(&self, p: &IdentityProvider) -> Result<Arc<Endpoints>, UpstreamError> {
        if let Some(ep) = self.endpoints.lock().get(&p.id) {
            return Ok(ep.clone());
        }
        let discovered = match (p.kind, &p.issuer) {
            (UpstreamKind::Oidc, Some(issuer)) => {
                let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
                let doc = read_json(self.http.request(Method::GET, &url).map_err(unavailable)?.send().await).await?;
                // OpenID Connect Discovery §4.3: the document names the issuer it came from.
                if doc.get("issuer").and_then(Value::as_str) != Some(issuer.as_str()) {
                    return Err(UpstreamError::Unavailable(format!("the discovery document at {url} names another issuer")));
                }
                Some(doc)
            }
            _ => None,
        };
        let from_doc = |name: &str| discovered.as_ref().and_then(|d| d.get(name)).and_then(Value::as_str).map(str::to_string);
        let pick = |configured: &Option<String>, name: &str| configured.clone().or_else(|| from_doc(name));
        let ep = Endpoints {
            authorization: pick(&p.authorization_endpoint, "authorization_endpoint").ok_or_else(|| UpstreamError::Unavailable("no authorization endpoint".into()))?,
            token: pick(&p.token_endpoint, "token_endpoint").ok_or_else(|| UpstreamError::Unavailable("no token endpoint".into()))?,
            userinfo: pick(&p.userinfo_endpoint, "userinfo_endpoint"),
            jwks_uri: pick(&p.jwks_uri, "jwks_uri"),
            end_session: from_doc("end_session_endpoint"),
            iss_parameter: discovered.as_ref().and_then(|d| d.get("authorization_response_iss_parameter_supported")).and_then(Value::as_bool).unwrap_or(false),
        };
        let ep = Arc::new(ep);
        self.endpoints.lock().insert(p.id.clone(), ep.clone());
        Ok(ep)
    }
}

/// Our `private_key_jwt` key for a provider, from a PKCS#8 PEM file.
fn assertion_key(file: &std::path::Path, alg: Option<&str>) -> anyhow::Result<SigningKey> {
    use rustls_pki_types::pem::PemObject;
    let der = rustls_pki_types::PrivatePkcs8KeyDer::from_pem_file(file).map_err(|e| anyhow::anyhow!("private_key_file {}: {e} (a PKCS#8 PEM key is wanted)", file.display()))?;
    SigningKey::from_pkcs8_any(alg, der.secret_pkcs8_der()).map_err(|e| anyhow::anyhow!("private_key_file {}: {e}", file.display()))
}

/// A URL of the provider's that is not one to fetch (no http(s), no host).
fn unavailable(e: FetchError) -> UpstreamError {
    UpstreamError::Unavailable(e.to_string())
}

/// A JSON answer of at most `MAX_BYTES`, or why not.
async fn read_json(res: Result<reqwest::Response, reqwest::Error>) -> Result<Value, UpstreamError> {
    let res = res.map_err(|e| UpstreamError::Unavailable(if e.is_timeout() { "timed out".into() } else { "unreachable".into() }))?;
    let status = res.status();
    if res.content_length().is_some_and(|n| n > MAX_BYTES as u64) {
        return Err(UpstreamError::Unavailable("the answer is too large".into()));
    }
    let body = res.bytes().await.map_err(|_| UpstreamError::Unavailable("the answer was cut".into()))?;
    if body.len() > MAX_BYTES {
        return Err(UpstreamError::Unavailable("the answer is too large".into()));
    }
    let json: Value = serde_json::from_slice(&body).map_err(|_| UpstreamError::Unavailable(format!("the answer ({status}) is not JSON")))?;
    if status.is_client_error() && json.get("error").is_some() {
        // An OAuth error (RFC 6749 §5.2): the caller says which.
        return Ok(json);
    }
    if !status.is_success() {
        return Err(UpstreamError::Unavailable(format!("the provider answered {status}")));
    }
    Ok(json)
}

/// Their claims as ours: the mapped names first, then the standard names as they are; only
/// values of the right type (a string, or a boolean for `email_verified`, which some
/// providers send as "true").
fn map_claims(p: &IdentityProvider, raw: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let ours = STANDARD.iter().map(|s| s.to_string()).chain(p.claims.keys().cloned());
    for name in ours {
        if out.contains_key(&name) {
            continue;
        }
        let theirs = p.claims.get(&name).map_or(name.as_str(), String::as_str);
        let value = match (name.as_str(), raw.get(theirs)) {
            ("email_verified", Some(Value::Bool(b))) => Value::Bool(*b),
            ("email_verified", Some(Value::String(s))) => Value::Bool(s == "true"),
            ("email_verified", _) => continue,
            (_, Some(Value::String(s))) if !s.is_empty() && s.len() <= 1024 => Value::String(s.clone()),
            (_, Some(Value::Number(n))) => Value::String(n.to_string()),
            _ => continue,
        };
        out.insert(name, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(claims: &[(&str, &str)]) -> IdentityProvider {
        let toml = format!(
            "id = \"gh\"\nname = \"GitHub\"\nkind = \"oauth2\"\nclient_id = \"c\"\nclient_secret = \"s\"\nauthorization_endpoint = \"https://gh.example/a\"\ntoken_endpoint = \"https://gh.example/t\"\nuserinfo_endpoint = \"https://gh.example/u\"\nsubject_claim = \"id\"\n[claims]\n{}",
            claims.iter().map(|(k, v)| format!("{k} = \"{v}\"\n")).collect::<String>()
        );
        toml::from_str(&toml).unwrap()
    }

    #[test]
    fn claims_are_mapped_by_name_and_typed() {
        let p = provider(&[("preferred_username", "login")]);
        let raw: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "id": 42, "login": "octo", "preferred_username": "ignored", "email": "o@example.com", "email_verified": "true",
            "name": {"not": "a string"}, "picture": "", "locale": "ja"
        }))
        .unwrap();
        let m = map_claims(&p, &raw);
        assert_eq!(m.get("preferred_username"), Some(&Value::from("octo")));
        assert_eq!(m.get("email_verified"), Some(&Value::Bool(true)));
        assert_eq!(m.get("locale"), Some(&Value::from("ja")));
        assert!(!m.contains_key("name") && !m.contains_key("picture"), "{m:?}");
        assert!(p.validate(0).is_ok());
    }

    #[test]
    fn private_key_jwt_needs_a_readable_key_and_only_it_takes_one() {
        let with = |extra: &str| -> IdentityProvider { toml::from_str(&format!("id = \"x\"\nname = \"X\"\nissuer = \"https://x.example\"\nclient_id = \"c\"\n{extra}")).unwrap() };
        assert!(with("token_endpoint_auth_method = \"private_key_jwt\"").validate(0).is_err(), "no key file");
        assert!(with("client_secret = \"s\"\nprivate_key_file = \"/k.pem\"").validate(0).is_err(), "a key file for a secret");
        assert!(with("token_endpoint_auth_method = \"client_secret_jwt\"\nclient_secret = \"s\"").validate(0).is_err());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.pem");
        std::fs::write(&file, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").unwrap();
        let p = with(&format!("token_endpoint_auth_method = \"private_key_jwt\"\nprivate_key_file = \"{}\"", file.display()));
        assert!(p.validate(0).is_ok());
        assert!(assertion_key(&file, None).is_err(), "not a key");
        let (_, pkcs8) = SigningKey::generate_for("EdDSA").unwrap();
        use base64::Engine;
        std::fs::write(&file, format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", base64::engine::general_purpose::STANDARD.encode(&pkcs8))).unwrap();
        assert_eq!(assertion_key(&file, None).unwrap().alg, "EdDSA");
        assert!(assertion_key(&file, Some("RS256")).is_err(), "an Ed25519 key cannot sign RS256");
    }
}
