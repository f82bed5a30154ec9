//! A browser's `User-Agent` in words a person recognises ("Firefox", "Android"), for the
//! user's own list of sessions. Only the common browsers and systems are named; anything
//! else is `None` and the page says "unknown". Order matters: Edge, Opera and Samsung
//! Internet also say "Chrome", Chrome also says "Safari", Android also says "Linux".

/// The browser and the system a `User-Agent` names, as far as it names them.
pub fn describe(ua: &str) -> (Option<&'static str>, Option<&'static str>) {
    (browser(ua), system(ua))
}

fn browser(ua: &str) -> Option<&'static str> {
    const BROWSERS: &[(&str, &str)] = &[
        ("Edg/", "Edge"),
        ("EdgA/", "Edge"),
        ("EdgiOS/", "Edge"),
        ("OPR/", "Opera"),
        ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("CriOS/", "Chrome"),
        ("Chromium/", "Chromium"),
        ("HeadlessChrome/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
    ];
    BROWSERS.iter().find(|(token, _)| ua.contains(token)).map(|(_, name)| *name)
}

fn system(ua: &str) -> Option<&'static str> {
    const SYSTEMS: &[(&str, &str)] = &[
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Android", "Android"),
        ("CrOS", "ChromeOS"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("Macintosh", "macOS"),
        ("Linux", "Linux"),
    ];
    SYSTEMS.iter().find(|(token, _)| ua.contains(token)).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn common_browsers_are_named() {
        let cases = [
            ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", (Some("Firefox"), Some("Linux"))),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", (Some("Edge"), Some("Windows"))),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", (Some("Safari"), Some("macOS"))),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1", (Some("Chrome"), Some("iPhone"))),
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", (Some("Chrome"), Some("Android"))),
            ("curl/8.5.0", (None, None)),
        ];
        for (ua, want) in cases {
            assert_eq!(describe(ua), want, "{ua}");
        }
    }
}
