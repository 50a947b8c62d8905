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
    /// Armed: the next `COMMIT` of a transaction that sent the armed text reaches the
    /// server, and its answer never comes back (that connection falls silent), as when a
    /// network drops it on the way. Other transactions' COMMITs (a background read's) pass.
    lose_commit_answer: Arc<AtomicBool>,
    lose_after: Arc<Mutex<Vec<u8>>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let open = Arc::new(AtomicBool::new(true));
        let stalled = Arc::new(AtomicBool::new(false));
        let lose_commit_answer = Arc::new(AtomicBool::new(false));
        let lose_after: Arc<Mutex<Vec<u8>>> = Arc::default();
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (open, stalled, connections) = (open.clone(), stalled.clone(), connections.clone());
            let (lose, after) = (lose_commit_answer.clone(), lose_after.clone());
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    if !open.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let (stalled, lose, after) = (stalled.clone(), lose.clone(), after.clone());
                    let task = tokio::spawn(async move {
                        if let Ok(server) = TcpStream::connect(upstream).await {
                            let ((client_in, client_out), (server_in, server_out)) =
                                (client.into_split(), server.into_split());
                            // This connection's answers stop once its COMMIT was let through.
                            let muted = Arc::new(AtomicBool::new(false));
                            tokio::join!(
                                pump(
                                    client_in,
                                    server_out,
                                    stalled.clone(),
                                    Watch::Commit { lose, after, wrote: false, muted: muted.clone() }
                                ),
                                pump(server_in, client_out, stalled, Watch::Muted(muted))
                            );
                        }
                    });
                    connections.lock().unwrap().push(task);
                }
            }
        });
        Proxy { addr, open, stalled, lose_commit_answer, lose_after, connections, accept }
    }

    /// The next `COMMIT` of a transaction that sent `text` commits, and its answer is lost.
    pub fn lose_the_next_commit_answer_after(&self, text: &str) {
        *self.lose_after.lock().unwrap() = text.as_bytes().to_vec();
        self.lose_commit_answer.store(true, Ordering::SeqCst);
    }

    /// Whether a `COMMIT`'s answer was lost since it was armed.
    pub fn lost_a_commit_answer(&self) -> bool {
        !self.lose_commit_answer.load(Ordering::SeqCst)
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

/// What one direction of a connection watches for.
enum Watch {
    /// Client to server: a `COMMIT` (PostgreSQL's simple query) after the connection sent the
    /// armed text (`wrote`, since its last COMMIT), when armed, mutes the answers.
    Commit { lose: Arc<AtomicBool>, after: Arc<Mutex<Vec<u8>>>, wrote: bool, muted: Arc<AtomicBool> },
    /// Server to client: nothing more once muted.
    Muted(Arc<AtomicBool>),
}

/// Copies one direction until either side closes. Bytes read while stalled are held for good,
/// so a stalled connection stays silent even after `restore`.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, stalled: Arc<AtomicBool>, mut watch: Watch) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let muted = match &watch {
            Watch::Muted(muted) => muted.load(Ordering::SeqCst),
            Watch::Commit { .. } => false,
        };
        if stalled.load(Ordering::SeqCst) || muted {
            return std::future::pending().await;
        }
        if let Watch::Commit { lose, after, wrote, muted } = &mut watch {
            let read = &buffer[..read];
            let table = after.lock().unwrap().clone();
            *wrote |= !table.is_empty() && read.windows(table.len()).any(|w| w == table.as_slice());
            if read.windows(7).any(|w| w == b"COMMIT\0") {
                if *wrote && lose.swap(false, Ordering::SeqCst) {
                    muted.store(true, Ordering::SeqCst);
                }
                *wrote = false;
            }
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
