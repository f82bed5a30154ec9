//! Pages from templates, in the reader's language, themeable without rebuilding.
//!
//! A handler describes a page (`Page`: a template, its values, the messages it shows by id,
//! its script policy) and returns it as a response; the page is rendered at the edge
//! (`http::edge`), where the request's `Accept-Language` is at hand, so that no handler (nor
//! the many places that answer with an error page) needs to carry the language around. The
//! request's own `ui_locales` (OpenID Connect Core §3.1.2.1) goes with the page and comes
//! first.
//!
//! Templates are minijinja (read at start: an operator's `theme_dir/templates/NAME.html`
//! replaces the built-in one, which askama's compiled templates could not allow), messages
//! Fluent (`catalog`), assets (style sheet, logo, the two scripts) served from memory at
//! `/assets/NAME`, each replaceable from `theme_dir/assets/`, but the style sheet: a theme's
//! `style.css` is added after the built-in one (`/assets/theme.css`), so that a theme of a
//! few CSS variables keeps the layout, unless `theme_css = "replace"`. Every page is sent with a CSP
//! that allows only our own style sheet, images and scripts (and a per-response nonce for
//! the two pages with an inline script).

pub mod catalog;
pub mod locale;
pub mod look;
mod theme_dir;

use crate::util::html_escape;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use catalog::{Arg, Catalogs};
use minijinja::value::{Kwargs, Value};
use minijinja::Environment;
use serde_json::Map;
use std::collections::HashMap;
use look::Look;
use std::path::Path;
use std::sync::Arc;
pub use theme_dir::ThemeCss;

/// The built-in templates (`src/ui/templates`).
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("_passkey_form.html", include_str!("templates/_passkey_form.html")),
    ("_passkeys_off.html", include_str!("templates/_passkeys_off.html")),
    ("error.html", include_str!("templates/error.html")),
    ("login.html", include_str!("templates/login.html")),
    ("second_factor.html", include_str!("templates/second_factor.html")),
    ("consent.html", include_str!("templates/consent.html")),
    ("request_done.html", include_str!("templates/request_done.html")),
    ("device.html", include_str!("templates/device.html")),
    ("select_account.html", include_str!("templates/select_account.html")),
    ("org_choose.html", include_str!("templates/org_choose.html")),
    ("org_invitation.html", include_str!("templates/org_invitation.html")),
    ("logout_confirm.html", include_str!("templates/logout_confirm.html")),
    ("signed_out.html", include_str!("templates/signed_out.html")),
    ("form_post.html", include_str!("templates/form_post.html")),
    ("landing.html", include_str!("templates/landing.html")),
    ("demo.html", include_str!("templates/demo.html")),
    ("demo_callback.html", include_str!("templates/demo_callback.html")),
    ("account.html", include_str!("templates/account.html")),
    ("account_reauth.html", include_str!("templates/account_reauth.html")),
    ("account_message.html", include_str!("templates/account_message.html")),
    ("account_passkey.html", include_str!("templates/account_passkey.html")),
    ("account_totp.html", include_str!("templates/account_totp.html")),
    ("account_recovery.html", include_str!("templates/account_recovery.html")),
    ("account_password.html", include_str!("templates/account_password.html")),
    ("account_profile.html", include_str!("templates/account_profile.html")),
    ("forgot.html", include_str!("templates/forgot.html")),
    ("forgot_sent.html", include_str!("templates/forgot_sent.html")),
    ("reset.html", include_str!("templates/reset.html")),
    ("reset_done.html", include_str!("templates/reset_done.html")),
    ("signup.html", include_str!("templates/signup.html")),
    ("signup_sent.html", include_str!("templates/signup_sent.html")),
    ("signup_verify.html", include_str!("templates/signup_verify.html")),
    ("signup_done.html", include_str!("templates/signup_done.html")),
    ("console_base.html", include_str!("templates/console_base.html")),
    ("_console_events.html", include_str!("templates/_console_events.html")),
    ("console_home.html", include_str!("templates/console_home.html")),
    ("console_clients.html", include_str!("templates/console_clients.html")),
    ("console_client.html", include_str!("templates/console_client.html")),
    ("console_saml.html", include_str!("templates/console_saml.html")),
    ("console_client_type.html", include_str!("templates/console_client_type.html")),
    ("console_created.html", include_str!("templates/console_created.html")),
    ("console_secret.html", include_str!("templates/console_secret.html")),
    ("console_users.html", include_str!("templates/console_users.html")),
    ("console_user.html", include_str!("templates/console_user.html")),
    ("console_keys.html", include_str!("templates/console_keys.html")),
    ("console_tenants.html", include_str!("templates/console_tenants.html")),
    ("console_tenant.html", include_str!("templates/console_tenant.html")),
    ("console_organizations.html", include_str!("templates/console_organizations.html")),
    ("_console_org_fields.html", include_str!("templates/_console_org_fields.html")),
    ("console_organization.html", include_str!("templates/console_organization.html")),
    ("console_groups.html", include_str!("templates/console_groups.html")),
    ("_console_group_fields.html", include_str!("templates/_console_group_fields.html")),
    ("_console_principal_fields.html", include_str!("templates/_console_principal_fields.html")),
    ("console_group.html", include_str!("templates/console_group.html")),
    ("_console_client_roles.html", include_str!("templates/_console_client_roles.html")),
    ("_console_client_provisioning.html", include_str!("templates/_console_client_provisioning.html")),
    ("console_credentials.html", include_str!("templates/console_credentials.html")),
    ("console_credential.html", include_str!("templates/console_credential.html")),
    ("console_audit.html", include_str!("templates/console_audit.html")),
    ("console_message.html", include_str!("templates/console_message.html")),
    // Mail bodies: plain text (`.txt`: not escaped).
    ("mail.txt", include_str!("templates/mail.txt")),
    ("mail_reset.txt", include_str!("templates/mail_reset.txt")),
    ("mail_verify.txt", include_str!("templates/mail_verify.txt")),
    ("mail_verify_email.txt", include_str!("templates/mail_verify_email.txt")),
    ("mail_email_changed.txt", include_str!("templates/mail_email_changed.txt")),
    ("mail_signup_exists.txt", include_str!("templates/mail_signup_exists.txt")),
    ("mail_factor_locked.txt", include_str!("templates/mail_factor_locked.txt")),
    ("mail_ciba.txt", include_str!("templates/mail_ciba.txt")),
    ("mail_org_invitation.txt", include_str!("templates/mail_org_invitation.txt")),
];

