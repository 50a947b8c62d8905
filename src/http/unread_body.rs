//! A request answered before its body was read to its end (a 401 before an upload, a 413 from
//! `Content-Length`, a 415): that answer is the connection's last. What the client still sends
//! of the body is never read as a next request: the answer says `Connection: close`, and the
//! connection's guard ([`super::guard`]) reads nothing after it as a request head, so no second
//! answer (a stray 414 for body bytes taken as a request line) can follow. One rule, whatever
//! the status; HTTP/2 frames its own streams and is left out.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use poem::{
    Body, Request, Response,
    http::{HeaderValue, Version, header},
};

/// Set by a connection's requests, read by its guard when the answer begins: the answer being
/// written came before its request's body was read to its end.
#[derive(Debug, Clone, Default)]
pub struct Unread(Arc<AtomicBool>);

impl Unread {
    /// Whether the answer now beginning came early; the flag is cleared.
    pub fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }

    /// Follows `req`'s body, if it has one, to tell [`Unread::settle`] whether it was read.
    pub fn watch(&self, req: &mut Request) -> Option<Watch> {
        if req.version() > Version::HTTP_11 || !declares_body(req) {
            return None;
        }
        let ended = Arc::new(AtomicBool::new(false));
        let body = Tracked { inner: BoxBody::from(req.take_body()), ended: ended.clone() };
        req.set_body(Body::from(BoxBody::new(body)));
        Some(Watch(ended))
    }

    /// Once `response` is ready: if the body `watch` followed was not read to its end, the
    /// response closes the connection, and the guard is told before its first byte is written.
    pub fn settle(&self, watch: Option<Watch>, response: &mut Response) {
        if watch.is_some_and(|Watch(ended)| !ended.load(Ordering::Relaxed)) {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether a request's body was read to its end.
pub struct Watch(Arc<AtomicBool>);

/// Whether a request's head declares a body: a `Content-Length` other than `0`, or chunks.
fn declares_body(req: &Request) -> bool {
    match req.headers().get(header::CONTENT_LENGTH) {
        Some(length) => length.as_bytes() != b"0",
        None => req.headers().contains_key(header::TRANSFER_ENCODING),
    }
}

/// A body that records when it was read to its end.
struct Tracked {
    inner: BoxBody<Bytes, std::io::Error>,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
