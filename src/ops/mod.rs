//! Operating the service: Prometheus metrics, usage of deprecated versions, rate limits and
//! maintenance mode.

pub mod activity;
pub mod maintenance;
pub mod metrics;
pub mod newcomers;
pub mod rate_limit;
pub mod recent_writes;
pub mod usage;
