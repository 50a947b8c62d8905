//! OTLP export, configured by the OpenTelemetry SDK's standard variables (CONTRACT §13).
//!
//! Spans leave through a bounded queue that one task drains in batches: a request's only cost
//! is a `try_send`. A full queue, or a batch the collector refused or never answered, is
//! dropped and counted in `tandem_spans_dropped_total`; nothing waits for the collector.

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use anyhow::{Context as _, bail};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::{
    Resource,
    error::OTelSdkResult,
    trace::{Sampler, SdkTracer, SdkTracerProvider, SpanData, SpanExporter as _, SpanProcessor},
};
use tokio::sync::{mpsc, oneshot};

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Spans lost since start: a full queue, or a batch the collector did not take.
pub fn spans_dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// The tracer spans start from, set once when export is on; `None` keeps every span helper a
/// single load and branch.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

pub(super) fn tracer() -> Option<&'static SdkTracer> {
    TRACER.get()
}

/// What the variables ask for. Read and checked before the server starts: a value the service
/// cannot honour refuses to start, naming the variable (a typo never silently turns tracing off).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    pub protocol: Protocol,
    pub sampler: SamplerSetting,
    pub service_name: String,
    pub queue: usize,
    pub batch: usize,
    pub delay: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplerSetting {
    AlwaysOn,
    AlwaysOff,
    Ratio(f64),
    ParentBased(Root),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Root {
    AlwaysOn,
    AlwaysOff,
    Ratio(f64),
}

impl ExportSettings {
    /// `None` when no endpoint is set (or `OTEL_SDK_DISABLED=true`): no export.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Self>> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none() && var("OTEL_EXPORTER_OTLP_ENDPOINT").is_none() {
            return Ok(None);
        }
        let protocol_var = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]
            .into_iter()
            .find_map(|name| var(name).map(|value| (name, value)));
        let protocol = match protocol_var {
            None => Protocol::HttpBinary,
            Some((_, value)) if value.trim() == "http/protobuf" => Protocol::HttpBinary,
            Some((_, value)) if value.trim() == "grpc" => Protocol::Grpc,
            Some((name, value)) => bail!("{name}={value} is not supported: use http/protobuf or grpc"),
        };
        let sampler = sampler(var("OTEL_TRACES_SAMPLER"), var("OTEL_TRACES_SAMPLER_ARG"))?;
        let number = |name: &str, default: u64| -> anyhow::Result<u64> {
            match var(name) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("{name}={v} is not a positive whole number")),
            }
        };
        let queue = number("OTEL_BSP_MAX_QUEUE_SIZE", 2048)? as usize;
        Ok(Some(Self {
            protocol,
            sampler,
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "tandem".into()),
            queue,
            batch: (number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)? as usize).min(queue),
            delay: Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", 5000)?),
        }))
    }
}

/// `OTEL_TRACES_SAMPLER` and its argument, as the SDK specification names them.
fn sampler(name: Option<String>, arg: Option<String>) -> anyhow::Result<SamplerSetting> {
    let ratio = || -> anyhow::Result<f64> {
        match &arg {
            None => Ok(1.0),
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .with_context(|| format!("OTEL_TRACES_SAMPLER_ARG={v} is not a ratio between 0 and 1")),
        }
    };
    Ok(match name.as_deref().map(str::trim).unwrap_or("parentbased_always_on") {
        "always_on" => SamplerSetting::AlwaysOn,
        "always_off" => SamplerSetting::AlwaysOff,
        "traceidratio" => SamplerSetting::Ratio(ratio()?),
        "parentbased_always_on" => SamplerSetting::ParentBased(Root::AlwaysOn),
        "parentbased_always_off" => SamplerSetting::ParentBased(Root::AlwaysOff),
        "parentbased_traceidratio" => SamplerSetting::ParentBased(Root::Ratio(ratio()?)),
        other => bail!(
            "OTEL_TRACES_SAMPLER={other} is not supported: use always_on, always_off, traceidratio, \
             parentbased_always_on, parentbased_always_off or parentbased_traceidratio"
        ),
    })
}

impl SamplerSetting {
    fn build(self) -> Sampler {
        let root = |root: Root| match root {
            Root::AlwaysOn => Sampler::AlwaysOn,
            Root::AlwaysOff => Sampler::AlwaysOff,
            Root::Ratio(r) => Sampler::TraceIdRatioBased(r),
        };
        match self {
            SamplerSetting::AlwaysOn => Sampler::AlwaysOn,
            SamplerSetting::AlwaysOff => Sampler::AlwaysOff,
            SamplerSetting::Ratio(r) => Sampler::TraceIdRatioBased(r),
            SamplerSetting::ParentBased(r) => Sampler::ParentBased(Box::new(root(r))),
        }
    }
}

/// The running export: flushes what is queued when the server stops.
pub struct Exporting {
    flush: mpsc::Sender<oneshot::Sender<()>>,
    provider: SdkTracerProvider,
}

impl Exporting {
    /// Exports what is queued, waiting at most `within`.
    pub async fn flush(&self, within: Duration) {
        let (done, flushed) = oneshot::channel();
        if self.flush.send(done).await.is_ok() {
            let _ = tokio::time::timeout(within, flushed).await;
        }
        let _ = self.provider.shutdown_with_timeout(Duration::ZERO);
    }
}

