//! The deployment's theme directory (`theme_dir`): templates, assets and languages that
//! replace or add to the built-in ones for every tenant, read once at start.

use super::{ASSETS, TEMPLATES};
use bytes::Bytes;
use minijinja::Environment;
use std::collections::HashMap;
use std::path::Path;

/// The most files a theme directory's `assets/` may add, and the largest of them.
const MAX_THEME_ASSETS: usize = 64;
const MAX_THEME_ASSET_BYTES: u64 = 1 << 20;

/// What a theme's `assets/style.css` does (`theme_css`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThemeCss {
    /// Served as `/assets/theme.css`, linked after the built-in style sheet.
    Add,
    /// Served as `/assets/style.css` instead of the built-in one.
    Replace,
}

impl ThemeCss {
    pub fn from_setting(s: &str) -> Self {
        if s == "replace" {
            ThemeCss::Replace
        } else {
            ThemeCss::Add
        }
    }
}

/// The additive style sheet's name, linked after `style.css` when a theme has one.
const THEME_CSS: &str = "theme.css";

/// Reads `dir` into `env` and `assets`: whether it added a style sheet after ours, and the
/// catalogues it adds or changes (language, Fluent source).
#[allow(clippy::type_complexity)]
pub(super) fn load(dir: &Path, css: ThemeCss, env: &mut Environment<'static>, assets: &mut HashMap<String, (&'static str, Bytes)>) -> anyhow::Result<(bool, Vec<(String, String)>)> {
    let mut extra_locales = Vec::new();
    let mut theme_css = false;
    let mut loaded = Loaded::default();
    let templates = dir.join("templates");
    for (name, source) in read_dir(&templates, "html", u64::MAX)?.into_iter().chain(read_dir(&templates, "txt", u64::MAX)?) {
        loaded.template(&name);
        env.add_template_owned(name, String::from_utf8(source).map_err(|_| anyhow::anyhow!("theme template is not UTF-8"))?)?;
    }
    let mut files = read_dir(&dir.join("assets"), "", MAX_THEME_ASSET_BYTES)?;
    if files.len() > MAX_THEME_ASSETS {
        anyhow::bail!("theme_dir/assets has more than {MAX_THEME_ASSETS} files");
    }
    if css == ThemeCss::Add {
        // The theme's style sheet goes after ours under its own name; both names at
        // once would leave one of them unused without a word.
        let named = |n: &str| files.iter().any(|(f, _)| f == n);
        if named("style.css") && named(THEME_CSS) {
            anyhow::bail!("theme_dir/assets has both style.css and {THEME_CSS}: with theme_css = \"add\" they are the same file; keep one");
        }
        for (name, _) in files.iter_mut().filter(|(n, _)| n == "style.css") {
            *name = THEME_CSS.to_string();
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, bytes) in files {
        theme_css |= name == THEME_CSS;
        loaded.assets.push(match (name.as_str(), ASSETS.iter().any(|(n, _)| *n == name)) {
            (THEME_CSS, _) => format!("{name} (added after style.css)"),
            (_, true) => format!("{name} (replaces the built-in)"),
            (_, false) => name.clone(),
        });
        assets.insert(name.clone(), (content_type(&name), Bytes::from(bytes)));
    }
    for (name, source) in read_dir(&dir.join("locales"), "ftl", u64::MAX)? {
        let lang = name.trim_end_matches(".ftl").to_string();
        loaded.locales.push(lang.clone());
        extra_locales.push((lang, String::from_utf8(source).map_err(|_| anyhow::anyhow!("theme locale is not UTF-8"))?));
    }
    loaded.log(dir, css);
    Ok((theme_css, extra_locales))
}

/// What a theme directory changed, for the log at start: an operator sees whether the
/// theme was found and which of its files took effect (a misspelt template name is one that
/// replaces nothing).
#[derive(Default)]
struct Loaded {
    pages: Vec<String>,
    mails: Vec<String>,
    unused: Vec<String>,
    assets: Vec<String>,
    locales: Vec<String>,
}

impl Loaded {
    fn template(&mut self, name: &str) {
        let list = match (TEMPLATES.iter().any(|(n, _)| *n == name), name.ends_with(".txt")) {
            (false, _) => &mut self.unused,
            (true, true) => &mut self.mails,
            (true, false) => &mut self.pages,
        };
        list.push(name.to_string());
        list.sort();
    }

    fn log(&self, dir: &Path, css: ThemeCss) {
        let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
        tracing::info!(
            theme_dir = %dir.display(),
            theme_css = ?css,
            templates = %list(&self.pages),
            mail_templates = %list(&self.mails),
            assets = %list(&self.assets),
            locales = %list(&self.locales),
            "theme loaded"
        );
        if !self.unused.is_empty() {
            // Extended or included by the theme's own templates, or a misspelt name.
            tracing::warn!(theme_dir = %dir.display(), templates = %self.unused.join(", "), "theme templates that replace no built-in template (used only if a theme template extends or includes them)");
        }
    }
}

pub(super) fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The files of `dir` ending in `.ext` (any, if empty): (file name, contents). A missing
/// directory is none; a file over `max_bytes` is an error.
fn read_dir(dir: &Path, ext: &str, max_bytes: u64) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.file_type()?.is_file() || name.starts_with('.') || (!ext.is_empty() && !name.ends_with(&format!(".{ext}"))) {
            continue;
        }
        if entry.metadata()?.len() > max_bytes {
            anyhow::bail!("{} is larger than {max_bytes} bytes", entry.path().display());
        }
        out.push((name, std::fs::read(entry.path())?));
    }
    Ok(out)
}

