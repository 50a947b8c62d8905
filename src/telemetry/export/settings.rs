//! What the OpenTelemetry SDK's standard variables ask of export (the book's operators/traces.md),
//! read and checked before the server starts: a value the service cannot honour refuses to start,
//! naming the variable (a typo never silently turns tracing off). The variables mean what the SDK
//! specification and `opentelemetry-otlp` make them mean; a header's value is never repeated in an
//! error, since it is often a vendor's API key.

use std::time::Duration;

use anyhow::{Context as _, bail};
use poem::http::{HeaderName, HeaderValue, Uri};

#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    pub protocol: Protocol,
    /// Where batches go: the traces URL for HTTP, the collector's address for gRPC.
    pub endpoint: Uri,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// How long one export may take.
    pub timeout: Duration,
    pub sampler: SamplerSetting,
    pub service_name: String,
    pub queue: usize,
    pub batch: usize,
    pub delay: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    HttpProtobuf,
    Grpc,
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
        // The signal's own variable wins over the general one.
        let either = |name: &str| {
            let traces = name.replace("OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_");
            var(&traces).map(|value| (traces, value)).or_else(|| var(name).map(|value| (name.to_string(), value)))
        };
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let Some((endpoint_var, endpoint)) = either("OTEL_EXPORTER_OTLP_ENDPOINT") else {
            return Ok(None);
        };
        let protocol = match either("OTEL_EXPORTER_OTLP_PROTOCOL") {
            None => Protocol::HttpProtobuf,
            Some((_, value)) if value.trim() == "http/protobuf" => Protocol::HttpProtobuf,
            Some((_, value)) if value.trim() == "grpc" => Protocol::Grpc,
            Some((name, value)) => bail!("{name}={value} is not supported: use http/protobuf or grpc"),
        };
        let endpoint = endpoint_uri(&endpoint_var, endpoint.trim(), protocol)?;
        let headers = match either("OTEL_EXPORTER_OTLP_HEADERS") {
            None => Vec::new(),
            Some((name, value)) => headers(&value).with_context(|| format!("{name} is not a list of key=value"))?,
        };
        let number = |name: &str, value: Option<String>, default: u64| -> anyhow::Result<u64> {
            match value {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("{name}={v} is not a positive whole number")),
            }
        };
        let timeout = match either("OTEL_EXPORTER_OTLP_TIMEOUT") {
            None => 10_000,
            Some((name, value)) => number(&name, Some(value), 0)?,
        };
        let sampler = sampler(var("OTEL_TRACES_SAMPLER"), var("OTEL_TRACES_SAMPLER_ARG"))?;
        let queue = number("OTEL_BSP_MAX_QUEUE_SIZE", var("OTEL_BSP_MAX_QUEUE_SIZE"), 2048)? as usize;
        let batch = number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), 512)? as usize;
        Ok(Some(Self {
            protocol,
            endpoint,
            headers,
            timeout: Duration::from_millis(timeout),
            sampler,
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "tandem".into()),
            queue,
            batch: batch.min(queue),
            delay: Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", var("OTEL_BSP_SCHEDULE_DELAY"), 5000)?),
        }))
    }
}

/// The traces URL: a signal's own endpoint as it is; the general one with `/v1/traces` added
/// for HTTP. gRPC goes to the collector's address in plaintext (no TLS is built in for it).
fn endpoint_uri(name: &str, value: &str, protocol: Protocol) -> anyhow::Result<Uri> {
    let url = if protocol == Protocol::HttpProtobuf && name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
        format!("{}/v1/traces", value.strip_suffix('/').unwrap_or(value))
    } else {
        value.to_string()
    };
    let uri: Uri = url.parse().ok().with_context(|| format!("{name}={value} is not a URL"))?;
    match (uri.scheme_str(), protocol) {
        (Some("http"), _) | (Some("https"), Protocol::HttpProtobuf) if uri.host().is_some() => Ok(uri),
        (Some("https"), Protocol::Grpc) => {
            bail!(
                "{name}={value}: gRPC export is plaintext only; use http:// or OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
            )
        }
        _ => bail!("{name}={value} is not an http:// or https:// URL"),
    }
}

/// `key=value,…`, values percent-decoded (the W3C Baggage format the specification names).
fn headers(list: &str) -> anyhow::Result<Vec<(HeaderName, HeaderValue)>> {
    let mut headers = Vec::new();
    for (i, entry) in list.split_terminator(',').map(str::trim).enumerate() {
        let (key, value) = entry.split_once('=').with_context(|| format!("entry {} has no '='", i + 1))?;
        let value = percent_encoding::percent_decode_str(value.trim()).decode_utf8_lossy();
        let name = HeaderName::try_from(key.trim()).ok().with_context(|| format!("entry {} names no header", i + 1))?;
        let value = HeaderValue::try_from(value.as_ref())
            .ok()
            .filter(|v| !v.is_empty())
            .with_context(|| format!("entry {} ({name}) has no valid value", i + 1))?;
        headers.push((name, value));
    }
    Ok(headers)
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
        assert_eq!(s.protocol, Protocol::HttpProtobuf);
        assert_eq!(s.endpoint, "http://c:4318/v1/traces");
        assert_eq!(s.timeout, Duration::from_secs(10));
        assert!(s.headers.is_empty());
        assert_eq!(s.sampler, SamplerSetting::ParentBased(Root::AlwaysOn));
        assert_eq!(s.service_name, "tandem");
        assert_eq!((s.queue, s.batch, s.delay), (2048, 512, Duration::from_secs(5)));
    }

    #[test]
    fn the_endpoint_as_the_sdk_builds_it() {
        let endpoint = |vars: &[(&str, &str)]| settings(vars).unwrap().unwrap().endpoint.to_string();
        assert_eq!(endpoint(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318/")]), "https://c:4318/v1/traces");
        assert_eq!(endpoint(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c/otlp")]), "http://c/otlp/v1/traces");
        let own =
            [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/x")];
        assert_eq!(endpoint(&own), "http://t/x");
        let grpc = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")];
        assert_eq!(endpoint(&grpc), "http://c:4317/");
    }

    #[test]
    fn headers_and_timeout_with_the_signals_own_variables_first() {
        let s = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-general=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", " api-key = a%20b%3Dc , x-team=core"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ])
        .unwrap()
        .unwrap();
        let headers: Vec<_> = s.headers.iter().map(|(k, v)| (k.as_str(), v.to_str().unwrap())).collect();
        assert_eq!(headers, [("api-key", "a b=c"), ("x-team", "core")]);
        assert_eq!(s.timeout, Duration::from_millis(2500));
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
            (vec![endpoint, ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")], "OTEL_EXPORTER_OTLP_TIMEOUT=soon"),
            (vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")], "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318"),
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4317"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
                "OTEL_EXPORTER_OTLP_ENDPOINT=https://c:4317: gRPC export is plaintext only",
            ),
        ] {
            let err = settings(&vars).unwrap_err().to_string();
            assert!(err.starts_with(message), "{err}");
        }
    }

    #[test]
    fn a_bad_header_is_refused_without_repeating_its_value() {
        let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_EXPORTER_OTLP_HEADERS", "a=1,secret-key")];
        let err = format!("{:#}", settings(&vars).unwrap_err());
        assert_eq!(err, "OTEL_EXPORTER_OTLP_HEADERS is not a list of key=value: entry 2 has no '='");
        let vars = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_EXPORTER_OTLP_HEADERS", "k=line%0Abreak")];
        let err = format!("{:#}", settings(&vars).unwrap_err());
        assert!(!err.contains("line"), "{err}");
    }
}
