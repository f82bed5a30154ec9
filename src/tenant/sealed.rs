//! A tenant's setting that holds a secret (an upstream provider's `client_secret`, an LDAP
//! directory's `bind_password`): stored with the secret sealed under the key-encryption key,
//! bound to the tenant's slug, the kind of setting and its id (so that a sealed secret copied
//! into another tenant's row or another setting does not open), and shown with
//! `<secret>_set` instead of the secret.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A setting with one secret member.
pub trait HoldsSecret: Clone + PartialEq + Serialize + DeserializeOwned {
    /// What it is, in the secret's label and in errors ("identity provider").
    const KIND: &'static str;
    /// The secret's member ("client_secret").
    const SECRET: &'static str;
    fn id(&self) -> &str;
    fn secret(&mut self) -> &mut Option<String>;
}

impl HoldsSecret for crate::config::upstreams::IdentityProvider {
    const KIND: &'static str = "identity provider";
    const SECRET: &'static str = "client_secret";
    fn id(&self) -> &str {
        &self.id
    }
    fn secret(&mut self) -> &mut Option<String> {
        &mut self.client_secret
    }
}

impl HoldsSecret for crate::config::ldap::LdapDirectory {
    const KIND: &'static str = "ldap directory";
    const SECRET: &'static str = "bind_password";
    fn id(&self) -> &str {
        &self.id
    }
    fn secret(&mut self) -> &mut Option<String> {
        &mut self.bind_password
    }
}

/// The setting without its secret, and the secret sealed.
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed<T> {
    /// Its secret member is always `None` here.
    pub setting: T,
    /// The secret sealed (`Vault::seal`, base64url), if it has one.
    pub sealed_secret: Option<String>,
}

/// What a sealed secret is bound to: the tenant (its slug is never given again), the kind of
/// setting and its id.
fn label<T: HoldsSecret>(slug: &str, id: &str) -> String {
    format!("tenant {slug} {} {id} {}", T::KIND, T::SECRET)
}

/// The member of the stored form that holds the sealed secret.
fn sealed_member<T: HoldsSecret>() -> String {
    format!("{}_sealed", T::SECRET)
}

impl<T: HoldsSecret> Sealed<T> {
    /// From a change: its secret sealed for tenant `slug`; without one (or an empty one), the
    /// secret stored before for the same id is kept.
    pub fn seal(mut setting: T, before: &[Self], slug: &str, vault: &crate::keys::Vault) -> Self {
        let sealed_secret = match setting.secret().take().filter(|s| !s.is_empty()) {
            Some(secret) => Some(crate::util::b64(&vault.seal(&label::<T>(slug, setting.id()), secret.as_bytes()))),
            None => before.iter().find(|b| b.setting.id() == setting.id()).and_then(|b| b.sealed_secret.clone()),
        };
        Self { setting, sealed_secret }
    }

    /// The stored form: the settings and the sealed secret.
    pub fn stored(&self) -> Value {
        let mut v = plain_json(&self.setting);
        if let Some(s) = &self.sealed_secret {
            v.insert(sealed_member::<T>(), Value::String(s.clone()));
        }
        Value::Object(v)
    }

    /// The setting with its secret opened (an error: it cannot be opened, which only a
    /// changed key-encryption key does).
    pub fn opened(&self, vault: &crate::keys::Vault, slug: &str) -> anyhow::Result<T> {
        let mut p = self.setting.clone();
        if let Some(sealed) = &self.sealed_secret {
            let (kind, id) = (T::KIND, p.id().to_string());
            let raw = crate::util::b64_decode(sealed).ok_or_else(|| anyhow::anyhow!("{kind} {id}: the sealed secret is not base64url"))?;
            let plain = vault.open_sealed(&label::<T>(slug, &id), &raw).map_err(|_| anyhow::anyhow!("{kind} {id}: its {} does not open (another key-encryption key?)", T::SECRET))?;
            *p.secret() = Some(String::from_utf8(plain).map_err(|_| anyhow::anyhow!("{kind} {id}: the secret is not UTF-8"))?);
        }
        Ok(p)
    }

    /// The setting with a stand-in for a sealed secret, for the settings' checks (which want
    /// one; `Tenant::build` opens the real ones).
    pub fn stand_in(&self) -> T {
        let mut p = self.setting.clone();
        *p.secret() = self.sealed_secret.as_ref().map(|_| "sealed".to_string());
        p
    }
}

fn plain_json<T: HoldsSecret>(p: &T) -> Map<String, Value> {
    let mut v = match serde_json::to_value(p) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    v.remove(T::SECRET);
    // Absent optional members as absent, not null: the stored and shown forms stay short and
    // read back through the settings' own parser.
    v.retain(|_, x| !x.is_null());
    v
}

/// Shown (API, CLI, audit): the settings and whether a secret is set.
impl<T: HoldsSecret> Serialize for Sealed<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = plain_json(&self.setting);
        v.insert(format!("{}_set", T::SECRET), Value::Bool(self.sealed_secret.is_some()));
        v.serialize(s)
    }
}

/// Read from the row: the settings (by the settings' own parser, unknown members refused) and
/// the sealed secret; a secret in clear is refused (it would mean a row written by something
/// other than `SettingsPatch::apply`).
impl<'de, T: HoldsSecret> Deserialize<'de> for Sealed<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut m = Map::deserialize(d)?;
        let sealed = match m.remove(&sealed_member::<T>()) {
            Some(Value::String(s)) => Some(s),
            None => None,
            Some(_) => return Err(D::Error::custom(format!("{} must be a string", sealed_member::<T>()))),
        };
        let mut setting: T = serde_json::from_value(Value::Object(m)).map_err(D::Error::custom)?;
        if setting.secret().is_some() {
            return Err(D::Error::custom(format!("a stored {} holds no secret in clear", T::KIND)));
        }
        Ok(Self { setting, sealed_secret: sealed })
    }
}
