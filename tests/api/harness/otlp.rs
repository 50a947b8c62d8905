//! An OTLP collector for the tests: it decodes what Tandem exports with the official protobuf
//! definitions (`opentelemetry-proto`), over HTTP (`/v1/traces`) or gRPC, and can be slow.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use opentelemetry_proto::tonic::{
    collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
        trace_service_server::{TraceService, TraceServiceServer},
    },
    common::v1::{AnyValue, KeyValue, any_value::Value},
    trace::v1::Span,
};
use poem::{EndpointExt, Route, handler, http::StatusCode, post, web::Data};
use prost::Message;

/// What the collector does with an export.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    Answer,
    /// Answers after this long.
    Slow(Duration),
}

#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    /// Every resource attribute seen, from every export.
    resource: Vec<KeyValue>,
    /// The `x-*` headers (gRPC: metadata) exports arrived with.
    headers: Vec<(String, String)>,
}

#[derive(Clone)]
struct Shared {
    received: Arc<Mutex<Received>>,
    mode: Arc<Mutex<Mode>>,
}

impl Shared {
    async fn take(&self, headers: &poem::http::HeaderMap, request: ExportTraceServiceRequest) {
        let mode = *self.mode.lock().unwrap();
        if let Mode::Slow(delay) = mode {
            tokio::time::sleep(delay).await;
        }
        let mut received = self.received.lock().unwrap();
        for (name, value) in headers.iter().filter(|(name, _)| name.as_str().starts_with("x-")) {
            received.headers.push((name.to_string(), value.to_str().unwrap_or_default().to_string()));
        }
        for resource_spans in request.resource_spans {
            if let Some(resource) = resource_spans.resource {
                received.resource.extend(resource.attributes);
            }
            for scope in resource_spans.scope_spans {
                received.spans.extend(scope.spans);
            }
        }
    }
}

pub struct Collector {
    /// The value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    shared: Shared,
    server: tokio::task::JoinHandle<()>,
}

#[handler]
async fn traces(headers: &poem::http::HeaderMap, body: Vec<u8>, shared: Data<&Shared>) -> poem::Response {
    let Ok(request) = ExportTraceServiceRequest::decode(body.as_ref()) else {
        return poem::Response::builder().status(StatusCode::BAD_REQUEST).finish();
    };
    shared.take(headers, request).await;
    poem::Response::builder()
        .content_type("application/x-protobuf")
        .body(ExportTraceServiceResponse::default().encode_to_vec())
}

#[tonic::async_trait]
impl TraceService for Shared {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let headers = request.metadata().clone().into_headers();
        self.take(&headers, request.into_inner()).await;
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Collector {
    /// OTLP over HTTP with protobuf bodies.
    pub async fn http() -> Collector {
        let shared = Shared { received: Arc::default(), mode: Arc::new(Mutex::new(Mode::Answer)) };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let app = Route::new().at("/v1/traces", post(traces)).data(shared.clone());
        let acceptor = poem::listener::TcpAcceptor::from_tokio(listener).unwrap();
        let server = tokio::spawn(async move {
            let _ = poem::Server::new_with_acceptor(acceptor).run(app).await;
        });
        Collector { endpoint: format!("http://{addr}"), shared, server }
    }

    /// OTLP over gRPC.
    pub async fn grpc() -> Collector {
        let shared = Shared { received: Arc::default(), mode: Arc::new(Mutex::new(Mode::Answer)) };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let service = TraceServiceServer::new(shared.clone());
        let server = tokio::spawn(async move {
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            let _ = tonic::transport::Server::builder().add_service(service).serve_with_incoming(incoming).await;
        });
        Collector { endpoint: format!("http://{addr}"), shared, server }
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.shared.mode.lock().unwrap() = mode;
    }

    pub fn spans(&self) -> Vec<Span> {
        self.shared.received.lock().unwrap().spans.clone()
    }

    /// The `x-*` headers exports arrived with, in order.
    pub fn headers(&self) -> Vec<(String, String)> {
        self.shared.received.lock().unwrap().headers.clone()
    }

    pub fn resource(&self) -> Vec<KeyValue> {
        self.shared.received.lock().unwrap().resource.clone()
    }

    /// The spans once `done` holds of them, or a failure naming what arrived.
    pub async fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} after 20 s; received: {:?}",
                spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A span's attribute, as a string (numbers in decimal).
pub fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()).map(text)
}

pub fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
