//! A lingering close, as Go's and nginx's servers do it. When the service answers early (413
//! before the body arrived, 401 before an upload was read), hyper closes the socket with the
//! client's unread bytes still queued; the kernel then sends RST and many clients lose the
//! response they were sent. Here, closing first half-closes (FIN after the response), then
//! reads and discards what the client still sends, within a byte and time budget, so the
//! response arrives intact. Nothing read here is kept.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use poem::http::uri::Scheme;
use poem::{
    listener::Acceptor,
    web::{LocalAddr, RemoteAddr},
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::{Instant, Sleep},
};

/// At most this much is discarded after the response…
const DRAIN_BYTES: u64 = 64 * 1024 * 1024;
/// …for at most this long.
const DRAIN_TIME: Duration = Duration::from_secs(2);

pub struct LingeringAcceptor<A>(pub A);

impl<A: Acceptor> Acceptor for LingeringAcceptor<A> {
    type Io = LingeringIo<A::Io>;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.0.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(Self::Io, LocalAddr, RemoteAddr, Scheme)> {
        let (io, local, remote, scheme) = self.0.accept().await?;
        Ok((LingeringIo { io, drain: None }, local, remote, scheme))
    }
}

struct Drain {
    deadline: Pin<Box<Sleep>>,
    discarded: u64,
}

pub struct LingeringIo<T> {
    io: T,
    drain: Option<Drain>,
}

impl<T: AsyncRead + Unpin> AsyncRead for LingeringIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for LingeringIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
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
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.drain.is_none() {
            if let Err(err) = std::task::ready!(Pin::new(&mut this.io).poll_shutdown(cx)) {
                return Poll::Ready(Err(err));
            }
            this.drain =
                Some(Drain { deadline: Box::pin(tokio::time::sleep_until(Instant::now() + DRAIN_TIME)), discarded: 0 });
        }
        let drain = this.drain.as_mut().expect("set above");
        let mut scratch = [0u8; 16 * 1024];
        loop {
            if drain.discarded >= DRAIN_BYTES || drain.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => drain.discarded += buf.filled().len() as u64,
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
