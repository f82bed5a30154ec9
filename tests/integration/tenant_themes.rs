//! A tenant's own look (issue 31; `ui::look`): a style sheet and a logo set in its settings
//! (`theme`), linked from its pages and served at `/t/{tenant}/assets/`, at once and to that
//! tenant only; every asset sent so that an uploaded SVG runs nothing as a page of ours; a
//! logo that is not a PNG or an SVG, or anything over `tenant_theme_max_bytes`, refused with
//! 400 and nothing stored. On SQLite and PostgreSQL.

use crate::harness::*;
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

const MAX: usize = 4096;
const CSS: &str = ":root { --accent: #0b7a55; --bg: #eef6f1; }";
const SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="4" fill="#0b7a55"/><script>alert(document.domain)</script></svg>"##;

fn data_url(kind: &str, bytes: &[u8]) -> String {
    format!("data:{kind};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn png() -> Vec<u8> {
    // A 1x1 PNG's signature and header chunk: enough for the check (the magic number), and
    // what the test compares byte for byte.
    let mut p = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    p.extend_from_slice(&[0x1f, 0x15, 0xc4, 0x89]);
    p
}

async fn patch(s: &TestServer, slug: &str, settings: Value) -> (u16, Value) {
    s.admin(Method::PATCH, &format!("/admin/tenants/{slug}"), Some(json!({ "settings": settings }))).await
}

/// The login page of `prefix`'s application.
async fn login_page(s: &TestServer, prefix: &str) -> String {
    s.http.get(s.url(&format!("{prefix}/authorize"))).query(&request_query("code", "rp", &[])).send().await.unwrap().text().await.unwrap()
}

/// An asset's status, content type, the headers that keep it inert, and its bytes.
async fn asset(s: &TestServer, path: &str) -> (u16, String, String, Vec<u8>) {
    let res = s.http.get(s.url(path)).send().await.unwrap();
    let h = |n: &str| res.headers().get(n).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let (ct, inert) = (h("content-type"), format!("{} | {}", h("x-content-type-options"), h("content-security-policy")));
    (res.status().as_u16(), ct, inert, res.bytes().await.unwrap().to_vec())
}

/// The path after `{prefix}/assets/` of the link in `page` that starts with `name`.
fn linked(page: &str, prefix: &str, name: &str) -> Option<String> {
    let needle = format!("{prefix}/assets/{name}");
    let at = page.find(&needle)?;
    let rest = &page[at..];
    Some(rest[..rest.find('"')?].to_string())
}

#[tokio::test]
async fn a_tenant_theme_changes_its_pages_only_on_sqlite() {
    a_tenant_theme_changes_its_pages_only(false).await;
}

#[tokio::test]
async fn a_tenant_theme_changes_its_pages_only_on_postgres() {
    a_tenant_theme_changes_its_pages_only(true).await;
}

async fn a_tenant_theme_changes_its_pages_only(postgres: bool) {
    let s = TestServer::start_on(postgres, |c| c.tenant_theme_max_bytes = MAX).await;
    for slug in ["acme", "globex"] {
        assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": slug}))).await.0, 201);
        crate::tenants::rp_and_alice(&s, &format!("/t/{slug}")).await;
    }
    crate::tenants::rp_and_alice(&s, "").await;
    let (_, _, _, builtin_logo) = asset(&s, "/assets/logo.svg").await;

    // Refused with 400, nothing stored: a logo that is not what it says, a type other than
    // PNG and SVG, a link instead of the file, a file over the limit, an unknown key.
    for bad in [
        json!({"logo": data_url("image/png", SVG.as_bytes())}),
        json!({"logo": data_url("image/svg+xml", b"<html><script>alert(1)</script></html>")}),
        json!({"logo": data_url("image/gif", b"GIF89a")}),
        json!({"logo": "https://cdn.acme.example/logo.svg"}),
        json!({"logo": data_url("image/png", &[png(), vec![0; MAX]].concat())}),
        json!({"css": "x".repeat(MAX + 1)}),
        json!({"font": "Comic Sans"}),
    ] {
        let (status, body) = patch(&s, "acme", json!({ "theme": bad })).await;
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_request")), "{bad}: {body}");
    }
    let (_, t) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert_eq!(t["settings"], json!({}), "a refused theme stored nothing");

    // Set: acme's pages link its style sheet after the deployment's, and its logo; served at
    // once, as sent, and inert.
    let (status, body) = patch(&s, "acme", json!({"theme": {"css": CSS, "logo": data_url("image/svg+xml", SVG.as_bytes())}})).await;
    assert_eq!(status, 200, "{body}");
    let page = login_page(&s, "/t/acme").await;
    let css = linked(&page, "/t/acme", "tenant.css").expect("acme's page links its style sheet");
    assert!(page.find("/t/acme/assets/style.css").unwrap() < page.find(&css).unwrap(), "after the deployment's: {page}");
    let logo = linked(&page, "/t/acme", "logo.svg?v=").expect("acme's page shows its logo");
    let (status, ct, inert, bytes) = asset(&s, &css).await;
    assert_eq!((status, ct.as_str(), bytes.as_slice()), (200, "text/css; charset=utf-8", CSS.as_bytes()));
    assert!(inert.starts_with("nosniff | ") && inert.contains("sandbox"), "{inert}");
    let (status, ct, inert, bytes) = asset(&s, &logo).await;
    assert_eq!((status, ct.as_str(), bytes.as_slice()), (200, "image/svg+xml", SVG.as_bytes()));
    // The SVG holds a script: opened on its own it runs nothing (a sandboxed document with no
    // script source), and pages show it through <img>.
    assert!(inert.contains("default-src 'none'") && inert.contains("sandbox"), "{inert}");
    assert!(page.contains(&format!(r#"<img src="{logo}""#)), "{page}");
    // The audit log records the look by its size and version, not the files.
    let (_, audit) = s.admin(Method::GET, "/admin/audit", None).await;
    let audit = audit.to_string();
    assert!(audit.contains(&format!("image/svg+xml, {} bytes", SVG.len())) && !audit.contains("base64,") && !audit.contains("--accent"), "{audit}");

    // Nobody else's: globex and the default tenant link and serve the deployment's look.
    for prefix in ["/t/globex", ""] {
        let page = login_page(&s, prefix).await;
        assert!(!page.contains("tenant.css") && page.contains(&format!(r#"<img src="{prefix}/assets/logo.svg""#)), "{prefix}: {page}");
        assert_eq!(asset(&s, &format!("{prefix}/assets/tenant.css")).await.0, 404, "{prefix}");
        assert_eq!(asset(&s, &format!("{prefix}/assets/logo.svg")).await.3, builtin_logo, "{prefix}");
    }

    // A changed style sheet gets a new link (past the assets' cache lifetime); a PNG logo
    // takes the SVG's place, and the built-in logo.svg is served again under that name.
    let png = png();
    let (status, body) = patch(&s, "acme", json!({"theme": {"css": ":root { --accent: #123456; }", "logo": data_url("image/png", &png)}})).await;
    assert_eq!(status, 200, "{body}");
    let page = login_page(&s, "/t/acme").await;
    let css2 = linked(&page, "/t/acme", "tenant.css").unwrap();
    assert_ne!(css2, css, "the version follows the content");
    assert_eq!(asset(&s, &css2).await.3, b":root { --accent: #123456; }");
    let logo = linked(&page, "/t/acme", "logo.png?v=").expect("the PNG is linked");
    assert!(page.contains(r#"type="image/png""#), "the favicon's type: {page}");
    let (status, ct, _, bytes) = asset(&s, &logo).await;
    assert_eq!((status, ct.as_str(), bytes), (200, "image/png", png));
    assert_eq!(asset(&s, "/t/acme/assets/logo.svg").await.3, builtin_logo);

    // Cleared with null: back to the deployment's look.
    assert_eq!(patch(&s, "acme", json!({"theme": null})).await.0, 200);
    let page = login_page(&s, "/t/acme").await;
    assert!(!page.contains("tenant.css") && !page.contains("logo.png"), "{page}");
    assert_eq!(asset(&s, "/t/acme/assets/tenant.css").await.0, 404);
    assert_eq!(asset(&s, "/t/acme/assets/logo.png").await.0, 404);
}

/// `authrim tenant set SLUG --css FILE --logo FILE`: each file changes its part of the theme
/// and keeps the other; checked as the API checks; a running server follows.
#[tokio::test]
async fn a_tenant_theme_set_by_the_cli_keeps_the_part_not_given() {
    let s = TestServer::start_with(|c| c.tenant_theme_max_bytes = MAX).await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    crate::tenants::rp_and_alice(&s, "/t/acme").await;
    let dir = s.dir.path();
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (css, svg, gif) = (file("acme.css", CSS.as_bytes()), file("acme.svg", SVG.as_bytes()), file("acme.gif", b"GIF89a"));
    let cli = |args: &[&str]| crate::admin::cli(dir, &[&["tenant", "set", "acme"], args].concat());
    let out = cli(&["--logo", &gif]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains(".svg or a .png"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(&["--css", &css]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cli(&["--logo", &svg]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, t) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert_eq!(t["settings"]["theme"]["css"], CSS, "the style sheet set first is kept: {t}");
    assert_eq!(t["settings"]["theme"]["logo"], data_url("image/svg+xml", SVG.as_bytes()), "{t}");
    let start = std::time::Instant::now();
    while linked(&login_page(&s, "/t/acme").await, "/t/acme", "logo.svg?v=").is_none() {
        assert!(start.elapsed() < std::time::Duration::from_secs(5), "the server never followed the CLI's change");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// With the default settings (`tenant_theme_max_bytes` 128 KiB, `max_body_bytes` 64 KiB) a
/// style sheet and a logo near the largest allowed reach the tenant through the admin API: the
/// tenant routes take bodies of `Config::tenant_settings_body_limit`, the others still at most
/// `max_body_bytes`, and a body over the tenant routes' limit is refused with 413.
#[tokio::test]
async fn a_theme_as_large_as_the_settings_allow_goes_through_the_admin_api() {
    let s = TestServer::start_with(|c| {
        c.tenant_theme_max_bytes = authrim::config::Config::default().tenant_theme_max_bytes;
        c.max_body_bytes = authrim::config::Config::default().max_body_bytes;
    })
    .await;
    let max = s.server.app.config.tenant_theme_max_bytes;
    assert!(max > s.server.app.config.max_body_bytes, "the case of the defaults: a file larger than a body");
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let mut logo = png();
    logo.resize(max - 16, 0x5a);
    let css = format!(":root {{ --accent: #0b7a55; }}\n/* {} */", "x".repeat(max - 64));
    let (status, body) = patch(&s, "acme", json!({"theme": {"css": css, "logo": data_url("image/png", &logo)}})).await;
    assert_eq!(status, 200, "{body}");
    let (st, ct, _, bytes) = asset(&s, &linked(&login_page(&s, "/t/acme").await, "/t/acme", "logo.png?v=").expect("acme's page shows its logo")).await;
    assert_eq!((st, ct.as_str(), bytes.len()), (200, "image/png", logo.len()));
    assert!(bytes == logo, "the logo as sent");

    // Over the tenant routes' own limit: 413, nothing stored.
    let huge = "x".repeat(s.server.app.config.tenant_settings_body_limit() + 1);
    let (status, body) = patch(&s, "acme", json!({"product_name": huge})).await;
    assert_eq!(status, 413, "{body}");
    let (_, t) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert!(t["settings"]["product_name"].is_null(), "{}", t["settings"]["product_name"]);
    // Elsewhere the limit is max_body_bytes, as it was.
    let big = json!({"client_id": "big", "redirect_uris": [REDIRECT], "client_name": "x".repeat(s.server.app.config.max_body_bytes)});
    let (status, _) = s.admin(Method::POST, "/admin/clients", Some(big)).await;
    assert_eq!(status, 413);
}
