//! RefreshTokenRotator: refresh-token families with rotation and version-based theft
//! detection (the reference's TokenFamilyV2). A family is one grant: one login on one device.
//! Two devices of the same user and client are two families (the reference kept one per user
//! and client, so a second login overwrote the first and made its next refresh look like theft).
//!
//! A token is `{shard}.{family}.{version}.{mac}`, with the MAC an HMAC-SHA256 under a key
//! derived from the key-encryption key, which is kept outside the database. It carries its
//! route (shard, family), so no lookup finds it; the database holds nothing that redeems a
//! token (not even a hash); and any superseded version is recognised as such in constant space,
//! which is what makes every reuse detectable however long the chain.

use super::shard::{hash_shard, key};
use super::table::{ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::tenant::TenantId;
use crate::util::{b64, now, random_bytes};
use async_trait::async_trait;
use aws_lc_rs::hmac;
use serde::{Deserialize, Serialize};

/// What a new family remembers of the login that created it.
#[derive(Debug, Clone)]
pub struct NewFamily {
    pub user_id: String,
    pub client_id: String,
    pub scope: String,
    pub auth_time: u64,
    pub sid: String,
    pub acr: Option<String>,
    pub userinfo_claims: Vec<String>,
    /// RFC 9449 §5: the DPoP key a public client's refresh tokens are bound to.
    pub jkt: Option<String>,
    /// RFC 8705 §4: the client certificate (`x5t#S256`) a public client's refresh tokens are
    /// bound to.
    pub x5t: Option<String>,
    /// RFC 8707: the resources granted; a refresh may narrow them, never widen.
    pub resources: Vec<String>,
    /// RFC 8176: how the user authenticated, for the ID tokens of later refreshes.
    pub amr: Vec<String>,
    /// The organization (its id) the user signed in for: the family ends with the membership.
    pub org: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Family {
    /// Whose family: what `revoke_of`'s search by user filters on (a token finds its family
    /// by a key that carries the tenant already).
    #[serde(default, skip_serializing_if = "TenantId::is_default")]
    pub tenant: TenantId,
    pub id: String,
    pub user_id: String,
    pub client_id: String,
    pub scope: String,
    pub auth_time: u64,
    pub sid: String,
    pub acr: Option<String>,
    #[serde(default)]
    pub userinfo_claims: Vec<String>,
    /// The DPoP key every refresh of this family must prove (public clients' families).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// The client certificate every refresh of this family must come with (public clients'
    /// families; RFC 8705 §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x5t: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
    /// The organization (its id) the user signed in for (issue 31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// The version of the one token of this family that is currently valid.
    pub version: u64,
    pub created_at: u64,
    pub last_used: u64,
    pub rotated_at: u64,
    /// Absolute end of the family's life.
    pub expires_at: u64,
    pub revoked: bool,
}

#[derive(Debug, PartialEq)]
pub enum Presented {
    Current(Family),
    Superseded(Family),
    Revoked,
    Expired,
    /// Malformed, forged, or of a family we do not have.
    Unknown,
}

#[derive(Debug, PartialEq)]
pub enum Rotation {
    /// The presented token was current; `token` is its successor (or itself, rotation off).
    Rotated { family: Family, token: String },
    /// A retry with the just-superseded token within the grace period: the same successor.
    GraceRetry { family: Family, token: String },
    /// A superseded token: the family is now revoked.
    Reused { family: Family },
    Revoked,
    Expired,
    Unknown,
}

#[derive(Debug, Clone, Copy)]
pub struct RotationPolicy {
    pub rotate: bool,
    pub grace: u64,
    pub ttl: u64,
    pub idle_ttl: u64,
}

impl RotationPolicy {
    /// This policy with a client's own grace, if it has one.
    pub fn with_grace(self, grace: Option<u64>) -> Self {
        Self { grace: grace.unwrap_or(self.grace), ..self }
    }
}

#[async_trait]
pub trait RefreshTokenRotator: Send + Sync {
    /// Start a family with the id the caller chose (so a code can record it before
    /// redemption); returns the family's first token.
    /// A token of another tenant is `Unknown` to every method: the tenant is part of the key.
    async fn create(&self, tenant: TenantId, family_id: &str, new: NewFamily) -> StoreResult<String>;
    /// Classify a token without changing anything.
    async fn peek(&self, tenant: TenantId, token: &str) -> StoreResult<Presented>;
    /// Use a token: rotate, re-send within grace, or detect reuse and revoke the family.
    async fn rotate(&self, tenant: TenantId, token: &str) -> StoreResult<Rotation> {
        self.rotate_with(tenant, token, None).await
    }
    /// `rotate` with the token's client's own reuse grace (seconds) in place of the
    /// deployment's, where the client has one.
    async fn rotate_with(&self, tenant: TenantId, token: &str, grace: Option<u64>) -> StoreResult<Rotation>;
    async fn revoke_family(&self, tenant: TenantId, family_id: &str) -> StoreResult<bool>;
    /// Bind the family of `token` to the DPoP key `jkt` unless it is bound already (RFC 9449
    /// §5: a public client's refresh tokens are bound from its first proof on). Returns the
    /// family's key after the call (`None`: no such family).
    async fn bind_key(&self, tenant: TenantId, token: &str, jkt: &str) -> StoreResult<Option<String>>;
    /// Revoke every live family of `user_id` at `client_id` (consent withdrawn), or at every
    /// client (`None`: a new password, the end of all sessions); returns their ids. A scan:
    /// rare changes' business, never on the token path.
    async fn revoke_of(&self, tenant: TenantId, user_id: &str, client_id: Option<&str>) -> StoreResult<Vec<String>>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    /// Number of families per shard (for metrics and the spread test).
    fn shard_lens(&self) -> Vec<usize>;
}

pub fn new_family_id() -> String {
    b64(&random_bytes::<16>())
}

/// Shard of a family: SHA-256(`userId:clientId`) % shards, as in the reference.
pub fn family_shard(user_id: &str, client_id: &str, shards: usize) -> usize {
    hash_shard(format!("{user_id}:{client_id}").as_bytes(), shards)
}

pub(crate) struct Codec {
    key: hmac::Key,
}

impl Codec {
    pub(crate) fn new(mac_key: [u8; 32]) -> Self {
        Self { key: hmac::Key::new(hmac::HMAC_SHA256, &mac_key) }
    }

    /// (shard, the tenant's key of the family id, version) of an authentic token.
    pub(crate) fn locate(&self, tenant: TenantId, token: &str, shards: usize) -> Option<(usize, [u8; 32], u64)> {
        let (shard, family, version) = self.decode(token)?;
        Some((shard % shards, key(tenant, family), version))
    }

    fn mac(&self, shard: usize, family: &str, version: u64) -> String {
        b64(hmac::sign(&self.key, format!("{shard}.{family}.{version}").as_bytes()).as_ref())
    }

    pub(crate) fn encode(&self, shard: usize, family: &str, version: u64) -> String {
        format!("{shard}.{family}.{version}.{}", self.mac(shard, family, version))
    }

    /// (shard, family, version) of an authentic token.
    fn decode<'a>(&self, token: &'a str) -> Option<(usize, &'a str, u64)> {
        let mut parts = token.split('.');
        let (shard, family, version, mac) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || shard.len() > 5 || version.len() > 20 || family.len() != 22 {
            return None;
        }
        let (shard_n, version_n): (usize, u64) = (shard.parse().ok()?, version.parse().ok()?);
        let mac = crate::util::b64_decode(mac)?;
        hmac::verify(&self.key, format!("{shard}.{family}.{version}").as_bytes(), &mac).ok()?;
        Some((shard_n, family, version_n))
    }
}

/// What presenting `version` of family `f` at time `t` amounts to. The one rule both backends
/// apply: only the current version rotates; the one before it, within the grace period, gets
/// the same successor again; any older one is theft.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    Rotate,
    GraceRetry,
    Reuse,
    Revoked,
    Expired,
    Unknown,
}

