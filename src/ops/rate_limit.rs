//! Rate limits per tenant and token subject: a token bucket refilled at `TANDEM_RATE_LIMIT`
//! tokens a second, holding twice that.
//!
//! Alone, an instance keeps the bucket itself. With Redis, the bucket lives in Redis and each
//! instance leases tokens from it in small chunks (one round trip per chunk, not per request),
//! spending them locally; if Redis doesn't answer, the instance falls back to its own bucket
//! rather than failing traffic.

use crate::telemetry::traces;
use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use redis::Script;

use crate::redis_link::RedisLink;

struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Tokens leased from the shared bucket and not yet spent, with when they expire.
struct Lease {
    tokens: u32,
    until: Instant,
}

/// Something per client (tenant, then subject), found without building a key: every request
/// looks its client up, and only a new client allocates.
struct PerClient<V> {
    tenants: HashMap<String, HashMap<String, V>>,
    /// Clients held, across tenants (what `SWEEP_AT` bounds), kept rather than counted.
    len: usize,
}

impl<V> PerClient<V> {
    fn new() -> Self {
        Self { tenants: HashMap::new(), len: 0 }
    }

    fn get_mut(&mut self, tenant: &str, subject: &str) -> Option<&mut V> {
        self.tenants.get_mut(tenant)?.get_mut(subject)
    }

    fn get_or_insert(&mut self, tenant: &str, subject: &str, new: impl FnOnce() -> V) -> &mut V {
        if !self.tenants.contains_key(tenant) {
            self.tenants.insert(tenant.to_string(), HashMap::new());
        }
        let of_tenant = self.tenants.get_mut(tenant).expect("inserted above");
        if !of_tenant.contains_key(subject) {
            of_tenant.insert(subject.to_string(), new());
            self.len += 1;
        }
        of_tenant.get_mut(subject).expect("inserted above")
    }

    fn len(&self) -> usize {
        self.len
    }

    fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        for of_tenant in self.tenants.values_mut() {
            of_tenant.retain(|_, v| keep(v));
        }
        self.tenants.retain(|_, of_tenant| !of_tenant.is_empty());
        self.len = self.tenants.values().map(HashMap::len).sum();
    }
}

pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<PerClient<Bucket>>,
    shared: Option<Shared>,
}

struct Shared {
    link: RedisLink,
    take: Script,
    leases: Mutex<PerClient<Lease>>,
    /// After a failure, Redis is left alone until then (requests don't each wait out a timeout).
    down_until: Mutex<Option<Instant>>,
}

/// What a request learns from the limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until a token is back (when refused) or the bucket is full.
    pub reset: u64,
}

/// Buckets are dropped once full and idle, past this many.
const SWEEP_AT: usize = 10_000;
/// A lease is spent within this, or given up (so idle instances don't hoard tokens).
const LEASE_LIFE: Duration = Duration::from_millis(500);

/// The shared bucket in Redis: refill, then take up to ARGV[4] tokens. Returns
/// {taken, tokens left (floor), ms until one token}. Instances' calls may arrive out of the
/// order of their clocks (ARGV[3]): `at` never moves back, or the time between a later call
/// and an earlier one would be refilled twice.
pub const TAKE: &str = r"
local rate, burst, now, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens, at = tonumber(state[1]) or burst, tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local taken = math.min(want, math.floor(tokens))
tokens = tokens - taken
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(math.max(at, now)))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
local wait = 0
if taken == 0 then wait = math.ceil((1 - tokens) / rate * 1000) end
return {taken, math.floor(tokens), wait}";

impl RateLimiter {
    /// `per_second` for each client, on the shared Redis when there is one.
    pub fn new(per_second: u32, link: Option<RedisLink>) -> Self {
        let rate = f64::from(per_second.max(1));
        let shared = link.map(|link| Shared {
            link,
            take: Script::new(TAKE),
            leases: Mutex::new(PerClient::new()),
            down_until: Mutex::new(None),
        });
        Self { rate, burst: rate * 2.0, buckets: Mutex::new(PerClient::new()), shared }
    }

    /// A lease's size: a tenth of a second's worth, at least one and at most 100, so that
    /// many concurrent leases can't drain the shared bucket ahead of use.
    fn chunk(&self) -> u32 {
        ((self.rate / 10.0).ceil() as u32).clamp(1, 100)
    }

