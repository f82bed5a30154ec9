//! Passkeys (WebAuthn Level 2+, through `webauthn-rs`): registration on the account page,
//! authentication as the only factor (a discoverable credential: the authenticator names the
//! user) or after the password (the user's own credentials are offered).
//!
//! Nothing is stored for a ceremony in progress: its state (the challenge among it) is sealed
//! into the page the ceremony runs on (`http::sealed`, bound to the browser's cookie), so a
//! flood of sign-in pages costs no memory. What a sealed state cannot give, one-time use, the
//! ChallengeStore does: a sign-in state's id is spent there when its ceremony succeeds, so the
//! same signed assertion with the same state is accepted once (on every node under
//! PostgreSQL). A registration needs no spend: the credential id it adds is unique.
//!
//! A passkey is a row of `user_factors` (kind `passkey`): the credential (public key, counter,
//! flags) sealed under the key-encryption key (not secret, but sealing makes a swapped public
//! key in the database fail to open), and the credential id in the clear, unique across users.
//! The WebAuthn user handle is an HMAC of the user id under a KEK-derived key: stable, 16
//! bytes, and it reveals nothing about the user to whoever reads the authenticator.

use crate::db::{Database, StoreError, StoreResult};
use crate::factors::Proof;
use crate::keys::Vault;
use crate::stores::ChallengeStore;
use crate::tenant::TenantId;
use crate::util::{b64, now, random_token};
use aws_lc_rs::hmac;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use webauthn_rs::prelude::{
    CredentialID, DiscoverableAuthentication, Passkey, PasskeyAuthentication, PasskeyRegistration,
    PublicKeyCredential, RegisterPublicKeyCredential, RequestChallengeResponse, Url, Uuid, Webauthn, WebauthnBuilder,
};

pub const KIND: &str = "passkey";
/// The longest name a user can give a passkey.
pub const MAX_NAME: usize = 64;

/// Why a ceremony's result was refused.
#[derive(Debug, thiserror::Error)]
pub enum PasskeyError {
    /// The browser's answer does not verify, or names no passkey we know, or was used before.
    #[error("passkey refused: {0}")]
    Refused(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A sign-in ceremony's state, sealed into its page.
#[derive(Serialize, Deserialize)]
pub struct AuthState {
    /// Spent in the ChallengeStore when the ceremony succeeds.
    id: String,
    /// Until when it can be spent (and so how long the ChallengeStore keeps its id).
    expires_at: u64,
    ceremony: Ceremony,
}

#[derive(Serialize, Deserialize)]
enum Ceremony {
    /// Passwordless: any of our passkeys, the authenticator chooses.
    Discoverable(DiscoverableAuthentication),
    /// After the password: one of this user's passkeys.
    User { user_id: String, state: PasskeyAuthentication },
}

/// A registration ceremony's state, sealed into the account page.
#[derive(Serialize, Deserialize)]
pub struct RegistrationState {
    expires_at: u64,
    user_id: String,
    state: PasskeyRegistration,
}

pub struct Passkeys {
    /// The tenant whose relying party this is: its users' passkeys only.
    tenant: TenantId,
    /// The relying party: one for the deployment's issuer, shared by every tenant served
    /// under it (`for_path_tenant`); a host tenant's own.
    webauthn: Arc<Webauthn>,
    handle_key: hmac::Key,
    /// How long a ceremony's state is good for (the pages' `challenge_ttl`).
    ttl: u64,
}

/// Why a server runs without passkeys, for the pages that would otherwise offer them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Off {
    /// `passkeys = false`.
    Disabled,
    /// The issuer's host is an IP address; `suggest` is the issuer with `localhost` instead.
    IpAddress { issuer: String, suggest: String },
}

impl Off {
    /// Why passkeys are off under `config`, given that `Passkeys::from_config` left them off
    /// (it fails the start in every other case).
    pub fn of(config: &crate::config::Config) -> Self {
        match Url::parse(&config.issuer) {
            Ok(issuer) if config.passkeys => Off::IpAddress { issuer: config.issuer.clone(), suggest: suggested_issuer(&issuer) },
            _ => Off::Disabled,
        }
    }