pub(crate) fn judge(f: &Family, version: u64, t: u64, p: &RotationPolicy) -> Verdict {
    if f.revoked {
        Verdict::Revoked
    } else if t >= f.expires_at || t >= f.last_used.saturating_add(p.idle_ttl) {
        Verdict::Expired
    } else if version == f.version {
        Verdict::Rotate
    } else if version + 1 == f.version && p.grace > 0 && t.saturating_sub(f.rotated_at) <= p.grace {
        Verdict::GraceRetry
    } else if version < f.version {
        Verdict::Reuse
    } else {
        Verdict::Unknown
    }
}

/// `peek`'s reading of the same rule: nothing changes, a grace retry is just superseded.
pub(crate) fn presented(f: Family, version: u64, t: u64, p: &RotationPolicy) -> Presented {
    match judge(&f, version, t, p) {
        Verdict::Revoked => Presented::Revoked,
        Verdict::Expired => Presented::Expired,
        Verdict::Rotate => Presented::Current(f),
        Verdict::GraceRetry | Verdict::Reuse => Presented::Superseded(f),
        Verdict::Unknown => Presented::Unknown,
    }
}

pub(crate) fn new_family(tenant: TenantId, family_id: &str, new: NewFamily, t: u64, ttl: u64) -> Family {
    Family {
        tenant,
        id: family_id.to_string(),
        user_id: new.user_id,
        client_id: new.client_id,
        scope: new.scope,
        auth_time: new.auth_time,
        sid: new.sid,
        acr: new.acr,
        userinfo_claims: new.userinfo_claims,
        jkt: new.jkt,
        x5t: new.x5t,
        resources: new.resources,
        amr: new.amr,
        org: new.org,
        version: 0,
        created_at: t,
        last_used: t,
        rotated_at: t,
        expires_at: t + ttl,
        revoked: false,
    }
}

