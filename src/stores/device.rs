//! DeviceCodeStore: device authorization requests (RFC 8628) between the device's request
//! and the token it polls for.
//!
//! One record per request, stored under the hash of its user code (`shard::key`): the
//! verification page finds it by what the user types, and the device code names the same
//! record, because it carries the user code in front of its random part
//! (`{user code}.{random}`). The device already shows that user code on its screen, so the
//! device code tells its holder nothing new, and both lookups are one key, one shard, one
//! atomic turn. Neither secret is stored: the key is SHA-256 of the user code, the record
//! holds SHA-256 of the device code.
//!
//! The record outlives its request by as long again, so that a late poll hears
//! `expired_token` rather than `invalid_grant`; a redeemed request is deleted (a second
//! redemption is `invalid_grant`).

use super::shard::{key, key_shard};
use super::table::{Key, ShardedTable, Turn};
use crate::db::{Journal, StoreResult};
use crate::tenant::TenantId;
use crate::util::{b64, ct_eq, now, random_bytes, random_token, sha256};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// RFC 8628 §6.1: consonants only (no vowels, so no words; no look-alike digits), base 20.
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";
/// 20^8 ≈ 2^34.6 codes: with guessing throttled (`device_user_code_max_failures`), far more
/// than an attacker can try while a code lives.
pub const USER_CODE_LEN: usize = 8;
/// RFC 8628 §3.5: each `slow_down` adds this many seconds to the interval.
pub const SLOW_DOWN_STEP: u64 = 5;

/// A fresh user code, in its stored form (8 letters, no dash).
pub fn mint_user_code() -> String {
    let mut out = String::with_capacity(USER_CODE_LEN);
    while out.len() < USER_CODE_LEN {
        for b in random_bytes::<16>() {
            // 240 = 12 × 20: bytes at or above it are dropped, so every letter is equally likely.
            if b < 240 && out.len() < USER_CODE_LEN {
                out.push(USER_CODE_ALPHABET[(b % 20) as usize] as char);
            }
        }
    }
    out
}

/// What a person typed, as a stored user code: case, dashes and spaces do not matter. `None`
/// when it cannot be one (wrong length, a letter not in the alphabet).
pub fn normalize_user_code(typed: &str) -> Option<String> {
    let code: String = typed.chars().filter(|c| !matches!(c, '-' | ' ' | '\u{2010}'..='\u{2015}')).map(|c| c.to_ascii_uppercase()).collect();
    (code.len() == USER_CODE_LEN && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b))).then_some(code)
}

/// The form a person reads and types: `BCDF-GHJK`.
pub fn display_user_code(code: &str) -> String {
    match code.len() == USER_CODE_LEN && code.is_ascii() {
        true => format!("{}-{}", &code[..4], &code[4..]),
        false => code.to_string(),
    }
}

/// The user code a device code carries, if it is of our shape.
pub(crate) fn split(device_code: &str) -> Option<String> {
    let (user_code, random) = device_code.split_once('.')?;
    let valid = random.len() == 43 && random.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (valid && normalize_user_code(user_code).as_deref() == Some(user_code)).then(|| user_code.to_string())
}

/// What the device asked for (RFC 8628 §3.1), checked by the endpoint.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceRequest {
    pub client_id: String,
    pub scope: String,
    /// RFC 8707: the resources the tokens are to be for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Requested authentication context classes (as at `/authorize`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acr_values: Vec<String>,
    /// When the device code and user code stop working.
    pub expires_at: u64,
}

/// The user who approved, and how they signed in: what the tokens say.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Approval {
    pub user_id: String,
    pub auth_time: u64,
    /// The browser session that approved: the tokens end with it (unless `offline_access`),
    /// as a code's do.
    pub sid: String,
    pub acr: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Decision {
    Approved(Approval),
    Denied,
}

/// The bounds on requests waiting for a user (unauthenticated state).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub per_client: u32,
    pub total: u32,
}

#[derive(Debug, PartialEq)]
pub enum Issued {
    /// The device code and the user code (stored form).
    Codes { device_code: String, user_code: String },
    /// A bound was reached: nothing was stored.
    Full,
}