/// The built-in assets (`src/ui/assets`).
const ASSETS: &[(&str, &str)] = &[
    ("style.css", include_str!("assets/style.css")),
    ("logo.svg", include_str!("assets/logo.svg")),
    ("ui.js", include_str!("assets/ui.js")),
    ("passkey.js", include_str!("assets/passkey.js")),
    ("check_session.js", include_str!("assets/check_session.js")),
];

/// A message by id, with its arguments; `detail`: technical words shown beside it as they are
/// (an OAuth error's description, which has no translation).
#[derive(Debug, Clone)]
pub struct Msg {
    pub id: &'static str,
    pub args: Vec<(&'static str, Arg)>,
    pub detail: Option<String>,
}

impl Msg {
    pub fn new(id: &'static str) -> Self {
        Self { id, args: Vec::new(), detail: None }
    }
    pub fn arg(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.args.push((name, Arg::Text(value.into())));
        self
    }
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

impl From<&'static str> for Msg {
    fn from(id: &'static str) -> Self {
        Msg::new(id)
    }
}

/// What scripts a page runs: ours from `/assets` (`ui.js`, `passkey.js`), or only an inline
/// one allowed by this response's nonce (the form_post and front-channel logout pages).
#[derive(Debug, Clone, Default)]
pub struct Csp {
    pub nonce: Option<String>,
    /// Origins the page may frame (front-channel logout).
    pub frames: Vec<String>,
    /// Origins the page may show images from besides ours (a client's logo on the consent page).
    pub images: Vec<String>,
    /// Our own pages may frame this one (`frame-ancestors 'self'`, `X-Frame-Options:
    /// SAMEORIGIN`); otherwise no page may.
    pub framed_by_self: bool,
}

impl Csp {
    fn header(&self) -> String {
        let script = match &self.nonce {
            Some(n) => format!("script-src 'nonce-{n}'"),
            None => "script-src 'self'".into(),
        };
        let frames = match self.frames.is_empty() {
            true => String::new(),
            false => format!("; frame-src {}", self.frames.join(" ")),
        };
        let images: String = self.images.iter().map(|o| format!(" {o}")).collect();
        let ancestors = if self.framed_by_self { "'self'" } else { "'none'" };
        format!("default-src 'none'; {script}; style-src 'self'; img-src 'self'{images}{frames}; frame-ancestors {ancestors}; base-uri 'none'")
    }
}

/// A page to render: returned by handlers as a response (`IntoResponse`), rendered at the edge.
#[derive(Debug, Clone)]
pub struct Page {
    pub status: StatusCode,
    pub template: &'static str,
    /// The message id of the page's title.
    pub title: &'static str,
    pub ctx: Map<String, serde_json::Value>,
    /// Values that are messages, translated into the context under these names.
    pub msgs: Vec<(&'static str, Msg)>,
    pub csp: Csp,
    /// The request's `ui_locales`, ahead of `Accept-Language`.
    pub ui_locales: Option<String>,
}

impl Page {
    pub fn new(status: StatusCode, template: &'static str, title: &'static str) -> Self {
        Self { status, template, title, ctx: Map::new(), msgs: Vec::new(), csp: Csp::default(), ui_locales: None }
    }
    pub fn with(mut self, name: &str, value: impl serde::Serialize) -> Self {
        self.ctx.insert(name.into(), serde_json::to_value(value).unwrap_or_default());
        self
    }
    pub fn msg(mut self, name: &'static str, msg: impl Into<Msg>) -> Self {
        self.msgs.push((name, msg.into()));
        self
    }
    pub fn locales(mut self, ui_locales: Option<&str>) -> Self {
        self.ui_locales = ui_locales.map(str::to_string);
        self
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut res = self.status.into_response();
        res.extensions_mut().insert(self);
        res
    }
}

/// What every tenant's pages share: the templates (the theme directory's among them), the
/// catalogues and the deployment's assets, built once at start. A tenant's `Ui` holds them
/// by reference, so that 1,000 tenants with names and logos of their own cost their names
/// and logos, not 1,000 template environments.
struct Pages {
    env: Environment<'static>,
    catalogs: Arc<Catalogs>,
    assets: HashMap<String, (&'static str, Bytes)>,
    languages: Vec<String>,
}

/// A tenant's pages: the shared ones, with its name, default language and look.
pub struct Ui {
    pages: Arc<Pages>,
    product: String,
    default_locale: String,
    look: Look,
}

/// Sent with every asset: nothing served from `/assets` runs as a page of our origin (a
/// tenant's SVG logo opened on its own, say), and no browser guesses another type.
const ASSET_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/// A tenant's own style sheet, linked after the deployment's (and its theme's).
const TENANT_CSS: &str = "tenant.css";

impl Ui {
    /// The built-in templates, messages and assets, with `theme_dir`'s on top (its
    /// `style.css` added after the built-in one).
    pub fn load(theme_dir: Option<&Path>, product: &str, default_locale: &str) -> anyhow::Result<Self> {
        Self::load_theme(theme_dir, ThemeCss::Add, product, default_locale)
    }

