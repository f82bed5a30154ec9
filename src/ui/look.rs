//! A tenant's own look (issue 31): a style sheet and a logo stored with its settings (the
//! `theme` override), served over the deployment's pages at `/t/{tenant}/assets/`. The
//! deployment's theme directory changes templates, languages and assets for every tenant; a
//! tenant changes only how its pages look, so that its administrator, who does not reach the
//! server's files, can brand them and no tenant needs pages of its own in memory.
//!
//! What a tenant uploads is served from the deployment's origin, which path-based tenants
//! share: an SVG logo opened on its own could run script there. Every asset is therefore sent
//! with `nosniff` and a CSP `sandbox` (`Ui::asset`), and the pages show the logo through
//! `<img>`, where an SVG runs nothing.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A tenant's `theme` setting as stored and shown: the style sheet as text and the logo as a
/// `data:` URL (`image/svg+xml` or `image/png`, base64), so that the admin API's JSON and the
/// CLI's settings file carry both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ThemeSetting {
    /// CSS linked after the deployment's style sheets (`/assets/tenant.css`): the CSS
    /// variables of the built-in sheet (`--accent`, `--bg`, …) are the usual way in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub css: Option<String>,
    /// `data:image/svg+xml;base64,…` or `data:image/png;base64,…`: the header's logo and
    /// the favicon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
}

/// A logo's file: its name under `/assets/` (which tells its type) and its bytes.
#[derive(Debug, Clone)]
pub struct Logo {
    pub name: &'static str,
    pub content_type: &'static str,
    pub bytes: Bytes,
}

/// A tenant's look, decoded: what `Ui` serves and links besides the deployment's assets.
#[derive(Debug, Clone, Default)]
pub struct Look {
    pub css: Option<Bytes>,
    pub logo: Option<Logo>,
    /// Changes with the content, appended to the links (`?v=`) so that a browser holding the
    /// old files for their cache lifetime fetches the new ones at once.
    pub version: String,
}

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

impl ThemeSetting {
    /// Decoded and checked: each file at most `max_bytes` (`tenant_theme_max_bytes`), the
    /// logo a PNG or an SVG document.
    pub fn look(&self, max_bytes: usize) -> Result<Look, String> {
        let mut look = Look::default();
        if let Some(css) = &self.css {
            if css.len() > max_bytes {
                return Err(format!(
                    "theme.css: at most {max_bytes} bytes (tenant_theme_max_bytes)"
                ));
            }
            if css.contains('\0') {
                return Err("theme.css: a style sheet has no NUL character".into());
            }
            look.css = Some(Bytes::from(css.clone()));
        }
        if let Some(url) = &self.logo {
            look.logo = Some(logo(url, max_bytes)?);
        }
        if look.css.is_some() || look.logo.is_some() {
            let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
            ctx.update(self.css.as_deref().unwrap_or_default().as_bytes());
            ctx.update(b"\0");
            ctx.update(self.logo.as_deref().unwrap_or_default().as_bytes());
            look.version = crate::util::b64(&ctx.finish().as_ref()[..9]);
        }
        Ok(look)
    }
}

/// A logo file as the `theme`'s `logo` (the CLI's `--logo`): its type from its extension.
pub fn data_url(file: &std::path::Path) -> anyhow::Result<String> {
    use base64::Engine;
    let kind = match file.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => anyhow::bail!("{}: a logo is an .svg or a .png file", file.display()),
    };
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    Ok(format!("data:{kind};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes)))
}

fn logo(url: &str, max_bytes: usize) -> Result<Logo, String> {
    let (kind, data) = url
        .strip_prefix("data:image/svg+xml;base64,")
        .map(|d| ("svg", d))
        .or_else(|| url.strip_prefix("data:image/png;base64,").map(|d| ("png", d)))
        .ok_or("theme.logo: a data: URL of image/svg+xml or image/png, base64 (data:image/png;base64,…)")?;
    // Checked before decoding: base64 is 4/3 of the bytes.
    if data.len() > max_bytes.saturating_mul(4) / 3 + 4 {
        return Err(format!(
            "theme.logo: at most {max_bytes} bytes (tenant_theme_max_bytes)"
        ));
    }
    let bytes = base64_std(data).ok_or("theme.logo: the data is not base64")?;
    if bytes.len() > max_bytes {
        return Err(format!(
            "theme.logo: at most {max_bytes} bytes (tenant_theme_max_bytes)"
        ));
    }
    match kind {
        "png" if bytes.starts_with(PNG_MAGIC) => Ok(Logo {
            name: "logo.png",
            content_type: "image/png",
            bytes: Bytes::from(bytes),
        }),
        "png" => Err("theme.logo: not a PNG image".into()),
        _ => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| "theme.logo: an SVG image is UTF-8 text")?;
            if !text.contains("<svg") {
                return Err("theme.logo: not an SVG image (no <svg> element)".into());
            }
            Ok(Logo {
                name: "logo.svg",
                content_type: "image/svg+xml",
                bytes: Bytes::from(bytes),
            })
        }
    }
}

/// Standard base64 (with or without padding), the alphabet `data:` URLs use; base64url is
/// accepted too, since browsers and tools differ on which they write.
fn base64_std(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let cleaned: String = data
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cleaned)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn data(kind: &str, bytes: &[u8]) -> String {
        format!(
            "data:{kind};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }

    #[test]
    fn a_logo_is_a_png_or_an_svg_within_the_limit() {
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>"#;
        let png = [PNG_MAGIC, &[0u8; 20]].concat();
        let ok = |logo: String| {
            ThemeSetting {
                css: None,
                logo: Some(logo),
            }
            .look(1000)
        };
        let l = ok(data("image/svg+xml", svg)).unwrap().logo.unwrap();
        assert_eq!(
            (l.name, l.content_type, &l.bytes[..]),
            ("logo.svg", "image/svg+xml", &svg[..])
        );
        assert_eq!(
            ok(data("image/png", &png)).unwrap().logo.unwrap().name,
            "logo.png"
        );
        for (bad, says) in [
            (data("image/png", svg), "not a PNG"),
            (data("image/svg+xml", &png), "UTF-8"),
            (
                data("image/svg+xml", b"<html><script>x</script></html>"),
                "no <svg>",
            ),
            (data("image/gif", b"GIF89a"), "data: URL"),
            ("https://cdn.example/logo.svg".to_string(), "data: URL"),
            ("data:image/png;base64,%%%".to_string(), "not base64"),
            (
                data("image/png", &[PNG_MAGIC, &[0u8; 1000]].concat()),
                "tenant_theme_max_bytes",
            ),
        ] {
            let e = ok(bad.clone()).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_version_follows_the_content() {
        let a = ThemeSetting {
            css: Some(":root{--accent:#123}".into()),
            logo: None,
        };
        let b = ThemeSetting {
            css: Some(":root{--accent:#124}".into()),
            logo: None,
        };
        let (va, vb) = (a.look(100).unwrap().version, b.look(100).unwrap().version);
        assert!(!va.is_empty() && va != vb);
        assert_eq!(a.look(100).unwrap().version, va);
        assert!(ThemeSetting::default()
            .look(100)
            .unwrap()
            .version
            .is_empty());
        assert!(ThemeSetting {
            css: Some("x".repeat(101)),
            logo: None
        }
        .look(100)
        .unwrap_err()
        .contains("tenant_theme_max_bytes"));
    }
}
