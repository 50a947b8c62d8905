//! A TCP proxy in front of PostgreSQL that a test can cut, stall and restore, to make the
//! database unreachable, or silent, without touching the real server.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{
        TcpListener, TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
    task::JoinHandle,
};

pub struct Proxy {
    pub addr: SocketAddr,
    open: Arc<AtomicBool>,
    stalled: Arc<AtomicBool>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let open = Arc::new(AtomicBool::new(true));
        let stalled = Arc::new(AtomicBool::new(false));
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (open, stalled, connections) = (open.clone(), stalled.clone(), connections.clone());
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    if !open.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let stalled = stalled.clone();
                    let task = tokio::spawn(async move {
                        if let Ok(server) = TcpStream::connect(upstream).await {
                            let ((client_in, client_out), (server_in, server_out)) =
                                (client.into_split(), server.into_split());
                            tokio::join!(
                                pump(client_in, server_out, stalled.clone()),
                                pump(server_in, client_out, stalled)
                            );
                        }
                    });
                    connections.lock().unwrap().push(task);
                }
            }
        });
        Proxy { addr, open, stalled, connections, accept }
    }

    /// Drops every connection and refuses new ones.
    pub fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        for task in self.connections.lock().unwrap().drain(..) {
            task.abort();
        }
    }

    /// Keeps every connection open and forwards nothing more on those open now, as a network
    /// that drops packets would; new connections work once restored.
    pub fn stall(&self) {
        self.stalled.store(true, Ordering::SeqCst);
    }

    pub fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.stalled.store(false, Ordering::SeqCst);
    }
}

/// Copies one direction until either side closes. Bytes read while stalled are held for good,
/// so a stalled connection stays silent even after `restore`.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, stalled: Arc<AtomicBool>) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if stalled.load(Ordering::SeqCst) {
            return std::future::pending().await;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