    /// As `load`, with what the theme's `style.css` does.
    pub fn load_theme(theme_dir: Option<&Path>, css: ThemeCss, product: &str, default_locale: &str) -> anyhow::Result<Self> {
        let mut env = Environment::new();
        // HTML escaping of the five characters that matter (minijinja's default also escapes
        // `/`, which makes URLs and commands in pages hard to read and copy); nothing for
        // none/undefined.
        // A string value (most of them) is written as it is, without a copy first.
        env.set_formatter(|out, state, value| {
            if value.is_undefined() || value.is_none() {
                return Ok(());
            }
            let escape = matches!(state.auto_escape(), minijinja::AutoEscape::Html) && !value.is_safe();
            let owned;
            let text = match value.as_str() {
                Some(s) => s,
                None => {
                    owned = value.to_string();
                    &owned
                }
            };
            let written = if escape { crate::util::write_html_escaped(out, text) } else { out.write_str(text) };
            written.map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write"))
        });
        for (name, source) in TEMPLATES {
            env.add_template(name, source)?;
        }
        let mut assets: HashMap<String, (&'static str, Bytes)> =
            ASSETS.iter().map(|(n, s)| (n.to_string(), (theme_dir::content_type(n), Bytes::from_static(s.as_bytes())))).collect();
        let (theme_css, extra_locales) = match theme_dir {
            Some(dir) => theme_dir::load(dir, css, &mut env, &mut assets)?,
            None => (false, Vec::new()),
        };
        // Read by base.html: link the theme's style sheet after ours.
        env.add_global("theme_css", theme_css);
        let catalogs = Arc::new(Catalogs::load(&extra_locales)?);
        let languages = catalogs.languages();
        if !languages.iter().any(|l| l == default_locale) {
            anyhow::bail!("default_locale {default_locale:?} has no catalogue (there are: {})", languages.join(", "));
        }
        let c = catalogs.clone();
        env.add_function("t", move |state: &minijinja::State, id: String, kwargs: Kwargs| -> Result<Value, minijinja::Error> {
            let lang = state.lookup("lang").map(|v| v.to_string()).unwrap_or_default();
            let mut args = Vec::new();
            for k in kwargs.args() {
                let v: Value = kwargs.get(k)?;
                let arg = match v.as_i64() {
                    Some(n) => Arg::Number(n as f64),
                    None => Arg::Text(v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())),
                };
                args.push((k.to_string(), arg));
            }
            // In a page the arguments are escaped for HTML; in a mail (`.txt`) nothing is.
            if !matches!(state.auto_escape(), minijinja::AutoEscape::Html) {
                return Ok(Value::from(c.format_plain(&lang, &id, &args).unwrap_or(id)));
            }
            let text = c.format(&lang, &id, &args).unwrap_or_else(|| html_escape(&id));
            Ok(Value::from_safe_string(text))
        });
        let c = catalogs.clone();
        // A message if there is one, else `fallback` (a custom scope's own name).
        env.add_function("t_or", move |state: &minijinja::State, id: String, fallback: String| -> Value {
            let lang = state.lookup("lang").map(|v| v.to_string()).unwrap_or_default();
            Value::from_safe_string(c.format(&lang, &id, &[]).unwrap_or_else(|| html_escape(&fallback)))
        });
        let pages = Arc::new(Pages { env, catalogs, assets, languages });
        let ui = Self { pages, product: product.to_string(), default_locale: default_locale.to_string(), look: Look::default() };
        ui.check()?;
        Ok(ui)
    }