    pub async fn check(&self, tenant: &str, subject: &str) -> Decision {
        match &self.shared {
            Some(shared) => match self.check_shared(shared, tenant, subject).await {
                Some(decision) => decision,
                None => self.check_local(tenant, subject, Instant::now()),
            },
            None => self.check_local(tenant, subject, Instant::now()),
        }
    }

    /// `None` when Redis doesn't answer: the caller falls back to the local bucket.
    async fn check_shared(&self, shared: &Shared, tenant: &str, subject: &str) -> Option<Decision> {
        let now = Instant::now();
        {
            let mut leases = shared.leases.lock().expect("rate limit leases");
            if let Some(lease) = leases.get_mut(tenant, subject).filter(|l| l.tokens > 0 && l.until > now) {
                lease.tokens -= 1;
                return Some(self.decision(true, lease.tokens, 0));
            }
        }
        if shared.down_until.lock().expect("rate limit state").is_some_and(|until| until > now) {
            return None;
        }
        // Boxed: a lease is taken once per chunk of requests, and Redis's future is several KB
        // that every request's future would otherwise carry.
        Box::pin(self.lease(shared, tenant, subject, now)).await
    }

    /// Leases a chunk of tokens from the shared bucket, and spends one.
    async fn lease(&self, shared: &Shared, tenant: &str, subject: &str, now: Instant) -> Option<Decision> {
        let redis_key = format!("tandem:rate:{tenant}:{subject}");
        let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
        let mut invocation = shared.take.key(redis_key);
        invocation.arg(self.rate).arg(self.burst).arg(millis).arg(self.chunk());
        let call = async {
            let mut connection = shared.link.connection().await?;
            traces::redis("EVALSHA", invocation.invoke_async::<(u32, u32, u64)>(&mut connection)).await
        };
        let answer = shared.link.bounded(Duration::from_millis(250), call).await.ok();
        let Some((taken, left, wait_ms)) = answer else {
            *shared.down_until.lock().expect("rate limit state") = Some(now + Duration::from_secs(1));
            return None;
        };
        // Concurrent misses each lease: what they get adds up (never overwrites), and a request
        // that got nothing may still find tokens another one just leased.
        let mut leases = shared.leases.lock().expect("rate limit leases");
        if leases.len() > SWEEP_AT {
            leases.retain(|l| l.until > now);
        }
        let lease = leases.get_or_insert(tenant, subject, || Lease { tokens: 0, until: now });
        if lease.until <= now {
            lease.tokens = 0;
        }
        lease.tokens += taken;
        if taken > 0 {
            lease.until = now + LEASE_LIFE;
        }
        if lease.tokens == 0 {
            let reset = wait_ms.div_ceil(1000).max(1);
            return Some(Decision { allowed: false, limit: self.rate as u32, remaining: 0, reset });
        }
        lease.tokens -= 1;
        Some(self.decision(true, left + lease.tokens, 0))
    }

    fn decision(&self, allowed: bool, remaining: u32, reset: u64) -> Decision {
        Decision { allowed, limit: self.rate as u32, remaining, reset }
    }

    pub fn check_local(&self, tenant: &str, subject: &str, now: Instant) -> Decision {
        let mut buckets = self.buckets.lock().expect("rate limit buckets");
        if buckets.len() > SWEEP_AT {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = buckets.get_or_insert(tenant, subject, || Bucket { tokens: self.burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * self.rate).min(self.burst);
        bucket.at = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        let missing = if allowed { self.burst - bucket.tokens } else { 1.0 - bucket.tokens };
        self.decision(allowed, bucket.tokens.floor() as u32, (missing / self.rate).ceil() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_of_twice_the_rate_then_refills() {
        let limiter = RateLimiter::new(5, None);
        let start = Instant::now();
        let allowed = (0..12).filter(|_| limiter.check_local("t", "ada", start).allowed).count();
        assert_eq!(allowed, 10);
        let refused = limiter.check_local("t", "ada", start);
        assert_eq!((refused.allowed, refused.remaining, refused.reset), (false, 0, 1));
        assert!(limiter.check_local("t", "bob", start).allowed, "buckets are per subject");
        assert!(limiter.check_local("u", "ada", start).allowed, "and per tenant");
        assert!(
            limiter.check_local("t", "ada", start + Duration::from_millis(250)).allowed,
            "a token is back after 1/5 s"
        );
    }
}
