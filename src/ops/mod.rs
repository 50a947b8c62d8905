//! Operating the service: Prometheus metrics, rate limits, maintenance mode, and who wrote a
//! moment ago (for the replica).

pub mod maintenance;
pub mod metrics;
pub mod rate_limit;
pub mod recent_writes;