    /// These pages for a tenant with its own name, default language and look; the templates,
    /// catalogues and the deployment's assets are shared, not loaded again.
    pub fn for_tenant(&self, product: &str, default_locale: &str, look: Look) -> anyhow::Result<Self> {
        if !self.pages.languages.iter().any(|l| l == default_locale) {
            anyhow::bail!("default_locale {default_locale:?} has no catalogue (there are: {})", self.pages.languages.join(", "));
        }
        Ok(Self { pages: self.pages.clone(), product: product.to_string(), default_locale: default_locale.to_string(), look })
    }

    /// Every template compiles (a theme's mistake is found at start, not by a user).
    fn check(&self) -> anyhow::Result<()> {
        for (name, _) in TEMPLATES {
            self.pages.env.get_template(name).map_err(|e| anyhow::anyhow!("template {name}: {e}"))?;
        }
        // A mail template that fails to render would fail where nobody sees it: tried now.
        let sample = serde_json::json!({"link": "https://example.com/x", "minutes": "30", "hours": "24", "username": "u", "new_email": "u@example.com", "client": "c", "binding_message": "b", "organization": "o", "days": "7"});
        for (name, _) in TEMPLATES.iter().filter(|(n, _)| n.starts_with("mail_")) {
            for lang in &self.pages.languages {
                self.mail_body(lang, name, sample.clone()).map_err(|e| anyhow::anyhow!("template {name}: {e}"))?;
            }
        }
        Ok(())
    }

    /// The name the pages show (`product_name`, a tenant's own when it sets one).
    pub fn product(&self) -> &str {
        &self.product
    }

    /// The languages pages are available in (discovery's `ui_locales_supported`).
    pub fn languages(&self) -> &[String] {
        &self.pages.languages
    }

    /// `GET /assets/NAME`: the tenant's style sheet and logo, else the deployment's assets.
    pub fn asset(&self, name: &str) -> Response {
        let own = match (name, &self.look) {
            (TENANT_CSS, Look { css: Some(css), .. }) => Some(("text/css; charset=utf-8", css)),
            (_, Look { logo: Some(logo), .. }) if logo.name == name => Some((logo.content_type, &logo.bytes)),
            _ => None,
        };
        match own.or_else(|| self.pages.assets.get(name).map(|(ct, b)| (*ct, b))) {
            Some((ct, bytes)) => {
                let headers = [
                    (header::CONTENT_TYPE, ct),
                    (header::CACHE_CONTROL, "public, max-age=3600"),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                    (header::CONTENT_SECURITY_POLICY, ASSET_CSP),
                ];
                (headers, bytes.clone()).into_response()
            }
            None => crate::error::OAuthError::not_found("no such asset").into_response(),
        }
    }

    /// A message in `lang` as plain text (mail): its arguments not escaped for HTML.
    pub fn plain_text(&self, lang: &str, msg: &Msg) -> String {
        let args: Vec<(String, Arg)> = msg.args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        self.pages.catalogs.format_plain(lang, msg.id, &args).unwrap_or_else(|| msg.id.to_string())
    }

    /// A mail's body in `lang`: template `name` (plain text) with `product` and `values`.
    pub fn mail_body(&self, lang: &str, name: &str, values: serde_json::Value) -> Result<String, minijinja::Error> {
        let ctx = minijinja::context! { lang => lang, product => self.product.clone(), ..Value::from_serialize(&values) };
        self.pages.env.get_template(name)?.render(ctx)
    }

