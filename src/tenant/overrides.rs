//! What a tenant sets differently from the deployment (issue 31): stored as JSON in its row
//! (`rows::TenantRow::settings`), changed by `PATCH /admin/tenants/{slug}` and the CLI, built
//! into the `Tenant` by `Tenant::build`. Every key is a setting of the deployment's, by the
//! same name and checked by the same code (`Config::validate` on the deployment's settings
//! with the tenant's on top); an absent key is the deployment's value.
//!
//! An upstream provider's `client_secret` and an LDAP directory's `bind_password` are never
//! stored or shown in clear: they are sealed (`sealed`), and the API shows
//! `client_secret_set` and `bind_password_set` instead.

use super::sealed::Sealed;
use crate::config::agents::ResourceServer;
use crate::config::ldap::LdapDirectory;
use crate::config::upstreams::IdentityProvider;
use crate::config::Config;
use crate::ui::look::ThemeSetting;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tenant sets differently from the deployment, as stored (upstream secrets sealed).
/// Serialised (the API, the CLI, the audit log), no secret appears: see `stored_json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// The name its pages show (`product_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_name: Option<String>,
    /// The language of its pages and mail when the browser asks for none we have
    /// (`default_locale`: one of the catalogues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
    /// The shortest new password (`password_min_length`, 8 to 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_min_length: Option<usize>,
    /// Self-registration on or off (`signup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup: Option<bool>,
    /// What a sign-up asks for besides a username and password (`signup_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup_required: Option<String>,
    /// Whether a sign-up waits for its e-mail address to be confirmed (`signup_verify_email`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signup_verify_email: Option<bool>,
    /// The least every sign-in must reach: `optional`, `required` (a second factor) or
    /// `passkey` (`mfa_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mfa_policy: Option<String>,
    /// The sender of its mail, `Name <address>` (`mail_from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail_from: Option<String>,
    /// Its own upstream identity providers (`[[identity_providers]]`), instead of none: the
    /// deployment's are the default tenant's only. Shown with `client_secret_set`, never the
    /// secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub identity_providers: Option<Vec<TenantUpstream>>,
    /// Its own LDAP or Active Directory directories (`[[ldap_directories]]`), instead of none:
    /// the deployment's are the default tenant's only. Shown with `bind_password_set`, never
    /// the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub ldap_directories: Option<Vec<TenantDirectory>>,
    /// Its resource servers (`[[resource_servers]]`), instead of the deployment's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub resource_servers: Option<Vec<ResourceServer>>,
    /// Its own style sheet and logo, over the deployment's pages (`ui::look`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<ThemeSetting>,
}

/// An upstream provider of a tenant: its settings without the secret, and the secret sealed.
pub type TenantUpstream = Sealed<IdentityProvider>;
/// An LDAP directory of a tenant: its settings without the bind password, and the password
/// sealed.
pub type TenantDirectory = Sealed<LdapDirectory>;

/// A change of a tenant's settings: a key absent keeps its value, `null` clears it (back to
/// the deployment's), a value replaces it whole (a list too). Unknown keys are refused.
#[derive(Debug, Default, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsPatch {
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub product_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub default_locale: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<u32>)]
    pub password_min_length: Option<Option<usize>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<bool>)]
    pub signup: Option<Option<bool>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub signup_required: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<bool>)]
    pub signup_verify_email: Option<Option<bool>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub mfa_policy: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub mail_from: Option<Option<String>>,
    /// `[[identity_providers]]`' shape, `client_secret` in clear (sealed before it is
    /// stored). A provider sent without `client_secret` keeps the one stored for its id.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub identity_providers: Option<Option<Vec<IdentityProvider>>>,
    /// `[[ldap_directories]]`' shape, `bind_password` in clear (sealed before it is stored).
    /// A directory sent without `bind_password` keeps the one stored for its id.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub ldap_directories: Option<Option<Vec<LdapDirectory>>>,
    /// `[[resource_servers]]`' shape.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub resource_servers: Option<Option<Vec<ResourceServer>>>,
    /// Replaced whole: `{"css": …, "logo": "data:image/png;base64,…"}`.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<ThemeSetting>)]
    pub theme: Option<Option<ThemeSetting>>,
}

