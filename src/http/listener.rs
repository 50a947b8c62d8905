//! The listening socket, with a way to take what waits in its backlog at once.
//!
//! Closing a listening socket resets the connections the kernel completed but nobody accepted,
//! and a proxy may have sent a request on one already: for a POST it answers 502 and cannot
//! retry. tokio's `accept` only looks when the reactor has seen the socket readable, which on
//! a busy machine is milliseconds late, so at shutdown [`Listener::take_waiting`] asks the
//! kernel itself until the backlog is empty, and the socket closes right after.

use std::{io, net::TcpListener as StdListener, os::fd::AsFd};

use poem::{
    http::uri::Scheme,
    listener::{Acceptor, TcpAcceptor},
    web::{LocalAddr, RemoteAddr},
};
use tokio::net::TcpStream;

/// An accepted connection and its ends, as poem's acceptors give them.
pub type Accepted<Io> = (Io, LocalAddr, RemoteAddr, Scheme);

/// An acceptor that can take, without waiting, the connections already completed.
pub trait Backlog: Acceptor {
    /// The next connection the kernel completed, or `None` when none waits.
    fn take_waiting(&mut self) -> Option<io::Result<Accepted<Self::Io>>>;
}

pub struct Listener {
    acceptor: TcpAcceptor,
    /// The same socket through a second descriptor, read without the reactor. Both close
    /// together when the listener is dropped.
    backlog: StdListener,
    local: LocalAddr,
}

impl Listener {
    pub async fn bind(address: &str) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(address).await?;
        let backlog = StdListener::from(listener.as_fd().try_clone_to_owned()?);
        let local = LocalAddr(listener.local_addr()?.into());
        Ok(Self { acceptor: TcpAcceptor::from_tokio(listener)?, backlog, local })
    }
}

impl Acceptor for Listener {
    type Io = TcpStream;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.acceptor.local_addr()
    }

    async fn accept(&mut self) -> io::Result<Accepted<TcpStream>> {
        self.acceptor.accept().await
    }
}

impl Backlog for Listener {
    fn take_waiting(&mut self) -> Option<io::Result<Accepted<TcpStream>>> {
        // The socket is non-blocking (tokio set it so): an empty backlog is `WouldBlock`.
        let (stream, remote) = match self.backlog.accept() {
            Ok(accepted) => accepted,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return None,
            Err(err) => return Some(Err(err)),
        };
        let adopted = stream.set_nonblocking(true).and_then(|()| TcpStream::from_std(stream));
        Some(adopted.map(|io| (io, self.local.clone(), RemoteAddr(remote.into()), Scheme::HTTP)))
    }
}
