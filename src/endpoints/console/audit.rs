//! The audit log in the console, filtered by event, user, client and day.

use super::{text, Viewer};
use crate::app::AppState;
use crate::audit::{AuditEvent, Filter};
use crate::http::params::Params;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// Rows for a page: the time readable, the detail as compact JSON; a client linked only if
/// it has a page (a registered client, not Authrim's own pages or a deleted one).
pub(crate) fn rows(app: &crate::app::App, events: &[AuditEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|e| {
            let detail = if e.detail.is_null() { String::new() } else { e.detail.to_string() };
            let linked = e.client_id.as_deref().is_some_and(|c| app.registry.client(c).is_some());
            // A user shown by name while they exist (the id stays in the link and the filter).
            let name = e.user_id.as_deref().and_then(|u| app.registry.user(u)).map(|u| u.username.clone());
            json!({"at": super::when(e.at), "event": e.event, "user": e.user_id, "user_name": name, "client": e.client_id, "client_linked": linked, "address": e.address, "detail": detail})
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

pub async fn list(State(app): State<AppState>, viewer: Viewer, RawQuery(query): RawQuery) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or_default().as_bytes()).unwrap_or_default();
    let limit = params.get("limit").and_then(|l| l.parse::<u32>().ok()).unwrap_or(100).clamp(1, 1000);
    let since = text(&params, "since");
    let filter = Filter {
        limit,
        event: text(&params, "event"),
        user_id: text(&params, "user"),
        client_id: text(&params, "client"),
        since: since.as_deref().and_then(day_start),
    };
    let shown = json!({"event": filter.event, "user": filter.user_id, "client": filter.client_id, "since": since, "limit": limit});
    let bad_day = since.is_some() && filter.since.is_none();
    app.audit.flush().await;
    let events = match app.db.read(move |sql| crate::audit::list_filtered(sql, &filter)).await {
        Ok(e) => e,
        Err(e) => return crate::endpoints::authorize::unavailable(e),
    };
    let mut page = viewer.page("console_audit.html", "console-audit", "audit").with("filter", shown).with("events", rows(&app, &events));
    if bad_day {
        page = page.msg("error", "console-bad-day");
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
