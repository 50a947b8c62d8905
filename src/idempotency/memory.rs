//! The in-process store: correct for one instance, lost on restart (the database still guards
//! against a second row).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use async_trait::async_trait;

use super::{Claim, Fingerprint, Held, IdempotencyStore, RESULT_TTL, Scope, StoredResponse, Unavailable};

enum State {
    InFlight { token: String },
    Done(StoredResponse),
}

struct Entry {
    fingerprint: Fingerprint,
    state: State,
    expires: Instant,
}

#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<Scope, Entry>,
    last_sweep: Option<Instant>,
}

/// Expired entries are swept (at most once a second) once the map grows past this…
const SWEEP_AT: usize = 10_000;
/// …and past this many live ones, the oldest completed answers are forgotten early: the
/// database's unique constraint still answers a late retry (a replay from the row).
const MAX_ENTRIES: usize = 100_000;

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn claim(&self, scope: &Scope, fingerprint: &Fingerprint, lease: Duration) -> Result<Claim, Unavailable> {
        let now = Instant::now();
        let mut guard = self.entries.lock().expect("idempotency map");
        let Entries { map: entries, last_sweep } = &mut *guard;
        if entries.len() >= SWEEP_AT && last_sweep.is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1)) {
            entries.retain(|_, e| e.expires > now);
            *last_sweep = Some(now);
            if entries.len() >= MAX_ENTRIES {
                let mut done: Vec<(Instant, Scope)> = entries
                    .iter()
                    .filter(|(_, e)| matches!(e.state, State::Done(_)))
                    .map(|(k, e)| (e.expires, k.clone()))
                    .collect();
                done.sort_by_key(|(expires, _)| *expires);
                for (_, key) in done.into_iter().take(entries.len() - MAX_ENTRIES / 2) {
                    entries.remove(&key);
                }
            }
        }
        if let Some(entry) = entries.get(scope).filter(|e| e.expires > now) {
            return Ok(match (&entry.state, entry.fingerprint == *fingerprint) {
                (_, false) => Claim::Mismatch,
                (State::InFlight { .. }, true) => Claim::InFlight,
                (State::Done(response), true) => Claim::Replay(response.clone()),
            });
        }
        let held = Held::new(scope, fingerprint);
        let state = State::InFlight { token: held.token.clone() };
        entries.insert(scope.clone(), Entry { fingerprint: fingerprint.clone(), state, expires: now + lease });
        Ok(Claim::Started(held))
    }

    async fn complete(&self, held: &Held, response: &StoredResponse) -> Result<(), Unavailable> {
        let entries = &mut self.entries.lock().expect("idempotency map").map;
        if still_ours(entries, held) {
            let (expires, state) = (Instant::now() + RESULT_TTL, State::Done(response.clone()));
            entries.insert(held.scope.clone(), Entry { fingerprint: held.fingerprint.clone(), state, expires });
        }
        Ok(())
    }

    async fn release(&self, held: &Held) -> Result<(), Unavailable> {
        let entries = &mut self.entries.lock().expect("idempotency map").map;
        if still_ours(entries, held) {
            entries.remove(&held.scope);
        }
        Ok(())
    }

    async fn ping(&self) -> Result<(), Unavailable> {
        Ok(())
    }
}

/// Whether the key is still in flight under this claim (not expired and claimed again).
fn still_ours(entries: &HashMap<Scope, Entry>, held: &Held) -> bool {
    matches!(entries.get(&held.scope), Some(Entry { state: State::InFlight { token }, .. }) if *token == held.token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response() -> StoredResponse {
        StoredResponse { status: 201, headers: vec![("location".into(), "/users/1".into())], body: "e30".into() }
    }

    #[tokio::test]
    async fn claim_replay_mismatch_and_release() {
        let store = MemoryStore::default();
        let scope = Scope::new("t", "ada", "k1");
        let (a, b) = (Fingerprint("a".into()), Fingerprint("b".into()));
        let lease = Duration::from_secs(60);
        let Claim::Started(held) = store.claim(&scope, &a, lease).await.unwrap() else { panic!("first claim") };
        assert_eq!(store.claim(&scope, &a, lease).await.unwrap(), Claim::InFlight);
        assert_eq!(store.claim(&scope, &b, lease).await.unwrap(), Claim::Mismatch);
        // Another claimant's token cannot complete or release it.
        store.release(&Held { token: "not-mine".into(), ..held.clone() }).await.unwrap();
        assert_eq!(store.claim(&scope, &a, lease).await.unwrap(), Claim::InFlight);
        store.complete(&held, &response()).await.unwrap();
        assert_eq!(store.claim(&scope, &a, lease).await.unwrap(), Claim::Replay(response()));
        assert_eq!(store.claim(&scope, &b, lease).await.unwrap(), Claim::Mismatch);

        let other = Scope::new("t", "ada", "k2");
        let Claim::Started(held) = store.claim(&other, &a, lease).await.unwrap() else { panic!() };
        store.release(&held).await.unwrap();
        assert!(matches!(store.claim(&other, &a, lease).await.unwrap(), Claim::Started(_)));
    }

    #[tokio::test]
    async fn an_expired_lease_can_be_claimed_again() {
        let store = MemoryStore::default();
        let scope = Scope::new("t", "ada", "k");
        let fp = Fingerprint("a".into());
        assert!(matches!(store.claim(&scope, &fp, Duration::ZERO).await.unwrap(), Claim::Started(_)));
        assert!(matches!(store.claim(&scope, &fp, Duration::from_secs(60)).await.unwrap(), Claim::Started(_)));
    }

    #[test]
    fn scopes_separate_tenants_subjects_and_keys() {
        let base = Scope::new("t", "zoe", "key-xyz");
        assert_ne!(base, Scope::new("u", "zoe", "key-xyz"));
        assert_ne!(base, Scope::new("t", "yan", "key-xyz"));
        assert_ne!(base, Scope::new("t", "zoe", "key-xyw"));
        // Neither the subject nor the key is stored in the clear (neither is valid hex).
        assert!(!base.as_str().contains("zoe") && !base.as_str().contains("key-xyz"));
    }
}
