//! Connections a hostile client cannot hoard. At most `TANDEM_MAX_CONNECTIONS` are open at once:
//! past that the service stops accepting (the kernel's backlog holds the rest) instead of
//! spending memory and file descriptors on them. And a request's headers must arrive within
//! `TANDEM_HEADER_READ_TIMEOUT_MS` of its first byte, or the connection closes: a client that
//! trickles its headers (slowloris) holds nothing for long. poem's server sets neither. A
//! connection that sends nothing for `TANDEM_IDLE_TIMEOUT_MS` between requests is closed too:
//! here, on the one timer the connection has, rather than by poem's `idle_timeout`, which
//! wakes a watcher task on every read and write.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc, LazyLock,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use poem::{listener::Acceptor, web::LocalAddr};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::{OwnedSemaphorePermit, Semaphore},
    time::{Instant, Sleep},
};

use super::{
    head::{Head, HeadLimits, TooLarge},
    linger::Linger,
    listener::{Accepted, Backlog},
    unread_body::Unread,
};

/// The answer to a head too large to read, from what it broke and the head's first bytes: a
/// whole HTTP/1.1 response, written by the guard itself ([`super::head_refusal`]).
pub type RefuseHead = Arc<dyn Fn(TooLarge, &[u8]) -> Vec<u8> + Send + Sync>;

/// What the guard counts, for `/metrics`.
#[derive(Debug, Default)]
pub struct Connections {
    pub open: AtomicUsize,
    pub limit: AtomicUsize,
}

/// How long a connection may take: to send a request's headers, and to send nothing at all
/// between requests.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub headers: Duration,
    pub idle: Duration,
}

pub struct GuardedAcceptor<A> {
    inner: A,
    permits: Arc<Semaphore>,
    timeouts: Timeouts,
    counts: Arc<Connections>,
    heads: Heads,
}

/// How large a request's head may be, and who answers one that is larger.
#[derive(Clone)]
pub struct Heads {
    pub limits: HeadLimits,
    pub refuse: RefuseHead,
}

impl<A> GuardedAcceptor<A> {
    pub fn new(inner: A, max_connections: usize, timeouts: Timeouts, counts: Arc<Connections>, heads: Heads) -> Self {
        counts.limit.store(max_connections, Ordering::Relaxed);
        Self { inner, permits: Arc::new(Semaphore::new(max_connections)), timeouts, counts, heads }
    }
}

impl<A: Acceptor> Acceptor for GuardedAcceptor<A> {
    type Io = GuardedIo<A::Io>;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.inner.local_addr()
    }

    async fn accept(&mut self) -> io::Result<Accepted<Self::Io>> {
        // Waits for a free slot before taking the next connection off the backlog.
        let permit = self.permits.clone().acquire_owned().await.map_err(io::Error::other)?;
        let accepted = self.inner.accept().await?;
        Ok(self.guarded(permit, accepted))
    }
}

impl<A: Backlog> Backlog for GuardedAcceptor<A> {
    fn take_waiting(&mut self) -> Option<io::Result<Accepted<Self::Io>>> {
        // Without a free slot what waits stays in the backlog, as it would while serving.
        let permit = self.permits.clone().try_acquire_owned().ok()?;
        Some(self.inner.take_waiting()?.map(|accepted| self.guarded(permit, accepted)))
    }
}

impl<A: Acceptor> GuardedAcceptor<A> {
    fn guarded(
        &self,
        permit: OwnedSemaphorePermit,
        (io, local, remote, scheme): Accepted<A::Io>,
    ) -> Accepted<GuardedIo<A::Io>> {
        self.counts.open.fetch_add(1, Ordering::Relaxed);
        let slot = Slot { _permit: permit, counts: self.counts.clone() };
        (GuardedIo::new(io, self.timeouts, slot, self.heads.clone()), local, remote, scheme)
    }
}

/// A connection's place among the open ones, given back when it closes.
struct Slot {
    _permit: OwnedSemaphorePermit,
    counts: Arc<Connections>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.counts.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Where a connection is in its current request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Writing an answer, or between requests: nothing read since the answer began. The
    /// deadline is the idle timeout, counted from the last write.
    Idle,
    /// Reading a request's headers, which must end (a blank line) by the deadline.
    Headers,
    /// Headers done: the body and the handler take as long as the request timeout lets them.
    Request,
    /// An HTTP/2 connection (its preface read): its streams are hyper's to bound; the guard
    /// only counts the connection.
    Untracked,
    /// Writing the answer to a request whose body was not read to its end: the connection's
    /// last ([`super::unread_body`]). What is read after it is the rest of that body, never a
    /// request: nothing is observed, and nothing answered, until the connection closes.
    Closing,
}

