//! Serving connections: each accepted connection is served by hyper (HTTP/1.1, and HTTP/2 with
//! prior knowledge) with the service's endpoint, as poem's own server loop does, with one
//! difference: a connection whose client went away in the middle of a request ends there, and
//! the request it was answering is dropped with it. poem's loop instead awaits that request to
//! its end, so a question nobody will read kept its worker and its database session busy (an
//! operator's reload of a large page, a closed tab).
//!
//! On shutdown the connections already waiting to be accepted are taken, the listener closes,
//! and every connection is told to finish: one answering a request finishes it and answers with
//! `Connection: close`; an idle one that served requests closes at once; one that has brought no
//! request yet is given a second to bring it (a proxy may have sent it already). What is still
//! open after `grace` is dropped.

use std::{sync::Arc, time::Duration};

use hyper::service::service_fn;
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use poem::{
    Endpoint, EndpointExt,
    endpoint::BoxEndpoint,
    web::{LocalAddr, RemoteAddr},
};
use tokio::{
    sync::{Notify, watch},
    task::JoinSet,
};

use super::{guard::Watched, listener::Backlog};

/// At shutdown, how long a connection that has brought no request yet is given to bring one.
const FIRST_REQUEST: Duration = Duration::from_secs(1);

/// Serves what `acceptor` accepts with `endpoint` until `shutdown` completes, then lets the
/// connections finish what they hold, for at most `grace`.
pub async fn serve<A, E>(
    mut acceptor: A,
    endpoint: E,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> std::io::Result<()>
where
    A: Backlog<Io: Watched>,
    E: Endpoint + 'static,
{
    let endpoint: Arc<BoxEndpoint<'static>> = Arc::new(endpoint.map_to_response().boxed());
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = acceptor.accept() => match accepted {
                Ok((io, local, remote, scheme)) => {
                    connections.spawn(connection(io, (local, remote, scheme), endpoint.clone(), stopping.clone()));
                }
                Err(err) => tracing::warn!(cause = %err, "a connection was not accepted"),
            },
            // Finished connections are collected as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Connections the kernel completed before the listener closes are served, not reset: a
    // proxy may have sent a request on one already. The socket closes right after the backlog
    // is found empty.
    while let Some(accepted) = acceptor.take_waiting() {
        match accepted {
            Ok((io, local, remote, scheme)) => {
                connections.spawn(connection(io, (local, remote, scheme), endpoint.clone(), stopping.clone()));
            }
            Err(err) => {
                tracing::warn!(cause = %err, "a waiting connection was not accepted");
                break;
            }
        }
    }
    drop(acceptor);
    let _ = stop.send(true);
    let finished = tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
    if finished.is_err() {
        tracing::warn!(open = connections.len(), "connections still open after the grace period: closed");
        connections.abort_all();
    }
    Ok(())
}

/// Where a connection came from, as poem's requests carry it.
type Ends = (LocalAddr, RemoteAddr, poem::http::uri::Scheme);

async fn connection<Io>(io: Io, ends: Ends, endpoint: Arc<BoxEndpoint<'static>>, mut stopping: watch::Receiver<bool>)
where
    Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Watched + Send + Unpin + 'static,
{
    // Set once the connection brings its first request.
    let started = Arc::new(Notify::new());
    let starting = started.clone();
    let unread = io.unread();
    let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let (endpoint, (local, remote, scheme), unread) = (endpoint.clone(), ends.clone(), unread.clone());
        starting.notify_one();
        async move {
            let mut request: poem::Request = (request, local, remote, scheme).into();
            // An answer that comes before the body was read is the connection's last.
            let body = unread.watch(&mut request);
            let mut response = endpoint.get_response(request).await;
            unread.settle(body, &mut response);
            Ok::<hyper::Response<_>, std::convert::Infallible>(response.into())
        }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let served = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
    tokio::pin!(served);
    tokio::select! {
        // Over: closed by either side, or its client went away mid-request (hyper reads the
        // end of the stream as an incomplete message). What it was answering is dropped here.
        _ = &mut served => return,
        _ = async { stopping.wait_for(|stop| *stop).await.map(drop) } => {}
    }
    // Told to stop. hyper closes a connection with no request in progress at once, and one
    // accepted a moment ago may carry a request not read yet (a proxy sends as soon as it
    // connects): closing it would leave that request unanswered. So a connection that has not
    // brought a request yet is given a moment to, and is answered (`Connection: close`).
    tokio::select! {
        _ = &mut served => return,
        _ = started.notified() => {}
        _ = tokio::time::sleep(FIRST_REQUEST) => {}
    }
    served.as_mut().graceful_shutdown();
    let _ = served.await;
}
