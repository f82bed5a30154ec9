//! Starts a real Authrim server on an ephemeral port with a fresh data directory, and drives
//! it like a browser and a client would.

use authrim::config::Config;
use authrim::http::server::RunningServer;
use reqwest::redirect::Policy;
use serde_json::{json, Value};
use std::collections::HashMap;

pub const ADMIN: &str = "test-admin-token";
pub const PASSWORD: &str = "correct horse battery";
pub const REDIRECT: &str = "https://rp.example/cb";

pub struct TestServer {
    pub server: RunningServer,
    pub dir: tempfile::TempDir,
    pub http: reqwest::Client,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn test_config(dir: &std::path::Path) -> Config {
    let port = free_port();
    Config {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        issuer: format!("http://127.0.0.1:{port}"),
        data_dir: dir.to_path_buf(),
        admin_token: Some(ADMIN.into()),
        sqlite_synchronous: "NORMAL".into(),
        code_shards: 8,
        session_shards: 4,
        challenge_shards: 4,
        revocation_shards: 4,
        // The suite's documents (client keys, metadata documents) are served on loopback.
        fetch_allow_private_addresses: true,
        // Every test registers from 127.0.0.1; the per-address limit has its own test.
        registration_max_per_address: 10_000,
        // Strict rotation: the tests of theft detection present the token just replaced; the
        // grace (on by default) has tests of its own.
        refresh_reuse_grace: 0,
        ..Config::default()
    }
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = test_config(dir.path());
        tweak(&mut config);
        Self::start_in(dir, config).await
    }

    /// The server over HTTPS, with a self-signed certificate for 127.0.0.1 that the suite's
    /// clients accept: for relying parties that refuse plain-HTTP endpoints.
    pub async fn start_tls() -> Self {
        Self::start_tls_with(|_| {}).await
    }

