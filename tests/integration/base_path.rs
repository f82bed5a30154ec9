//! An issuer with a path (`http://host/tenant1`) behind a proxy that forwards `/tenant1/…`
//! to the server's root (issue 36, MCP item 3): every page, form, redirect, asset URL and
//! cookie path of ours starts with the issuer's path. The browser here talks to the server
//! directly, as the proxy would after stripping the prefix; the e2e test
//! (tests/e2e/test_base_path.py) runs a real proxy.
//!
//! And the guard: no template or Rust redirect names a root-absolute URL that is not built
//! from the base. Other work adds pages in parallel; this test names the file and line to fix.

use crate::harness::*;
use serde_json::json;
use std::path::{Path, PathBuf};

const BASE: &str = "/tenant1";

async fn server() -> TestServer {
    TestServer::start_with(|c| c.issuer = format!("{}{BASE}", c.issuer)).await
}

fn attr_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let marker = format!(" {attr}=\"");
    html.split(marker.as_str()).skip(1).filter_map(|rest| rest.split('"').next()).collect()
}

/// Every URL of ours a page names (links, forms, scripts, style sheets, images) is under BASE.
fn assert_under_base(html: &str, what: &str) {
    for attr in ["href", "src", "action", "formaction"] {
        for v in attr_values(html, attr) {
            let ours = v.starts_with('/') && !v.starts_with("//");
            assert!(!ours || v == BASE || v.starts_with(&format!("{BASE}/")), "{what}: {attr}=\"{v}\" is outside {BASE}");
        }
    }
}

#[tokio::test]
async fn pages_forms_redirects_assets_and_cookies_live_under_the_issuers_path() {
    let s = server().await;
    assert_eq!(s.issuer(), format!("{}{BASE}", s.url("")));
    s.client("rp", json!({})).await;
    s.user("alice", json!({})).await;
    let b = s.browser();

    // Discovery names the issuer and endpoints with the path.
    let d: serde_json::Value = s.http.get(s.url("/.well-known/openid-configuration")).send().await.unwrap().json().await.unwrap();
    assert_eq!(d["authorization_endpoint"], format!("{}/authorize", s.issuer()));

    // The login page: its form posts under the base, its assets load from it.
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "st")];
    let login = Page::from(b.authorize(&q).await).await;
    assert_eq!(login.status, 200);
    assert!(login.html.contains(&format!("action=\"{BASE}/login\"")), "{}", login.html);
    assert!(login.html.contains(&format!("href=\"{BASE}/assets/style.css\"")), "{}", login.html);
    assert_under_base(&login.html, "login page");
    for c in &login.set_cookie {
        assert!(c.contains(&format!("Path={BASE};")), "cookie scoped to the issuer's path: {c}");
    }

    // Signing in needs the cookies, which (scoped to BASE) this proxy-less browser does not
    // send to the root: the e2e test (test_base_path.py) signs in through a real proxy.

    // The account page's sign-in starts at the base's /authorize and returns to its callback.
    let account = Page::from(b.client.get(format!("{}/account", b.base)).send().await.unwrap()).await;
    let to = account.location.clone().unwrap_or_default();
    assert!(to.starts_with(&format!("{BASE}/account/login")), "{} {to}", account.status);
    let start = Page::from(b.client.get(format!("{}/account/login", b.base)).send().await.unwrap()).await;
    let to = start.location.clone().unwrap();
    assert!(to.starts_with(&format!("{BASE}/authorize?")), "{to}");
    let callback = format!("{}{BASE}/account/callback", s.url(""));
    assert!(to.contains(&url::form_urlencoded::byte_serialize(callback.as_bytes()).collect::<String>()), "{to}");

    // Pages without a session, and the error and landing pages.
    for path in ["/", "/account/nothing", "/console/login"] {
        let p = Page::from(b.client.get(format!("{}{path}", b.base)).send().await.unwrap()).await;
        assert_under_base(&p.html, path);
        if let Some(to) = &p.location {
            assert!(to.starts_with(&format!("{BASE}/")), "{path} → {to}");
        }
    }
    // A trailing slash typed in the address bar: to the page without it, under the base.
    let slash = Page::from(b.client.get(format!("{}/account/", b.base)).send().await.unwrap()).await;
    assert_eq!(slash.location.as_deref(), Some(&*format!("{BASE}/account")), "{}", slash.status);
}

