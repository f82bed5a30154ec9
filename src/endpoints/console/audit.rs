//! The audit log in the console, filtered by event (a list of every kind the code records),
//! user (username, e-mail or id), client (id or name) and day; each event's actor by name.

use super::{text, Viewer};
use crate::audit::{Acting, AuditEvent, Filter};
use crate::http::params::Params;
use crate::tenant::Issuer;
use crate::ui::Msg;
use axum::extract::RawQuery;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// Who did it: from the detail's `by` (and `admin`, the console's user), else whom the event's
/// kind names (`audit::EVENTS`). `kind` picks the words (or the link) the page shows.
fn actor(app: &Issuer, e: &AuditEvent) -> Value {
    let user = |id: Option<&str>| match id {
        Some(id) => {
            let name = app.registry().user(id).map(|u| u.username.clone());
            json!({"kind": "user", "id": id, "name": name, "linked": name.is_some()})
        }
        None => Value::Null,
    };
    match e.detail.get("by").and_then(Value::as_str) {
        Some("console") => user(e.detail.get("admin").and_then(Value::as_str)),
        Some("operator") => json!({"kind": "token"}),
        Some("cli") => json!({"kind": "cli"}),
        Some("bootstrap") => json!({"kind": "bootstrap"}),
        // The user themselves: on their account page, signing up, through a link or a provider.
        Some(_) => user(e.user_id.as_deref()),
        None => match crate::audit::acting(&e.event) {
            Acting::User => user(e.user_id.as_deref()),
            Acting::Client => match e.client_id.as_deref() {
                Some(c) => {
                    let client = app.registry().client(c);
                    let name = client.as_ref().and_then(|k| k.meta.client_name.clone()).unwrap_or_else(|| c.to_string());
                    json!({"kind": "client", "id": c, "name": name, "linked": client.is_some()})
                }
                None => Value::Null,
            },
            Acting::Operator => json!({"kind": "token"}),
            Acting::Server => json!({"kind": "server"}),
        },
    }
}

/// Rows for a page: the time in ISO 8601 (UTC; `ui.js` shows it in the browser's zone), the
/// actor by name, the detail as compact JSON; a client linked only if it has a page (a
/// registered client, not Authrim's own pages or a deleted one).
pub(crate) fn rows(app: &Issuer, events: &[AuditEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|e| {
            let detail = if e.detail.is_null() { String::new() } else { e.detail.to_string() };
            let linked = e.client_id.as_deref().is_some_and(|c| app.registry().client(c).is_some());
            // A user shown by name while they exist (the id stays in the link and the filter).
            let name = e.user_id.as_deref().and_then(|u| app.registry().user(u)).map(|u| u.username.clone());
            json!({"at": super::when(e.at), "event": e.event, "user": e.user_id, "user_name": name, "client": e.client_id,
                   "client_linked": linked, "actor": actor(app, e), "address": e.address, "detail": detail})
        })
        .collect()
}

/// `YYYY-MM-DD` as the first second of that day (UTC).
fn day_start(day: &str) -> Option<u64> {
    let mut parts = day.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(((era * 146_097 + doe - 719_468) * 86_400) as u64)
}

/// The user a filter names (username, e-mail or id) as the id the log holds; a name of no
/// current user is taken as an id (a deleted user's events stay findable). `false`: nobody
/// now has that name or id.
pub(crate) fn user_filter(app: &Issuer, typed: &str) -> (String, bool) {
    match app.registry().find_user(typed) {
        Some(u) => (u.id.clone(), true),
        None => (typed.to_string(), false),
    }
}

/// The client a filter names: its id, else the one client of that name (any case).
pub(crate) fn client_filter(app: &Issuer, typed: &str) -> (String, bool) {
    if app.registry().client(typed).is_some() {
        return (typed.to_string(), true);
    }
    let lower = typed.to_lowercase();
    let named: Vec<_> = app.registry().list_clients().into_iter().filter(|c| c.meta.client_name.as_deref().is_some_and(|n| n.to_lowercase() == lower)).collect();
    match named.as_slice() {
        [one] => (one.id().to_string(), true),
        _ => (typed.to_string(), false),
    }
}

pub async fn list(app: Issuer, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or_default().as_bytes()).unwrap_or_default();
    let limit = params.get("limit").and_then(|l| l.parse::<u32>().ok()).unwrap_or(100).clamp(1, 1000);
    let since = text(&params, "since");
    let (user, client) = (text(&params, "user"), text(&params, "client"));
    let user_found = user.as_deref().map(|u| user_filter(&app, u));
    let client_found = client.as_deref().map(|c| client_filter(&app, c));
    // An event kind not in the list matches nothing: said so, like an unknown user.
    let event = text(&params, "event");
    let unknown_event = event.as_deref().is_some_and(|e| !crate::audit::EVENTS.iter().any(|(n, _)| *n == e));
    let filter = Filter {
        tenant: app.tenant.id,
        limit,
        event: event.clone(),
        user_id: user_found.as_ref().map(|(id, _)| id.clone()),
        client_id: client_found.as_ref().map(|(id, _)| id.clone()),
        since: since.as_deref().and_then(day_start),
    };
    let shown = json!({"event": event, "user": user, "client": client, "since": since, "limit": limit});
    let bad_day = since.is_some() && filter.since.is_none();
    app.audit.flush().await;
    let events = match app.db.read(move |sql| crate::audit::list_filtered(sql, &filter)).await {
        Ok(e) => e,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let events_list: Vec<&str> = crate::audit::EVENTS.iter().map(|(n, _)| *n).collect();
    let mut page = viewer
        .page("console_audit.html", "console-audit", "audit")
        .with("filter", shown)
        .with("event_kinds", events_list)
        .with("events", rows(&app, &events));
    if bad_day {
        page = page.msg("error", "console-bad-day");
    }
    // Nothing found for a name nobody has: say why the list is empty (not an error).
    if events.is_empty() {
        if let (Some(typed), Some((_, false))) = (&user, &user_found) {
            page = page.msg("notice", Msg::new("console-no-such-user").arg("user", typed.clone()));
        } else if let (Some(typed), Some((_, false))) = (&client, &client_found) {
            page = page.msg("notice", Msg::new("console-no-such-client").arg("client", typed.clone()));
        } else if unknown_event {
            page = page.msg("notice", Msg::new("console-no-such-event").arg("event", event.clone().unwrap_or_default()));
        }
    }
    page.into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn day_start_is_the_inverse_of_the_pages_date() {
        for t in [0u64, 86_400 * 59, 951_782_400, 1_700_000_000 - 1_700_000_000 % 86_400, 4_102_444_800] {
            let day = crate::http::account_pages::date(t.max(1));
            assert_eq!(super::day_start(&day), Some(t), "{day}");
        }
        assert_eq!(super::day_start("2026-13-01"), None);
        assert_eq!(super::day_start("yesterday"), None);
    }
}