    /// The values of `_passkeys_off.html`.
    pub fn page_value(&self) -> serde_json::Value {
        match self {
            Off::Disabled => serde_json::json!({ "reason": "disabled" }),
            Off::IpAddress { issuer, suggest } => serde_json::json!({ "reason": "ip", "issuer": issuer, "suggest": suggest }),
        }
    }
}

/// A host written as an IPv4 or IPv6 address (`[::1]` as `Url::host_str` gives it, too).
fn is_ip_address(host: &str) -> bool {
    host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok()
}

/// The key of tenant `tenant`'s user handles. Per tenant: two tenants on one host share a
/// relying party id, and an authenticator keeps one discoverable credential per (relying
/// party, user handle).
fn handle_key(vault: &Vault, tenant: TenantId) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, &vault.derive_for(tenant, "webauthn user handle"))
}

/// `issuer` with `localhost` as its host: what a newcomer on 127.0.0.1 should use instead.
fn suggested_issuer(issuer: &Url) -> String {
    let mut u = issuer.clone();
    let _ = u.set_host(Some("localhost"));
    u.as_str().trim_end_matches('/').to_string()
}

impl Passkeys {
    /// From the configuration: `None` when passkeys are off.
    pub fn from_config(config: &crate::config::Config, vault: &Vault, tenant: TenantId) -> anyhow::Result<Option<Self>> {
        Self::for_tenant(config, vault, tenant, None)
    }

    /// A tenant served under the deployment's issuer (`/t/{slug}`): the deployment's relying
    /// party, `default`'s, shared rather than built again for each of a thousand tenants; the
    /// user handles are the tenant's own. `None` when the default tenant has none: passkeys
    /// are off, and the default's start said why once (not again for every tenant).
    pub fn for_path_tenant(default: Option<&Self>, vault: &Vault, tenant: TenantId) -> Option<Self> {
        let default = default?;
        Some(Self { tenant, webauthn: default.webauthn.clone(), handle_key: handle_key(vault, tenant), ttl: default.ttl })
    }

    /// A tenant's: one served under the deployment's issuer is the deployment's relying party
    /// (`webauthn_rp_id`, `webauthn_origins`); one at a host of its own (`host_issuer`) is
    /// that host's.
    pub fn for_tenant(config: &crate::config::Config, vault: &Vault, tenant: TenantId, host_issuer: Option<&str>) -> anyhow::Result<Option<Self>> {
        if !config.passkeys {
            return Ok(None);
        }
        let issuer = Url::parse(host_issuer.unwrap_or(&config.issuer))?;
        let settings = host_issuer.is_none();
        let rp_id = match config.webauthn_rp_id.as_ref().filter(|_| settings) {
            Some(id) => id.clone(),
            None => issuer.host_str().unwrap_or_default().to_string(),
        };
        let origins: Vec<Url> = match config.webauthn_origins.as_ref().filter(|_| settings) {
            Some(list) => crate::util::split_list(list).map(Url::parse).collect::<Result<_, _>>()?,
            None => vec![Url::parse(&issuer.origin().ascii_serialization())?],
        };
        let first = origins.first().ok_or_else(|| anyhow::anyhow!("webauthn_origins is empty"))?;
        // An IP address is never a relying-party id (WebAuthn needs a domain). Decided here,
        // before webauthn-rs is asked: it logs its refusal at ERROR, which would be a red line
        // on every start of a server whose issuer is simply on 127.0.0.1.
        if is_ip_address(&rp_id) {
            if !settings || (config.webauthn_rp_id.is_none() && config.webauthn_origins.is_none()) {
                tracing::warn!(issuer = %host_issuer.unwrap_or(&config.issuer), "passkeys are off: the issuer's host is an IP address and WebAuthn needs a domain name; use a name such as {} as the issuer, or set webauthn_rp_id and webauthn_origins", suggested_issuer(&issuer));
                return Ok(None);
            }
            anyhow::bail!("passkeys: the relying-party id {rp_id:?} is an IP address; WebAuthn needs a domain name (set webauthn_rp_id, or passkeys = false)");
        }
        let builder = WebauthnBuilder::new(&rp_id, first).map_err(|e| {
            anyhow::anyhow!("passkeys: the relying-party id {rp_id:?} is not the host of {first} or a suffix of it ({e}); set webauthn_rp_id and webauthn_origins, or passkeys = false")
        })?;
        let mut builder = builder
            .rp_name(&config.webauthn_rp_name)
            .timeout(std::time::Duration::from_secs(config.challenge_ttl.min(600)));
        for o in &origins[1..] {
            builder = builder.append_allowed_origin(o);
        }
        let webauthn = Arc::new(builder.build().map_err(|e| anyhow::anyhow!("passkeys: {e}"))?);
        Ok(Some(Self { tenant, webauthn, handle_key: handle_key(vault, tenant), ttl: config.challenge_ttl }))
    }