    /// A message in `lang` (for text outside templates).
    pub fn text(&self, lang: &str, msg: &Msg) -> String {
        let args: Vec<(String, Arg)> = msg.args.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        self.pages.catalogs.format(lang, msg.id, &args).unwrap_or_else(|| html_escape(msg.id))
    }

    /// The language for a page: the request's `ui_locales`, then `Accept-Language`, then the
    /// default.
    pub fn language(&self, ui_locales: Option<&str>, accept_language: Option<&str>) -> &str {
        locale::negotiate(ui_locales, accept_language, &self.pages.languages).unwrap_or(&self.default_locale)
    }

    /// The language the request asked for, if there is a catalogue for it (no default).
    pub fn asked_language(&self, ui_locales: Option<&str>, accept_language: Option<&str>) -> Option<&str> {
        locale::negotiate(ui_locales, accept_language, &self.pages.languages)
    }

    /// Render `page` into `res` (which keeps its status and headers, cookies among them).
    /// `base` is the request's issuer path (`Issuer::base`): templates build every URL of ours
    /// from it (`{{ base }}/login`), so pages work under a path prefix.
    pub fn render(&self, mut res: Response, page: Page, accept_language: Option<&str>, base: &str) -> Response {
        let lang = self.language(page.ui_locales.as_deref(), accept_language).to_string();
        let mut ctx = page.ctx;
        for (name, msg) in &page.msgs {
            if let Some(detail) = &msg.detail {
                ctx.insert("detail".into(), detail.clone().into());
            }
            ctx.insert((*name).into(), self.text(&lang, msg).into());
        }
        let title = self.text(&lang, &Msg::new(page.title));
        let mut values: HashMap<String, Value> = ctx.into_iter().map(|(k, v)| (k, Value::from_serialize(&v))).collect();
        // Messages translated above are our HTML: marked safe, their values were escaped.
        for (name, _) in &page.msgs {
            if let Some(v) = values.get(*name).and_then(|v| v.as_str().map(str::to_string)) {
                values.insert((*name).to_string(), Value::from_safe_string(v));
            }
        }
        values.insert("lang".into(), Value::from(lang.clone()));
        values.insert("base".into(), Value::from(base));
        values.insert("product".into(), Value::from(self.product.clone()));
        values.insert("title".into(), Value::from_safe_string(title));
        // The tenant's look: its style sheet after the deployment's, its logo for ours; each
        // link carries the content's version past the assets' cache lifetime.
        let version = &self.look.version;
        if self.look.css.is_some() {
            values.insert("tenant_css".into(), Value::from(format!("{TENANT_CSS}?v={version}")));
        }
        // No logo of its own: base.html writes the deployment's, with nothing to look up.
        if let Some(l) = &self.look.logo {
            values.insert("brand_logo".into(), Value::from(format!("{}?v={version}", l.name)));
            values.insert("brand_logo_type".into(), Value::from(l.content_type));
        }
        if let Some(n) = &page.csp.nonce {
            values.insert("nonce".into(), Value::from(n.clone()));
        }
        let html = match self.pages.env.get_template(page.template).and_then(|t| t.render(Value::from_object(values))) {
            Ok(html) => html,
            Err(e) => {
                tracing::error!(template = page.template, error = %e, "a page could not be rendered");
                *res.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                "<!doctype html><title>Error</title><p>This page could not be shown.</p>".into()
            }
        };
        *res.body_mut() = axum::body::Body::from(html);
        let h = res.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert("x-frame-options", HeaderValue::from_static(if page.csp.framed_by_self { "SAMEORIGIN" } else { "DENY" }));
        h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
        if let Ok(v) = HeaderValue::from_str(&page.csp.header()) {
            h.insert("content-security-policy", v);
        }
        if let Ok(v) = HeaderValue::from_str(&lang) {
            h.insert(header::CONTENT_LANGUAGE, v);
        }
        h.insert(header::VARY, HeaderValue::from_static("accept-language"));
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Mail bodies are plain text from themeable templates: the catalogue's sentence with its
    /// values as they are (no HTML escaping), in the frame; a theme replaces the frame or one
    /// body, and a theme's broken mail template stops the start.
    #[test]
    fn mail_bodies_are_plain_text_and_themeable() {
        let ui = Ui::load(None, "Tom & Jerry's", "en").unwrap();
        let link = "https://id.example/login/reset?token=a&b=<c>";
        let body = ui.mail_body("fr", "mail_reset.txt", json!({"link": link, "minutes": "30"})).unwrap();
        assert!(body.contains("votre compte Tom & Jerry's") && body.contains(link) && body.ends_with("-- \nTom & Jerry's"), "{body}");
        assert!(!body.contains("&amp;") && !body.contains("&#"), "{body}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("templates")).unwrap();
        std::fs::write(dir.path().join("templates/mail.txt"), "Hello,\n\n{% block body %}{% endblock %}\n\nThe {{ product }} team").unwrap();
        std::fs::write(dir.path().join("templates/mail_verify.txt"), "{% extends \"mail.txt\" %}{% block body %}Confirm: {{ link }} ({{ hours }} h){% endblock %}").unwrap();
        let themed = Ui::load(Some(dir.path()), "Acme", "en").unwrap();
        assert_eq!(themed.mail_body("en", "mail_verify.txt", json!({"link": link, "hours": "24"})).unwrap(), format!("Hello,\n\nConfirm: {link} (24 h)\n\nThe Acme team"));
        let reset = themed.mail_body("en", "mail_reset.txt", json!({"link": link, "minutes": "30"})).unwrap();
        assert!(reset.starts_with("Hello,\n\nSomeone asked to reset the password of your Acme account"), "{reset}");
        std::fs::write(dir.path().join("templates/mail_reset.txt"), "{{ t(\"mail-reset-body\", link=link, minutes=minutes|frobnicate) }}").unwrap();
        assert!(Ui::load(Some(dir.path()), "Acme", "en").is_err(), "a broken mail template is found at start");
    }

    /// The console's pages render with the values their handlers give (a template mistake
    /// would otherwise show only as a 500 at run time).
    #[test]
    fn console_pages_render() {
        let ui = Ui::load(None, "Authrim", "en").unwrap();
        let event = json!({"at": "2026-11-25 10:00", "event": "client_created", "user": "u1", "client": "c 1", "address": null, "detail": "{\"by\":\"console\"}", "actor": {"kind": "user", "id": "u1", "name": "root", "linked": true}});
        let by_token = json!({"at": "", "event": "user_created", "actor": {"kind": "token"}});
        let by_nobody = json!({"at": "", "event": "login_failure", "actor": null});
        let common = |p: Page| p.with("nav", "home").with("me", "root").with("role", "admin").with("admin", true).with("csrf", "t");
        let pages = [
            common(Page::new(StatusCode::OK, "console_home.html", "console-title")).with("clients", 2).with("users", 1).with("algs", ["RS256"]).with("events", [&event]),
            common(Page::new(StatusCode::OK, "console_audit.html", "console-audit")).with("filter", json!({"limit": 100, "event": "login_success"})).with("event_kinds", ["login_success"]).with("events", [&event, &by_token, &by_nobody]).msg("error", "console-bad-day"),
            common(Page::new(StatusCode::OK, "console_client_type.html", "console-client-new")).with("types", ["web", "spa", "native", "m2m", "mcp", "saml"]),
            common(Page::new(StatusCode::BAD_REQUEST, "console_client.html", "console-client-new"))
                .with("client", json!({"type": "spa", "grant_types": ["authorization_code"], "method": "none"}))
                .with("new", true)
                .with("redirects", true)
                .with("grants", [json!({"value": "authorization_code", "key": "code"})])
                .with("methods", ["none"])
                .with("invalid", "redirect_uris")
                .msg("error", "console-refused")
                .msg("reason", Msg::new("console-uri-not-absolute").arg("uri", "/cb")),
            common(Page::new(StatusCode::OK, "console_created.html", "console-client-created")).with("issuer", "https://id.example").with("discovery", "https://id.example/.well-known/openid-configuration").with("client_id", "a").with("secret", "s").with("snippet", "OIDC_ISSUER=https://id.example"),
            common(Page::new(StatusCode::OK, "console_clients.html", "console-clients")).with("clients", [json!({"id": "a", "name": null, "method": "none", "grants": "x", "created": ""})]),
            common(Page::new(StatusCode::OK, "console_client.html", "console-client-title")).with("client", json!({"client_id": "a", "grant_types": ["refresh_token"], "method": "none"})).with("new", false).with("redirects", true).with("grants", [json!({"value": "refresh_token", "key": "refresh"})]).with("methods", ["none"]).with("has_secret", true),
            // With a provisioning target that failed last, as an admin sees it.
            common(Page::new(StatusCode::OK, "console_client.html", "console-client-title")).with("client", json!({"client_id": "a", "grant_types": ["refresh_token"], "method": "none"})).with("new", false).with("grants", [json!({"value": "refresh_token", "key": "refresh"})]).with("methods", ["none"])
                .with("provisioning", json!({"endpoint": "https://app.example/scim/v2", "users": "assigned", "enabled": false, "pending": 2, "provisioned": 7, "last_delivered_at": "", "last_error": "the server answered 401", "last_error_at": "2026-01-01T00:00:00Z"}))
                .with("provisioning_scopes", ["assigned", "all"]),
            // A client's roles (a refused assignment shown again), and its groups claim.
            common(Page::new(StatusCode::BAD_REQUEST, "console_client.html", "console-client-title"))
                .with("client", json!({"client_id": "a", "grant_types": [], "method": "none", "groups_claim": "ids", "groups_assigned_only": true, "groups_prefixes": "app-", "groups_claim_name": "teams"}))
                .with("new", false).with("redirects", true).with("grants", Vec::<serde_json::Value>::new()).with("methods", ["none"])
                .with("roles", [json!({"role": "read", "description": "Reads", "total": 3, "assignees": [{"kind": "users", "id": "u1", "name": "bob", "href": "/console/users/u1"}, {"kind": "groups", "id": "g1", "name": "Staff", "href": "/console/groups/g1"}]}), json!({"role": "write", "description": "", "total": 0, "assignees": []})])
                .with("typed_for", "assign-read").with("typed_kind", "groups").with("typed_member", "Nobody").msg("error", "console-refused"),
            common(Page::new(StatusCode::OK, "console_secret.html", "console-secret-title")).with("client_id", "a").with("secret", "s").with("created", true),
            // A SAML service provider: new (a refused metadata shown again), and its own page.
            common(Page::new(StatusCode::BAD_REQUEST, "console_saml.html", "console-saml-new")).with("client", json!({"metadata": "<x/>", "sign_response": true})).with("new", true)
                .with("formats", [json!({"value": "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "short": "persistent"})]).with("claims", ["email"]).with("invalid", "metadata").msg("error", "console-refused"),
            common(Page::new(StatusCode::OK, "console_saml.html", "console-client-title")).with("client", json!({"client_id": "a", "entity_id": "https://sp.example", "acs": ["https://sp.example/acs"], "attributes": "mail=email", "idp_initiated": true}))
                .with("new", false).with("formats", Vec::<serde_json::Value>::new()).with("claims", ["email"]).with("roles", Vec::<serde_json::Value>::new()),
            common(Page::new(StatusCode::OK, "console_users.html", "console-users")).with("users", [json!({"id": "u", "username": "x", "roles": "admin", "disabled": false})]).with("q", "").with("total", 1).with("shown", 1),
            common(Page::new(StatusCode::OK, "console_user.html", "console-user-title"))
                .with("user", json!({"id": "u", "username": "x", "roles": ["admin"], "updated": "2026-01-01 00:00"}))
                .with("new", false)
                .with("all_roles", ["admin", "auditor"])
                .with("factors", [json!({"id": "f", "name": "Phone", "kind": "totp", "added": "", "used": ""})])
                .with("sessions", [json!({"sid": "s", "signed_in": "", "amr": "pwd", "clients": ""})])
                .with("recovery_codes_left", 0)
                .with("directory", json!({"direct": [{"id": "g1", "name": "Staff"}], "groups": [{"id": "g1", "name": "Staff"}, {"id": "g2", "name": "All"}], "roles": [{"client": "rp", "client_name": null, "roles": "read write"}]})),
            common(Page::new(StatusCode::OK, "console_groups.html", "console-groups"))
                .with("groups", [json!({"id": "g1", "name": "Staff", "external_id": null, "members": 2})]).with("q", "").with("total", 1).with("shown", 1).with("group", json!({"name": "Typed"})),
            common(Page::new(StatusCode::OK, "console_group.html", "console-group"))
                .with("group", json!({"id": "g1", "name": "Staff", "external_id": "E-1", "created": "2026-01-01T00:00:00Z"})).with("total", 3).with("shown", 2)
                .with("members", [json!({"kind": "users", "id": "u1", "name": "bob", "email": "bob@example.com", "href": "/console/users/u1", "directory": "corp"}), json!({"kind": "groups", "id": "g2", "name": "Team", "href": "/console/groups/g2"})])
                .with("parents", [json!({"kind": "groups", "id": "g0", "name": "All", "href": "/console/groups/g0"})]).with("typed_for", "member").with("typed_kind", "users").with("typed_member", "nobody"),
            // As an auditor sees it: no forms.
            common(Page::new(StatusCode::OK, "console_group.html", "console-group")).with("admin", false).with("group", json!({"id": "g1", "name": "Staff", "external_id": null, "created": ""}))
                .with("members", Vec::<serde_json::Value>::new()).with("total", 0).with("shown", 0).with("parents", Vec::<serde_json::Value>::new()),
            common(Page::new(StatusCode::OK, "console_keys.html", "console-keys")).with("keys", [json!({"kid": "k", "alg": "RS256", "state": "next", "created": "", "activated": "", "retired": ""})]).with("algs", ["RS256"]).with("publish_delay", 600),
            common(Page::new(StatusCode::OK, "console_tenants.html", "console-tenants"))
                .with("tenants", [json!({"slug": "acme", "issuer": "https://id.example/t/acme", "state": "active", "hosts": "", "name": "Acme", "created": ""}), json!({"slug": "old", "issuer": null, "state": "disabled", "hosts": "", "name": null, "created": ""})])
                .with("deployment", true),
            common(Page::new(StatusCode::OK, "console_tenant.html", "console-tenant-settings-title"))
                .with("tn", json!({"slug": "acme", "issuer": "https://id.example/t/acme", "state": "active"}))
                .with("settings", json!({"product_name": "Acme", "default_locale": "fr", "css": ":root {}", "logo": {"type": "image/png", "bytes": 12}, "signup": "on", "mfa_policy": "required", "upstreams": 1, "resource_servers": 0}))
                .with("languages", ["en", "fr", "ja"])
                .with("mfa_policies", ["optional", "required", "passkey"]),
            common(Page::new(StatusCode::OK, "console_organizations.html", "console-organizations"))
                .with("orgs", [json!({"id": "org_1", "slug": "acme", "display_name": "Acme", "domains": ["acme.example"], "upstream": "idp", "upstream_name": "IdP", "members": 2})])
                .with("upstreams", [json!({"id": "idp", "name": "IdP"})])
                .with("org", json!({"slug": "x", "upstream": "gone", "domains": ["a.example"]})),
            common(Page::new(StatusCode::OK, "console_organizations.html", "console-organizations")).with("orgs", Vec::<serde_json::Value>::new()).with("upstreams", [json!({"id": "idp", "name": "IdP"})]).with("org", json!({})),
            common(Page::new(StatusCode::OK, "console_organization.html", "console-organization"))
                .with("org", json!({"id": "org_1", "slug": "acme", "display_name": "Acme", "domains": [], "upstream": "gone", "upstream_name": "gone", "members": 1}))
                .with("members", [json!({"id": "u1", "username": "bob", "email": null, "roles": "admin", "joined": "2026-01-01T00:00:00Z", "me": true})])
                .with("upstreams", [json!({"id": "idp", "name": "IdP"})])
                .with("can_edit", true)
                .with("can_members", true),
            common(Page::new(StatusCode::OK, "console_organization.html", "console-organization"))
                .with("org", json!({"id": "org_1", "slug": "acme", "display_name": "Acme", "domains": ["acme.example"], "upstream": null, "members": 1}))
                .with("members", [json!({"id": "u1", "username": null, "roles": "", "joined": "", "me": false})])
                .with("org_admin", true)
                .with("can_members", true),
            common(Page::new(StatusCode::OK, "console_credentials.html", "console-credentials"))
                .with("credentials", [json!({"id": "0a", "name": "ci", "created": "2026-01-01T00:00:00Z", "expires": null, "revoked": null, "state": "active"}), json!({"id": "0b", "name": "old", "created": "2026-01-01T00:00:00Z", "expires": "2026-02-01T00:00:00Z", "revoked": "2026-01-02T00:00:00Z", "state": "revoked"})]),
            common(Page::new(StatusCode::OK, "console_credential.html", "console-credential-created")).with("name", "ci").with("id", "0a").with("expires", None::<String>).with("token", "atk_0a_s"),
            Page::new(StatusCode::OK, "console_message.html", "console-denied-heading").msg("heading", "console-denied-heading").msg("message", Msg::new("console-denied").arg("user", "<x>")).with("link", "/").msg("link_text", "error-home"),
        ];
        for page in pages {
            let name = page.template;
            let rendered = ui.pages.env.get_template(name).and_then(|t| t.render(minijinja::context! { lang => "ja", product => "A", title => "T", ..Value::from_serialize(&page.ctx) }));
            assert!(rendered.is_ok(), "{name}: {:?}", rendered.err());
            if let Some(field) = page.ctx.get("invalid").and_then(|v| v.as_str()) {
                // The field marked, as markup (not escaped text).
                let marked = format!(r#"id="{field}" name="{field}""#);
                let html = rendered.as_ref().unwrap();
                let tag = html.split(&marked).nth(1).and_then(|rest| rest.split('>').next()).unwrap_or_default();
                assert!(tag.contains(r#"aria-invalid="true""#), "{name}: {field} not marked: {html}");
            }
            let res = ui.render(StatusCode::OK.into_response(), page, Some("ja"), "/tenant1");
            assert_eq!(res.status(), StatusCode::OK, "{name}");
        }
    }
}
