//! The server's stdout, written in batches: a request appends its line to memory and one
//! writer thread writes everything pending with one `write`. Under load each write carries many
//! lines, so a line costs a copy, not a system call and a contended stdout lock.
//!
//! Invariants: lines leave in the order they were appended, none is dropped, and none waits
//! much longer than [`LINGER`]. Past [`BACKLOG`] bytes pending (stdout stalled), the
//! appending thread writes itself and so waits, as an unbatched log did; memory stays bounded.
//! [`flush`] writes what is pending, at shutdown.

use std::{
    io::Write,
    sync::{Arc, Condvar, Mutex, OnceLock},
};

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer waits after the first pending line before writing: the longest a line
/// waits, and what makes a batch of many lines under load (woken per line, the writer cost
/// more than the unbatched log).
const LINGER: std::time::Duration = std::time::Duration::from_millis(2);

/// Pending bytes past which appenders write themselves rather than wait for the writer thread.
const BACKLOG: usize = 1 << 20;

/// The process's batched stdout, started by the first [`stdout`].
static STDOUT: OnceLock<Arc<Batched>> = OnceLock::new();

pub struct Batched {
    pending: Mutex<Vec<u8>>,
    /// Signalled when `pending` stops being empty.
    filled: Condvar,
    /// The output and a spare buffer; held while writing, so batches leave in order.
    out: Mutex<(Box<dyn Write + Send>, Vec<u8>)>,
    /// No writer thread: every append writes at once.
    direct: bool,
}

/// Makes each log line's writer: an appender to one batch.
#[derive(Clone)]
pub struct Lines(Arc<Batched>);

/// The batched stdout, its writer thread started on first use.
pub fn stdout() -> Lines {
    Lines(
        STDOUT
            .get_or_init(|| {
                let batched = Arc::new(Batched::new(Box::new(std::io::stdout()), false));
                let writer = batched.clone();
                match std::thread::Builder::new().name("tandem-log".into()).spawn(move || writer.run()) {
                    Ok(_) => batched,
                    // No thread: each appender writes its own line, as before batching.
                    Err(_) => Arc::new(Batched::new(Box::new(std::io::stdout()), true)),
                }
            })
            .clone(),
    )
}

/// Writes whatever the batched stdout holds; a no-op if it never started.
pub fn flush() {
    if let Some(batched) = STDOUT.get() {
        batched.write_pending();
    }
}

impl Batched {
    fn new(out: Box<dyn Write + Send>, direct: bool) -> Self {
        Self { pending: Mutex::new(Vec::new()), filled: Condvar::new(), out: Mutex::new((out, Vec::new())), direct }
    }

    fn append(&self, line: &[u8]) {
        let Ok(mut pending) = self.pending.lock() else { return };
        let was_empty = pending.is_empty();
        pending.extend_from_slice(line);
        let stalled = self.direct || pending.len() > BACKLOG;
        drop(pending);
        if stalled {
            self.write_pending();
        } else if was_empty {
            self.filled.notify_one();
        }
    }

    /// Swaps the pending bytes out and writes them, holding `out` throughout so that two
    /// writers cannot reorder batches.
    fn write_pending(&self) {
        let Ok(mut out) = self.out.lock() else { return };
        let (writer, spare) = &mut *out;
        {
            let Ok(mut pending) = self.pending.lock() else { return };
            std::mem::swap(&mut *pending, spare);
        }
        if !spare.is_empty() {
            let _ = writer.write_all(spare).and_then(|()| writer.flush());
            spare.clear();
        }
    }

    fn run(&self) {
        loop {
            {
                let Ok(mut pending) = self.pending.lock() else { return };
                while pending.is_empty() {
                    pending = match self.filled.wait(pending) {
                        Ok(pending) => pending,
                        Err(_) => return,
                    };
                }
            }
            // Lines arriving meanwhile join this batch: under load one write carries many.
            std::thread::sleep(LINGER);
            self.write_pending();
        }
    }
}

/// One line's writer: `write` appends to the batch.
pub struct Line(Arc<Batched>);

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.append(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Lines {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_from_many_threads_arrive_whole_and_each_thread_in_order() {
        let out = Shared::default();
        let batched = Arc::new(Batched::new(Box::new(out.clone()), false));
        let writer = batched.clone();
        std::thread::spawn(move || writer.run());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let batched = batched.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        Lines(batched.clone()).make_writer().write_all(format!("{t} {i}\n").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        batched.write_pending();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let mut next = [0; 4];
        for line in text.lines() {
            let (t, i) = line.split_once(' ').unwrap();
            let (t, i): (usize, usize) = (t.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, next[t], "thread {t}'s lines in order");
            next[t] += 1;
        }
        assert_eq!(next, [20_000; 4]);
    }

    #[test]
    fn a_stalled_output_makes_appenders_write_themselves_past_the_backlog() {
        let out = Shared::default();
        // No writer thread: only the backlog rule can get these lines out.
        let batched = Arc::new(Batched::new(Box::new(out.clone()), false));
        let line = vec![b'x'; 1000];
        for _ in 0..(BACKLOG / 1000 + 2) {
            Lines(batched.clone()).make_writer().write_all(&line).unwrap();
        }
        assert!(out.0.lock().unwrap().len() > BACKLOG);
        assert!(batched.pending.lock().unwrap().len() < BACKLOG);
    }
}
