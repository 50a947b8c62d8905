//! The nemesis's network: a TCP proxy in front of each PostgreSQL and Redis node, whose
//! upstream can be moved (a rebuilt standby takes an old node's place) and whose connections
//! can each be delayed, reset or silently dropped. Toxiproxy cannot be installed on these
//! machines; this is the part of it the nemesis needs.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::watch,
};

/// What a connection suffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Every chunk waits this long before it is forwarded.
    Delay(Duration),
    /// Nothing more is forwarded, either way, and the connection stays open: a network that
    /// drops its packets.
    Drop,
    /// Both sides are closed at once (with RST where the system allows).
    Reset,
}

struct Link {
    fault: watch::Sender<Fault>,
}

#[derive(Clone)]
pub struct Proxy {
    pub port: u16,
    pub name: &'static str,
    upstream: Arc<Mutex<SocketAddr>>,
    links: Arc<Mutex<Vec<Link>>>,
}

impl Proxy {
    pub async fn start(name: &'static str, upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy {
            port: listener.local_addr().unwrap().port(),
            name,
            upstream: Arc::new(Mutex::new(upstream)),
            links: Arc::default(),
        };
        let serving = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = *serving.upstream.lock().unwrap();
                let (fault, faults) = watch::channel(Fault::None);
                serving.links.lock().unwrap().push(Link { fault });
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else { return };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (client_in, client_out) = client.into_split();
                    let (server_in, server_out) = server.into_split();
                    tokio::join!(pump(client_in, server_out, faults.clone()), pump(server_in, client_out, faults));
                });
            }
        });
        proxy
    }

    /// New connections go to `upstream` (those open stay where they are).
    pub fn retarget(&self, upstream: SocketAddr) {
        *self.upstream.lock().unwrap() = upstream;
    }

    /// Open connections, those already closed forgotten.
    pub fn open(&self) -> usize {
        let mut links = self.links.lock().unwrap();
        links.retain(|l| !l.fault.is_closed());
        links.len()
    }

    /// Inflicts `fault` on the open connection `pick` (modulo the number open); whether there
    /// was one.
    pub fn strike(&self, pick: u64, fault: Fault) -> bool {
        let mut links = self.links.lock().unwrap();
        links.retain(|l| !l.fault.is_closed());
        if links.is_empty() {
            return false;
        }
        let at = (pick % links.len() as u64) as usize;
        let _ = links[at].fault.send(fault);
        true
    }

    /// Ends a delay on every connection (drops and resets are for good).
    pub fn heal(&self) {
        for link in self.links.lock().unwrap().iter() {
            link.fault.send_if_modified(|f| {
                let delayed = matches!(f, Fault::Delay(_));
                if delayed {
                    *f = Fault::None;
                }
                delayed
            });
        }
    }
}

/// Copies one direction until either side closes, as the connection's fault says.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut faults: watch::Receiver<Fault>,
) {
    let mut buffer = vec![0; 32 * 1024];
    loop {
        let read = tokio::select! {
            read = from.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            changed = faults.changed() => {
                if changed.is_err() {
                    return;
                }
                match *faults.borrow() {
                    Fault::Reset => return,
                    Fault::Drop => break,
                    _ => continue,
                }
            }
        };
        let fault = *faults.borrow();
        match fault {
            Fault::None => {}
            Fault::Delay(by) => tokio::time::sleep(by).await,
            Fault::Drop => break,
            Fault::Reset => return,
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
    // Dropped: hold both halves open and silent until the other side gives up.
    let mut sink = vec![0; 32 * 1024];
    while let Ok(n) = from.read(&mut sink).await {
        if n == 0 {
            break;
        }
    }
    drop(to);
}
