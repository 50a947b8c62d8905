//! Rate limits per tenant and token subject: a token bucket refilled at `TANDEM_RATE_LIMIT`
//! tokens a second, holding twice that. Kept in this process (see the README for what that
//! means with several instances).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

struct Bucket {
    tokens: f64,
    at: Instant,
}

pub struct RateLimiter {
    rate: f64,
    burst: f64,
    buckets: Mutex<HashMap<(String, String), Bucket>>,
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

impl RateLimiter {
    pub fn new(per_second: u32) -> Self {
        let rate = f64::from(per_second.max(1));
        Self { rate, burst: rate * 2.0, buckets: Mutex::new(HashMap::new()) }
    }

    pub fn check(&self, tenant: &str, subject: &str, now: Instant) -> Decision {
        let mut buckets = self.buckets.lock().expect("rate limit buckets");
        if buckets.len() > SWEEP_AT {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket =
            buckets.entry((tenant.to_string(), subject.to_string())).or_insert(Bucket { tokens: self.burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * self.rate).min(self.burst);
        bucket.at = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        let missing = if allowed { self.burst - bucket.tokens } else { 1.0 - bucket.tokens };
        Decision {
            allowed,
            limit: self.rate as u32,
            remaining: bucket.tokens.floor() as u32,
            reset: Duration::from_secs_f64(missing / self.rate).as_secs_f64().ceil() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_of_twice_the_rate_then_refills() {
        let limiter = RateLimiter::new(5);
        let start = Instant::now();
        let allowed = (0..12).filter(|_| limiter.check("t", "ada", start).allowed).count();
        assert_eq!(allowed, 10);
        let refused = limiter.check("t", "ada", start);
        assert_eq!((refused.allowed, refused.remaining, refused.reset), (false, 0, 1));
        assert!(limiter.check("t", "bob", start).allowed, "buckets are per subject");
        assert!(limiter.check("u", "ada", start).allowed, "and per tenant");
        assert!(limiter.check("t", "ada", start + Duration::from_millis(250)).allowed, "a token is back after 1/5 s");
    }
}