    /// The WebAuthn user handle of `user_id`.
    pub fn user_handle(&self, user_id: &str) -> Uuid {
        let tag = hmac::sign(&self.handle_key, user_id.as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&tag.as_ref()[..16]);
        Uuid::from_bytes(bytes)
    }

    /// Start registering a passkey for `user`: the options for `navigator.credentials.create`
    /// and the state to seal into the page.
    pub async fn start_registration(&self, db: &Database, user: &crate::registry::User) -> StoreResult<(serde_json::Value, RegistrationState)> {
        // The exclusion list needs the ids only, which are stored in the clear: nothing to open.
        let (owner, tenant) = (user.id.clone(), self.tenant);
        let existing: Vec<CredentialID> = db
            .read(move |sql| {
                let rows = sql.query(
                    "SELECT credential_id FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2 AND kind = 'passkey'",
                    crate::params![tenant, owner.as_str()],
                )?;
                rows.iter().map(|r| r.text(0)).collect::<StoreResult<Vec<_>>>()
            })
            .await?
            .iter()
            .filter_map(|id| crate::util::b64_decode(id))
            .collect();
        let display = user.claims.get("name").and_then(|v| v.as_str()).unwrap_or(&user.username).to_string();
        let (options, state) = self
            .webauthn
            .start_passkey_registration(self.user_handle(&user.id), &user.username, &display, Some(existing))
            .map_err(|e| StoreError::Database(format!("webauthn: {e}")))?;
        // A passkey is a discoverable credential, so that it can sign in without a username
        // (webauthn-rs asks for a non-resident one by default; the verification does not
        // depend on it).
        let mut options = serde_json::to_value(&options).expect("options serialise");
        if let Some(sel) = options.pointer_mut("/publicKey/authenticatorSelection").and_then(|v| v.as_object_mut()) {
            sel.insert("residentKey".into(), "required".into());
            sel.insert("requireResidentKey".into(), true.into());
        }
        Ok((options, RegistrationState { expires_at: now() + self.ttl, user_id: user.id.clone(), state }))
    }

    /// Finish a registration: verify the browser's answer (`credential`, the JSON the page
    /// posts) against `state`, store the passkey as `name`; its factor id.
    pub async fn finish_registration(
        &self,
        db: &Database,
        vault: &Vault,
        user_id: &str,
        name: &str,
        credential: &str,
        state: &RegistrationState,
    ) -> Result<String, PasskeyError> {
        if state.user_id != user_id || state.expires_at < now() {
            return Err(PasskeyError::Refused("the registration is not this user's, or has expired"));
        }
        let answer: RegisterPublicKeyCredential = serde_json::from_str(credential).map_err(|_| PasskeyError::Refused("not a WebAuthn credential"))?;
        let passkey = self.webauthn.finish_passkey_registration(&answer, &state.state).map_err(|e| {
            tracing::info!(error = %e, "passkey registration refused");
            PasskeyError::Refused("the authenticator's answer does not verify")
        })?;
        // One answer registers once: its credential id is unique (below), so no spend of the
        // state is needed, and a write that fails leaves the same answer good for a retry.
        let id = format!("passkey_{}", &random_token()[..16]);
        let sealed = vault.seal(&seal_label(&id), &serde_json::to_vec(&passkey).expect("a passkey serialises"));
        let (fid, user, name, cred_id, t) = (id.clone(), user_id.to_string(), clean_name(name), b64(passkey.cred_id()), now() as i64);
        // Kept, not judged: attestation is not required (most passkeys send `none`), but an
        // operator who later wants to know what kind of authenticator registered can look.
        let (attestation, tenant) = (answer.response.attestation_object.clone(), self.tenant);
        let inserted = db
            .write(move |sql| {
                // WebAuthn §7.1 step 22: a credential id registered to anyone (of the tenant:
                // the relying party's users) already is refused.
                if sql.query_opt("SELECT 1 FROM user_factors WHERE tenant_id = ?1 AND credential_id = ?2", crate::params![tenant, cred_id.as_str()])?.is_some() {
                    return Ok(false);
                }
                sql.execute(
                    "INSERT INTO user_factors (tenant_id, id, user_id, kind, name, secret_sealed, last_step, created_at, last_used_at, credential_id, attestation) VALUES (?8, ?1, ?2, 'passkey', ?3, ?4, 0, ?5, 0, ?6, ?7)",
                    crate::params![fid.as_str(), user.as_str(), name.as_str(), sealed, t, cred_id.as_str(), attestation, tenant],
                )
                .map(|_| true)
            })
            .await?;
        match inserted {
            true => Ok(id),
            false => Err(PasskeyError::Refused("this passkey is already registered")),
        }
    }