/// Starts export (on the current tokio runtime) and sets the tracer every span starts from.
/// The exporter itself reads the endpoint, headers and timeout variables.
pub fn start(settings: &ExportSettings) -> anyhow::Result<Exporting> {
    // An `https://` collector is reached with rustls on ring, as the identity provider is.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = match settings.protocol {
        Protocol::Grpc => {
            opentelemetry_otlp::SpanExporter::builder().with_tonic().with_protocol(Protocol::Grpc).build()
        }
        _ => opentelemetry_otlp::SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary).build(),
    }
    .context("OTEL_EXPORTER_OTLP_ENDPOINT: cannot build the OTLP exporter")?;
    let resource = Resource::builder().with_service_name(settings.service_name.clone()).build();
    let (queue, spans) = mpsc::channel(settings.queue);
    let (flush, flushes) = mpsc::channel(1);
    let mut exporter = exporter;
    opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
    tokio::spawn(drain(exporter, spans, flushes, settings.batch, settings.delay));
    let provider = SdkTracerProvider::builder()
        .with_resource(resource)
        .with_sampler(settings.sampler.build())
        .with_span_processor(Queue { queue })
        .build();
    let _ = TRACER.set(provider.tracer("tandem"));
    Ok(Exporting { flush, provider })
}

/// Hands each ended span to the export task, or counts it dropped when the queue is full.
#[derive(Debug)]
struct Queue {
    queue: mpsc::Sender<SpanData>,
}

impl SpanProcessor for Queue {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if self.queue.try_send(span).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// Sends a batch when it is full or `delay` after its first span, one export at a time.
async fn drain(
    exporter: opentelemetry_otlp::SpanExporter,
    mut spans: mpsc::Receiver<SpanData>,
    mut flushes: mpsc::Receiver<oneshot::Sender<()>>,
    batch_size: usize,
    delay: Duration,
) {
    let mut batch = Vec::with_capacity(batch_size);
    let mut failing = false;
    loop {
        let flush = tokio::select! {
            received = spans.recv_many(&mut batch, batch_size) => {
                if received == 0 {
                    return;
                }
                let deadline = tokio::time::Instant::now() + delay;
                while batch.len() < batch_size {
                    let room = batch_size - batch.len();
                    let more = tokio::time::timeout_at(deadline, spans.recv_many(&mut batch, room));
                    if !matches!(more.await, Ok(n) if n > 0) {
                        break;
                    }
                }
                None
            }
            Some(done) = flushes.recv() => {
                while let Ok(span) = spans.try_recv() {
                    batch.push(span);
                }
                Some(done)
            }
        };
        // Batches are handed over, never copied; a flush may have gathered more than one.
        while !batch.is_empty() {
            let rest = batch.split_off(batch.len().min(batch_size));
            let chunk = std::mem::replace(&mut batch, rest);
            let sent = chunk.len() as u64;
            match exporter.export(chunk).await {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("span export resumed");
                }
                Ok(()) => {}
                Err(err) => {
                    DROPPED.fetch_add(sent, Ordering::Relaxed);
                    // Once per failing stretch: a dead collector must not flood the log.
                    if !failing {
                        failing = true;
                        tracing::warn!(cause = %err, "span export failed; spans are dropped until the collector answers");
                    }
                }
            }
        }
        if let Some(done) = flush {
            let _ = done.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> anyhow::Result<Option<ExportSettings>> {
        ExportSettings::from_env(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn no_endpoint_no_export() {
        assert_eq!(settings(&[("OTEL_TRACES_SAMPLER", "always_on")]).unwrap(), None);
        let disabled = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(settings(&disabled).unwrap(), None);
    }

    #[test]
    fn defaults_follow_the_sdk_specification() {
        let s = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]).unwrap().unwrap();
        assert_eq!(s.protocol, Protocol::HttpBinary);
        assert_eq!(s.sampler, SamplerSetting::ParentBased(Root::AlwaysOn));
        assert_eq!(s.service_name, "tandem");
        assert_eq!((s.queue, s.batch, s.delay), (2048, 512, Duration::from_secs(5)));
    }

    #[test]
    fn samplers_and_protocols_by_name() {
        let endpoint = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4317");
        let s = settings(&[
            endpoint,
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.protocol, Protocol::Grpc);
        assert_eq!(s.sampler, SamplerSetting::ParentBased(Root::Ratio(0.25)));
        let off = settings(&[endpoint, ("OTEL_TRACES_SAMPLER", "always_off")]).unwrap().unwrap();
        assert_eq!(off.sampler, SamplerSetting::AlwaysOff);
    }

    #[test]
    fn a_value_the_service_cannot_honour_refuses_to_start() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        for (vars, message) in [
            (vec![endpoint, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")], "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"),
            (vec![endpoint, ("OTEL_TRACES_SAMPLER", "always")], "OTEL_TRACES_SAMPLER=always"),
            (
                vec![endpoint, ("OTEL_TRACES_SAMPLER", "traceidratio"), ("OTEL_TRACES_SAMPLER_ARG", "2")],
                "OTEL_TRACES_SAMPLER_ARG=2",
            ),
            (vec![endpoint, ("OTEL_BSP_MAX_QUEUE_SIZE", "0")], "OTEL_BSP_MAX_QUEUE_SIZE=0"),
        ] {
            let err = settings(&vars).unwrap_err().to_string();
            assert!(err.starts_with(message), "{err}");
        }
    }
}