pub struct GuardedIo<T> {
    io: T,
    timeouts: Timeouts,
    phase: Phase,
    /// When the current phase runs out (headers too slow, or idle too long).
    deadline: Instant,
    /// The connection's one timer, armed at or before `deadline`. It may fire early (it is
    /// moved only when it must move earlier, or has fired): then it is armed again at
    /// `deadline`. Moving it on every request was a timer-wheel update a request.
    timer: Pin<Box<Sleep>>,
    /// Whether the timer was polled since it last moved: it then wakes the connection's task
    /// when it fires, and need not be polled again until then.
    polled: bool,
    /// The last bytes of headers read so far, to find `\r\n\r\n` across reads.
    tail: [u8; 3],
    /// The close, which lingers to read what the client still sends ([`Linger`]).
    linger: Linger,
    /// The head being read, counted against the limits (only past their smallest breach).
    head: Head,
    heads: Heads,
    /// The guard's own answer to a head too large, and how much of it is written.
    refusing: Option<(Vec<u8>, usize)>,
    /// Told by the connection's requests when an answer comes before its body was read.
    unread: Unread,
    _slot: Slot,
}

/// A connection whose requests can tell its guard that an answer came before its body was read.
pub trait Watched {
    fn unread(&self) -> Unread;
}

impl<T> Watched for GuardedIo<T> {
    fn unread(&self) -> Unread {
        self.unread.clone()
    }
}

/// The blank line that ends a request's headers, searched with one searcher built once.
static BLANK_LINE: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"\r\n\r\n"));

impl<T> GuardedIo<T> {
    fn new(io: T, timeouts: Timeouts, slot: Slot, heads: Heads) -> Self {
        let deadline = Instant::now() + timeouts.idle;
        let timer = Box::pin(tokio::time::sleep_until(deadline));
        let linger = Linger::default();
        Self {
            io,
            timeouts,
            phase: Phase::Idle,
            deadline,
            timer,
            polled: false,
            tail: [0; 3],
            linger,
            head: Head::default(),
            heads,
            refusing: None,
            unread: Unread::default(),
            _slot: slot,
        }
    }

    /// Follows the bytes just read. A request whose headers end in its first read is at once
    /// past them; otherwise its first byte starts the headers' deadline, and the blank line
    /// that ends them lifts it. A head too large is answered by the guard: the limit it broke.
    fn observe(&mut self, read: &[u8]) -> Option<TooLarge> {
        if read.is_empty() || matches!(self.phase, Phase::Untracked | Phase::Closing) {
            return None;
        }
        if self.phase == Phase::Idle {
            if read.starts_with(b"PRI * HTTP/2.0") {
                self.phase = Phase::Untracked;
                return None;
            }
            self.head = Head::default();
            if let Some(end) = BLANK_LINE.find(read) {
                self.phase = Phase::Request;
                // A head this small breaks no limit: most requests count nothing.
                let head = &read[..end + 4];
                if self.heads.limits.may_break(head) {
                    return self.head.follow(head, &self.heads.limits).0;
                }
                return None;
            }
            self.phase = Phase::Headers;
            self.tail = [0; 3];
            self.deadline = Instant::now() + self.timeouts.headers;
            self.arm();
        }
        if self.phase != Phase::Headers {
            return None;
        }
        if let (Some(too), _) = self.head.follow(read, &self.heads.limits) {
            return Some(too);
        }
        // The blank line may span the previous read and this one: its last three bytes and
        // this one's first three, then this read alone.
        let mut seam = [0u8; 6];
        seam[..3].copy_from_slice(&self.tail);
        let head = read.len().min(3);
        seam[3..3 + head].copy_from_slice(&read[..head]);
        if seam[..3 + head].windows(4).any(|w| w == b"\r\n\r\n") || BLANK_LINE.find(read).is_some() {
            self.phase = Phase::Request;
        } else if read.len() >= 3 {
            self.tail.copy_from_slice(&read[read.len() - 3..]);
        } else {
            self.tail.copy_from_slice(&seam[head..head + 3]);
        }
        None
    }

