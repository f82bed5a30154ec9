//! Randomized crash-consistency and failure-atomicity tests of the embedded stores, against a
//! model. Each trial runs concurrent operations on a few keys through a journal with injected
//! faults (commits the disk refuses, and a "kill" of the writer before a random write), then
//! restarts from the database file and checks:
//! - the recovered state equals what memory held at the crash (each key's writes reached
//!   the disk in the order memory applied them, and memory holds nothing the disk does not);
//! - every acknowledged write is there, or was read over by a later acknowledged write;
//! - nothing an operation answered with an error left a trace that anyone could observe;
//! - no two acknowledged writes decided on the same state (no lost update).
//!
//! `AUTHRIM_CRASH_TRIALS` sets the number of trials (default 400 each, a few seconds);
//! run with a larger number in release mode for a longer search:
//! `AUTHRIM_CRASH_TRIALS=20000 cargo test --release --lib durability`.

use super::refresh::{EmbeddedRefreshRotator, NewFamily, RefreshTokenRotator, Rotation, RotationPolicy};
use super::table::{Key, ShardedTable, Turn};
use crate::db::journal::faults::FaultyJournal;
use crate::tenant::TenantId;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

fn trials() -> u64 {
    std::env::var("AUTHRIM_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

use crate::fuzzing::SplitMix as Rng;

/// The families of these runs belong to a tenant other than the default, whose keys are framed
/// (`shard::key`): recovery must find them under the same keys.
const T: TenantId = TenantId(2);

/// The faults of one trial: how often commits fail, and before which write the writer dies.
fn arm(journal: &FaultyJournal, rng: &mut Rng) -> String {
    let per_mille = [0, 0, 100, 300][rng.below(4)];
    journal.fail_commits(per_mille);
    let crash = if rng.below(5) == 0 { None } else { Some(1 + rng.below(30) as u64) };
    if let Some(n) = crash {
        journal.crash_after(n);
    }
    format!("failed commits {per_mille}‰, crash before write {crash:?}")
}

#[derive(Debug, Clone)]
struct Observed {
    key: usize,
    saw: Option<u64>,
    /// What the operation wrote: `Some(Some(v))` a put, `Some(None)` a delete, `None` nothing.
    wrote: Option<Option<u64>>,
    acked: bool,
}

fn table_key(trial: u64, k: usize) -> Key {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&trial.to_le_bytes());
    key[8] = k as u8;
    key
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_turns_match_a_model_through_failed_commits_and_crashes() {
    const KEYS: usize = 3;
    for trial in 0..trials() {
        let seed = 0x5eed_0000 + trial;
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let faulty = FaultyJournal::start(crate::db::open(dir.path(), "NORMAL").unwrap(), seed);
        let table = Arc::new(ShardedTable::<u64>::new("challenges", 2, faulty.journal.clone()));
        let plan = arm(&faulty, &mut rng);
        let next_value = Arc::new(std::sync::atomic::AtomicU64::new(1));

        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (table, next_value) = (table.clone(), next_value.clone());
            let mut rng = Rng(rng.next());
            tasks.push(tokio::spawn(async move {
                let mut seen = Vec::new();
                for _ in 0..8 {
                    let k = rng.below(KEYS);
                    let key = table_key(trial, k);
                    let shard = k % 2;
                    let op = rng.below(3);
                    let fresh = next_value.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let mut decided = None;
                    let r = table
                        .update(shard, key, |e| {
                            let saw = e.map(|e| e.value);
                            match op {
                                0 | 1 => {
                                    decided = Some((saw, Some(Some(fresh))));
                                    Turn::put((), fresh, u64::MAX / 2)
                                }
                                _ if saw.is_some() => {
                                    decided = Some((saw, Some(None)));
                                    Turn::delete(())
                                }
                                _ => {
                                    decided = Some((saw, None));
                                    Turn::read(())
                                }
                            }
                        })
                        .await;
                    let (saw, wrote) = decided.expect("decided at least once");
                    seen.push(Observed { key: k, saw, wrote, acked: r.is_ok() });
                    if rng.below(2) == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                seen
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        let memory: HashMap<usize, Option<u64>> =
            (0..KEYS).map(|k| (k, table.read(k % 2, |m| m.get(&table_key(trial, k)).map(|e| e.value)))).collect();
        faulty.journal.shutdown().await;
        drop(table);

        // Restart: a new writer and a table loaded from the file.
        let journal = crate::db::Journal::start(crate::db::open(dir.path(), "NORMAL").unwrap());
        let recovered = ShardedTable::<u64>::new("challenges", 2, journal.clone());
        recovered.load(&crate::db::open_reader(dir.path()).unwrap(), 0).unwrap();
        let ctx = format!("trial {trial} (seed {seed:#x}, {plan}): {all:?}");
        for k in 0..KEYS {
            let on_disk = recovered.read(k % 2, |m| m.get(&table_key(trial, k)).map(|e| e.value));
            assert_eq!(on_disk, memory[&k], "key {k}: disk and memory differ after the crash; {ctx}");
            check_history(k, &all, on_disk, &ctx);
        }
        journal.shutdown().await;
    }
}

/// The model's rules for one key's history (see the module comment).
fn check_history(k: usize, all: &[Observed], last: Option<u64>, ctx: &str) {
    let ops: Vec<&Observed> = all.iter().filter(|o| o.key == k).collect();
    let acked_puts: HashSet<u64> = ops.iter().filter(|o| o.acked).filter_map(|o| o.wrote.flatten()).collect();
    let failed_puts: HashSet<u64> = ops.iter().filter(|o| !o.acked).filter_map(|o| o.wrote.flatten()).collect();
    // Nothing that failed is seen, by anyone, or survives.
    for o in &ops {
        if let Some(v) = o.saw {
            assert!(!failed_puts.contains(&v), "key {k}: value {v} of a failed write was observed; {ctx}");
            assert!(acked_puts.contains(&v), "key {k}: observed {v}, which no acknowledged write wrote; {ctx}");
        }
    }
    if let Some(v) = last {
        assert!(acked_puts.contains(&v), "key {k}: final value {v} was not written by an acknowledged write; {ctx}");
    }
    // Every acknowledged put is the final value or was decided on by a later acknowledged write.
    let superseded: Vec<u64> = ops.iter().filter(|o| o.acked && o.wrote.is_some()).filter_map(|o| o.saw).collect();
    for v in &acked_puts {
        assert!(last == Some(*v) || superseded.contains(v), "key {k}: acknowledged write {v} was lost; {ctx}");
    }
    // No two acknowledged writes decided on the same value.
    let mut once = HashSet::new();
    for v in &superseded {
        assert!(once.insert(*v), "key {k}: two writes both replaced {v} (a lost update); {ctx}");
    }
}

fn policy() -> RotationPolicy {
    RotationPolicy { rotate: true, grace: 0, ttl: 3600, idle_ttl: 3600 }
}

fn new_family(user: &str) -> NewFamily {
    NewFamily {
        user_id: user.into(),
        client_id: "c".into(),
        scope: "openid offline_access".into(),
        auth_time: 1,
        sid: "s".into(),
        acr: None,
        userinfo_claims: vec![],
        jkt: None,
        x5t: None,
        resources: vec![],
        amr: vec![],
        org: None,
    }
}

#[derive(Debug)]
enum Act {
    Rotated { family: usize, version: u64 },
    Reused { family: usize },
    RevokedByCall { family: usize, changed: bool },
    Failed { family: usize },
    Refused { family: usize },
}

impl Act {
    #[allow(dead_code)]
    fn family(&self) -> usize {
        match self {
            Act::Rotated { family, .. } | Act::Reused { family } | Act::RevokedByCall { family, .. } | Act::Failed { family } | Act::Refused { family } => *family,
        }
    }
}

/// Refresh-token families under concurrent rotation, reuse and revocation, with faults: the
/// recovered family is the one memory had, its version counts exactly the acknowledged
/// rotations, an acknowledged revocation or reuse leaves it revoked, and after the restart the
/// last acknowledged token (if the family lives) rotates while every older one is a reuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_families_match_a_model_through_failed_commits_and_crashes() {
    const FAMILIES: usize = 2;
    let mac = [3u8; 32];
    for trial in 0..trials() {
        let seed = 0xfa_0000 + trial;
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let faulty = FaultyJournal::start(crate::db::open(dir.path(), "NORMAL").unwrap(), seed);
        let rotator = Arc::new(EmbeddedRefreshRotator::new(4, faulty.journal.clone(), mac, policy()));
        let mut ids = Vec::new();
        let mut firsts = Vec::new();
        for f in 0..FAMILIES {
            let id = super::refresh::new_family_id();
            firsts.push(rotator.create(T, &id, new_family(&format!("u{f}"))).await.unwrap());
            ids.push(id);
        }
        let plan = arm(&faulty, &mut rng);
        // Tokens handed out so far per family with their versions; a task usually presents the
        // newest. (Answers can arrive out of order, so "newest" is by version.)
        type Handed = Vec<Vec<(u64, String)>>;
        let tokens: Arc<parking_lot::Mutex<Handed>> =
            Arc::new(parking_lot::Mutex::new(firsts.iter().map(|t| vec![(0, t.clone())]).collect()));
        let ids = Arc::new(ids);
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (rotator, tokens, ids) = (rotator.clone(), tokens.clone(), ids.clone());
            let mut rng = Rng(rng.next());
            tasks.push(tokio::spawn(async move {
                let mut acts = Vec::new();
                for _ in 0..6 {
                    let family = rng.below(FAMILIES);
                    if rng.below(8) == 0 {
                        match rotator.revoke_family(T, &ids[family]).await {
                            Ok(changed) => acts.push(Act::RevokedByCall { family, changed }),
                            Err(_) => acts.push(Act::Failed { family }),
                        }
                        continue;
                    }
                    let token = {
                        let mut t = tokens.lock();
                        let list = &mut t[family];
                        list.sort();
                        let stale = rng.below(6) == 0 && list.len() > 1;
                        list[if stale { rng.below(list.len() - 1) } else { list.len() - 1 }].1.clone()
                    };
                    match rotator.rotate(T, &token).await {
                        Ok(Rotation::Rotated { family: f, token }) => {
                            tokens.lock()[family].push((f.version, token));
                            acts.push(Act::Rotated { family, version: f.version });
                        }
                        Ok(Rotation::Reused { .. }) => acts.push(Act::Reused { family }),
                        Ok(_) => acts.push(Act::Refused { family }),
                        Err(_) => acts.push(Act::Failed { family }),
                    }
                    if rng.below(2) == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                acts
            }));
        }
        let mut acts = Vec::new();
        for t in tasks {
            acts.extend(t.await.unwrap());
        }
        let memory: Vec<Option<super::refresh::Family>> = (0..FAMILIES).map(|f| family_state(&rotator, &ids[f])).collect();
        faulty.journal.shutdown().await;
        drop(rotator);

        let journal = crate::db::Journal::start(crate::db::open(dir.path(), "NORMAL").unwrap());
        let recovered = EmbeddedRefreshRotator::new(4, journal.clone(), mac, policy());
        recovered.load(&crate::db::open_reader(dir.path()).unwrap()).unwrap();
        let ctx = format!("trial {trial} (seed {seed:#x}, {plan}): {acts:?}");
        let handed_out = tokens.lock().clone();
        for f in 0..FAMILIES {
            let on_disk = family_state(&recovered, &ids[f]).expect("a created family survives");
            assert_eq!(Some(&on_disk), memory[f].as_ref(), "family {f}: disk and memory differ; {ctx}");
            let rotations: Vec<u64> = acts
                .iter()
                .filter_map(|a| match a {
                    Act::Rotated { family, version } if *family == f => Some(*version),
                    _ => None,
                })
                .collect();
            assert_eq!(on_disk.version, rotations.len() as u64, "family {f}: version is not the count of acknowledged rotations; {ctx}");
            let mut sorted = rotations.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (1..=rotations.len() as u64).collect::<Vec<_>>(), "family {f}: rotations skipped or repeated a version; {ctx}");
            let must_be_revoked = acts.iter().any(|a| {
                matches!(a, Act::Reused { family } if *family == f) || matches!(a, Act::RevokedByCall { family, changed: true } if *family == f)
            });
            if must_be_revoked {
                assert!(on_disk.revoked, "family {f}: an acknowledged revocation was lost; {ctx}");
            }
            // After the restart the tokens behave as the acknowledged history says.
            let mut list = handed_out[f].clone();
            list.sort();
            let newest = &list.last().unwrap().1;
            if on_disk.revoked {
                assert_eq!(recovered.rotate(T, newest).await.unwrap(), Rotation::Revoked, "{ctx}");
            } else {
                if list.len() > 1 {
                    let old = &list[rng.below(list.len() - 1)].1;
                    let presented = recovered.peek(T, old).await.unwrap();
                    assert!(matches!(presented, super::Presented::Superseded(_)), "family {f}: an old token is not superseded; {ctx}");
                }
                let rotated = recovered.rotate(T, newest).await.unwrap();
                assert!(matches!(rotated, Rotation::Rotated { .. }), "family {f}: the last acknowledged token does not rotate; {ctx}");
            }
        }
        journal.shutdown().await;
    }
}

fn family_state(r: &EmbeddedRefreshRotator, id: &str) -> Option<super::refresh::Family> {
    r.family(T, id)
}
