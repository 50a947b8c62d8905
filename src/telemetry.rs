//! One subscriber setup shared by the binary and the tests. Log lines carry the span fields of
//! the request (its correlation id) and never the request's secrets or personal data: the
//! access log records route templates, not raw paths or query strings.

use std::io::IsTerminal;

use tracing::Subscriber;
use tracing_subscriber::{EnvFilter, fmt::MakeWriter, layer::SubscriberExt};

use crate::settings::LogFormat;

/// Builds the subscriber; `writer` is stdout in production and a buffer in tests.
pub fn subscriber<W>(format: LogFormat, writer: W) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_env("TANDEM_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,poem=warn"));
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Json => Box::new(registry.with(
            tracing_subscriber::fmt::layer().json().with_current_span(true).with_span_list(false).with_writer(writer),
        )),
        LogFormat::Text => {
            let colour = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
            Box::new(registry.with(tracing_subscriber::fmt::layer().with_ansi(colour).with_writer(writer)))
        }
    }
}

/// Where the process logs: the server to stdout; one-shot commands to stderr, so that their
/// output (a token, say) can be captured cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    Stdout,
    Stderr,
}

/// Installs the process-wide subscriber.
pub fn init(format: Option<LogFormat>, sink: Sink) {
    let terminal = match sink {
        Sink::Stdout => std::io::stdout().is_terminal(),
        Sink::Stderr => std::io::stderr().is_terminal(),
    };
    let format = format.unwrap_or(if terminal { LogFormat::Text } else { LogFormat::Json });
    let subscriber = match sink {
        Sink::Stdout => subscriber(format, std::io::stdout),
        Sink::Stderr => subscriber(format, std::io::stderr),
    };
    // A second init keeps the first subscriber.
    let _ = tracing::subscriber::set_global_default(subscriber);
}
