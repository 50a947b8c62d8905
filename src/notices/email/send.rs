//! One attempt at an e-mail notice (the book's clients/email.md), through the outbox and its
//! schedule as every notice: a 2xx reply delivers it; a 4xx reply or a connection lost or never
//! made is tried again; a 5xx reply fails it, and one refusing the recipient (550 to 553) also
//! disables the endpoint, as a webhook's 410 does. `lastStatus` is the reply's code.

use chrono::{DateTime, Utc};
use lettre::AsyncTransport;

use super::{message, relay::Relay};
use crate::{
    core::storage::{Endpoint, Leased, Outcome},
    notices::delivery::{TIMEOUT, retry},
};

/// The replies that say the recipient's mailbox does not exist or takes nothing from us.
const RECIPIENT_REFUSED: std::ops::RangeInclusive<u16> = 550..=553;

/// Sends `notice` to `endpoint`'s address; what the attempt came to, as of `now()` after it.
pub async fn attempt(relay: &Relay, notice: &Leased, endpoint: &Endpoint, now: impl Fn() -> DateTime<Utc>) -> Outcome {
    let to = endpoint.url.loggable();
    let message = match message::build(relay, &notice.id.to_string(), &notice.kind, &notice.body, endpoint) {
        Ok(message) => message,
        Err(why) => {
            tracing::warn!(notice = %notice.id, cause = %why, "an e-mail notice could not be written; it is failed");
            return Outcome::Failed { status: None };
        }
    };
    let sent = match relay.transport(TIMEOUT).await {
        Ok(transport) => transport.send(message).await.map_err(Some),
        Err(why) => {
            tracing::info!(relay = %relay.host(), cause = %why, "the SMTP relay was not dialled; tried again later");
            Err(None)
        }
    };
    match sent {
        Ok(reply) => Outcome::Delivered { status: u16::from(reply.code()) },
        Err(Some(err)) => match err.status().map(u16::from) {
            Some(code) if err.is_permanent() && RECIPIENT_REFUSED.contains(&code) => {
                tracing::info!(endpoint = %to, status = code, "the relay refused the recipient: its endpoint is disabled");
                Outcome::Gone { status: code }
            }
            Some(code) if err.is_permanent() => {
                tracing::info!(endpoint = %to, status = code, "the relay refused an e-mail notice; it is failed");
                Outcome::Failed { status: Some(code) }
            }
            status => {
                // Not the error's text: the relay's reply may quote the address.
                let cause = if err.is_timeout() { "timed out" } else { "no reply, or a transient one" };
                tracing::info!(endpoint = %to, relay = %relay.host(), status = ?status, cause,
                    "an e-mail notice was not delivered; tried again later");
                retry(notice.attempts, status, None, now())
            }
        },
        Err(None) => retry(notice.attempts, None, None, now()),
    }
}