    /// Waiting for bytes: whether the wait is over (headers too slow, or idle too long). The
    /// timer is polled, so that the connection's task wakes when it fires.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        if matches!(self.phase, Phase::Request | Phase::Untracked | Phase::Closing) {
            return false;
        }
        if self.polled && !self.timer.is_elapsed() {
            return false;
        }
        while self.poll_timer(cx).is_ready() {
            if Instant::now() >= self.deadline {
                return true;
            }
            // Fired early, at an earlier deadline: armed again at this one.
            self.timer.as_mut().reset(self.deadline);
        }
        self.polled = true;
        false
    }

    /// Bytes of an answer are written: whatever is read next is a new request, and the idle
    /// timeout counts from this write (an answer that keeps being written is never idle). The
    /// timer is polled when the answer begins, so that the task wakes when it fires even if
    /// the next read was asked for before the answer (hyper reads ahead while a request is
    /// answered). An interim answer (`100 Continue`) is not the answer: the body follows it.
    /// An answer that came before its request's body was read is the connection's last: what
    /// follows it is that body ([`Phase::Closing`]).
    fn answering(&mut self, cx: &mut Context<'_>, written: &[u8]) {
        match self.phase {
            Phase::Untracked | Phase::Closing => return,
            Phase::Request if written.starts_with(b"HTTP/1.1 1") => return,
            Phase::Request if self.unread.take() => {
                self.phase = Phase::Closing;
                return;
            }
            _ => {}
        }
        self.deadline = Instant::now() + self.timeouts.idle;
        if self.phase != Phase::Idle {
            self.phase = Phase::Idle;
            self.arm();
            if self.poll_timer(cx).is_ready() {
                self.timer.as_mut().reset(self.deadline);
                let _ = self.poll_timer(cx);
            }
            self.polled = true;
        }
    }

    /// Polls the timer outside the task's cooperative budget: a timer polled with the budget
    /// spent answers `Pending` without keeping the waker, and `polled` would then wait for a
    /// wake that never comes.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut tokio::task::unconstrained(self.timer.as_mut())).poll(cx)
    }

    /// Moves the timer to the deadline if it would fire after it (a later one fires early, and
    /// is armed again then: on a busy connection the timer seldom moves).
    fn arm(&mut self) {
        if self.timer.deadline() > self.deadline {
            self.timer.as_mut().reset(self.deadline);
            self.polled = false;
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for GuardedIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.refusing.is_some() {
            return this.poll_refuse(cx);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => match this.observe(&buf.filled()[before..]) {
                None => Poll::Ready(Ok(())),
                Some(too) => {
                    // hyper never sees this head: the guard answers it, then ends the connection.
                    buf.set_filled(before);
                    this.refusing = Some(((this.heads.refuse)(too, this.head.start()), 0));
                    this.poll_refuse(cx)
                }
            },
            Poll::Pending if this.expired(cx) => match this.phase {
                Phase::Headers => {
                    Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "request headers took too long")))
                }
                // Idle too long: read as the end of the stream, which closes the connection
                // between requests, as a client closing it would.
                _ => Poll::Ready(Ok(())),
            },
            other => other,
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> GuardedIo<T> {
    /// Writes the guard's own answer to a head too large, shuts the connection, lingers while
    /// the client sends the rest of its head, then ends the connection for hyper with an error
    /// (it wrote nothing itself, and writes nothing).
    fn poll_refuse(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some((answer, written)) = self.refusing.as_mut() else { return Poll::Ready(Ok(())) };
        while *written < answer.len() {
            match std::task::ready!(Pin::new(&mut self.io).poll_write(cx, &answer[*written..])) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => *written += n,
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        if !self.linger.began() {
            std::task::ready!(Pin::new(&mut self.io).poll_shutdown(cx))?;
            self.linger.begin();
        }
        let io = &mut self.io;
        std::task::ready!(self.linger.poll_drain(cx, |cx, buf| Pin::new(&mut *io).poll_read(cx, buf)))?;
        Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, "a request head too large was answered")))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for GuardedIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.answering(cx, buf);
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.answering(cx, bufs.iter().find(|b| !b.is_empty()).map_or(&[], |b| &b[..]));
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    /// Shuts the connection down, then lingers: what the client still sends is read within the
    /// linger's budget and discarded, never as a request (a closing connection answers nothing
    /// more).
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.linger.began() {
            std::task::ready!(Pin::new(&mut this.io).poll_shutdown(cx))?;
            this.linger.begin();
        }
        let io = &mut this.io;
        this.linger.poll_drain(cx, |cx, buf| Pin::new(&mut *io).poll_read(cx, buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io() -> GuardedIo<()> {
        let counts = Arc::new(Connections::default());
        let permit = Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
        let timeouts = Timeouts { headers: Duration::from_secs(1), idle: Duration::from_secs(5) };
        let limits = HeadLimits { request_line: 8192, field: 16384, fields: 65536, count: 100 };
        let heads = Heads { limits, refuse: Arc::new(|_, _| Vec::new()) };
        GuardedIo::new((), timeouts, Slot { _permit: permit, counts }, heads)
    }

    #[tokio::test]
    async fn headers_end_at_a_blank_line_even_split_across_reads() {
        let mut io = io();
        io.observe(b"GET / HTTP/1.1\r\nHost: x\r");
        assert_eq!(io.phase, Phase::Headers);
        io.observe(b"\n\r");
        assert_eq!(io.phase, Phase::Headers);
        io.observe(b"\n");
        assert_eq!(io.phase, Phase::Request);
        io.observe(b"body bytes without a blank line");
        assert_eq!(io.phase, Phase::Request);
    }

    #[tokio::test]
    async fn a_blank_line_is_found_however_the_reads_split_it() {
        let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        for first in 1..request.len() {
            for second in first..request.len() {
                let mut io = io();
                io.observe(&request[..first]);
                io.observe(&request[first..second]);
                assert_ne!(io.phase, Phase::Request, "split at {first} and {second}: not yet");
                io.observe(&request[second..]);
                assert_eq!(io.phase, Phase::Request, "split at {first} and {second}");
            }
        }
    }
}