    /// Options for a passwordless sign-in (any discoverable passkey; conditional UI).
    pub fn start_discoverable(&self) -> Option<(RequestChallengeResponse, AuthState)> {
        let (options, state) = self.webauthn.start_discoverable_authentication().ok()?;
        Some((options, AuthState { id: random_token(), expires_at: now() + self.ttl, ceremony: Ceremony::Discoverable(state) }))
    }

    /// Options for a second factor: the user's own passkeys (`None` if they have none).
    pub async fn start_for_user(&self, db: &Database, vault: &Vault, user_id: &str) -> StoreResult<Option<(RequestChallengeResponse, AuthState)>> {
        let keys: Vec<Passkey> = stored_open(db, vault, self.tenant, user_id).await?.into_iter().map(|(_, p)| p).collect();
        if keys.is_empty() {
            return Ok(None);
        }
        let Ok((options, state)) = self.webauthn.start_passkey_authentication(&keys) else { return Ok(None) };
        Ok(Some((options, AuthState { id: random_token(), expires_at: now() + self.ttl, ceremony: Ceremony::User { user_id: user_id.into(), state } })))
    }

    /// Finish a sign-in ceremony: the user it proves, and how. `expected_user`: the user the
    /// password step named (a second factor), checked against the state and the credential.
    pub async fn finish(
        &self,
        db: &Database,
        vault: &Vault,
        challenges: (&dyn ChallengeStore, TenantId),
        credential: &str,
        state: AuthState,
        expected_user: Option<&str>,
    ) -> Result<(String, Proof), PasskeyError> {
        if state.expires_at < now() {
            return Err(PasskeyError::Refused("the sign-in has expired"));
        }
        let answer: PublicKeyCredential = serde_json::from_str(credential).map_err(|_| PasskeyError::Refused("not a WebAuthn credential"))?;
        let cred_id = b64(answer.get_credential_id());
        let Some((factor_id, user_id, mut passkey)) = by_credential_id(db, vault, self.tenant, &cred_id).await? else {
            return Err(PasskeyError::Refused("no such passkey"));
        };
        let verified = match state.ceremony {
            Ceremony::Discoverable(st) => {
                // The authenticator names the user: that name must be the owner's handle.
                let (handle, _) = self.webauthn.identify_discoverable_authentication(&answer).map_err(|_| PasskeyError::Refused("no user handle"))?;
                if handle != self.user_handle(&user_id) || expected_user.is_some_and(|u| u != user_id) {
                    return Err(PasskeyError::Refused("the passkey is not this user's"));
                }
                self.webauthn.finish_discoverable_authentication_v2(&answer, st, &passkey)
            }
            Ceremony::User { user_id: for_user, state: st } => {
                if for_user != user_id || expected_user.is_some_and(|u| u != user_id) {
                    return Err(PasskeyError::Refused("the passkey is not this user's"));
                }
                self.webauthn.finish_passkey_authentication(&answer, &st)
            }
        };
        let result = verified.map_err(|e| {
            tracing::info!(error = %e, "passkey assertion refused");
            PasskeyError::Refused("the authenticator's answer does not verify")
        })?;
        if !result.user_verified() {
            return Err(PasskeyError::Refused("the authenticator did not verify the user"));
        }
        // The signature counter and backup flags move on; a counter that went back is refused
        // by the verification above (a cloned authenticator). Written before the state is
        // spent: a write that fails (503) leaves the same answer good for a retry.
        let sealed = passkey.update_credential(&result).filter(|changed| *changed).map(|_| vault.seal(&seal_label(&factor_id), &serde_json::to_vec(&passkey).expect("a passkey serialises")));
        let (fid, t, tenant) = (factor_id.clone(), now() as i64, self.tenant);
        db.write(move |sql| match sealed {
            Some(s) => sql.execute(
                "UPDATE user_factors SET secret_sealed = ?1, last_used_at = ?2 WHERE tenant_id = ?3 AND id = ?4",
                crate::params![s, t, tenant, fid.as_str()],
            ),
            None => sql.execute("UPDATE user_factors SET last_used_at = ?1 WHERE tenant_id = ?2 AND id = ?3", crate::params![t, tenant, fid.as_str()]),
        })
        .await?;
        if !challenges.0.first_use(challenges.1, &format!("webauthn:{}", state.id), state.expires_at).await? {
            return Err(PasskeyError::Refused("this sign-in was already used"));
        }
        Ok((user_id, Proof::Passkey { synced: result.backup_eligible() }))
    }
}