/// A key that is present: `Some(None)` for `null`, `Some(Some(v))` for a value (absent is
/// `None`, from `default`).
fn present<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn set<T>(to: &mut Option<T>, change: Option<Option<T>>) {
    if let Some(v) = change {
        *to = v;
    }
}

impl SettingsPatch {
    /// Only the name (the console's form).
    pub fn product_name(name: Option<String>) -> Self {
        Self { product_name: name.map(Some), ..Default::default() }
    }

    /// `settings` with this change, new secrets sealed for tenant `slug`; checked
    /// (`Overrides::validate`) by the caller before it is stored.
    pub fn apply(self, settings: &Overrides, slug: &str, vault: &crate::keys::Vault) -> Overrides {
        let mut out = settings.clone();
        set(&mut out.product_name, self.product_name);
        set(&mut out.default_locale, self.default_locale);
        set(&mut out.password_min_length, self.password_min_length);
        set(&mut out.signup, self.signup);
        set(&mut out.signup_required, self.signup_required);
        set(&mut out.signup_verify_email, self.signup_verify_email);
        set(&mut out.mfa_policy, self.mfa_policy);
        set(&mut out.mail_from, self.mail_from);
        set(&mut out.resource_servers, self.resource_servers);
        set(&mut out.theme, self.theme);
        if let Some(change) = self.identity_providers {
            let before = settings.identity_providers.as_deref().unwrap_or_default();
            out.identity_providers = change.map(|list| list.into_iter().map(|p| Sealed::seal(p, before, slug, vault)).collect());
        }
        if let Some(change) = self.ldap_directories {
            let before = settings.ldap_directories.as_deref().unwrap_or_default();
            out.ldap_directories = change.map(|list| list.into_iter().map(|d| Sealed::seal(d, before, slug, vault)).collect());
        }
        out
    }
}

impl Overrides {
    /// The JSON stored in the row: as shown, with each upstream's sealed secret.
    pub fn stored_json(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(list) = &self.identity_providers {
            v["identity_providers"] = Value::Array(list.iter().map(TenantUpstream::stored).collect());
        }
        if let Some(list) = &self.ldap_directories {
            v["ldap_directories"] = Value::Array(list.iter().map(TenantDirectory::stored).collect());
        }
        v.to_string()
    }

    /// The deployment's settings with these on top: what the tenant's pages, policies and
    /// checks read. The upstreams carry a stand-in for a sealed secret (the settings' check
    /// wants one; `Tenant::build` opens the real ones).
    pub fn effective(&self, config: &Config) -> Config {
        let mut c = config.clone();
        if let Some(v) = &self.product_name {
            c.product_name = v.clone();
        }
        if let Some(v) = &self.default_locale {
            c.default_locale = v.clone();
        }
        if let Some(v) = self.password_min_length {
            c.password_min_length = v;
        }
        if let Some(v) = self.signup {
            c.signup = v;
        }
        if let Some(v) = &self.signup_required {
            c.signup_required = v.clone();
        }
        if let Some(v) = self.signup_verify_email {
            c.signup_verify_email = v;
        }
        if let Some(v) = &self.mfa_policy {
            c.mfa_policy = v.clone();
        }
        if let Some(v) = &self.mail_from {
            c.mail_from = Some(v.clone());
        }
        if let Some(v) = &self.resource_servers {
            c.resource_servers = v.clone();
        }
        // A tenant's upstreams are its own: never the deployment's.
        c.identity_providers = self.identity_providers.iter().flatten().map(Sealed::stand_in).collect();
        // So are its directories.
        c.ldap_directories = self.ldap_directories.iter().flatten().map(Sealed::stand_in).collect();
        c
    }

