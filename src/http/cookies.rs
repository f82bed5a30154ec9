//! The cookies Authrim sets: `authrim_session` (the login session) and `authrim_browser`
//! (a random per-browser value that login challenges are bound to, against login CSRF), both
//! HttpOnly, SameSite=Lax, Secure when the issuer is https; and `authrim_opbs`, the session
//! management iframe's browser state (`endpoints::check_session`), which its script reads.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;

pub const SESSION: &str = "authrim_session";
pub const BROWSER: &str = "authrim_browser";

pub fn get<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// Set cookie `name`, scoped to `base` (the issuer's path, `Issuer::base`): under an issuer with
/// a path the cookie goes only to it, not to whatever else the host serves.
pub fn set(res: &mut Response, base: &str, name: &str, value: &str, max_age: Option<u64>, secure: bool) {
    let path = if base.is_empty() { "/" } else { base };
    let mut c = format!("{name}={value}; Path={path}; HttpOnly; SameSite=Lax");
    if let Some(age) = max_age {
        c.push_str(&format!("; Max-Age={age}"));
    }
    if secure {
        c.push_str("; Secure");
    }
    if let Ok(v) = HeaderValue::from_str(&c) {
        res.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// Set cookie `name` for a script of ours to read (`endpoints::check_session`): not
/// HttpOnly, and, under an https issuer, `SameSite=None; Secure` so that our iframe in another
/// site's page can read it.
pub fn set_script_readable(res: &mut Response, base: &str, name: &str, value: &str, max_age: u64, secure: bool) {
    let path = if base.is_empty() { "/" } else { base };
    let same_site = if secure { "None; Secure" } else { "Lax" };
    if let Ok(v) = HeaderValue::from_str(&format!("{name}={value}; Path={path}; SameSite={same_site}; Max-Age={max_age}")) {
        res.headers_mut().append(header::SET_COOKIE, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_cookie_among_several() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; authrim_session=3_abc; b=2"));
        assert_eq!(get(&h, SESSION), Some("3_abc"));
        assert_eq!(get(&h, BROWSER), None);
    }
}