pub struct EmbeddedRefreshRotator {
    table: ShardedTable<Family>,
    codec: Codec,
    policy: RotationPolicy,
}

impl EmbeddedRefreshRotator {
    pub fn new(shards: usize, journal: Journal, mac_key: [u8; 32], policy: RotationPolicy) -> Self {
        Self {
            table: ShardedTable::new("refresh_families", shards, journal),
            codec: Codec::new(mac_key),
            policy,
        }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }

    fn locate(&self, tenant: TenantId, token: &str) -> Option<(usize, [u8; 32], u64)> {
        self.codec.locate(tenant, token, self.table.shard_count())
    }

    /// The family's committed state (tests).
    #[cfg(test)]
    pub(crate) fn family(&self, tenant: TenantId, family_id: &str) -> Option<Family> {
        let key = key(tenant, family_id);
        (0..self.table.shard_count()).find_map(|s| self.table.read(s, |m| m.get(&key).map(|e| e.value.clone())))
    }
}

#[async_trait]
impl RefreshTokenRotator for EmbeddedRefreshRotator {
    async fn create(&self, tenant: TenantId, family_id: &str, new: NewFamily) -> StoreResult<String> {
        let t = now();
        let shard = family_shard(&new.user_id, &new.client_id, self.table.shard_count());
        let family = new_family(tenant, family_id, new, t, self.policy.ttl);
        let key = key(tenant, family_id);
        let mut timer = self.table.timer(shard);
        let expires_at = family.expires_at;
        let mut family = Some(family);
        let ((), at) = self
            .table
            .update(shard, key, |existing| match existing {
                // A family id is 128 random bits; one that exists already is never overwritten.
                Some(_) => Turn::read(()),
                None => Turn::put((), family.take().expect("decided once when absent"), expires_at),
            })
            .await?;
        timer.answered_at(at);
        Ok(self.codec.encode(shard, family_id, 0))
    }