    pub async fn start_tls_with(tweak: impl FnOnce(&mut Config)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = test_config(dir.path());
        tweak(&mut config);
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_path, cert.cert.pem()).unwrap();
        std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
        config.issuer = config.issuer.replace("http://", "https://");
        config.tls_cert = Some(cert_path);
        config.tls_key = Some(key_path);
        Self::start_in(dir, config).await
    }

    /// On a fresh PostgreSQL database when `postgres` (the test cluster), else on SQLite.
    pub async fn start_on(postgres: bool, tweak: impl FnOnce(&mut Config)) -> Self {
        let url = match postgres {
            true => crate::pg_cluster::fresh_database().await,
            false => None,
        };
        Self::start_with(move |c| {
            if let Some(url) = url {
                c.database_url = Some(url);
                c.key_encryption_key = Some("dGVzdHMtc2hhcmUtb25lLWtleS1lbmNyeXB0aW9uLWs".into());
            }
            tweak(c);
        })
        .await
    }

    pub async fn start_in(dir: tempfile::TempDir, mut config: Config) -> Self {
        // The port was free when chosen, but something else on the machine (another test's
        // outgoing connection, another suite's server) may take it before the server binds:
        // then a new port, and the issuer that names it.
        let mut attempts = 0;
        let server = loop {
            match RunningServer::start(config.clone()).await {
                Ok(server) => break server,
                Err(e) if attempts < 5 && e.to_string().contains("Address already in use") => {
                    attempts += 1;
                    let (old, new) = (config.listen.port().to_string(), free_port());
                    config.listen.set_port(new);
                    config.issuer = config.issuer.replace(&format!(":{old}"), &format!(":{new}"));
                }
                Err(e) => panic!("server starts: {e}"),
            }
        };
        let http = http_client(&server).build().unwrap();
        Self { server, dir, http }
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    pub fn issuer(&self) -> String {
        self.server.app.tenants.default_tenant().issuer.clone()
    }

    pub async fn admin(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method, self.url(path)).bearer_auth(ADMIN);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// A confidential client (client_secret_basic unless `extra` says otherwise); returns (id, secret).
    pub async fn client(&self, id: &str, extra: Value) -> (String, Option<String>) {
        let mut body = json!({"client_id": id, "redirect_uris": [REDIRECT], "client_name": format!("Client {id}")});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            body[k] = v;
        }
        let (status, v) = self.admin(reqwest::Method::POST, "/admin/clients", Some(body)).await;
        assert_eq!(status, 201, "client creation failed: {v}");
        (id.to_string(), v["client_secret"].as_str().map(str::to_string))
    }

    /// A user with the standard test password; returns its `sub`.
    pub async fn user(&self, username: &str, claims: Value) -> String {
        let (status, v) = self
            .admin(reqwest::Method::POST, "/admin/users", Some(json!({"username": username, "password": PASSWORD, "claims": claims})))
            .await;
        assert_eq!(status, 201, "user creation failed: {v}");
        v["id"].as_str().unwrap().to_string()
    }

    pub fn browser(&self) -> Browser {
        let client = http_client(&self.server).cookie_store(true).build().unwrap();
        Browser { client, base: self.url("") }
    }

    pub async fn token(&self, auth: Option<(&str, &str)>, form: &[(&str, &str)]) -> (u16, Value, reqwest::header::HeaderMap) {
        let mut req = self.http.post(self.url("/token")).form(form);
        if let Some((id, secret)) = auth {
            req = req.basic_auth(id, Some(secret));
        }
        let res = req.send().await.unwrap();
        let (status, headers) = (res.status().as_u16(), res.headers().clone());
        (status, res.json().await.unwrap_or(Value::Null), headers)
    }

    pub async fn userinfo(&self, token: &str) -> (u16, Value, Option<String>) {
        let res = self.http.get(self.url("/userinfo")).bearer_auth(token).send().await.unwrap();
        let status = res.status().as_u16();
        let challenge = res.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string());
        (status, res.json().await.unwrap_or(Value::Null), challenge)
    }

    /// Client + user + a full login with consent; returns the code's redirect parameters.
    pub async fn code_for(&self, browser: &Browser, client_id: &str, username: &str, extra: &[(&str, &str)]) -> HashMap<String, String> {
        let q = request_query("code", client_id, extra);
        let redirect = q.iter().find(|(k, _)| *k == "redirect_uri").map(|(_, v)| v.to_string()).unwrap_or_default();
        let res = browser.authorize(&q).await;
        browser.finish_login_at(res, username, PASSWORD, &redirect).await
    }
}

/// An authorization request's parameters: the tests' defaults (scope `openid profile email`,
/// state `st-1`, nonce `n-1`), each name in `extra` replacing the default or added.
pub fn request_query<'a>(response_type: &'a str, client_id: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut q = vec![
        ("response_type", response_type),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("scope", "openid profile email"),
        ("state", "st-1"),
        ("nonce", "n-1"),
    ];
    for (k, v) in extra {
        q.retain(|(qk, _)| qk != k);
        q.push((k, v));
    }
    q
}

/// A client that follows no redirect and, when the server runs TLS, accepts its test certificate.
fn http_client(server: &RunningServer) -> reqwest::ClientBuilder {
    let tls = server.app.config.tls_cert.is_some();
    reqwest::Client::builder().redirect(Policy::none()).danger_accept_invalid_certs(tls)
}

pub struct Browser {
    pub client: reqwest::Client,
    pub base: String,
}

pub struct Page {
    pub status: u16,
    pub html: String,
    pub location: Option<String>,
    pub set_cookie: Vec<String>,
}