/// What a poll of the token endpoint finds (RFC 8628 §3.5); `R` is what was asked (a
/// device's request here, a backchannel one in `ciba`).
#[derive(Debug, PartialEq)]
pub enum Poll<R = DeviceRequest> {
    /// No such device code (or another client's): `invalid_grant`.
    Unknown,
    Pending,
    /// Polled sooner than the interval: the interval has grown by `SLOW_DOWN_STEP`.
    SlowDown,
    Expired,
    Denied,
    /// Approved: the request is spent; this is the only time it is returned.
    Approved(R, Approval),
}

#[async_trait]
pub trait DeviceCodeStore: Send + Sync {
    /// Store `request` (for `client` of `tenant`), unless a bound is reached.
    async fn issue(&self, tenant: TenantId, request: DeviceRequest, interval: u64, limits: Limits) -> StoreResult<Issued>;
    /// The request a user code (stored form) names, while it waits for its user.
    async fn find(&self, tenant: TenantId, user_code: &str) -> StoreResult<Option<DeviceRequest>>;
    /// Record the user's answer; `false` if the request no longer waits for one.
    async fn decide(&self, tenant: TenantId, user_code: &str, decision: Decision) -> StoreResult<bool>;
    /// A poll by `client_id` with `device_code`: pacing, then the state of the request.
    async fn poll(&self, tenant: TenantId, device_code: &str, client_id: &str) -> StoreResult<Poll>;
    async fn sweep_expired(&self) -> StoreResult<usize>;
    fn shard_lens(&self) -> Vec<usize>;
}

/// The key of a user code, and of the client a request counts against.
pub fn user_code_key(tenant: TenantId, user_code: &str) -> Key {
    key(tenant, &format!("device-user-code:{user_code}"))
}

pub fn client_key(tenant: TenantId, client_id: &str) -> Key {
    key(tenant, &format!("device-client:{client_id}"))
}

/// A new device code for `user_code`, and the hash the record keeps of it.
pub fn mint_device_code(user_code: &str) -> (String, [u8; 32]) {
    let code = format!("{user_code}.{}", random_token());
    let hash = sha256(code.as_bytes());
    (code, hash)
}

/// The parts of a stored request a poll is judged on, whichever backend holds them.
pub struct PollView<'a> {
    pub request: &'a DeviceRequest,
    pub device_hash: &'a [u8],
    pub client_key: &'a [u8],
    pub decision: Option<&'a Decision>,
    pub interval: u64,
    pub last_poll: u64,
}

/// What a poll changes.
#[derive(Debug, PartialEq)]
pub enum PollChange {
    None,
    /// Remember this poll (and the grown interval).
    Polled { last_poll: u64, interval: u64 },
    /// Spend the request (delete it).
    Consume,
}

/// One decision for both backends: the device code must be this record's and the client its
/// own (else nothing changes and the answer is `Unknown`); an expired request is `Expired`; an
/// answered one is spent or refused; a waiting one is paced.
pub fn judge(v: &PollView<'_>, device_code: &str, client: &[u8], t: u64) -> (Poll, PollChange) {
    if !ct_eq(v.device_hash, &sha256(device_code.as_bytes())) || !ct_eq(v.client_key, client) {
        return (Poll::Unknown, PollChange::None);
    }
    judge_owned(v.request, v.request.expires_at, v.decision, v.interval, v.last_poll, t)
}

