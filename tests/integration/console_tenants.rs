//! A tenant's settings page in the deployment's console (issue 31): it shows what the tenant
//! sets, saves the form (served at once, audited with the console user), clears a field back to
//! the deployment's, refuses a bad value with a page and stores nothing, keeps the logo unless
//! told to remove it, leaves what is not on the form (upstreams, resource servers) alone, and
//! needs the form's CSRF token; an auditor sees it without a form.

use crate::console::{csrf, enter, operator, totp};
use crate::harness::*;
use crate::passkeys::{get, post};
use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

/// A form's fields as the browser helper takes them.
fn send<'a>(f: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    f.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

const SVG: &str = r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>"#;

async fn settings(s: &TestServer) -> Value {
    let (status, t) = s.admin(Method::GET, "/admin/tenants/acme", None).await;
    assert_eq!(status, 200, "{t}");
    t["settings"].clone()
}

/// The login page of acme's application.
async fn acme_login(s: &TestServer) -> String {
    s.http.get(s.url("/t/acme/authorize")).query(&request_query("code", "rp", &[])).send().await.unwrap().text().await.unwrap()
}

#[tokio::test]
async fn the_deployments_console_changes_a_tenants_settings() {
    let s = TestServer::start().await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    crate::tenants::rp_and_alice(&s, "/t/acme").await;
    let logo = format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(SVG));
    let resource = json!([{"uri": "https://mcp.acme.example/mcp", "name": "Acme MCP"}]);
    let (status, body) = s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": {"product_name": "Acme", "theme": {"logo": logo}, "resource_servers": resource}}))).await;
    assert_eq!(status, 200, "{body}");

    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);
    let list = get(&admin, "/console/tenants").await;
    assert!(list.html.contains("href=\"/console/tenants/acme\""), "the list links the settings page: {}", list.html);
    let page = get(&admin, "/console/tenants/acme").await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.html.contains("value=\"Acme\"") && page.html.contains("image/svg+xml"), "{}", page.html);
    assert_eq!(get(&admin, "/console/tenants/nobody").await.status, 404);

    let form = |csrf: &str, extra: &[(&'static str, &'static str)]| -> Vec<(&'static str, String)> {
        let mut f: Vec<(&str, String)> = vec![
            ("csrf", csrf.to_string()),
            ("action", "settings".into()),
            ("product_name", "Acme sign-in".into()),
            ("default_locale", "fr".into()),
            ("css", ":root { --accent: #0b7a55; }".into()),
            ("password_min_length", "12".into()),
            ("mfa_policy", "".into()),
            ("signup", "".into()),
            ("mail_from", "Acme <no-reply@acme.example>".into()),
        ];
        for (k, v) in extra {
            f.retain(|(n, _)| n != k);
            f.push((*k, v.to_string()));
        }
        f
    };

    // Without the CSRF token: refused, nothing stored.
    let forged = post(&admin, "/console/tenants/acme", &send(&form("", &[]))).await;
    assert_ne!(forged.status, 200, "{}", forged.html);
    assert_eq!(settings(&s).await["product_name"], "Acme");

    // A bad value: a page saying why, nothing stored.
    for bad in [("password_min_length", "4"), ("password_min_length", "twelve"), ("mail_from", "not an address"), ("default_locale", "xx")] {
        let refused = post(&admin, "/console/tenants/acme", &send(&form(&csrf(&page), &[bad]))).await;
        assert_eq!(refused.status, 400, "{bad:?}: {}", refused.html);
        assert!(refused.html.contains(bad.0), "the page names the setting: {}", refused.html);
    }
    assert_eq!(settings(&s).await["product_name"], "Acme", "a refused form stored nothing");

    // Saved: served at once; the logo kept (not on the form), the resource servers too.
    let saved = post(&admin, "/console/tenants/acme", &send(&form(&csrf(&page), &[]))).await;
    assert_eq!(saved.status, 200, "{}", saved.html);
    assert!(saved.html.contains("value=\"Acme sign-in\""), "back on the page, as saved: {}", saved.html);
    let now = settings(&s).await;
    assert_eq!((now["product_name"].as_str(), now["default_locale"].as_str(), now["password_min_length"].as_u64()), (Some("Acme sign-in"), Some("fr"), Some(12)), "{now}");
    assert_eq!((now["theme"]["logo"].as_str(), now["theme"]["css"].as_str()), (Some(logo.as_str()), Some(":root { --accent: #0b7a55; }")), "{now}");
    assert_eq!(now["resource_servers"][0]["uri"], resource[0]["uri"], "{now}");
    assert!(now.get("mfa_policy").is_none() && now.get("signup").is_none(), "left to the deployment: {now}");
    let login = acme_login(&s).await;
    assert!(login.contains("Acme sign-in") && login.contains("lang=\"fr\"") && login.contains("/t/acme/assets/tenant.css?v="), "{login}");

    // Cleared: an empty name and language are the deployment's again; the logo removed.
    let cleared = post(&admin, "/console/tenants/acme", &send(&form(&csrf(&saved), &[("product_name", ""), ("default_locale", ""), ("css", ""), ("remove_logo", "1")]))).await;
    assert_eq!(cleared.status, 200, "{}", cleared.html);
    let now = settings(&s).await;
    assert!(now.get("product_name").is_none() && now.get("default_locale").is_none() && now.get("theme").is_none(), "{now}");
    assert_eq!(now["password_min_length"], 12, "{now}");
    let login = acme_login(&s).await;
    assert!(!login.contains("Acme sign-in") && !login.contains("tenant.css") && login.contains("/t/acme/assets/logo.svg\""), "{login}");

    // Audited with the console user.
    let (_, events) = s.admin(Method::GET, "/admin/audit?limit=20", None).await;
    let changed = events["events"].as_array().unwrap().iter().filter(|e| e["event"] == "tenant_changed" && e["detail"]["by"] == "console").count();
    assert!(changed >= 2, "{events}");

    // An auditor sees the settings, without a form.
    let auditor = operator(&s, "watcher", &["auditor"]).await;
    let secret = totp(&s, &auditor).await;
    let viewer = s.browser();
    assert_eq!(enter(&viewer, "watcher", Some(&secret)).await.status, 200);
    let page = get(&viewer, "/console/tenants/acme").await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.html.contains("<fieldset disabled>") && !page.html.contains("value=\"settings\""), "{}", page.html);
}