impl Page {
    pub async fn from(res: reqwest::Response) -> Self {
        let status = res.status().as_u16();
        let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_string());
        let set_cookie = res.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string()).collect();
        Self { status, html: res.text().await.unwrap(), location, set_cookie }
    }

    pub fn challenge(&self) -> String {
        let marker = "name=\"challenge\" value=\"";
        let start = self.html.find(marker).unwrap_or_else(|| panic!("no challenge in page: {}", self.html)) + marker.len();
        self.html[start..].split('"').next().unwrap().to_string()
    }

    pub fn is_login(&self) -> bool {
        self.html.contains("action=\"/login\"")
    }

    pub fn is_consent(&self) -> bool {
        self.html.contains("action=\"/consent\"")
    }

    /// A form_post response page: its form's action and hidden fields (HTML-unescaped).
    pub fn form_post(&self) -> (String, HashMap<String, String>) {
        let unescape = |s: &str| s.replace("&quot;", "\"").replace("&#x27;", "'").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
        let attr = |tag: &str, name: &str| -> Option<String> {
            let marker = format!("{name}=\"");
            let start = tag.find(&marker)? + marker.len();
            Some(unescape(tag[start..].split('"').next()?))
        };
        let form = self.html.split("<form").nth(1).unwrap_or_else(|| panic!("no form (status {}): {}", self.status, self.html));
        let action = attr(form.split('>').next().unwrap(), "action").expect("form action");
        let fields = form
            .split("<input")
            .skip(1)
            .filter_map(|t| {
                let tag = t.split('>').next()?;
                Some((attr(tag, "name")?, attr(tag, "value")?))
            })
            .collect();
        (action, fields)
    }

    /// Query parameters of the redirect back to the client.
    pub fn redirect_params(&self) -> HashMap<String, String> {
        self.redirect_params_at(REDIRECT)
    }

    /// Fragment parameters of the redirect back to the client (hybrid and implicit responses,
    /// and their errors); nothing may travel in the query.
    pub fn fragment_params(&self) -> HashMap<String, String> {
        let loc = self.location.as_deref().unwrap_or_else(|| panic!("no redirect (status {}): {}", self.status, self.html));
        assert!(loc.starts_with(REDIRECT), "redirect to {loc}");
        let url = url::Url::parse(loc).unwrap();
        assert!(url.query().is_none(), "nothing in the query: {loc}");
        url::form_urlencoded::parse(url.fragment().unwrap_or_else(|| panic!("no fragment: {loc}")).as_bytes()).into_owned().collect()
    }

    /// Query parameters of the redirect back to the client at `redirect_uri`.
    pub fn redirect_params_at(&self, redirect_uri: &str) -> HashMap<String, String> {
        let loc = self.location.as_deref().unwrap_or_else(|| panic!("no redirect (status {}): {}", self.status, self.html));
        assert!(loc.starts_with(redirect_uri), "redirect to {loc}");
        url::Url::parse(loc).unwrap().query_pairs().into_owned().collect()
    }
}

impl Browser {
    pub async fn authorize(&self, query: &[(&str, &str)]) -> reqwest::Response {
        self.client.get(format!("{}/authorize", self.base)).query(query).send().await.unwrap()
    }

    /// POST a form and take the answer as it comes (no redirect followed).
    pub async fn post_no_follow(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Page::from(self.client.post(format!("{}{path}", self.base)).form(form).send().await.unwrap()).await
    }

    /// POST a form; a 303 to one of our own pages (the consent page after a login) is
    /// followed with a GET, as a browser does.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let page = Page::from(self.client.post(format!("{}{path}", self.base)).form(form).send().await.unwrap()).await;
        match page.location.as_deref() {
            Some(own) if page.status == 303 && own.starts_with('/') => {
                Page::from(self.client.get(format!("{}{own}", self.base)).send().await.unwrap()).await
            }
            _ => page,
        }
    }

    /// From an /authorize response: sign in if asked, consent if asked, return the redirect params.
    pub async fn finish_login(&self, res: reqwest::Response, username: &str, password: &str) -> HashMap<String, String> {
        self.finish_login_at(res, username, password, REDIRECT).await
    }

    /// The same, for a client redirected to `redirect_uri`.
    pub async fn finish_login_at(&self, res: reqwest::Response, username: &str, password: &str, redirect_uri: &str) -> HashMap<String, String> {
        let mut page = Page::from(res).await;
        if page.is_login() {
            page = self.post("/login", &[("challenge", &page.challenge()), ("username", username), ("password", password)]).await;
        }
        if page.is_consent() {
            page = self.post("/consent", &[("challenge", &page.challenge()), ("decision", "allow")]).await;
        }
        page.redirect_params_at(redirect_uri)
    }
}