/// A poll at `t` of the poller's own request (a device's or a backchannel one), expiring at
/// `expires_at`: `Expired` after that; an answered one is spent or refused; a waiting one is
/// paced. RFC 8628 §3.5 (and CIBA Core §11 after it): a poll sooner than the interval grows
/// it "for this and all subsequent requests".
pub fn judge_owned<R: Clone>(request: &R, expires_at: u64, decision: Option<&Decision>, interval: u64, last_poll: u64, t: u64) -> (Poll<R>, PollChange) {
    if expires_at <= t {
        return (Poll::Expired, PollChange::None);
    }
    match decision {
        Some(Decision::Approved(a)) => (Poll::Approved(request.clone(), a.clone()), PollChange::Consume),
        Some(Decision::Denied) => (Poll::Denied, PollChange::None),
        None if last_poll > 0 && t < last_poll + interval => (Poll::SlowDown, PollChange::Polled { last_poll: t, interval: interval + SLOW_DOWN_STEP }),
        None => (Poll::Pending, PollChange::Polled { last_poll: t, interval }),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DeviceRecord {
    request: DeviceRequest,
    /// SHA-256 of the device code and the client's key (`client_key`), base64url.
    device_hash: String,
    client_key: String,
    decision: Option<Decision>,
    interval: u64,
    last_poll: u64,
}

impl DeviceRecord {
    fn waiting(&self, t: u64) -> bool {
        self.decision.is_none() && self.request.expires_at > t
    }
}

/// The least time an expired request's row is kept for a late poll (seconds): a request of
/// a second's life, polled just after, is told `expired_token`, not that it never was (device
/// and CIBA requests alike).
pub const LATE_POLL_GRACE: u64 = 10;

/// How many times a colliding user code is drawn again before giving up (a collision needs
/// a live request under the same 34-bit code: with 10,000 waiting, one draw in 2.5 million).
const DRAWS: usize = 8;

pub struct EmbeddedDeviceStore {
    table: ShardedTable<DeviceRecord>,
    /// Issuances between their count and their write, per client key (and in all), so that
    /// concurrent requests count one another and the bounds hold exactly.
    in_flight: Mutex<InFlight>,
}

/// What `reserve` counts besides memory.
#[derive(Default)]
struct InFlight {
    per_client: HashMap<String, u32>,
    total: u32,
    /// The keys being written by reserved issuances: memory holds such an entry from its
    /// commit until the issuance hears back and drops its place, and it is counted once, as
    /// the place (counted twice, racing requests were refused below the bound).
    writing: std::collections::HashSet<Key>,
}

impl EmbeddedDeviceStore {
    pub fn new(shards: usize, journal: Journal) -> Self {
        Self { table: ShardedTable::new("device_requests", shards, journal), in_flight: Mutex::new(InFlight::default()) }
    }

    pub fn load(&self, conn: &rusqlite::Connection) -> rusqlite::Result<usize> {
        self.table.load(conn, now())
    }

    /// Reserve a place under the bounds, or `None` if one is reached. The count reads every
    /// shard: it runs only here, on a request that is rare next to tokens, over a table the
    /// bounds keep small.
    fn reserve(&self, client: &str, limits: Limits, t: u64) -> Option<Reservation<'_>> {
        let mut flight = self.in_flight.lock();
        let (mut total, mut of_client) = (0u32, 0u32);
        for shard in 0..self.table.shard_count() {
            self.table.read(shard, |m| {
                for (_, e) in m.iter().filter(|(k, e)| e.value.waiting(t) && !flight.writing.contains(*k)) {
                    total += 1;
                    of_client += u32::from(e.value.client_key == client);
                }
            });
        }
        let pending_of_client = flight.per_client.get(client).copied().unwrap_or(0);
        if total + flight.total >= limits.total || of_client + pending_of_client >= limits.per_client {
            return None;
        }
        *flight.per_client.entry(client.to_string()).or_default() += 1;
        flight.total += 1;
        Some(Reservation { store: self, client: client.to_string(), key: None })
    }
}

/// A place taken under the bounds until the write is in memory (dropped after it, or on
/// failure).
struct Reservation<'a> {
    store: &'a EmbeddedDeviceStore,
    client: String,
    /// The key this issuance is writing now (`writing`). A drawn user code that collides
    /// with a live request (one draw in millions) leaves that request uncounted until the
    /// next draw: the bound may then be passed by one.
    key: Option<Key>,
}

impl Reservation<'_> {
    /// The key the next write is to; the previous one (a colliding draw, not written) is
    /// forgotten.
    fn writing(&mut self, key: Key) {
        let mut flight = self.store.in_flight.lock();
        if let Some(old) = self.key.replace(key) {
            flight.writing.remove(&old);
        }
        flight.writing.insert(key);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut flight = self.store.in_flight.lock();
        if let Some(n) = flight.per_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                flight.per_client.remove(&self.client);
            }
        }
        flight.total -= 1;
        if let Some(k) = self.key.take() {
            flight.writing.remove(&k);
        }
    }
}

