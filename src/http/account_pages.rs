//! The account page's pages (`endpoints::account`): the overview of the user's sign-in
//! methods, and the steps that add one (templates `account*.html`).

use crate::factors::FactorInfo;
use crate::http::pages::{passkey_form, PasskeyForm};
use crate::ui::{Msg, Page};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub struct Overview<'a> {
    pub username: &'a str,
    pub factors: &'a [FactorInfo],
    pub recovery_codes_left: usize,
    pub passkeys: bool,
    /// Why there is no "Add a passkey" (`factors::passkey::Off::page_value`).
    pub passkeys_off: Option<serde_json::Value>,
    pub csrf: &'a str,
    /// A message id.
    pub notice: Option<&'static str>,
    /// Signed in recently enough to change sign-in methods without signing in again.
    pub recent: bool,
    /// Upstream providers: (id, name, the linked identity's e-mail or subject if linked).
    pub providers: Vec<(String, String, Option<String>)>,
    /// The user's e-mail address and whether it is verified.
    pub email: Option<(&'a str, bool)>,
    /// A verification link can be sent for it (mail is configured, it is not verified).
    pub can_verify: bool,
    /// The user's live sessions (`endpoints::account::access::sessions`).
    pub sessions: Vec<serde_json::Value>,
    /// The applications the user allowed (`endpoints::account::access::applications`).
    pub applications: Vec<serde_json::Value>,
    /// Sign-in requests waiting for the user (`endpoints::account::requests::listed`).
    pub requests: Vec<serde_json::Value>,
    /// The user set a CIBA user code (`ciba::user_code`).
    pub user_code_set: bool,
}

/// What `?done=` on the overview says (a message id).
pub fn notice(done: &str) -> Option<&'static str> {
    match done {
        "passkey" => Some("notice-passkey"),
        "totp" => Some("notice-totp"),
        "removed" => Some("notice-removed"),
        "password" => Some("notice-password"),
        "linked" => Some("notice-linked"),
        "profile" => Some("notice-profile"),
        "unlinked" => Some("notice-unlinked"),
        "profile-verify" => Some("notice-profile-verify"),
        "verify-sent" => Some("notice-verify-sent"),
        "session-ended" => Some("notice-session-ended"),
        "withdrawn" => Some("notice-withdrawn"),
        "request-approved" => Some("notice-request-approved"),
        "request-denied" => Some("notice-request-denied"),
        "user-code" => Some("notice-user-code"),
        "user-code-removed" => Some("notice-user-code-removed"),
        "user-code-invalid" => Some("notice-user-code-invalid"),
        _ => None,
    }
}

/// A day as `YYYY-MM-DD` (UTC); empty for never.
pub fn date(t: u64) -> String {
    if t == 0 {
        return String::new();
    }
    let (y, m, d) = civil(t);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A moment as `YYYY-MM-DD HH:MM UTC`; empty for never.
pub fn date_time(t: u64) -> String {
    if t == 0 {
        return String::new();
    }
    format!("{} {:02}:{:02} UTC", date(t), t % 86_400 / 3600, t % 3600 / 60)
}

/// A moment as ISO 8601 (`YYYY-MM-DDTHH:MM:SSZ`), for `<time datetime>`; empty for never.
pub fn iso(t: u64) -> String {
    if t == 0 {
        return String::new();
    }
    format!("{}T{:02}:{:02}:{:02}Z", date(t), t % 86_400 / 3600, t % 3600 / 60, t % 60)
}

/// Seconds since the epoch to (year, month, day), UTC.
fn civil(t: u64) -> (i64, i64, i64) {
    crate::util::civil(t)
}

pub fn overview(p: Overview<'_>) -> Response {
    let factors: Vec<_> = p
        .factors
        .iter()
        .map(|f| json!({"id": f.id, "name": f.name, "kind": f.kind, "added": date(f.created_at), "used": date(f.last_used_at)}))
        .collect();
    let mut page = Page::new(StatusCode::OK, "account.html", "account-title")
        .with("username", p.username)
        .with("factors", factors)
        .with("recovery_codes_left", p.recovery_codes_left)
        .with("passkeys", p.passkeys)
        .with("passkeys_off", p.passkeys_off)
        .with("csrf", p.csrf)
        .with("recent", p.recent)
        .with("email", p.email.map(|(e, _)| e))
        .with("email_verified", p.email.is_some_and(|(_, v)| v))
        .with("can_verify", p.can_verify)
        .with("sessions", p.sessions)
        .with("applications", p.applications)
        .with("requests", p.requests)
        .with("user_code_set", p.user_code_set)
        .with("providers", p.providers.iter().map(|(id, name, linked)| json!({"id": id, "name": name, "linked": linked})).collect::<Vec<_>>());
    if let Some(n) = p.notice {
        page = page.msg("notice", n);
    }
    page.into_response()
}

/// Changes need a recent sign-in.
pub fn reauthenticate(max_age: u64) -> Response {
    Page::new(StatusCode::FORBIDDEN, "account_reauth.html", "reauth-title").with("minutes", max_age.div_ceil(60)).into_response()
}

fn message(status: StatusCode, title: &'static str, heading: &'static str, message: &'static str, is_error: bool, link: (&str, &'static str)) -> Response {
    Page::new(status, "account_message.html", title)
        .msg("heading", heading)
        .msg("message", message)
        .with("is_error", is_error)
        .with("link_href", link.0)
        .msg("link_text", link.1)
        .into_response()
}