/// The issuer at the root keeps root paths and `Path=/` (nothing changes for it).
#[tokio::test]
async fn an_issuer_at_the_root_keeps_root_paths() {
    let s = TestServer::start().await;
    s.client("rp", json!({})).await;
    let b = s.browser();
    let q = [("response_type", "code"), ("client_id", "rp"), ("redirect_uri", REDIRECT), ("scope", "openid"), ("state", "st")];
    let login = Page::from(b.authorize(&q).await).await;
    assert!(login.html.contains("action=\"/login\"") && login.html.contains("href=\"/assets/style.css\""), "{}", login.html);
    assert!(login.set_cookie.iter().all(|c| c.contains("Path=/;")), "{:?}", login.set_cookie);
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// What in a template line names one of our URLs from the root instead of `{{ base }}`.
fn template_problem(line: &str) -> Option<&'static str> {
    for attr in ["href", "src", "action", "formaction", "poster", "srcset"] {
        for quote in ['"', '\''] {
            if line.contains(&format!("{attr}={quote}/")) {
                return Some("a root-absolute URL: write {{ base }}/… (the issuer's path, given to every page)");
            }
        }
    }
    None
}

/// What in a Rust line redirects (or scopes a cookie) to a root-absolute path not built from
/// the base.
fn rust_problem(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or(line);
    let literal_root = |after: &str| {
        code.split(after).skip(1).any(|rest| {
            let rest = rest.trim_start().trim_start_matches('&');
            let rest = rest.strip_prefix("format!(").unwrap_or(rest);
            rest.starts_with("\"/")
        })
    };
    if literal_root("see_other_url(") {
        return Some("see_other_url is for URLs elsewhere: redirect to our pages with first_party::see_other(app.base(), \"/…\")");
    }
    if ["Redirect::to(", "Redirect::permanent(", "Redirect::temporary(", "Redirect::see_other("].iter().any(|r| code.contains(r)) && !code.contains("{base}") {
        return Some("an axum Redirect: use first_party::see_other(app.base(), \"/…\") (or build the target from the base)");
    }
    if literal_root("HeaderValue::from_static(") || literal_root("HeaderValue::from_str(") {
        return Some("a root-absolute header value (a Location?): build it from app.base()");
    }
    if code.contains("Path=/") {
        return Some("a cookie path from the root: set cookies with http::cookies::set(res, app.base(), …)");
    }
    if code.contains("format!(\"/") && (code.contains("location") || code.contains("Location") || code.contains("LOCATION")) {
        return Some("a Location from the root: start it with app.base()");
    }
    None
}

#[test]
fn no_template_or_redirect_names_a_root_absolute_url() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut templates = Vec::new();
    files(&root.join("src/ui/templates"), "html", &mut templates);
    assert!(templates.len() > 10, "templates found");
    for f in &templates {
        for (i, line) in std::fs::read_to_string(f).unwrap().lines().enumerate() {
            if let Some(why) = template_problem(line) {
                problems.push(format!("{}:{}: {why}\n    {}", f.strip_prefix(root).unwrap().display(), i + 1, line.trim()));
            }
        }
    }
    let mut sources = Vec::new();
    files(&root.join("src"), "rs", &mut sources);
    for f in &sources {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            // Unit tests below `mod tests` may name what they like.
            if line.starts_with("mod tests") || line.starts_with("#[cfg(test)]") {
                break;
            }
            if let Some(why) = rust_problem(line) {
                problems.push(format!("{}:{}: {why}\n    {}", f.strip_prefix(root).unwrap().display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "Authrim must work under the issuer's path (issue 36, MCP item 3): every URL of ours is built from the base \
         ({{{{ base }}}} in templates, app.base() in Rust). Fix:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_guard_sees_what_it_should() {
    assert!(template_problem(r#"<form method="post" action="/login">"#).is_some());
    assert!(template_problem(r#"<a href='/account'>"#).is_some());
    assert!(template_problem(r#"<a href="{{ base }}/account">"#).is_none());
    assert!(template_problem(r#"<form action="{{ action }}">"#).is_none());
    assert!(rust_problem(r#"    see_other_url("/account")"#).is_some());
    assert!(rust_problem(r#"    see_other_url(&format!("/console/{}", x))"#).is_some());
    assert!(rust_problem(r#"    return axum::response::Redirect::to("/x").into_response();"#).is_some());
    assert!(rust_problem(r#"    let location = format!("/consent?challenge={}", c);"#).is_some());
    assert!(rust_problem(r#"    let location = format!("{}/consent?challenge={}", app.base(), c);"#).is_none());
    assert!(rust_problem(r#"    see_other(app.base(), "/account")"#).is_none());
    assert!(rust_problem(r#"    let c = format!("{name}={value}; Path=/; HttpOnly");"#).is_some());
}
