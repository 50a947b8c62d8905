//! Sending the outbox (the book's clients/notices.md): each instance leases the notices due (on
//! PostgreSQL with `FOR UPDATE SKIP LOCKED`, so each is taken by one instance), sends each signed,
//! and records the attempt. A 2xx within the timeout delivers it; anything else is tried again on
//! the schedule below (with jitter; a longer `Retry-After` is honoured), then the notice is
//! `failed`. A 410 disables the endpoint. An instance that stops mid-attempt leaves its lease to
//! run out: the notice is sent again, with the same `webhook-id`.

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Timelike, Utc};
use poem::http::{HeaderMap, StatusCode};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Notices, address, email, signing};
use crate::core::storage::{Format, Leased, Outcome};

/// How often each instance looks for notices due.
pub const POLL: Duration = Duration::from_secs(1);
/// How long an attempt may take: a receiver slower than this has failed it.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// How long a notice taken by an instance stays its own: well past an attempt's timeout.
const LEASE: chrono::Duration = chrono::Duration::seconds(60);
/// Attempts in flight at once, per instance.
pub const IN_FLIGHT: usize = 16;
/// The waits before each retry: after the first attempt about 5 s, … then failed.
pub const RETRIES: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];
/// The longest `Retry-After` honoured.
const LONGEST_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The HTTP client notices go through: no redirects, no proxy, bounded in time, and a resolver
/// that drops every address notices may not reach.
pub fn client(allow: address::AllowList) -> anyhow::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder()
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(address::CheckedResolver { allow }))
        .user_agent(concat!("tandem-notices/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

/// Takes the notices due that this instance has room for, and sends each in its own task.
pub async fn deliver_due(notices: &Arc<Notices>, room: &Arc<Semaphore>) -> anyhow::Result<usize> {
    let free = room.available_permits();
    if free == 0 {
        return Ok(0);
    }
    let now = notices.now();
    let leased = notices.store().lease_due(now, now + LEASE, free as u32).await?;
    let taken = leased.len();
    for notice in leased {
        let permit = room.clone().try_acquire_owned().expect("no more are leased than there is room for");
        tokio::spawn(attempt(notices.clone(), notice, permit));
    }
    Ok(taken)
}

async fn attempt(notices: Arc<Notices>, notice: Leased, _permit: OwnedSemaphorePermit) {
    let kind = notice.kind.clone();
    let outcome = send(&notices, &notice).await;
    let at = notices.now();
    let label = match outcome {
        Outcome::Delivered { .. } => "delivered",
        Outcome::Retry { .. } => "retried",
        Outcome::Failed { .. } => "failed",
        Outcome::Gone { .. } => "disabled",
    };
    if let Some(kind) = super::payload::KINDS.iter().find(|k| **k == kind) {
        notices.metrics.notice(kind, label);
    }
    if let Err(err) = notices.store().record_attempt(notice.id, at, outcome).await {
        // The lease runs out and the notice is tried again, under the same id.
        tracing::warn!(cause = %err, notice = %notice.id, "a notice's attempt was not recorded");
        return;
    }
    // A retry due within a poll or two is sent when it is due, not at the poll after it.
    if let Outcome::Retry { next, .. } = outcome
        && let Ok(wait) = (next - at).to_std()
        && wait < SOON
    {
        let wake = notices.due.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            wake.notify_one();
        });
    }
}

/// A retry due sooner than this wakes the sending when it is due.
const SOON: Duration = Duration::from_secs(60);

