//! What the service tells operators about itself: traces (`traces`, recorded as `spans`,
//! exported by `export`, continued from `trace_context`) and the log. One subscriber setup shared by the binary and the tests. Log lines carry the span fields of
//! the request (its correlation id) and never the request's secrets or personal data: the
//! access log records route templates, not raw paths or query strings.

pub mod batched;
pub mod export;
pub mod json_lines;
pub mod metric;
pub mod request_scope;
pub mod spans;
pub mod trace_context;
mod trace_handle;
pub mod traces;

use std::io::IsTerminal;

use tracing::Subscriber;
use tracing_subscriber::{EnvFilter, fmt::MakeWriter, layer::SubscriberExt};

use crate::settings::{DEFAULT_LOG_FILTER, LogFormat};

/// Builds the subscriber with `filter` (`TANDEM_LOG`, checked when the settings load);
/// `writer` is stdout in production and a buffer in tests.
pub fn subscriber<W>(format: LogFormat, filter: &str, writer: W) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::builder().parse(filter).unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let registry = tracing_subscriber::registry().with(filter);
    match format {
        LogFormat::Json => Box::new(registry.with(json_lines::JsonLines::new(writer))),
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
pub fn init(format: Option<LogFormat>, filter: &str, sink: Sink) {
    let terminal = match sink {
        Sink::Stdout => std::io::stdout().is_terminal(),
        Sink::Stderr => std::io::stderr().is_terminal(),
    };
    let format = format.unwrap_or(if terminal { LogFormat::Text } else { LogFormat::Json });
    if format == LogFormat::Text {
        request_scope::show_as_span();
    }
    let subscriber = match (sink, format) {
        // The server's JSON lines, one per request: batched (`batched`), written by one thread.
        (Sink::Stdout, LogFormat::Json) => subscriber(format, filter, batched::stdout()),
        (Sink::Stdout, LogFormat::Text) => subscriber(format, filter, std::io::stdout),
        (Sink::Stderr, _) => subscriber(format, filter, std::io::stderr),
    };
    // A second init keeps the first subscriber.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Writes the log lines still pending; called before the process exits.
pub fn flush() {
    batched::flush();
}

#[cfg(test)]
#[test]
fn the_services_json_subscriber_lets_the_access_line_be_written_directly() {
    let subscriber = subscriber(LogFormat::Json, DEFAULT_LOG_FILTER, std::io::sink);
    tracing::subscriber::with_default(subscriber, || {
        let found = tracing::dispatcher::get_default(|d| {
            (d.downcast_ref::<json_lines::JsonLines>().is_some(), d.current_span().id().is_some())
        });
        assert_eq!(found, (true, false));
    });
}
