//! Captures every log line the servers under test write, so a test can prove what never
//! reaches the log.

use std::{
    io::Write,
    sync::{Mutex, OnceLock},
};

use tandem::settings::{DEFAULT_LOG_FILTER, LogFormat};

static CAPTURED: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();

fn buffer() -> &'static Mutex<Vec<u8>> {
    CAPTURED.get_or_init(|| Mutex::new(Vec::new()))
}

pub struct Capture;

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        buffer().lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the same subscriber the service uses (JSON), writing into the capture buffer.
pub fn install() {
    let subscriber = tandem::telemetry::subscriber(LogFormat::Json, DEFAULT_LOG_FILTER, || Capture);
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Every line captured so far, from every test.
pub fn captured() -> String {
    String::from_utf8_lossy(&buffer().lock().unwrap()).into_owned()
}