fn seal_label(factor_id: &str) -> String {
    format!("passkey:{factor_id}")
}

/// A name as the user typed it, trimmed and bounded; a default if empty.
fn clean_name(name: &str) -> String {
    let name: String = name.trim().chars().filter(|c| !c.is_control()).take(MAX_NAME).collect();
    if name.is_empty() { "Passkey".into() } else { name }
}

/// The user's passkeys, opened.
async fn stored_open(db: &Database, vault: &Vault, tenant: TenantId, user_id: &str) -> StoreResult<Vec<(String, Passkey)>> {
    let user = user_id.to_string();
    let rows = db
        .read(move |sql| {
            let rows = sql.query(
                "SELECT id, secret_sealed FROM user_factors WHERE tenant_id = ?1 AND user_id = ?2 AND kind = 'passkey'",
                crate::params![tenant, user.as_str()],
            )?;
            rows.iter().map(|r| Ok((r.text(0)?, r.blob(1)?))).collect::<StoreResult<Vec<_>>>()
        })
        .await?;
    Ok(rows.into_iter().filter_map(|(id, sealed)| open(vault, &id, &sealed).map(|p| (id, p))).collect())
}

/// The passkey whose credential id is `cred_id` (base64url): (factor id, user id, credential).
async fn by_credential_id(db: &Database, vault: &Vault, tenant: TenantId, cred_id: &str) -> StoreResult<Option<(String, String, Passkey)>> {
    let cred = cred_id.to_string();
    let row = db
        .read(move |sql| {
            sql.query_opt(
                "SELECT id, user_id, secret_sealed FROM user_factors WHERE tenant_id = ?1 AND credential_id = ?2 AND kind = 'passkey'",
                crate::params![tenant, cred.as_str()],
            )?
                .map(|r| Ok((r.text(0)?, r.text(1)?, r.blob(2)?)))
                .transpose()
        })
        .await?;
    Ok(row.and_then(|(id, user, sealed)| open(vault, &id, &sealed).map(|p| (id, user, p))))
}

fn open(vault: &Vault, factor_id: &str, sealed: &[u8]) -> Option<Passkey> {
    let plain = vault.open_sealed(&seal_label(factor_id), sealed).map_err(|_| tracing::error!(factor = %factor_id, "a passkey cannot be opened (wrong key-encryption key?)")).ok()?;
    serde_json::from_slice(&plain).ok()
}

#[cfg(test)]
mod off_tests {
    use super::*;

    #[test]
    fn ip_addresses_are_told_from_names() {
        for ip in ["127.0.0.1", "[::1]", "::1", "10.0.0.8"] {
            assert!(is_ip_address(ip), "{ip}");
        }
        for name in ["localhost", "id.example.com", "127.0.0.1.nip.io"] {
            assert!(!is_ip_address(name), "{name}");
        }
    }

    #[test]
    fn an_ip_issuer_is_told_to_use_localhost() {
        let config = crate::config::Config { issuer: "http://127.0.0.1:8080".into(), ..Default::default() };
        assert_eq!(Off::of(&config), Off::IpAddress { issuer: "http://127.0.0.1:8080".into(), suggest: "http://localhost:8080".into() });
        let config = crate::config::Config { issuer: "http://[::1]:9000/tenant".into(), ..Default::default() };
        assert!(matches!(Off::of(&config), Off::IpAddress { suggest, .. } if suggest == "http://localhost:9000/tenant"));
        let config = crate::config::Config { passkeys: false, ..Default::default() };
        assert_eq!(Off::of(&config), Off::Disabled);
    }

    #[test]
    fn an_ip_issuer_turns_passkeys_off_without_asking_webauthn() {
        let config = crate::config::Config { issuer: "http://127.0.0.1:8080".into(), ..Default::default() };
        let vault = Vault::from_key([7; 32]);
        assert!(Passkeys::from_config(&config, &vault, TenantId::DEFAULT).unwrap().is_none());
        let config = crate::config::Config { issuer: "http://localhost:8080".into(), ..Default::default() };
        assert!(Passkeys::from_config(&config, &vault, TenantId::DEFAULT).unwrap().is_some());
        // An explicit IP relying-party id is a mistake to refuse, in our words.
        let config = crate::config::Config { webauthn_rp_id: Some("127.0.0.1".into()), ..Default::default() };
        assert!(Passkeys::from_config(&config, &vault, TenantId::DEFAULT).err().unwrap().to_string().contains("IP address"));
    }
}