#[async_trait]
impl DeviceCodeStore for EmbeddedDeviceStore {
    async fn issue(&self, tenant: TenantId, request: DeviceRequest, interval: u64, limits: Limits) -> StoreResult<Issued> {
        let t = now();
        let client = b64(&client_key(tenant, &request.client_id));
        let Some(mut place) = self.reserve(&client, limits, t) else { return Ok(Issued::Full) };
        // Kept as long again after expiry (and at least `LATE_POLL_GRACE`): a late poll is
        // told `expired_token`.
        let row_expires = request.expires_at + request.expires_at.saturating_sub(t).max(LATE_POLL_GRACE);
        for _ in 0..DRAWS {
            let user_code = mint_user_code();
            let (device_code, hash) = mint_device_code(&user_code);
            let k = user_code_key(tenant, &user_code);
            let shard = key_shard(&k, self.table.shard_count());
            place.writing(k);
            let mut timer = self.table.timer(shard);
            let record = DeviceRecord { request: request.clone(), device_hash: b64(&hash), client_key: client.clone(), decision: None, interval, last_poll: 0 };
            let (stored, at) = self
                .table
                .update(shard, k, |entry| match entry {
                    Some(e) if e.expires_at > t => Turn::read(false),
                    _ => Turn::put(true, record.clone(), row_expires),
                })
                .await?;
            timer.answered_at(at);
            if stored {
                return Ok(Issued::Codes { device_code, user_code });
            }
        }
        Err(crate::db::StoreError::Database("no free user code after several draws".into()))
    }

    async fn find(&self, tenant: TenantId, user_code: &str) -> StoreResult<Option<DeviceRequest>> {
        let k = user_code_key(tenant, user_code);
        let shard = key_shard(&k, self.table.shard_count());
        let _timer = self.table.timer(shard);
        let t = now();
        Ok(self.table.read(shard, |m| m.get(&k).filter(|e| e.value.waiting(t)).map(|e| e.value.request.clone())))
    }

    async fn decide(&self, tenant: TenantId, user_code: &str, decision: Decision) -> StoreResult<bool> {
        let k = user_code_key(tenant, user_code);
        let shard = key_shard(&k, self.table.shard_count());
        let mut timer = self.table.timer(shard);
        let t = now();
        let (done, at) = self
            .table
            .update(shard, k, |entry| match entry {
                Some(e) if e.value.waiting(t) => {
                    let record = DeviceRecord { decision: Some(decision.clone()), ..e.value.clone() };
                    Turn::put(true, record, e.expires_at)
                }
                _ => Turn::read(false),
            })
            .await?;
        timer.answered_at(at);
        Ok(done)
    }

