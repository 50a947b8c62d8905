//! The JSON log line, written directly into one reused buffer per thread. Its shape is exactly
//! the one tracing-subscriber's JSON formatter gave (`{"timestamp","level","fields":{…},"target",
//! "span":{…,"name"}}`, a test compares the two), without that formatter's cost: it stored each
//! span's fields as JSON text and parsed them back into a map for every line.

use std::{cell::RefCell, fmt, io::Write};

use chrono::{Datelike, Timelike, Utc};

use super::request_scope::{self, RequestIds};
use tracing::{
    Event, Subscriber,
    field::{Field, Visit},
    span::{Attributes, Id, Record},
};
use tracing_subscriber::{
    Layer,
    fmt::MakeWriter,
    layer::Context,
    registry::{LookupSpan, SpanRef},
};

/// A layer writing one JSON line per event to `writer`. Not generic over the writer, so that
/// the access line can find it in the subscriber (`AccessLine::log`).
pub struct JsonLines {
    write: Box<WriteLine>,
}

/// Writes one finished line.
type WriteLine = dyn Fn(&[u8]) + Send + Sync;

impl JsonLines {
    pub fn new<W>(writer: W) -> Self
    where
        W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
    {
        // A log that cannot be written has nowhere to report it.
        Self { write: Box::new(move |line| drop(writer.make_writer().write_all(line))) }
    }

    /// Formats one line with `format` into this thread's buffer, and writes it.
    fn emit(&self, format: impl FnOnce(&mut Vec<u8>)) {
        let write = |line: &mut Vec<u8>| {
            line.clear();
            format(line);
            (self.write)(line);
        };
        // A line logged while one is being written (by the writer itself) gets its own buffer.
        LINE.with(|line| match line.try_borrow_mut() {
            Ok(mut line) => write(&mut line),
            Err(_) => write(&mut Vec::new()),
        });
    }
}

/// The access line: one per answered request (`tandem::access`).
pub struct AccessLine<'a> {
    pub method: &'a str,
    /// The route template, or `-`.
    pub route: &'a str,
    /// The version that served it, or 0.
    pub version: u16,
    /// The tenant, or `-`.
    pub tenant: &'a str,
    pub status: u16,
    pub latency_ms: f64,
}

impl AccessLine<'_> {
    /// Logs the line, if `TANDEM_LOG` lets `tandem::access` through. Straight into the JSON
    /// lines when they are the log and no span is entered, since its keys are known (the same
    /// bytes as the event below gives, a test compares them); else as that event.
    pub fn log(&self) {
        if !tracing::enabled!(target: "tandem::access", tracing::Level::INFO) {
            return;
        }
        let written = tracing::dispatcher::get_default(|dispatch| {
            let json = dispatch.downcast_ref::<JsonLines>().filter(|_| dispatch.current_span().id().is_none());
            json.map(|json| json.emit(|line| self.format(line))).is_some()
        });
        if !written {
            tracing::info!(
                target: "tandem::access",
                message = "request",
                method = self.method,
                route = self.route,
                version = self.version,
                tenant = self.tenant,
                status = self.status,
                latency_ms = self.latency_ms,
            );
        }
    }

    fn format(&self, line: &mut Vec<u8>) {
        line.extend_from_slice(b"{\"timestamp\":\"");
        timestamp(line);
        line.extend_from_slice(b"\",\"level\":\"INFO\",\"fields\":{\"message\":\"request\",\"method\":");
        string(line, self.method);
        line.extend_from_slice(b",\"route\":");
        string(line, self.route);
        line.extend_from_slice(b",\"version\":");
        integer(line, self.version);
        line.extend_from_slice(b",\"tenant\":");
        string(line, self.tenant);
        line.extend_from_slice(b",\"status\":");
        integer(line, self.status);
        line.extend_from_slice(b",\"latency_ms\":");
        let _ = serde_json::to_writer(&mut *line, &self.latency_ms);
        line.extend_from_slice(b"},\"target\":\"tandem::access\"");
        request_scope::with_current(|ids| request(line, ids));
        line.extend_from_slice(b"}\n");
    }
}

