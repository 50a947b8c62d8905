//! The Redis store, shared by every instance. Values are `I|<token>|<fingerprint>` while in
//! flight and `D|<fingerprint>|<response json>` when done. A claim is one `SET NX PX`; finishing
//! is one script that checks our token: two round trips per keyed POST.
//!
//! A claim we gave up on (Redis stalled past the timeout) may still run when Redis answers
//! again, and would hold the key in flight for its whole lease. So giving up also queues the
//! release of our own marker behind it, on the same connection: Redis runs a connection's
//! commands in order, so the release runs after the late claim and frees the key.

use crate::telemetry::traces;
use std::time::Duration;

use async_trait::async_trait;
use redis::{AsyncCommands, Script, aio::ConnectionManager};

use crate::redis_link::RedisLink;

use super::{Claim, Fingerprint, Held, IdempotencyStore, RESULT_TTL, Scope, StoredResponse, Unavailable};

/// Every call answers within this, or the store counts as unreachable.
const CALL_TIMEOUT: Duration = Duration::from_millis(1000);

pub struct RedisStore {
    link: RedisLink,
    complete: Script,
    release: Script,
}

const COMPLETE: &str = r"
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 2 + #ARGV[1]) == 'I|' .. ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0";

const RELEASE: &str = r"
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, 2 + #ARGV[1]) == 'I|' .. ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0";

fn key(scope: &Scope) -> String {
    ["tandem:idem:", scope.as_str()].concat()
}

fn unavailable(err: impl std::fmt::Display) -> Unavailable {
    Unavailable(err.to_string())
}

impl RedisStore {
    pub fn new(link: RedisLink) -> Self {
        Self { link, complete: Script::new(COMPLETE), release: Script::new(RELEASE) }
    }

    /// The primary's connection, or unavailable (bounded: a Sentinel that hangs counts too).
    async fn connection(&self) -> Result<ConnectionManager, Unavailable> {
        self.bounded(self.link.connection()).await
    }

    /// Frees our marker under `key` whenever Redis runs the claim we gave up on. EVAL with the
    /// script's text, not EVALSHA: a script Redis does not know yet would fail, unheard.
    fn abandon(&self, connection: &ConnectionManager, key: &str, token: &str, lease: Duration) {
        let mut connection = connection.clone();
        let mut release = redis::cmd("EVAL");
        release.arg(RELEASE).arg(1).arg(key).arg(token);
        tokio::spawn(async move {
            // Sent now, behind the claim; the answer only tells us it ran.
            let sent = release.query_async::<i64>(&mut connection);
            if let Ok(Err(err)) = tokio::time::timeout(lease, sent).await {
                tracing::debug!(cause = %err, "the release of an abandoned claim got no answer");
            }
        });
    }

    /// Within [`CALL_TIMEOUT`], the link told of every failure.
    async fn bounded<T>(&self, call: impl Future<Output = redis::RedisResult<T>>) -> Result<T, Unavailable> {
        self.link.bounded(CALL_TIMEOUT, call).await.map_err(unavailable)
    }
}

fn parse(value: &str, fingerprint: &Fingerprint) -> Option<Claim> {
    let (state, rest) = value.split_once('|')?;
    match state {
        "I" => {
            let (_token, stored) = rest.split_once('|')?;
            Some(if stored == fingerprint.0 { Claim::InFlight } else { Claim::Mismatch })
        }
        "D" => {
            let (stored, response) = rest.split_once('|')?;
            if stored != fingerprint.0 {
                return Some(Claim::Mismatch);
            }
            serde_json::from_str(response).ok().map(Claim::Replay)
        }
        _ => None,
    }
}

#[async_trait]
impl IdempotencyStore for RedisStore {
    async fn claim(&self, scope: &Scope, fingerprint: &Fingerprint, lease: Duration) -> Result<Claim, Unavailable> {
        let key = key(scope);
        let mut connection = self.connection().await?;
        // The marker can expire between a failed SET and the GET: then try once more.
        for _ in 0..3 {
            let held = Held::new(scope, fingerprint);
            let marker = ["I|", &held.token, "|", &fingerprint.0].concat();
            let options = redis::SetOptions::default()
                .conditional_set(redis::ExistenceCheck::NX)
                .with_expiration(redis::SetExpiry::PX(lease.as_millis() as u64));
            let set: Option<String> =
                match self.bounded(traces::redis("SET", connection.set_options(&key, marker, options))).await {
                    Ok(set) => set,
                    Err(err) => {
                        self.abandon(&connection, &key, &held.token, lease);
                        return Err(err);
                    }
                };
            if set.is_some() {
                return Ok(Claim::Started(held));
            }
            let current: Option<String> = self.bounded(traces::redis("GET", connection.get(&key))).await?;
            if let Some(claim) = current.as_deref().and_then(|v| parse(v, fingerprint)) {
                return Ok(claim);
            }
        }
        Err(Unavailable("the key changed state three times in a row".into()))
    }

    async fn complete(&self, held: &Held, response: &StoredResponse) -> Result<(), Unavailable> {
        let mut value = ["D|", &held.fingerprint.0, "|"].concat().into_bytes();
        serde_json::to_writer(&mut value, response).map_err(unavailable)?;
        let mut connection = self.connection().await?;
        let mut invocation = self.complete.key(key(&held.scope));
        invocation.arg(&held.token).arg(value).arg(RESULT_TTL.as_millis() as u64);
        let _: i64 = self.bounded(traces::redis("EVALSHA", invocation.invoke_async(&mut connection))).await?;
        Ok(())
    }

    async fn release(&self, held: &Held) -> Result<(), Unavailable> {
        let mut connection = self.connection().await?;
        let mut invocation = self.release.key(key(&held.scope));
        invocation.arg(&held.token);
        let _: i64 = self.bounded(traces::redis("EVALSHA", invocation.invoke_async(&mut connection))).await?;
        Ok(())
    }

    async fn ping(&self) -> Result<(), Unavailable> {
        let mut connection = self.connection().await?;
        let _: String = self.bounded(traces::redis("PING", redis::cmd("PING").query_async(&mut connection))).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_parse() {
        let fp = Fingerprint("abc".into());
        assert_eq!(parse("I|t1|abc", &fp), Some(Claim::InFlight));
        assert_eq!(parse("I|t1|xyz", &fp), Some(Claim::Mismatch));
        let response = StoredResponse { status: 201, headers: vec![], body: String::new() };
        let done = format!("D|abc|{}", serde_json::to_string(&response).unwrap());
        assert_eq!(parse(&done, &fp), Some(Claim::Replay(response)));
        assert_eq!(parse("D|zzz|{}", &fp), Some(Claim::Mismatch));
        assert_eq!(parse("junk", &fp), None);
    }
}
