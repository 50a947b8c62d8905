//! A keyed request's body, read once to fingerprint it before it runs. The fingerprint covers
//! the media type and the content, with a multipart boundary (random per try) replaced by a
//! constant so a retry of the same upload matches. An upload is spooled to an unnamed
//! temporary file as it is hashed, and runs from there: a keyed upload of any size costs no
//! more memory than one without a key. Other bodies are small (the body limit) and stay in
//! memory.

use bytes::Bytes;
use futures_util::StreamExt;
use poem::{Body, Request};
use tokio::io::{AsyncSeekExt, AsyncWriteExt};

use crate::{
    idempotency::{Fingerprint, FingerprintHasher},
    wire::{
        body_limit::BodyTooLarge,
        error::{ApiError, Kind},
    },
};

const REPLACEMENT: &[u8] = b"<boundary>";

/// Reads `req`'s body into its fingerprint and puts it back, ready to run.
pub async fn fingerprint(req: &mut Request, path: &str, version: u16) -> Result<Fingerprint, ApiError> {
    let content_type = req.content_type().unwrap_or("");
    let is_multipart = content_type.to_ascii_lowercase().starts_with("multipart/");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    // Only a multipart body has a boundary to replace.
    let boundary = is_multipart.then(|| boundary(content_type)).flatten();
    let mut content = Comparable::new(Fingerprint::hasher("POST", path, version), essence, boundary);
    let body = req.take_body();
    let body = match is_multipart {
        true => spool(body, &mut content).await?,
        false => {
            let bytes = body.into_bytes().await.map_err(|err| match BodyTooLarge::find(&err) {
                Some(too_large) => BodyTooLarge(too_large.0).into_api_error(),
                None => unreadable(err),
            })?;
            content.update(&bytes);
            Body::from(bytes)
        }
    };
    req.set_body(body);
    Ok(content.finish())
}

/// A multipart boundary as RFC 2046 allows it (1 to 70 characters); a longer one is left in
/// place (the parser will refuse the body anyway).
fn boundary(content_type: &str) -> Option<Vec<u8>> {
    let raw = content_type.split(';').find_map(|p| p.trim().strip_prefix("boundary="))?;
    Some(raw.trim_matches('"').as_bytes().to_vec()).filter(|b| (1..=70).contains(&b.len()))
}

async fn spool(body: Body, content: &mut Comparable) -> Result<Body, ApiError> {
    let file = tokio::task::spawn_blocking(tempfile::tempfile).await.map_err(ApiError::internal)?;
    let mut file = tokio::fs::File::from_std(file.map_err(spool_error)?);
    let mut stream = body.into_bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk: Bytes = chunk.map_err(read_error)?;
        content.update(&chunk);
        file.write_all(&chunk).await.map_err(spool_error)?;
    }
    file.flush().await.map_err(spool_error)?;
    file.rewind().await.map_err(spool_error)?;
    Ok(Body::from_async_read(file))
}

fn read_error(err: std::io::Error) -> ApiError {
    match BodyTooLarge::in_chain(&err) {
        Some(limit) => BodyTooLarge(limit).into_api_error(),
        None => unreadable(err),
    }
}

fn unreadable(err: impl std::error::Error + Send + Sync + 'static) -> ApiError {
    ApiError::new(Kind::MalformedJson).with_detail("the body could not be read").with_cause(err)
}

fn spool_error(err: std::io::Error) -> ApiError {
    ApiError::unavailable(format!("could not spool the upload: {err}"))
}

/// The content as the fingerprint sees it, fed piece by piece: a boundary cut by a piece's end
/// is carried into the next piece, so the result is the same however the body arrives.
struct Comparable {
    hasher: FingerprintHasher,
    boundary: Option<Vec<u8>>,
    /// The end of the last piece that may begin a boundary (shorter than one).
    carry: Vec<u8>,
}

impl Comparable {
    fn new(mut hasher: FingerprintHasher, essence: &str, boundary: Option<Vec<u8>>) -> Self {
        hasher.update(essence.as_bytes());
        hasher.update(&[0]);
        Self { hasher, boundary, carry: Vec::new() }
    }

    fn update(&mut self, piece: &[u8]) {
        let Some(boundary) = &self.boundary else {
            return self.hasher.update(piece);
        };
        let text = [std::mem::take(&mut self.carry).as_slice(), piece].concat();
        let mut last = 0;
        for at in memchr::memmem::find_iter(&text, boundary) {
            self.hasher.update(&text[last..at]);
            self.hasher.update(REPLACEMENT);
            last = at + boundary.len();
        }
        let keep = last.max(text.len().saturating_sub(boundary.len() - 1));
        self.hasher.update(&text[last..keep]);
        self.carry = text[keep..].to_vec();
    }

    fn finish(mut self) -> Fingerprint {
        let carry = std::mem::take(&mut self.carry);
        self.hasher.update(&carry);
        self.hasher.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content hashed whole, as the fingerprint was always taken.
    fn whole(essence: &str, boundary: &[u8], body: &[u8]) -> Fingerprint {
        let mut out = essence.as_bytes().to_vec();
        out.push(0);
        let mut last = 0;
        for at in memchr::memmem::find_iter(body, boundary) {
            out.extend_from_slice(&body[last..at]);
            out.extend_from_slice(REPLACEMENT);
            last = at + boundary.len();
        }
        out.extend_from_slice(&body[last..]);
        Fingerprint::of("POST", "/upload", 1, &out)
    }

    #[test]
    fn any_cut_gives_the_fingerprint_of_the_whole_body() {
        let boundary = b"abab";
        let body = b"--abab\r\nx abababab ab\r\n--abab--aba";
        for step in 1..=body.len() {
            let mut content = Comparable::new(
                Fingerprint::hasher("POST", "/upload", 1),
                "multipart/form-data",
                Some(boundary.to_vec()),
            );
            body.chunks(step).for_each(|piece| content.update(piece));
            assert_eq!(content.finish(), whole("multipart/form-data", boundary, body), "pieces of {step}");
        }
    }
}