/// A span's fields as the line shows them: sorted by name, the last value of a name kept
/// (the old formatter kept them in a map).
struct SpanFields(Vec<(&'static str, Value)>);

/// A field's value, rendered once when the span records it.
enum Value {
    /// JSON text ready to copy: a number, `true`/`false` or `null`.
    Raw(String),
    Text(String),
}

thread_local! {
    static LINE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl<S> Layer<S> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = SpanFields(Vec::new());
        attrs.record(&mut fields);
        fields.settle();
        span.extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        if let Some(fields) = span.extensions_mut().get_mut::<SpanFields>() {
            values.record(fields);
            fields.settle();
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let span = event.parent().and_then(|id| ctx.span(id)).or_else(|| ctx.lookup_current());
        self.emit(|line| format_line(line, event, span.as_ref()));
    }
}

fn format_line<S>(line: &mut Vec<u8>, event: &Event<'_>, span: Option<&SpanRef<'_, S>>)
where
    S: for<'a> LookupSpan<'a>,
{
    let meta = event.metadata();
    line.extend_from_slice(b"{\"timestamp\":\"");
    timestamp(line);
    line.extend_from_slice(b"\",\"level\":\"");
    line.extend_from_slice(meta.level().as_str().as_bytes());
    line.extend_from_slice(b"\",\"fields\":{");
    let mut fields = EventFields { line, first: true, scratch: String::new() };
    event.record(&mut fields);
    line.extend_from_slice(b"},\"target\":");
    string(line, meta.target());
    if let Some(span) = span {
        line.extend_from_slice(b",\"span\":{");
        if let Some(SpanFields(fields)) = span.extensions().get::<SpanFields>() {
            for (name, value) in fields {
                string(line, name);
                line.push(b':');
                match value {
                    Value::Raw(raw) => line.extend_from_slice(raw.as_bytes()),
                    Value::Text(text) => string(line, text),
                }
                line.push(b',');
            }
        }
        line.extend_from_slice(b"\"name\":");
        string(line, span.metadata().name());
        line.push(b'}');
    } else {
        request_scope::with_current(|ids| request(line, ids));
    }
    line.extend_from_slice(b"}\n");
}

/// The request being answered, shown as the `request` span that carried its ids before
/// (`request_scope`): its fields sorted by name, then its name.
fn request(line: &mut Vec<u8>, ids: &dyn RequestIds) {
    line.extend_from_slice(b",\"span\":{\"correlation_id\":");
    string(line, ids.correlation_id());
    line.extend_from_slice(b",\"trace_id\":\"");
    crate::encoding::hex_into(line, &ids.trace_id().to_bytes());
    line.extend_from_slice(b"\",\"name\":\"request\"}");
}

/// RFC 3339 in UTC to the microsecond, as tracing-subscriber's default timer wrote it. The
/// part up to the second is formatted once a second per thread; the microseconds each time.
fn timestamp(line: &mut Vec<u8>) {
    thread_local! {
        static SECOND: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
    }
    let now = Utc::now();
    SECOND.with_borrow_mut(|(second, text)| {
        if *second != now.timestamp() {
            *second = now.timestamp();
            text.clear();
            let _ = std::fmt::Write::write_fmt(
                text,
                format_args!(
                    "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.",
                    now.year(),
                    now.month(),
                    now.day(),
                    now.hour(),
                    now.minute(),
                    now.second()
                ),
            );
        }
        line.extend_from_slice(text.as_bytes());
    });
    // Six digits: the clock has no leap seconds, whose nanoseconds would run past 10⁹.
    let mut micros = now.timestamp_subsec_micros().min(999_999);
    let mut digits = [b'0'; 6];
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    line.extend_from_slice(&digits);
    line.push(b'Z');
}

/// A JSON string, escaped as serde_json escapes it: `"`, `\\` and control characters. Most
/// strings (names, ids, templates) need no escape and are copied as they are.
fn string(line: &mut Vec<u8>, text: &str) {
    // Without an early exit, the compiler checks many bytes at once.
    let escapes = text.bytes().fold(false, |escapes, b| escapes | (b < 0x20) | (b == b'"') | (b == b'\\'));
    if !escapes {
        line.reserve(text.len() + 2);
        line.push(b'"');
        line.extend_from_slice(text.as_bytes());
        line.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *line, text);
    }
}

/// An integer as serde_json writes it.
fn integer(line: &mut Vec<u8>, value: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// An event's fields in the order they were recorded, as `"name":value` pairs.
struct EventFields<'a> {
    line: &'a mut Vec<u8>,
    first: bool,
    scratch: String,
}

impl EventFields<'_> {
    fn name(&mut self, field: &Field) {
        if !std::mem::take(&mut self.first) {
            self.line.push(b',');
        }
        string(self.line, field.name());
        self.line.push(b':');
    }
}