    /// Checked as the deployment's settings are, and against what a tenant may set:
    /// `languages` are the catalogues the pages have.
    pub fn validate(&self, config: &Config, languages: &[String]) -> Result<(), String> {
        if let Some(name) = &self.product_name {
            if name.trim().is_empty() || name.len() > 100 || name.chars().any(char::is_control) {
                return Err("product_name must be 1 to 100 printable characters".into());
            }
        }
        if let Some(l) = &self.default_locale {
            if !languages.iter().any(|x| x == l) {
                return Err(format!("default_locale {l:?} has no catalogue (there are: {})", languages.join(", ")));
            }
        }
        if let Some(f) = &self.mail_from {
            f.parse::<lettre::message::Mailbox>().map_err(|e| format!("mail_from {f:?}: {e}"))?;
        }
        let ups = self.identity_providers.as_deref().unwrap_or_default();
        if ups.len() > config.tenant_max_identity_providers {
            return Err(format!("identity_providers: at most {} per tenant (tenant_max_identity_providers)", config.tenant_max_identity_providers));
        }
        // A SAML upstream's metadata or fields, read now as each sign-in will read them (its
        // other members are checked as an OpenID provider's are not: its secret is sealed).
        for u in ups.iter().filter(|u| u.setting.kind == crate::config::upstreams::UpstreamKind::Saml) {
            crate::saml::sp::IdpConfig::of(&u.setting).map_err(|e| format!("identity_providers ({}): {e}", u.setting.id))?;
        }
        if let Some(u) = ups.iter().find(|u| u.setting.private_key_file.is_some()) {
            // A key file names a path on the server: the deployment's settings only.
            return Err(format!("identity_providers ({}): private_key_jwt needs a key file on the server, which a tenant's settings cannot name", u.setting.id));
        }
        let dirs = self.ldap_directories.as_deref().unwrap_or_default();
        if dirs.len() > config.tenant_max_ldap_directories {
            return Err(format!("ldap_directories: at most {} per tenant (tenant_max_ldap_directories)", config.tenant_max_ldap_directories));
        }
        if let Some(d) = dirs.iter().find(|d| d.setting.ca_file.is_some()) {
            return Err(format!("ldap_directories ({}): ca_file names a file on the server, which a tenant's settings cannot name (the system's CAs are trusted)", d.setting.id));
        }
        let rs = self.resource_servers.as_deref().unwrap_or_default();
        if rs.len() > config.tenant_max_resource_servers {
            return Err(format!("resource_servers: at most {} per tenant (tenant_max_resource_servers)", config.tenant_max_resource_servers));
        }
        if let Some(theme) = &self.theme {
            theme.look(config.tenant_theme_max_bytes)?;
        }
        self.effective(config).validate_overridable().map_err(|e| e.to_string())
    }

    /// As the audit log records them: as shown, the look by its size and version (a log of
    /// every logo uploaded would grow by the logo each time).
    pub fn audited(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if self.theme.is_some() {
            let look = self.look();
            v["theme"] = serde_json::json!({
                "css_bytes": look.css.as_ref().map(|c| c.len()),
                "logo": look.logo.as_ref().map(|l| format!("{}, {} bytes", l.content_type, l.bytes.len())),
                "version": look.version,
            });
        }
        v
    }

