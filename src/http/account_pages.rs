//! The account page's pages (`endpoints::account`): the overview of the user's sign-in
//! methods, and the steps that add one. Plain forms; the passkey steps use the one script.

use crate::factors::FactorInfo;
use crate::http::pages::{html, html_with_passkeys, passkey_form, PasskeyForm};
use crate::util::html_escape as e;
use axum::http::StatusCode;
use axum::response::Response;

pub struct Overview<'a> {
    pub username: &'a str,
    pub factors: &'a [FactorInfo],
    pub recovery_codes_left: usize,
    pub passkeys: bool,
    pub csrf: &'a str,
    pub notice: Option<&'static str>,
    /// Signed in recently enough to change sign-in methods without signing in again.
    pub recent: bool,
}

/// What `?done=` on the overview says.
pub fn notice(done: &str) -> Option<&'static str> {
    match done {
        "passkey" => Some("Your passkey was added."),
        "totp" => Some("Your authenticator app was added."),
        "removed" => Some("The sign-in method was removed."),
        _ => None,
    }
}

fn kind_name(kind: &str) -> &'static str {
    match kind {
        "passkey" => "Passkey",
        "totp" => "Authenticator app",
        _ => "Sign-in method",
    }
}

fn date(t: u64) -> String {
    if t == 0 {
        return "never".into();
    }
    // Days since the epoch to a civil date (Howard Hinnant's algorithm), UTC.
    let days = (t / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn csrf_field(csrf: &str) -> String {
    format!("<input type=\"hidden\" name=\"csrf\" value=\"{}\">", e(csrf))
}

pub fn overview(p: Overview<'_>) -> Response {
    let csrf = csrf_field(p.csrf);
    let notice = p.notice.map(|n| format!("<p class=\"notice\" role=\"status\">{}</p>", e(n))).unwrap_or_default();
    let rows: String = p
        .factors
        .iter()
        .map(|f| {
            format!(
                "<li><strong>{name}</strong> <span class=\"muted\">{kind} · added {added} · last used {used}</span>\
                 <form method=\"post\" action=\"/account/factors/remove\" class=\"inline\">{csrf}\
                 <input type=\"hidden\" name=\"id\" value=\"{id}\"><button type=\"submit\" aria-label=\"Remove {name}\">Remove</button></form></li>",
                name = e(&f.name),
                kind = kind_name(&f.kind),
                added = date(f.created_at),
                used = date(f.last_used_at),
                id = e(&f.id),
            )
        })
        .collect();
    let list = match rows.is_empty() {
        true => "<p>You sign in with your password only.</p>".to_string(),
        false => format!("<ul class=\"factors\">{rows}</ul>"),
    };
    let passkey = match p.passkeys {
        true => format!("<form method=\"post\" action=\"/account/passkeys/new\">{csrf}<button type=\"submit\">Add a passkey</button></form>"),
        false => String::new(),
    };
    let reauth = match p.recent {
        true => String::new(),
        false => "<p class=\"muted\">Changes ask you to sign in again first, since you signed in a while ago.</p>".into(),
    };
    html(
        StatusCode::OK,
        "Your account",
        &format!(
            "<h1>Your account</h1><p class=\"muted\">Signed in as {user}</p>{notice}\
             <h2>Sign-in methods</h2>{list}{reauth}{passkey}\
             <form method=\"post\" action=\"/account/totp/new\">{csrf}<button type=\"submit\">Add an authenticator app</button></form>\
             <h2>Recovery codes</h2><p>{left} unused recovery codes. Each signs you in once if you lose your other methods.</p>\
             <form method=\"post\" action=\"/account/recovery-codes\">{csrf}<button type=\"submit\">Make new recovery codes</button></form>\
             <p><a href=\"/logout\">Sign out</a></p>",
            user = e(p.username),
            left = p.recovery_codes_left,
        ),
    )
}

/// Changes need a recent sign-in.
pub fn reauthenticate(max_age: u64) -> Response {
    html(
        StatusCode::FORBIDDEN,
        "Sign in again",
        &format!(
            "<h1>Confirm it is you</h1><p>To change how you sign in, sign in again first (your last sign-in was more than {} minutes ago).</p>\
             <p><a href=\"/account/login?reauth=1\">Sign in again</a> · <a href=\"/account\">Back to your account</a></p>",
            max_age.div_ceil(60)
        ),
    )
}

/// The account sign-in did not complete.
pub fn not_signed_in() -> Response {
    html(
        StatusCode::BAD_REQUEST,
        "Not signed in",
        "<h1>You are not signed in</h1><p>The sign-in did not complete, or its link was already used.</p><p><a href=\"/account/login\">Sign in to your account</a></p>",
    )
}

/// A step that did not work, with a way back.
pub fn failed(message: &str) -> Response {
    html(
        StatusCode::BAD_REQUEST,
        "Not changed",
        &format!("<h1>Nothing was changed</h1><p class=\"error\" role=\"alert\">{}</p><p><a href=\"/account\">Back to your account</a></p>", e(message)),
    )
}

/// Registering a passkey: the ceremony runs when the button is pressed.
pub fn passkey_setup(options: &str, state: &str, csrf: &str, error: Option<&str>) -> Response {
    let error = error.map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>", e(m))).unwrap_or_default();
    let name = "<label for=\"name\">Name for this passkey</label><input type=\"text\" id=\"name\" name=\"name\" maxlength=\"64\" placeholder=\"My laptop\">";
    let form = passkey_form("/account/passkeys", "create", false, &PasskeyForm { options, state }, &[("csrf", csrf)], name, "Create the passkey");
    html_with_passkeys(
        StatusCode::OK,
        "Add a passkey",
        &format!(
            "<h1>Add a passkey</h1>{error}<p>Your device will ask you to confirm with your screen lock, fingerprint or security key.</p>{form}\
             <noscript><p class=\"error\">Passkeys need JavaScript in this browser.</p></noscript>\
             <p><a href=\"/account\">Cancel</a></p>"
        ),
    )
}

/// Adding an authenticator app: the QR code (and the secret, for typing), then its first code.
pub fn totp_setup(uri: &str, secret: &str, state: &str, csrf: &str, error: Option<&str>, status: StatusCode) -> Response {
    let error = error.map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>", e(m))).unwrap_or_default();
    let qr = qrcode::QrCode::new(uri.as_bytes())
        .map(|c| c.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build())
        .unwrap_or_default();
    // The renderer's output starts with an XML declaration, which HTML does not take.
    let svg = qr.find("<svg").map(|i| &qr[i..]).unwrap_or("");
    let svg = svg.replacen("<svg", "<svg role=\"img\" aria-label=\"QR code of the secret for your authenticator app\"", 1);
    let grouped: String = secret.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" ");
    html(
        status,
        "Add an authenticator app",
        &format!(
            "<h1>Add an authenticator app</h1>{error}<p>Scan this code with your authenticator app:</p><div class=\"qr\">{svg}</div>\
             <p class=\"muted\">Or type this key: <code>{grouped}</code></p>\
             <form method=\"post\" action=\"/account/totp\">{csrf}<input type=\"hidden\" name=\"totp_state\" value=\"{state}\">\
             <label for=\"code\">The 6-digit code your app shows</label>\
             <input type=\"text\" id=\"code\" name=\"code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" pattern=\"[0-9 ]*\" required autofocus>\
             <label for=\"name\">Name for this app</label><input type=\"text\" id=\"name\" name=\"name\" maxlength=\"64\" placeholder=\"Phone\">\
             <button type=\"submit\">Add</button></form><p><a href=\"/account\">Cancel</a></p>",
            csrf = csrf_field(csrf),
            grouped = e(&grouped),
            state = e(state),
        ),
    )
}

/// New recovery codes, shown this once.
pub fn recovery_codes(codes: &[String]) -> Response {
    let items: String = codes.iter().map(|c| format!("<li><code>{}</code></li>", e(c))).collect();
    html(
        StatusCode::OK,
        "Recovery codes",
        &format!(
            "<h1>Your recovery codes</h1><p>Keep these somewhere safe: each signs you in once. They are shown only now; the earlier codes no longer work.</p>\
             <ul class=\"codes\">{items}</ul><p><a href=\"/account\">Done</a></p>"
        ),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(super::date(0), "never");
        assert_eq!(super::date(1_700_000_000), "2023-11-14");
        assert_eq!(super::date(951_782_400), "2000-02-29");
    }
}