impl Visit for EventFields<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.name(field);
        // serde_json's shortest round-trip digits, and `null` for NaN and infinities.
        let _ = serde_json::to_writer(&mut *self.line, &value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.name(field);
        integer(self.line, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.name(field);
        integer(self.line, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.name(field);
        self.line.extend_from_slice(if value { b"true" } else { b"false" });
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.name(field);
        string(self.line, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write;
        self.scratch.clear();
        let _ = write!(self.scratch, "{value:?}");
        self.name(field);
        string(self.line, &self.scratch);
    }
}

impl SpanFields {
    fn set(&mut self, field: &Field, value: Value) {
        // `r#type` is shown as `type`, as the old formatter showed span fields.
        let name = field.name();
        self.0.push((name.strip_prefix("r#").unwrap_or(name), value));
    }

    /// Sorted by name; of several values for one name, the last recorded.
    fn settle(&mut self) {
        self.0.reverse();
        self.0.sort_by_key(|(name, _)| *name);
        self.0.dedup_by_key(|(name, _)| *name);
    }

    fn raw(&mut self, field: &Field, value: impl serde::Serialize) {
        self.set(field, Value::Raw(serde_json::to_string(&value).unwrap_or_else(|_| "null".into())));
    }
}

impl Visit for SpanFields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.raw(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.raw(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.raw(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.raw(field, value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, Value::Text(value.to_owned()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.set(field, Value::Text(format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        /// The lines, each timestamp checked for the old timer's format and then blanked.
        fn lines(&self) -> Vec<String> {
            let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
            text.split_inclusive('\n')
                .map(|line| {
                    let start = line.find("\"timestamp\":\"").unwrap() + 13;
                    let stamp = &line[start..start + 27];
                    let shape = stamp.bytes().map(|b| if b.is_ascii_digit() { b'9' } else { b }).collect::<Vec<_>>();
                    assert_eq!(shape, b"9999-99-99T99:99:99.999999Z", "{line}");
                    format!("{}{}", &line[..start], &line[start + 27..])
                })
                .collect()
        }
    }

    const CORRELATION_ID: &str = "corr-\"quoted\"\\-1";
    const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

    /// The ids as the boundary carried them before `request_scope`: on a `request` span.
    fn in_span(log: &dyn Fn()) {
        tracing::info_span!("request", correlation_id = CORRELATION_ID, trace_id = TRACE_ID).in_scope(log)
    }

    /// The ids as the boundary carries them now.
    fn in_request_scope(log: &dyn Fn()) {
        struct Ids(crate::telemetry::traces::TraceHandle);
        impl RequestIds for Ids {
            fn correlation_id(&self) -> &str {
                CORRELATION_ID
            }
            fn trace(&self) -> &crate::telemetry::traces::TraceHandle {
                &self.0
            }
        }
        let trace = opentelemetry::trace::TraceId::from_hex(TRACE_ID).unwrap();
        request_scope::in_scope(Arc::new(Ids(crate::telemetry::traces::TraceHandle::unrecorded(trace))), log)
    }

    /// The events the service logs, and the awkward values a field can hold; those of a
    /// request logged with its ids carried by `request`.
    fn log_everything(request: fn(&dyn Fn())) {
        let span = tracing::info_span!("request", correlation_id = CORRELATION_ID, trace_id = TRACE_ID);
        request(&|| {
            let elapsed = std::time::Duration::from_micros(1234);
            tracing::info!(
                target: "tandem::access",
                method = "GET",
                route = "/users/{id}",
                version = 2u16,
                tenant = "acme",
                status = 200u16,
                latency_ms = elapsed.as_secs_f64() * 1000.0,
                "request"
            );
            // As the boundary logs it now: the line written directly by the JSON lines, else
            // an event whose message is a plain string.
            AccessLine {
                method: "GET",
                route: "/users/{id}",
                version: 2,
                tenant: "acme",
                status: 200,
                latency_ms: elapsed.as_secs_f64() * 1000.0,
            }
            .log();
            tracing::error!(problem = "internal", cause = %"a\nmulti-line\tcause \u{1} é ✓", "request failed");
            tracing::warn!(whole = 3.0, nan = f64::NAN, negative = -7i64, yes = true, debug = ?Some("x"), "odd values");
        });
        tracing::info!(address = "127.0.0.1:8080", "listening");
        let fields =
            tracing::info_span!("job", r#type = "import", count = 3u64, b = false, a = 1.5, shown = %"dis\"play");
        fields.in_scope(|| tracing::info!("inside a span whose fields need sorting"));
        tracing::info!(parent: &span, "explicit parent");
    }

    #[test]
    fn lines_are_byte_for_byte_what_tracing_subscribers_json_formatter_wrote() {
        let before = Buffer::default();
        let formatter = tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(before.clone().into_make_writer());
        tracing::subscriber::with_default(tracing_subscriber::registry().with(formatter), || log_everything(in_span));
        let before = before.lines();
        assert_eq!(before.len(), 7);
        assert_eq!(before[1], before[0], "the access line as the boundary logs it is the line it logged before");

        // The access line is written directly where the JSON lines are the subscriber's.
        let found = |_: ()| tracing::dispatcher::get_default(|d| d.downcast_ref::<JsonLines>().is_some());
        let json = JsonLines::new(Buffer::default().into_make_writer());
        assert!(tracing::subscriber::with_default(tracing_subscriber::registry().with(json), || found(())));

        // The request's ids on a span (as the text format still carries them) and in its scope.
        for request in [in_span as fn(&dyn Fn()), in_request_scope] {
            let after = Buffer::default();
            let ours = JsonLines::new(after.clone().into_make_writer());
            tracing::subscriber::with_default(tracing_subscriber::registry().with(ours), || log_everything(request));
            let after = after.lines();
            for (old, new) in before.iter().zip(&after) {
                assert_eq!(new, old);
            }
            assert_eq!(after.len(), before.len());
        }
    }

    #[test]
    fn strings_and_integers_are_written_as_serde_json_writes_them() {
        let every_ascii: String = (0u8..=127).map(char::from).collect();
        for text in ["", "plain", "/users/{id}", "é ✓ \u{7f}", &every_ascii, "tail\"", "\\"] {
            let mut line = Vec::new();
            string(&mut line, text);
            assert_eq!(String::from_utf8(line).unwrap(), serde_json::to_string(text).unwrap());
        }
        for number in [0, -1, i64::MIN, i64::MAX, 65_535] {
            let mut line = Vec::new();
            integer(&mut line, number);
            assert_eq!(String::from_utf8(line).unwrap(), serde_json::to_string(&number).unwrap());
        }
    }

    trait IntoMakeWriter {
        fn into_make_writer(self) -> impl for<'w> MakeWriter<'w> + Send + Sync + 'static;
    }

    impl IntoMakeWriter for Buffer {
        fn into_make_writer(self) -> impl for<'w> MakeWriter<'w> + Send + Sync + 'static {
            move || self.clone()
        }
    }
}
