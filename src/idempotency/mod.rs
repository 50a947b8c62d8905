//! Idempotency-Key: a retried POST never runs twice. One seam, two stores: Redis, shared by
//! every instance, or in-process for a single instance. A key is claimed atomically with an
//! in-flight marker (a lease longer than any request may run), then holds the response for
//! 24 h. Explicit states, not scattered checks: [`Claim`].

mod memory;
mod redis_store;

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::encoding::hex;

pub use memory::MemoryStore;
pub use redis_store::RedisStore;

/// How long a completed response is replayed.
pub const RESULT_TTL: Duration = Duration::from_secs(24 * 3600);

/// Whose key this is: tenant, token subject and the client's key, hashed (no raw subject or
/// key reaches the store).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope(String);

impl Scope {
    pub fn new(tenant: &str, subject: &str, key: &str) -> Self {
        let digest = Sha256::new().chain_update(subject).chain_update("\n").chain_update(key).finalize();
        Scope([tenant, ":", &hex(&digest)].concat())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the request was: method, path, version and content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(pub String);

impl Fingerprint {
    pub fn of(method: &str, path: &str, version: u16, content: &[u8]) -> Self {
        let mut hasher = Self::hasher(method, path, version);
        hasher.update(content);
        hasher.finish()
    }

    /// The same fingerprint, with the content fed piece by piece.
    pub fn hasher(method: &str, path: &str, version: u16) -> FingerprintHasher {
        let mut hash = Sha256::new();
        for part in [method.as_bytes(), path.as_bytes(), itoa::Buffer::new().format(version).as_bytes()] {
            hash.update(part);
            hash.update([0]);
        }
        FingerprintHasher(hash)
    }
}

/// A [`Fingerprint`] in the making: see [`Fingerprint::hasher`].
pub struct FingerprintHasher(Sha256);

impl FingerprintHasher {
    pub fn update(&mut self, content: &[u8]) {
        self.0.update(content);
    }

    pub fn finish(self) -> Fingerprint {
        Fingerprint(hex(&self.0.finalize()))
    }
}

/// A response kept for replay: status, the headers that describe it, and its body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// base64url, so any body survives a JSON round trip.
    pub body: String,
}

/// A key a request claimed, as finishing or freeing it names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub scope: Scope,
    pub fingerprint: Fingerprint,
    /// This claim's alone: another claimant's token neither completes nor releases the key.
    pub token: String,
}

/// The outcome of claiming a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Ours: run the request, then `complete` or `release` it.
    Started(Held),
    /// Done before with the same request: answer this again.
    Replay(StoredResponse),
    /// Another try of the same request is running now.
    InFlight,
    /// The key was used for a different request.
    Mismatch,
}

#[derive(Debug, thiserror::Error)]
#[error("idempotency store unavailable: {0}")]
pub struct Unavailable(pub String);

#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `scope` for a request with `fingerprint`, in flight for at most `lease`.
    async fn claim(&self, scope: &Scope, fingerprint: &Fingerprint, lease: Duration) -> Result<Claim, Unavailable>;

    /// Replaces our in-flight marker with the response, kept for [`RESULT_TTL`].
    async fn complete(&self, held: &Held, response: &StoredResponse) -> Result<(), Unavailable>;

    /// Frees the key after a failure, so the client may retry.
    async fn release(&self, held: &Held) -> Result<(), Unavailable>;

    /// Answers when the store does (readiness).
    async fn ping(&self) -> Result<(), Unavailable>;
}

/// On the shared Redis when there is one, else the in-process store (one instance only).
pub fn store(redis: Option<crate::redis_link::RedisLink>) -> Arc<dyn IdempotencyStore> {
    match redis {
        Some(link) => Arc::new(RedisStore::new(link)),
        None => {
            tracing::warn!("no shared Redis is set: idempotency keys live in this process; run one instance only");
            Arc::new(MemoryStore::default())
        }
    }
}

impl Held {
    /// A claim of `scope` just made, with a fresh, unguessable token.
    fn new(scope: &Scope, fingerprint: &Fingerprint) -> Self {
        Held {
            scope: scope.clone(),
            fingerprint: fingerprint.clone(),
            token: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys and fingerprints are stored (Redis, the users and imports tables): a change in
    /// how they are computed would turn a retry across an upgrade into a mismatch.
    #[test]
    fn scopes_and_fingerprints_keep_their_values() {
        let scope = Scope::new("t", "ada", "k1");
        assert_eq!(scope.as_str(), "t:d1a506294b201a3ee46a49be377f93ce90d8b444271c4dd3b3c2a8115db21f98");
        let fingerprint = Fingerprint::of("POST", "/api/v1/users", 1, b"{}");
        assert_eq!(fingerprint.0, "080a5fbbc6993e05b5bc7618117b82a35b0c580e8d6b261bf398ab784eb9ea97");
    }
}