/// A style sheet longer than the form can carry (set with the API) is not put on the form: the
/// page says where it was set, saving the other settings keeps it, and its box removes it.
#[tokio::test]
async fn a_style_sheet_too_long_for_the_form_is_kept_when_the_form_is_saved() {
    let s = TestServer::start_with(|c| c.tenant_theme_max_bytes = 64 * 1024).await;
    assert_eq!(s.admin(Method::POST, "/admin/tenants", Some(json!({"slug": "acme"}))).await.0, 201);
    let long = format!(":root {{ --accent: #0b7a55; }}\n/* {} */", "x".repeat(20_000));
    let (status, body) = s.admin(Method::PATCH, "/admin/tenants/acme", Some(json!({"settings": {"theme": {"css": long}}}))).await;
    assert_eq!(status, 200, "{body}");

    let root = operator(&s, "root", &["admin"]).await;
    let secret = totp(&s, &root).await;
    let admin = s.browser();
    assert_eq!(enter(&admin, "root", Some(&secret)).await.status, 200);
    let page = get(&admin, "/console/tenants/acme").await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(!page.html.contains("id=\"css\"") && !page.html.contains("xxxxxxxx"), "not on the form: {}", page.html);
    assert!(page.html.contains(&format!("{} bytes, set with the CLI", long.len())) && page.html.contains("name=\"remove_css\""), "{}", page.html);

    let form = |csrf: String, extra: &[(&'static str, &'static str)]| {
        let mut f: Vec<(&'static str, String)> = vec![("csrf", csrf), ("action", "settings".into()), ("product_name", "Acme".into())];
        f.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        f
    };
    let saved = post(&admin, "/console/tenants/acme", &send(&form(csrf(&page), &[]))).await;
    assert_eq!(saved.status, 200, "{}", saved.html);
    let now = settings(&s).await;
    assert_eq!((now["product_name"].as_str(), now["theme"]["css"].as_str()), (Some("Acme"), Some(long.as_str())), "kept");

    let removed = post(&admin, "/console/tenants/acme", &send(&form(csrf(&saved), &[("remove_css", "1")]))).await;
    assert_eq!(removed.status, 200, "{}", removed.html);
    assert!(settings(&s).await.get("theme").is_none(), "removed");
    assert!(removed.html.contains("id=\"css\""), "the form's own field again: {}", removed.html);
}