/// Decode a JWT's header and payload without verifying (tests inspect what we signed).
pub fn jwt_parts(token: &str) -> (Value, Value) {
    use base64::Engine;
    let dec = |s: &str| -> Value {
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).unwrap()).unwrap()
    };
    let mut it = token.split('.');
    (dec(it.next().unwrap()), dec(it.next().unwrap()))
}

// --- servers running as separate processes (crash and multi-node tests) ---

/// An `authrim serve` process of its own (its memory is its own to measure; it can be killed).
pub struct Process {
    pub child: std::process::Child,
    pub base: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn spawn_server(dir: &std::path::Path, port: u16, extra: &[(&str, &str)]) -> Process {
    let base = format!("http://127.0.0.1:{port}");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_authrim"));
    cmd.arg("serve")
        .env("AUTHRIM_DATA_DIR", dir)
        .env("AUTHRIM_LISTEN", format!("127.0.0.1:{port}"))
        .env("AUTHRIM_ISSUER", &base)
        .env("AUTHRIM_ADMIN_TOKEN", ADMIN)
        // Strict rotation, as in `test_config` (an `extra` may set a grace).
        .env("AUTHRIM_REFRESH_REUSE_GRACE", "0")
        .env_remove("AUTHRIM_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start authrim");
    Process { child, base }
}

pub async fn wait_healthy(base: &str) {
    for _ in 0..150 {
        if reqwest::get(format!("{base}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("server at {base} did not become healthy");
}

/// Through the admin API of `base`: the confidential client `rp` (code + refresh grants) and
/// the user `alice`. Returns the client secret.
pub async fn register_rp_and_alice(http: &reqwest::Client, base: &str) -> String {
    let created = admin_post(http, base, "/admin/clients", json!({"client_id": "rp", "redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "refresh_token"]})).await;
    admin_post(http, base, "/admin/users", json!({"username": "alice", "password": PASSWORD})).await;
    created["client_secret"].as_str().unwrap().to_string()
}

/// POST `body` to the operator interface (admin API, test-only bulk interface) of the server
/// at `base`; returns the JSON answer.
pub async fn admin_post(http: &reqwest::Client, base: &str, path: &str, body: Value) -> Value {
    http.post(format!("{base}{path}")).bearer_auth(ADMIN).json(&body).send().await.unwrap().json().await.unwrap()
}

/// Alice signs in to `rp` through the pages of `base` (scope `openid offline_access`);
/// returns the code.
pub async fn login_at(base: &str) -> String {
    let browser = reqwest::Client::builder().redirect(Policy::none()).cookie_store(true).build().unwrap();
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid offline_access")];
    let page = Page::from(browser.get(format!("{base}/authorize")).query(&q).send().await.unwrap()).await;
    let form = [("challenge", page.challenge()), ("username", "alice".into()), ("password", PASSWORD.into())];
    let page = Page::from(browser.post(format!("{base}/login")).form(&form).send().await.unwrap()).await;
    let to_consent = page.location.expect("the login redirects to the consent page");
    let page = Page::from(browser.get(format!("{base}{to_consent}")).send().await.unwrap()).await;
    let form = [("challenge", page.challenge()), ("decision", "allow".into())];
    let page = Page::from(browser.post(format!("{base}/consent")).form(&form).send().await.unwrap()).await;
    page.redirect_params()["code"].clone()
}
