//! Choosing a page's language: the request's `ui_locales` (space-separated BCP 47 tags, in
//! order of preference), then `Accept-Language` (RFC 9110 §12.5.4: tags with weights), each
//! matched to a catalogue exactly or by its primary language (`ja-JP` reads `ja`).

/// The most tags looked at in either input: what a browser sends is a handful.
const MAX_TAGS: usize = 16;

/// The supported language the reader prefers, if any.
pub fn negotiate<'a>(ui_locales: Option<&str>, accept_language: Option<&str>, supported: &'a [String]) -> Option<&'a str> {
    let from_request = ui_locales.into_iter().flat_map(|s| s.split_ascii_whitespace()).take(MAX_TAGS).find_map(|t| matching(t, supported));
    from_request.or_else(|| accept_language.and_then(|h| preferred(h).into_iter().find_map(|t| matching(&t, supported))))
}

/// `Accept-Language`'s tags, most wanted first (q=0 ones left out; equal weights keep order).
fn preferred(header: &str) -> Vec<String> {
    let mut tags: Vec<(String, u16)> = header
        .split(',')
        .take(MAX_TAGS)
        .filter_map(|item| {
            let mut parts = item.split(';');
            let tag = parts.next()?.trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q=").map(str::to_string))
                .map_or(1000, |q| (q.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0) * 1000.0) as u16);
            (!tag.is_empty() && tag != "*" && q > 0).then(|| (tag.to_string(), q))
        })
        .collect();
    tags.sort_by(|a, b| b.1.cmp(&a.1));
    tags.into_iter().map(|(t, _)| t).collect()
}

fn matching<'a>(tag: &str, supported: &'a [String]) -> Option<&'a str> {
    if let Some(s) = supported.iter().find(|s| s.eq_ignore_ascii_case(tag)) {
        return Some(s);
    }
    let primary = tag.split(['-', '_']).next()?;
    supported.iter().find(|s| s.split('-').next().is_some_and(|p| p.eq_ignore_ascii_case(primary))).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ui_locales_then_accept_language_then_none() {
        let s: Vec<String> = ["en", "ja", "fr"].iter().map(|s| s.to_string()).collect();
        assert_eq!(negotiate(Some("de ja-JP"), Some("fr"), &s), Some("ja"));
        assert_eq!(negotiate(Some("de"), Some("de;q=1, fr;q=0.5, ja;q=0.9"), &s), Some("ja"));
        assert_eq!(negotiate(None, Some("ja-JP,ja;q=0.9,en-US;q=0.8"), &s), Some("ja"));
        assert_eq!(negotiate(None, Some("FR-ca"), &s), Some("fr"));
        assert_eq!(negotiate(None, Some("ja;q=0, en;q=0.1"), &s), Some("en"));
        assert_eq!(negotiate(None, Some("de, *"), &s), None);
        assert_eq!(negotiate(None, Some(";;,,q=,"), &s), None);
        assert_eq!(negotiate(None, None, &s), None);
    }
}
