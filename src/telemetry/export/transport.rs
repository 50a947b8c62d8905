//! Sends an encoded batch to the collector: OTLP over HTTP with a protobuf body, or OTLP over
//! gRPC (`TraceService/Export`), with the headers and the timeout the variables set. A batch
//! that does not arrive within the timeout is given up; nothing retries it.

use bytes::{Buf as _, BufMut as _, Bytes};
use poem::http::{HeaderMap, HeaderValue, header, uri::PathAndQuery};
use tonic::{
    Status,
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    metadata::MetadataMap,
    transport::Channel,
};

use super::settings::{ExportSettings, Protocol};

const EXPORT: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

pub struct Transport {
    headers: HeaderMap,
    timeout: std::time::Duration,
    to: To,
}

enum To {
    Http { client: reqwest::Client, url: String },
    Grpc(tonic::client::Grpc<Channel>),
}

impl Transport {
    /// Connects lazily: a collector that is down at start is no reason not to serve.
    pub fn new(settings: &ExportSettings) -> anyhow::Result<Transport> {
        let headers: HeaderMap = settings.headers.iter().cloned().collect();
        let to = match settings.protocol {
            Protocol::HttpProtobuf => {
                // An `https://` collector is reached with rustls on ring, as the identity provider is.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let client = reqwest::Client::builder()
                    .timeout(settings.timeout)
                    .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
                    .build()?;
                To::Http { client, url: settings.endpoint.to_string() }
            }
            Protocol::Grpc => {
                let channel = tonic::transport::Endpoint::from(settings.endpoint.clone())
                    .timeout(settings.timeout)
                    .connect_lazy();
                To::Grpc(tonic::client::Grpc::new(channel))
            }
        };
        Ok(Transport { headers, timeout: settings.timeout, to })
    }

    /// Sends one `ExportTraceServiceRequest`; an error says why the collector did not take it.
    pub async fn send(&mut self, body: Bytes) -> Result<(), String> {
        let timeout = self.timeout;
        let sent = tokio::time::timeout(timeout, self.send_now(body)).await;
        sent.unwrap_or_else(|_| Err(format!("no answer within {} ms", timeout.as_millis())))
    }

    async fn send_now(&mut self, body: Bytes) -> Result<(), String> {
        match &mut self.to {
            To::Http { client, url } => {
                let answer = client
                    .post(url.as_str())
                    .headers(self.headers.clone())
                    .header(header::CONTENT_TYPE, HeaderValue::from_static("application/x-protobuf"))
                    .body(body)
                    .send()
                    .await
                    .map_err(|err| format!("{:#}", anyhow::Error::from(err)))?;
                match answer.status() {
                    status if status.is_success() => Ok(()),
                    status => Err(format!("the collector answered {status}")),
                }
            }
            To::Grpc(grpc) => {
                grpc.ready().await.map_err(|err| format!("{:#}", anyhow::Error::from(err)))?;
                let mut request = tonic::Request::new(body);
                *request.metadata_mut() = MetadataMap::from_headers(self.headers.clone());
                let path = PathAndQuery::from_static(EXPORT);
                grpc.unary(request, path, Encoded).await.map(drop).map_err(|status| format!("{status}"))
            }
        }
    }
}

/// A gRPC codec for a request already encoded; the answer (an `ExportTraceServiceResponse`)
/// is read past.
#[derive(Debug, Clone, Copy, Default)]
struct Encoded;

impl Codec for Encoded {
    type Encode = Bytes;
    type Decode = ();
    type Encoder = Encoded;
    type Decoder = Encoded;

    fn encoder(&mut self) -> Encoded {
        Encoded
    }

    fn decoder(&mut self) -> Encoded {
        Encoded
    }
}

impl Encoder for Encoded {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Encoded {
    type Item = ();
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<()>, Status> {
        src.advance(src.remaining());
        Ok(Some(()))
    }
}