    /// Its look, decoded (checked when stored; a later, smaller `tenant_theme_max_bytes`
    /// does not take away a look already stored).
    pub fn look(&self) -> crate::ui::look::Look {
        self.theme.as_ref().and_then(|t| t.look(usize::MAX).ok()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(v: Value) -> SettingsPatch {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_stored_row_holds_no_upstream_secret_in_clear_and_the_api_shows_none() {
        let vault = crate::keys::Vault::from_key([7; 32]);
        let secret = "s3cret-of-the-upstream-4f1a";
        let p = patch(serde_json::json!({"identity_providers": [{"id": "corp", "name": "Corp", "issuer": "https://corp.example", "client_id": "c", "client_secret": secret}]}));
        let settings = p.apply(&Overrides::default(), "acme", &vault);
        let stored = settings.stored_json();
        assert!(!stored.contains(secret), "{stored}");
        assert!(stored.contains("client_secret_sealed"), "{stored}");
        let shown = serde_json::to_string(&settings).unwrap();
        assert!(!shown.contains(secret) && !shown.contains("client_secret_sealed"), "{shown}");
        assert!(shown.contains("\"client_secret_set\":true"), "{shown}");
        // Read back from the row, it opens for its tenant only.
        let back: Overrides = serde_json::from_str(&stored).unwrap();
        assert_eq!(back, settings);
        let up = &back.identity_providers.as_ref().unwrap()[0];
        assert_eq!(up.opened(&vault, "acme").unwrap().client_secret.as_deref(), Some(secret));
        assert!(up.opened(&vault, "globex").is_err(), "another tenant's label does not open it");
        // A change that leaves the secret out keeps it; one that sends null drops the list.
        let kept = patch(serde_json::json!({"identity_providers": [{"id": "corp", "name": "Corp 2", "issuer": "https://corp.example", "client_id": "c"}]})).apply(&back, "acme", &vault);
        assert_eq!(kept.identity_providers.as_ref().unwrap()[0].opened(&vault, "acme").unwrap().client_secret.as_deref(), Some(secret));
        assert_eq!(patch(serde_json::json!({"identity_providers": null})).apply(&kept, "acme", &vault).identity_providers, None);
        // A row with a secret in clear is refused.
        let clear = serde_json::json!({"identity_providers": [{"id": "corp", "name": "Corp", "issuer": "https://corp.example", "client_id": "c", "client_secret": secret}]});
        assert!(serde_json::from_value::<Overrides>(clear).is_err());
    }

    #[test]
    fn a_directory_bind_password_is_sealed_like_an_upstream_secret() {
        let vault = crate::keys::Vault::from_key([7; 32]);
        let config = Config::default();
        let secret = "bind-pw-of-the-directory-9c2e";
        let dir = serde_json::json!({"id": "corp", "url": "ldaps://ldap.acme.example", "bind_dn": "cn=authrim,dc=acme", "bind_password": secret, "base_dn": "dc=acme"});
        let settings = patch(serde_json::json!({"ldap_directories": [dir]})).apply(&Overrides::default(), "acme", &vault);
        settings.validate(&config, &["en".to_string()]).unwrap();
        let (stored, shown) = (settings.stored_json(), serde_json::to_string(&settings).unwrap());
        assert!(!stored.contains(secret) && stored.contains("bind_password_sealed"), "{stored}");
        assert!(!shown.contains(secret) && shown.contains("\"bind_password_set\":true"), "{shown}");
        let back: Overrides = serde_json::from_str(&stored).unwrap();
        let d = &back.ldap_directories.as_ref().unwrap()[0];
        assert_eq!(d.opened(&vault, "acme").unwrap().bind_password.as_deref(), Some(secret));
        assert!(d.opened(&vault, "globex").is_err());
        // Kept when a change leaves it out; the effective settings carry a stand-in only.
        let mut again = dir_without_password();
        again["base_dn"] = "ou=people,dc=acme".into();
        let kept = patch(serde_json::json!({"ldap_directories": [again]})).apply(&back, "acme", &vault);
        assert_eq!(kept.ldap_directories.as_ref().unwrap()[0].opened(&vault, "acme").unwrap().bind_password.as_deref(), Some(secret));
        assert_eq!(kept.effective(&config).ldap_directories[0].bind_password.as_deref(), Some("sealed"));
        // A path on the server, and more than the cap: refused.
        let mut with_ca = dir_without_password();
        with_ca["ca_file"] = "/etc/passwd".into();
        let e = patch(serde_json::json!({"ldap_directories": [with_ca]})).apply(&back, "acme", &vault).validate(&config, &[]).unwrap_err();
        assert!(e.contains("ca_file"), "{e}");
        let many: Vec<Value> = (0..=config.tenant_max_ldap_directories).map(|i| serde_json::json!({"id": format!("d{i}"), "url": "ldaps://l.example", "base_dn": "dc=x"})).collect();
        let e = patch(serde_json::json!({"ldap_directories": many})).apply(&Overrides::default(), "acme", &vault).validate(&config, &[]).unwrap_err();
        assert!(e.contains("tenant_max_ldap_directories"), "{e}");
        let insecure = serde_json::json!({"id": "x", "url": "ldap://l.example", "base_dn": "dc=x"});
        let e = patch(serde_json::json!({"ldap_directories": [insecure]})).apply(&Overrides::default(), "acme", &vault).validate(&config, &[]).unwrap_err();
        assert!(e.contains("in clear"), "{e}");
    }

    /// A tenant's SAML upstream is read when set, as a sign-in will read it: refused with the
    /// reason when it does not read.
    #[test]
    fn a_tenants_saml_upstream_is_read_when_set() {
        let (config, vault) = (Config::default(), crate::keys::Vault::from_key([7; 32]));
        let (key, _) = crate::keys::SigningKey::generate().unwrap();
        let cert = crate::saml::signer::of(&key).unwrap().cert_base64();
        let check = |p: Value| patch(serde_json::json!({"identity_providers": [p]})).apply(&Overrides::default(), "acme", &vault).validate(&config, &[]);
        let good = serde_json::json!({"id": "corp", "name": "Corp", "kind": "saml", "entity_id": "https://idp.example", "sso_url": "https://idp.example/sso", "certificates": [cert]});
        check(good.clone()).unwrap();
        let mut no_cert = good.clone();
        no_cert["certificates"] = serde_json::json!(["bm90IGEgY2VydA=="]);
        assert!(check(no_cert).unwrap_err().contains("identity_providers (corp): certificates"));
        let bad_md = serde_json::json!({"id": "corp", "name": "Corp", "kind": "saml", "metadata": "<!DOCTYPE x><x/>"});
        assert!(check(bad_md).unwrap_err().contains("metadata"));
    }

    fn dir_without_password() -> Value {
        serde_json::json!({"id": "corp", "url": "ldaps://ldap.acme.example", "bind_dn": "cn=authrim,dc=acme", "base_dn": "dc=acme"})
    }

    #[test]
    fn a_patch_merges_keys_and_null_clears_one() {
        let vault = crate::keys::Vault::from_key([7; 32]);
        let a = patch(serde_json::json!({"product_name": "Acme", "password_min_length": 12})).apply(&Overrides::default(), "acme", &vault);
        let b = patch(serde_json::json!({"password_min_length": null, "signup": true})).apply(&a, "acme", &vault);
        assert_eq!((b.product_name.as_deref(), b.password_min_length, b.signup), (Some("Acme"), None, Some(true)));
        assert!(serde_json::from_value::<SettingsPatch>(serde_json::json!({"surprise": 1})).is_err());
    }

    #[test]
    fn overrides_are_checked_as_the_settings_are() {
        let config = Config::default();
        let langs = vec!["en".to_string()];
        let vault = crate::keys::Vault::from_key([7; 32]);
        let check = |v: Value| patch(v).apply(&Overrides::default(), "acme", &vault).validate(&config, &langs);
        assert!(check(serde_json::json!({"password_min_length": 12, "mfa_policy": "required", "mail_from": "Acme <no-reply@acme.example>"})).is_ok());
        for (bad, says) in [
            (serde_json::json!({"password_min_length": 4}), "password_min_length"),
            (serde_json::json!({"mfa_policy": "sometimes"}), "mfa_policy"),
            (serde_json::json!({"signup_required": "shoe_size"}), "signup_required"),
            (serde_json::json!({"mail_from": "not an address"}), "mail_from"),
            (serde_json::json!({"default_locale": "xx"}), "default_locale"),
            (serde_json::json!({"resource_servers": [{"uri": "not a uri", "name": "x"}]}), "resource_servers"),
            (serde_json::json!({"identity_providers": [{"id": "a b", "name": "A", "issuer": "https://a.example", "client_id": "c", "client_secret": "s"}]}), "id must be"),
            (serde_json::json!({"identity_providers": [{"id": "a", "name": "A", "issuer": "https://a.example", "client_id": "c"}]}), "client_secret is required"),
            (serde_json::json!({"identity_providers": [{"id": "a", "name": "A", "issuer": "https://a.example", "client_id": "c", "token_endpoint_auth_method": "private_key_jwt", "private_key_file": "/etc/passwd"}]}), "key file"),
        ] {
            let e = check(bad.clone()).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let many: Vec<Value> = (0..=config.tenant_max_resource_servers).map(|i| serde_json::json!({"uri": format!("https://r{i}.example/"), "name": "r"})).collect();
        assert!(check(serde_json::json!({"resource_servers": many})).unwrap_err().contains("tenant_max_resource_servers"));
    }
}