    async fn peek(&self, tenant: TenantId, token: &str) -> StoreResult<Presented> {
        let Some((shard, key, version)) = self.locate(tenant, token) else { return Ok(Presented::Unknown) };
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| match m.get(&key) {
            None => Presented::Unknown,
            Some(e) => presented(e.value.clone(), version, t, &self.policy),
        }))
    }

    async fn rotate_with(&self, tenant: TenantId, token: &str, grace: Option<u64>) -> StoreResult<Rotation> {
        let Some((shard, key, version)) = self.locate(tenant, token) else { return Ok(Rotation::Unknown) };
        let mut timer = self.table.timer(shard);
        let t = now();
        let p = self.policy.with_grace(grace);
        // The whole decision is one turn on the family: of N concurrent presentations of the
        // same token exactly one finds `version == f.version`; the others decide after its
        // rotation is durable, and see a superseded token.
        let (outcome, at) = self
            .table
            .update(shard, key, |entry| {
                let Some(entry) = entry else { return Turn::read(Rotation::Unknown) };
                let mut f = entry.value.clone();
                match judge(&f, version, t, &p) {
                    Verdict::Revoked => Turn::read(Rotation::Revoked),
                    Verdict::Expired => Turn::read(Rotation::Expired),
                    Verdict::Rotate => {
                        f.last_used = t;
                        if p.rotate {
                            f.version += 1;
                            f.rotated_at = t;
                        }
                        let token = self.codec.encode(shard, &f.id, f.version);
                        let expires_at = f.expires_at;
                        Turn::put(Rotation::Rotated { family: f.clone(), token }, f, expires_at)
                    }
                    Verdict::GraceRetry => {
                        let token = self.codec.encode(shard, &f.id, f.version);
                        Turn::read(Rotation::GraceRetry { family: f, token })
                    }
                    Verdict::Reuse => {
                        f.revoked = true;
                        let expires_at = f.expires_at;
                        Turn::put(Rotation::Reused { family: f.clone() }, f, expires_at)
                    }
                    Verdict::Unknown => Turn::read(Rotation::Unknown),
                }
            })
            .await?;
        timer.answered_at(at);
        Ok(outcome)
    }

    async fn bind_key(&self, tenant: TenantId, token: &str, jkt: &str) -> StoreResult<Option<String>> {
        let Some((shard, key, _)) = self.locate(tenant, token) else { return Ok(None) };
        let mut timer = self.table.timer(shard);
        let (bound, at) = self
            .table
            .update(shard, key, |entry| match entry {
                None => Turn::read(None),
                Some(e) if e.value.jkt.is_some() => Turn::read(e.value.jkt.clone()),
                Some(e) => {
                    let mut f = e.value.clone();
                    f.jkt = Some(jkt.to_string());
                    let expires_at = f.expires_at;
                    Turn::put(Some(jkt.to_string()), f, expires_at)
                }
            })
            .await?;
        timer.answered_at(at);
        Ok(bound)
    }

    async fn revoke_of(&self, tenant: TenantId, user_id: &str, client_id: Option<&str>) -> StoreResult<Vec<String>> {
        let t = now();
        let mut ids = Vec::new();
        for shard in 0..self.table.shard_count() {
            let found: Vec<String> = self.table.read(shard, |m| {
                m.values()
                    .filter(|e| {
                        let f = &e.value;
                        e.expires_at > t && !f.revoked && f.tenant == tenant && f.user_id == user_id && client_id.is_none_or(|c| f.client_id == c)
                    })
                    .map(|e| e.value.id.clone())
                    .collect()
            });
            for id in found {
                if self.revoke_family(tenant, &id).await? {
                    ids.push(id);
                }
            }
        }
        Ok(ids)
    }

    async fn revoke_family(&self, tenant: TenantId, family_id: &str) -> StoreResult<bool> {
        let key = key(tenant, family_id);
        // The family id alone does not say its shard; revocation is rare, so look in each.
        for shard in 0..self.table.shard_count() {
            if !self.table.read(shard, |m| m.contains_key(&key)) {
                continue;
            }
            let (revoked, _) = self
                .table
                .update(shard, key, |entry| match entry {
                    Some(e) if !e.value.revoked => {
                        let f = Family { revoked: true, ..e.value.clone() };
                        let expires_at = f.expires_at;
                        Turn::put(true, f, expires_at)
                    }
                    _ => Turn::read(false),
                })
                .await?;
            return Ok(revoked);
        }
        Ok(false)
    }

    async fn sweep_expired(&self) -> StoreResult<usize> {
        self.table.sweep(now()).await
    }

    fn shard_lens(&self) -> Vec<usize> {
        self.table.shard_lens()
    }
}

#[cfg(test)]
mod tests {
    // Rotation, reuse, grace, concurrency and expiry are tested for both backends in
    // tests/contract.
    use super::*;

    #[test]
    fn families_spread_evenly_over_shards() {
        let shards = 32;
        let mut counts = vec![0usize; shards];
        for u in 0..3_200 {
            for c in ["web", "ios", "android", "cli", "tv"] {
                counts[family_shard(&format!("user-{u}"), c, shards)] += 1;
            }
        }
        let expected = 16_000 / shards;
        assert!(counts.iter().all(|&c| c > expected * 85 / 100 && c < expected * 115 / 100), "{counts:?}");
    }
}
