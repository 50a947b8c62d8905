//! A request's head counted as it is read (the book's clients/errors.md): its request line, each
//! header field line, all of them together, and their number. Past a limit the connection's guard
//! answers the request itself (414 or 431) before the head is buffered whole, let alone parsed.

/// How large a request's head may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadLimits {
    /// The request line: method, target and version.
    pub request_line: usize,
    /// One header field line.
    pub field: usize,
    /// Every header field line together (`TANDEM_MAX_HEADER_BYTES`).
    pub fields: usize,
    /// Header field lines (hyper's own limit, answered here in the version's body).
    pub count: usize,
}

/// Which limit a head broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLarge {
    /// The request line: 414.
    Uri,
    /// A header field, or all of them: 431.
    Fields,
}

/// Bytes of a head's start kept to tell which version its path names.
pub const START: usize = 256;

/// One request's head so far.
#[derive(Debug, Clone)]
pub struct Head {
    /// Bytes of the line being read, up to its `\n` (its `\r` included).
    line: usize,
    request_line: bool,
    fields: usize,
    count: usize,
    start: [u8; START],
    start_len: usize,
}

impl Default for Head {
    fn default() -> Self {
        Self { line: 0, request_line: true, fields: 0, count: 0, start: [0; START], start_len: 0 }
    }
}

impl HeadLimits {
    /// Whether a whole head read at once could break a limit: one shorter than every length
    /// limit, with no more lines than the count allows, cannot (most requests count nothing
    /// more than their lines).
    pub fn may_break(&self, head: &[u8]) -> bool {
        let shortest = self.request_line.min(self.field).min(self.fields);
        // The request line and the blank line end in `\n` too.
        head.len() > shortest || memchr::memchr_iter(b'\n', head).count() > self.count + 2
    }
}

impl Head {
    /// The head's first bytes (its request line's start).
    pub fn start(&self) -> &[u8] {
        &self.start[..self.start_len]
    }

    /// Follows `bytes`, the next of the head: the limit they break, if any, and whether the
    /// head ended in them (at its blank line; what follows is a body).
    pub fn follow(&mut self, bytes: &[u8], limits: &HeadLimits) -> (Option<TooLarge>, bool) {
        let keep = (START - self.start_len).min(bytes.len());
        self.start[self.start_len..self.start_len + keep].copy_from_slice(&bytes[..keep]);
        self.start_len += keep;
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.line += end;
            let blank = !self.request_line && self.line <= 1;
            if let Some(too) = self.end_line(limits) {
                return (Some(too), false);
            }
            if blank {
                return (None, true);
            }
            rest = &rest[end + 1..];
        }
        self.line += rest.len();
        (self.breach(limits), false)
    }

    /// The limit the line so far breaks.
    fn breach(&self, limits: &HeadLimits) -> Option<TooLarge> {
        if self.request_line {
            (self.line > limits.request_line).then_some(TooLarge::Uri)
        } else {
            (self.line > limits.field || self.fields + self.line > limits.fields).then_some(TooLarge::Fields)
        }
    }

    fn end_line(&mut self, limits: &HeadLimits) -> Option<TooLarge> {
        let breach = self.breach(limits);
        if !self.request_line && self.line > 1 {
            self.fields += self.line;
            self.count += 1;
        }
        self.request_line = false;
        self.line = 0;
        breach.or((self.count > limits.count).then_some(TooLarge::Fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: HeadLimits = HeadLimits { request_line: 40, field: 30, fields: 60, count: 3 };

    fn follow(head: &str, cut: usize) -> (Option<TooLarge>, bool) {
        let mut counted = Head::default();
        let (first, second) = head.as_bytes().split_at(cut);
        match counted.follow(first, &LIMITS) {
            (Some(too), _) => (Some(too), false),
            (None, true) => (None, true),
            (None, false) => counted.follow(second, &LIMITS),
        }
    }

    #[test]
    fn each_limit_is_found_wherever_the_reads_cut_the_head() {
        let cases = [
            ("GET /short HTTP/1.1\r\nHost: x\r\n\r\n", (None, true)),
            (&*format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(40)), (Some(TooLarge::Uri), false)),
            (&*format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "b".repeat(30)), (Some(TooLarge::Fields), false)),
            (
                &*format!("GET / HTTP/1.1\r\nA: {0}\r\nB: {0}\r\nC: {0}\r\n\r\n", "c".repeat(20)),
                (Some(TooLarge::Fields), false),
            ),
            ("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", (Some(TooLarge::Fields), false)),
            ("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\nbody after the head: never counted", (None, true)),
        ];
        for (head, expected) in cases {
            for cut in 0..=head.len() {
                assert_eq!(follow(head, cut), expected, "{head:?} cut at {cut}");
            }
        }
    }

    #[test]
    fn the_start_is_kept_for_the_answer() {
        let mut head = Head::default();
        head.follow(b"GET /api/v1/users?x=", &LIMITS);
        head.follow(b"yy", &LIMITS);
        assert_eq!(head.start(), b"GET /api/v1/users?x=yy");
    }
}
