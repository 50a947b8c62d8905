//! A lingering close, as Go's and nginx's servers do it. When the service answers early (413
//! before the body arrived, 401 before an upload was read), hyper closes the socket with the
//! client's unread bytes still queued; the kernel then sends RST and many clients lose the
//! response they were sent. Here, closing first half-closes (FIN after the response), then
//! reads and discards what the client still sends, within a byte and time budget, so the
//! response arrives intact. Nothing read here is kept, nor read as a request. Every
//! connection's guard ([`super::guard`]) closes this way, within the budget below.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use tokio::{
    io::ReadBuf,
    time::{Instant, Sleep},
};

/// At most this much is discarded after the response…
const DRAIN_BYTES: u64 = 64 * 1024 * 1024;
/// …for at most this long.
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// A connection's lingering close: not begun, or draining since its side was shut.
#[derive(Default)]
pub struct Linger(Option<Drain>);

struct Drain {
    deadline: Pin<Box<Sleep>>,
    discarded: u64,
}

impl Linger {
    /// Whether the connection's side was shut and the drain began.
    pub fn began(&self) -> bool {
        self.0.is_some()
    }

    /// Once the connection's side is shut: the budget starts.
    pub fn begin(&mut self) {
        self.0 =
            Some(Drain { deadline: Box::pin(tokio::time::sleep_until(Instant::now() + DRAIN_TIME)), discarded: 0 });
    }

    /// Discards what `read` still gets from the client, until the client closes its side,
    /// reading fails, or the budget is spent. Either way the close succeeds: the response went
    /// out before.
    pub fn poll_drain(
        &mut self,
        cx: &mut Context<'_>,
        mut read: impl FnMut(&mut Context<'_>, &mut ReadBuf<'_>) -> Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        let Some(drain) = self.0.as_mut() else { return Poll::Ready(Ok(())) };
        let mut scratch = [0u8; 16 * 1024];
        loop {
            if drain.discarded >= DRAIN_BYTES || drain.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => drain.discarded += buf.filled().len() as u64,
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
