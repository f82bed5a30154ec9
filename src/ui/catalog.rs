//! Message catalogues (Fluent): one bundle per language, English the fallback for a message a
//! translation lacks. Messages are HTML we (or the operator) wrote; the values put into them
//! are escaped here, so a client's name cannot become markup.

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use unic_langid::LanguageIdentifier;

/// The catalogues built in (`src/ui/locales/<lang>.ftl`); English first, the fallback.
pub const BUILT_IN: &[(&str, &str)] =
    &[("en", include_str!("locales/en.ftl")), ("ja", include_str!("locales/ja.ftl")), ("fr", include_str!("locales/fr.ftl"))];

/// A value for a message's argument.
#[derive(Debug, Clone)]
pub enum Arg {
    Text(String),
    Number(f64),
}

pub struct Catalogs {
    /// (language tag, bundle); the first is the fallback.
    bundles: Vec<(String, FluentBundle<FluentResource>)>,
}

impl Catalogs {
    /// The built-in catalogues plus `extra` (language, FTL source) from a theme directory:
    /// messages there override the built-in ones, and a new language is added.
    pub fn load(extra: &[(String, String)]) -> anyhow::Result<Self> {
        let mut out = Catalogs { bundles: Vec::new() };
        for (lang, source) in BUILT_IN {
            out.add(lang, source, false)?;
        }
        for (lang, source) in extra {
            out.add(lang, source, true)?;
        }
        Ok(out)
    }

    fn add(&mut self, lang: &str, source: &str, overriding: bool) -> anyhow::Result<()> {
        let id: LanguageIdentifier = lang.parse().map_err(|e| anyhow::anyhow!("locale {lang:?}: {e}"))?;
        let resource = FluentResource::try_new(source.to_string()).map_err(|(_, errors)| anyhow::anyhow!("locale {lang}: {errors:?}"))?;
        let tag = id.to_string();
        let index = match self.bundles.iter().position(|(t, _)| *t == tag) {
            Some(i) => i,
            None => {
                let mut bundle = FluentBundle::new_concurrent(vec![id]);
                // Messages are HTML: no Unicode isolation marks around the values.
                bundle.set_use_isolating(false);
                self.bundles.push((tag, bundle));
                self.bundles.len() - 1
            }
        };
        let bundle = &mut self.bundles[index].1;
        match overriding {
            true => bundle.add_resource_overriding(resource),
            false => bundle.add_resource(resource).map_err(|e| anyhow::anyhow!("locale {lang}: {e:?}"))?,
        }
        Ok(())
    }

    /// The languages there are catalogues for, the fallback first.
    pub fn languages(&self) -> Vec<String> {
        self.bundles.iter().map(|(t, _)| t.clone()).collect()
    }

    /// Message `id` in `lang` (else in the fallback language) with `args`; `None` if no
    /// catalogue has it.
    pub fn format(&self, lang: &str, id: &str, args: &[(String, Arg)]) -> Option<String> {
        self.format_as(lang, id, args, true)
    }

    /// The same for plain text (mail): the arguments as they are, not escaped for HTML.
    pub fn format_plain(&self, lang: &str, id: &str, args: &[(String, Arg)]) -> Option<String> {
        self.format_as(lang, id, args, false)
    }

    fn format_as(&self, lang: &str, id: &str, args: &[(String, Arg)], html: bool) -> Option<String> {
        let bundles = self.bundles.iter().filter(|(t, _)| t == lang).chain(self.bundles.first());
        for (_, bundle) in bundles {
            let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else { continue };
            let mut fargs = FluentArgs::new();
            for (k, v) in args {
                match v {
                    Arg::Text(s) if html => fargs.set(k.as_str(), FluentValue::from(crate::util::html_escape(s))),
                    Arg::Text(s) => fargs.set(k.as_str(), FluentValue::from(s.clone())),
                    Arg::Number(n) => fargs.set(k.as_str(), FluentValue::from(*n)),
                }
            }
            let mut errors = Vec::new();
            let text = bundle.format_pattern(pattern, Some(&fargs), &mut errors);
            if !errors.is_empty() {
                tracing::warn!(message = id, lang, ?errors, "a message did not format cleanly");
            }
            return Some(text.into_owned());
        }
        None
    }

    /// Whether there is message `id` in any catalogue.
    pub fn has(&self, id: &str) -> bool {
        self.bundles.iter().any(|(_, b)| b.has_message(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_catalogue_has_every_english_message() {
        let c = Catalogs::load(&[]).unwrap();
        // Message ids: the lines that start with one (continuations are indented).
        let ids: Vec<String> = BUILT_IN[0]
            .1
            .lines()
            .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
            .filter_map(|l| l.split_once(" =").map(|(id, _)| id.to_string()))
            .collect();
        assert!(ids.len() > 100, "{}", ids.len());
        for (lang, _) in &BUILT_IN[1..] {
            let bundle = &c.bundles.iter().find(|(t, _)| t == lang).unwrap().1;
            let missing: Vec<&String> = ids.iter().filter(|id| !bundle.has_message(id)).collect();
            assert!(missing.is_empty(), "{lang} lacks {missing:?}");
        }
    }

    #[test]
    fn values_are_escaped_and_plurals_chosen() {
        let c = Catalogs::load(&[]).unwrap();
        let s = c.format("en", "continue-to", &[("client".into(), Arg::Text("<b>x</b>".into()))]).unwrap();
        assert_eq!(s, "to continue to &lt;b&gt;x&lt;/b&gt;");
        let one = c.format("en", "account-recovery-left", &[("count".into(), Arg::Number(1.0))]).unwrap();
        assert!(one.starts_with("1 unused recovery code."), "{one}");
        let many = c.format("en", "account-recovery-left", &[("count".into(), Arg::Number(7.0))]).unwrap();
        assert!(many.starts_with("7 unused recovery codes."), "{many}");
        let ja = c.format("ja", "login-heading", &[]).unwrap();
        assert_eq!(ja, "サインイン");
        // A language without the message falls back to English; no catalogue: None.
        let extra = Catalogs::load(&[("de".into(), "login-heading = Anmelden".into())]).unwrap();
        assert_eq!(extra.format("de", "login-heading", &[]).unwrap(), "Anmelden");
        assert_eq!(extra.format("de", "login-submit", &[]).unwrap(), "Sign in");
        assert!(extra.format("de", "no-such-message", &[]).is_none());
    }
}