    async fn poll(&self, tenant: TenantId, device_code: &str, client_id: &str) -> StoreResult<Poll> {
        let Some(user_code) = split(device_code) else { return Ok(Poll::Unknown) };
        let k = user_code_key(tenant, &user_code);
        let shard = key_shard(&k, self.table.shard_count());
        let mut timer = self.table.timer(shard);
        let client = client_key(tenant, client_id);
        let t = now();
        let (poll, at) = self
            .table
            .update(shard, k, |entry| {
                let Some(e) = entry.filter(|e| e.expires_at > t) else { return Turn::read(Poll::Unknown) };
                let r = &e.value;
                let (Some(device_hash), Some(record_client)) = (crate::util::b64_decode(&r.device_hash), crate::util::b64_decode(&r.client_key)) else {
                    return Turn::read(Poll::Unknown);
                };
                let view = PollView { request: &r.request, device_hash: &device_hash, client_key: &record_client, decision: r.decision.as_ref(), interval: r.interval, last_poll: r.last_poll };
                match judge(&view, device_code, &client, t) {
                    (answer, PollChange::None) => Turn::read(answer),
                    (answer, PollChange::Consume) => Turn::delete(answer),
                    (answer, PollChange::Polled { last_poll, interval }) => {
                        Turn::put(answer, DeviceRecord { last_poll, interval, ..r.clone() }, e.expires_at)
                    }
                }
            })
            .await?;
        timer.answered_at(at);
        Ok(poll)
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
    // The behaviour both backends owe is in tests/contract; here, the codes themselves.
    use super::*;

    #[test]
    fn user_codes_are_eight_consonants_spread_evenly() {
        let mut counts = [0usize; 20];
        for _ in 0..4_000 {
            let c = mint_user_code();
            assert_eq!(c.len(), 8);
            for b in c.bytes() {
                counts[USER_CODE_ALPHABET.iter().position(|a| *a == b).expect("in the alphabet")] += 1;
            }
        }
        // 32,000 letters over 20: 1,600 each expected.
        assert!(counts.iter().all(|c| (1_350..1_850).contains(c)), "{counts:?}");
    }

    #[test]
    fn typed_codes_normalise_and_others_are_refused() {
        assert_eq!(normalize_user_code("bcdf-ghjk").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalize_user_code(" BCDF GHJK ").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalize_user_code("BcDfGhJk").as_deref(), Some("BCDFGHJK"));
        for bad in ["", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-EFGH", "BCDF-GHJ1", "ＢCDF-GHJK"] {
            assert_eq!(normalize_user_code(bad), None, "{bad:?}");
        }
        assert_eq!(display_user_code("BCDFGHJK"), "BCDF-GHJK");
    }

    #[test]
    fn device_codes_carry_their_user_code_and_nothing_else_parses() {
        let (code, hash) = mint_device_code("BCDFGHJK");
        assert_eq!(split(&code).as_deref(), Some("BCDFGHJK"));
        assert_eq!(hash, sha256(code.as_bytes()));
        for bad in ["BCDFGHJK", "bcdfghjk.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "BCDFGHJK.short", "1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"] {
            assert_eq!(split(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn polls_are_paced_and_only_the_owner_sees_the_request() {
        let request = DeviceRequest { client_id: "c".into(), scope: "openid".into(), resources: vec![], acr_values: vec![], expires_at: 1_000 };
        let (code, hash) = mint_device_code("BCDFGHJK");
        let client = client_key(TenantId::DEFAULT, "c");
        let view = |last_poll, decision| PollView { request: &request, device_hash: &hash, client_key: &client, decision, interval: 5, last_poll };
        assert_eq!(judge(&view(0, None), &code, &client, 100), (Poll::Pending, PollChange::Polled { last_poll: 100, interval: 5 }));
        assert_eq!(judge(&view(100, None), &code, &client, 104), (Poll::SlowDown, PollChange::Polled { last_poll: 104, interval: 10 }));
        assert_eq!(judge(&view(100, None), &code, &client, 105).0, Poll::Pending);
        assert_eq!(judge(&view(100, None), &code, &client_key(TenantId::DEFAULT, "other"), 200), (Poll::Unknown, PollChange::None));
        assert_eq!(judge(&view(100, None), &code.replace("BCDF", "BCDG"), &client, 200), (Poll::Unknown, PollChange::None));
        assert_eq!(judge(&view(100, None), &code, &client_key(TenantId(1), "c"), 200).0, Poll::Unknown);
        assert_eq!(judge(&view(0, None), &code, &client, 1_000).0, Poll::Expired);
        assert_eq!(judge(&view(0, Some(&Decision::Denied)), &code, &client, 200).0, Poll::Denied);
    }

    #[tokio::test]
    async fn neither_code_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::start(crate::db::open(dir.path(), "NORMAL").unwrap());
        let s = EmbeddedDeviceStore::new(4, journal.clone());
        let request = DeviceRequest { client_id: "c".into(), scope: "openid".into(), resources: vec![], acr_values: vec![], expires_at: now() + 60 };
        let limits = Limits { per_client: 10, total: 10 };
        let Issued::Codes { device_code, user_code } = s.issue(TenantId::DEFAULT, request, 5, limits).await.unwrap() else { panic!("room") };
        assert!(s.decide(TenantId::DEFAULT, &user_code, Decision::Denied).await.unwrap());
        journal.shutdown().await;
        let raw = std::fs::read(crate::db::db_path(dir.path())).unwrap();
        let wal = std::fs::read(dir.path().join("authrim.db-wal")).unwrap_or_default();
        for needle in [user_code.as_bytes(), device_code.split_once('.').unwrap().1.as_bytes()] {
            assert!(!raw.windows(needle.len()).any(|w| w == needle) && !wal.windows(needle.len()).any(|w| w == needle));
        }
        assert!(raw.len() + wal.len() > 0);
    }
}