/// One attempt, and what it came to.
async fn send(notices: &Notices, notice: &Leased) -> Outcome {
    let Some(endpoint) = &notice.endpoint else {
        // Removed, replaced or disabled since the notice was written: nothing to send it to.
        return Outcome::Failed { status: None };
    };
    if endpoint.format == Format::Email {
        let Some(relay) = &notices.relay else {
            // E-mail endpoints are taken only with a relay; this one was set while one was.
            tracing::warn!(notice = %notice.id, "an e-mail notice is due but no SMTP relay is set; tried again later");
            return retry(notice.attempts, None, None, notices.now());
        };
        return email::send::attempt(relay, notice, endpoint, || notices.now()).await;
    }
    let host = endpoint.url.loggable();
    if address::literal_refused(&endpoint.url, &notices.allow) {
        tracing::warn!(endpoint = %host, notice = %notice.id, "a notice's address is refused");
        return Outcome::Failed { status: None };
    }
    let id = notice.id.to_string();
    let timestamp = Utc::now().timestamp();
    let signature = signing::signature(&endpoint.secret, &id, timestamp, notice.body.as_bytes());
    let sent = notices
        .sender
        .post(endpoint.url.url().clone())
        .header("content-type", "application/json")
        .header("webhook-id", &id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(notice.body.clone())
        .send()
        .await;
    let now = notices.now();
    match sent {
        Ok(answer) if answer.status().is_success() => Outcome::Delivered { status: answer.status().as_u16() },
        Ok(answer) if answer.status() == StatusCode::GONE => {
            tracing::info!(endpoint = %host, "a receiver answered 410: its endpoint is disabled");
            Outcome::Gone { status: StatusCode::GONE.as_u16() }
        }
        Ok(answer) => {
            let wait = retry_after(answer.headers(), now);
            tracing::info!(endpoint = %host, status = answer.status().as_u16(), "a notice was refused; tried again later");
            retry(notice.attempts, Some(answer.status().as_u16()), wait, now)
        }
        Err(err) => {
            // Without the URL: its path may be a credential.
            tracing::info!(endpoint = %host, cause = %err.without_url(), "a notice was not delivered; tried again later");
            retry(notice.attempts, None, None, now)
        }
    }
}

/// What follows a failed attempt that ended at `now`, the `attempts` before it having failed too.
pub fn retry(attempts: u32, status: Option<u16>, retry_after: Option<Duration>, now: DateTime<Utc>) -> Outcome {
    let Some(wait) = RETRIES.get(attempts as usize) else { return Outcome::Failed { status } };
    let asked = retry_after.unwrap_or_default().min(LONGEST_RETRY_AFTER);
    let next = due(now, *wait).max(whole_second(now + chrono::Duration::from_std(asked).unwrap_or_default()));
    Outcome::Retry { status, next }
}

/// When a retry `wait` after `now` is due: spread by up to a tenth either way, so receivers are
/// not retried in step, and on a whole second (as every store keeps a time) still within that
/// tenth: the second is rounded up from a point at least one second before the latest.
fn due(now: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    let (earliest, latest) = (wait.mul_f64(0.9), wait.mul_f64(1.1));
    let room = latest.saturating_sub(earliest + Duration::from_secs(1));
    let mut bytes = [0u8; 2];
    let _ = getrandom::fill(&mut bytes);
    let spread = room.mul_f64(f64::from(u16::from_le_bytes(bytes)) / f64::from(u16::MAX));
    whole_second(now + chrono::Duration::from_std(earliest + spread).unwrap_or_default())
}

/// `at`, rounded up to a whole second.
fn whole_second(at: DateTime<Utc>) -> DateTime<Utc> {
    let down = at.with_nanosecond(0).unwrap_or(at);
    if down == at { at } else { down + chrono::Duration::seconds(1) }
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let raw = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(seconds) = raw.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at: DateTime<Utc> = httpdate::parse_http_date(raw).ok()?.into();
    (at - now).to_std().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_follow_the_schedule_then_fail() {
        for now in ["2026-12-01T00:00:00Z", "2026-12-01T00:00:00.001Z", "2026-12-01T00:00:00.999Z"] {
            let now: DateTime<Utc> = now.parse().unwrap();
            the_schedule_from(now);
        }
    }

    fn the_schedule_from(now: DateTime<Utc>) {
        for (attempts, wait) in RETRIES.iter().enumerate() {
            let Outcome::Retry { next, status } = retry(attempts as u32, Some(500), None, now) else { panic!() };
            assert_eq!(status, Some(500));
            let waited = (next - now).to_std().unwrap().as_secs_f64();
            let expected = wait.as_secs_f64();
            assert!(waited >= expected * 0.9 && waited <= expected * 1.1, "{attempts}: {waited} vs {expected}");
            assert_eq!(next.nanosecond(), 0, "on a whole second, as every store keeps it");
        }
        assert_eq!(retry(RETRIES.len() as u32, Some(503), None, now), Outcome::Failed { status: Some(503) });
    }

    #[test]
    fn a_longer_retry_after_is_honoured() {
        let now: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "120".parse().unwrap());
        let wait = retry_after(&headers, now);
        assert_eq!(wait, Some(Duration::from_secs(120)));
        let Outcome::Retry { next, .. } = retry(0, Some(429), wait, now) else { panic!() };
        assert_eq!((next - now).num_seconds(), 120);
        headers.insert("retry-after", "Tue, 01 Dec 2026 00:10:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(600)));
    }
}