/// The account sign-in did not complete.
pub fn not_signed_in() -> Response {
    message(StatusCode::BAD_REQUEST, "not-signed-in-title", "not-signed-in-heading", "not-signed-in-body", false, ("/account/login", "not-signed-in-link"))
}

/// The link of `endpoints::account::email` was confirmed.
pub fn email_verified() -> Response {
    message(StatusCode::OK, "verify-email-title", "verify-email-done-heading", "verify-email-done", false, ("/account", "back-to-account"))
}

/// A step that did not work (`why`: a message id), with a way back.
pub fn failed(why: &'static str) -> Response {
    message(StatusCode::BAD_REQUEST, "failed-title", "failed-heading", why, true, ("/account", "back-to-account"))
}

/// Registering a passkey: the ceremony runs when the button is pressed.
pub fn passkey_setup(options: &str, state: &str, csrf: &str) -> Response {
    let mut pk = passkey_form("/account/passkeys", "create", false, &PasskeyForm { options, state }, &[("csrf", csrf)], "passkey-create");
    pk["name_field"] = true.into();
    pk["class"] = "primary".into();
    Page::new(StatusCode::OK, "account_passkey.html", "passkey-setup-title").with("pk", pk).into_response()
}

/// Adding an authenticator app: the QR code (and the secret, for typing), then its first code.
/// `error`: a message id.
pub fn totp_setup(uri: &str, secret: &str, state: &str, csrf: &str, error: Option<&'static str>, status: StatusCode) -> Response {
    let qr = qrcode::QrCode::new(uri.as_bytes())
        .map(|c| c.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build())
        .unwrap_or_default();
    // The renderer's output starts with an XML declaration, which HTML does not take. The
    // SVG is ours (rectangles made from the URI's modules), inserted as it is; its accessible
    // name is the template's (localised) `#qr-label`.
    let svg = qr.find("<svg").map(|i| qr[i..].replacen("<svg", "<svg role=\"img\" aria-labelledby=\"qr-label\"", 1)).unwrap_or_default();
    let grouped: String = secret.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" ");
    let mut page = Page::new(status, "account_totp.html", "totp-title")
        .with("qr", svg)
        .with("key", grouped)
        .with("state", state)
        .with("csrf", csrf);
    if let Some(e) = error {
        page = page.msg("error", Msg::new(e));
    }
    page.into_response()
}

/// Changing the password: the current one, the new one twice. `error`: a message id.
/// `min`: the password policy's shortest password (in the label and the refusal).
pub fn password_form(csrf: &str, min: usize, error: Option<&'static str>, status: StatusCode) -> Response {
    let mut page = Page::new(status, "account_password.html", "password-title").with("csrf", csrf).with("min", min);
    if let Some(e) = error {
        page = page.msg("error", Msg::new(e).arg("min", min.to_string()));
    }
    page.into_response()
}

/// New recovery codes, shown this once; `sealed`: the same codes sealed to the session, for
/// the download form, with its CSRF token.
pub fn recovery_codes(codes: &[String], sealed: &str, csrf: &str) -> Response {
    Page::new(StatusCode::OK, "account_recovery.html", "recovery-title").with("codes", codes).with("sealed", sealed).with("csrf", csrf).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(super::date(0), "");
        assert_eq!(super::date(1_700_000_000), "2023-11-14");
        assert_eq!(super::date(951_782_400), "2000-02-29");
        assert_eq!(super::date_time(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(super::iso(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!((super::date_time(0), super::iso(0)), (String::new(), String::new()));
    }
}
