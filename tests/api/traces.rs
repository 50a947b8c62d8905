//! Traces as an operator turns them on (CONTRACT §13): the built binary with the OpenTelemetry
//! SDK's `OTEL_*` variables, exporting to a collector that decodes the official protobuf.

use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind};
use serde_json::json;

use crate::harness::{
    Backend, Reply,
    binary::{self, Served, free_port},
    otlp::{Collector, Mode, attribute, hex, text},
    send, tokens,
};

crate::scenarios![
    a_traceparent_is_continued_with_statements_under_the_request,
    a_request_without_a_valid_traceparent_starts_a_trace,
    samplers_decide_which_traces_are_exported,
    a_slow_or_dead_collector_costs_requests_nothing_and_is_counted,
    grpc_exports_as_http_does,
    an_invalid_otel_variable_refuses_to_start;
    with redis: redis_commands_are_spans_under_the_request,
];

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn traceparent(trace: &str, flags: &str) -> String {
    format!("00-{trace}-{CALLER_SPAN}-{flags}")
}

fn unique_trace() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The binary exporting to `collector`, with a short batch delay so the tests wait little.
async fn exporting(backend: &Backend, collector: &Collector, extra: &[(&str, Option<&str>)]) -> Served {
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", Some(collector.endpoint.as_str())),
        ("OTEL_BSP_SCHEDULE_DELAY", Some("100")),
    ];
    env.extend_from_slice(extra);
    Served::start(backend, &env).await
}

fn request_spans(spans: &[Span], trace: &str) -> Vec<Span> {
    spans.iter().filter(|s| hex(&s.trace_id) == trace && s.kind == SpanKind::Server as i32).cloned().collect()
}

fn children_of<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id).collect()
}

async fn a_traceparent_is_continued_with_statements_under_the_request(backend: Backend) {
    let collector = Collector::http().await;
    let app = exporting(
        &backend,
        &collector,
        &[
            ("OTEL_SERVICE_NAME", Some("tandem-under-test")),
            ("OTEL_RESOURCE_ATTRIBUTES", Some("deployment.environment=trace-test")),
            // A vendor's key, percent-encoded as the specification says.
            ("OTEL_EXPORTER_OTLP_HEADERS", Some("x-vendor-key=k%20e%3Dy,x-team=core")),
        ],
    )
    .await;
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let (name, email) = (format!("Traced Person {marker}"), format!("traced-{marker}@example.com"));
    let subject = format!("sub-{}", uuid::Uuid::new_v4().simple());
    let token = tokens::signed(&tokens::claims(&subject, &["admin"]));
    let (create_trace, read_trace, missing_trace) = (unique_trace(), unique_trace(), unique_trace());
    let search_trace = unique_trace();

    let created = send(
        app.client
            .post(app.url("/api/v2/users"))
            .bearer_auth(&token)
            .header("traceparent", traceparent(&create_trace, "01"))
            .header("tracestate", "vendor=abc")
            .header("x-correlation-id", format!("corr-{marker}"))
            .header("user-agent", "trace-test/1.0")
            .json(&json!({"name": name, "email": email, "age": 33})),
    )
    .await;
    created.assert_status(201);
    let id = created.json()["id"].as_str().unwrap().to_string();
    let read = send(
        app.client
            .get(app.url(&format!("/api/v2/users/{id}")))
            .bearer_auth(&token)
            .header("traceparent", traceparent(&read_trace, "01")),
    )
    .await;
    read.assert_status(200);
    // A search by e-mail: the value is a bound parameter, never in the statement's text.
    let search = send(
        app.client
            .get(app.url(&format!("/users?email={email}")))
            .bearer_auth(&token)
            .header("traceparent", traceparent(&search_trace, "01")),
    )
    .await;
    search.assert_status(200);
    // Both versions' error bodies carry the trace id beside the correlation id.
    for path in ["/api/v2/users/00000000-0000-7000-8000-000000000000", "/api/v1/users/999999"] {
        let missing = send(
            app.client.get(app.url(path)).bearer_auth(&token).header("traceparent", traceparent(&missing_trace, "01")),
        )
        .await;
        missing.assert_status(404);
        assert_eq!(missing.json()["traceId"], missing_trace, "{path}: {}", missing.text);
        assert!(missing.json()["correlationId"].is_string());
    }

    let spans = collector
        .wait_for("the create's, the read's and their statements", |spans| {
            request_spans(spans, &create_trace).len() == 1
                && request_spans(spans, &read_trace).len() == 1
                && request_spans(spans, &missing_trace).len() == 2
                && request_spans(spans, &search_trace).len() == 1
                && spans.iter().filter(|s| s.kind == SpanKind::Client as i32).count() >= 2
        })
        .await;

    let create = &request_spans(&spans, &create_trace)[0];
    assert_eq!(create.name, "POST /api/v2/users");
    assert_eq!(hex(&create.parent_span_id), CALLER_SPAN, "a child of the caller's span");
    assert_eq!(create.trace_state, "vendor=abc");
    for (key, value) in [
        ("http.request.method", "POST"),
        ("http.route", "/api/v2/users"),
        ("http.response.status_code", "201"),
        ("url.scheme", "http"),
        ("server.address", "127.0.0.1"),
        ("user_agent.original", "trace-test/1.0"),
        ("tandem.api_version", "2"),
        ("tandem.correlation_id", &format!("corr-{marker}")),
    ] {
        assert_eq!(attribute(create, key).as_deref(), Some(value), "{key} on {create:?}");
    }
    assert!(attribute(create, "tandem.tenant").is_some(), "the tenant is named");
    let system = if backend.is_postgres() { "postgresql" } else { "sqlite" };
    let inserts: Vec<_> = children_of(&spans, create)
        .into_iter()
        .filter(|s| attribute(s, "db.system.name").as_deref() == Some(system))
        .collect();
    assert!(!inserts.is_empty(), "the create's statements are its children: {spans:?}");
    assert!(
        inserts.iter().any(|s| attribute(s, "db.operation.name").as_deref() == Some("INSERT")
            && attribute(s, "db.query.text").is_some_and(|q| q.contains("INSERT INTO users"))),
        "{inserts:?}"
    );
    let verify: Vec<_> = children_of(&spans, create).into_iter().filter(|s| s.name == "verify token").collect();
    assert_eq!(verify.len(), 1, "the first use of a token is verified under its request");

    let read = &request_spans(&spans, &read_trace)[0];
    assert_eq!(read.name, "GET /api/v2/users/{id}");
    assert_eq!(attribute(read, "http.route").as_deref(), Some("/api/v2/users/{id}"));
    let selects: Vec<_> = children_of(&spans, read)
        .into_iter()
        .filter(|s| attribute(s, "db.operation.name").as_deref() == Some("SELECT"))
        .collect();
    assert!(!selects.is_empty(), "the read's statement is its child: {spans:?}");
    assert!(children_of(&spans, read).iter().all(|s| s.name != "verify token"), "a cached token is not verified again");
    let search = &request_spans(&spans, &search_trace)[0];
    assert_eq!(search.name, "GET /users", "a legacy path keeps its own template");
    assert!(!children_of(&spans, search).is_empty(), "the search's statements are its children");
    let missing = request_spans(&spans, &missing_trace);
    assert!(missing.iter().any(|s| s.name == "GET /api/v1/users/{id}"), "{missing:?}");

    // Nothing personal, nothing secret, in any attribute of any span or of the resource.
    let mut everything: Vec<String> =
        collector.resource().iter().filter_map(|kv| kv.value.as_ref().map(text)).collect();
    for span in &spans {
        everything.push(span.name.clone());
        everything.extend(span.attributes.iter().filter_map(|kv| kv.value.as_ref().map(text)));
        for event in &span.events {
            everything.extend(event.attributes.iter().filter_map(|kv| kv.value.as_ref().map(text)));
        }
    }
    for (what, secret) in [("token", token.as_str()), ("e-mail", &email), ("name", &name), ("subject", &subject)] {
        assert!(!everything.iter().any(|v| v.contains(secret)), "a span holds the {what}");
    }
    let resource = |key: &str| {
        collector.resource().into_iter().find(|kv| kv.key == key).map(|kv| text(kv.value.as_ref().unwrap()))
    };
    assert_eq!(resource("service.name").as_deref(), Some("tandem-under-test"));
    assert_eq!(resource("deployment.environment").as_deref(), Some("trace-test"));
    // The headers arrive with every export, decoded; the key is in no span.
    let headers = collector.headers();
    assert!(headers.contains(&("x-vendor-key".into(), "k e=y".into())), "{headers:?}");
    assert!(headers.contains(&("x-team".into(), "core".into())), "{headers:?}");
    assert!(!everything.iter().any(|v| v.contains("k e=y")), "a span holds the collector's key");

    // The access log carries the trace id beside the correlation id.
    let stdout = app.stdout();
    let line = stdout.lines().find(|l| l.contains(&format!("corr-{marker}")) && l.contains("tandem::access")).unwrap();
    let line: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(line["span"]["trace_id"], create_trace.as_str(), "{line}");
}

async fn a_request_without_a_valid_traceparent_starts_a_trace(backend: Backend) {
    let collector = Collector::http().await;
    let app = exporting(&backend, &collector, &[]).await;
    let missing = "/api/v2/users/00000000-0000-7000-8000-000000000000";
    let fresh = app.get(missing).await;
    let upper = TRACE.to_uppercase();
    let invalid =
        send(app.client.get(app.url(missing)).bearer_auth(&app.admin).header("traceparent", traceparent(&upper, "01")))
            .await;
    let mut started = Vec::new();
    for reply in [&fresh, &invalid] {
        reply.assert_status(404);
        let trace = reply.json()["traceId"].as_str().unwrap().to_string();
        assert_eq!(trace.len(), 32);
        assert!(trace.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(trace, TRACE, "an upper-case traceparent is invalid: a new trace starts");
        started.push(trace);
    }
    assert_ne!(started[0], started[1]);
    let spans =
        collector.wait_for("both requests", |spans| started.iter().all(|t| request_spans(spans, t).len() == 1)).await;
    for trace in &started {
        assert!(request_spans(&spans, trace)[0].parent_span_id.is_empty(), "a root span");
    }
}

async fn samplers_decide_which_traces_are_exported(backend: Backend) {
    let collector = Collector::http().await;
    let off = exporting(&backend, &collector, &[("OTEL_TRACES_SAMPLER", Some("always_off"))]).await;
    let skipped = unique_trace();
    let reply = send(
        off.client
            .get(off.url("/api/v2/users"))
            .bearer_auth(&off.admin)
            .header("traceparent", traceparent(&skipped, "01")),
    )
    .await;
    reply.assert_status(200);
    drop(off);

    let ratio = [("OTEL_TRACES_SAMPLER", Some("parentbased_traceidratio")), ("OTEL_TRACES_SAMPLER_ARG", Some("0"))];
    let app = exporting(&backend, &collector, &ratio).await;
    let (sampled, unsampled) = (unique_trace(), unique_trace());
    for (trace, flags) in [(&sampled, "01"), (&unsampled, "00")] {
        let reply = send(
            app.client
                .get(app.url("/api/v2/users"))
                .bearer_auth(&app.admin)
                .header("traceparent", traceparent(trace, flags)),
        )
        .await;
        reply.assert_status(200);
    }
    // A root request at ratio 0 is never sampled; its error body still names its trace.
    let root = app.get("/api/v2/users/00000000-0000-7000-8000-000000000000").await;
    let root_trace = root.json()["traceId"].as_str().unwrap().to_string();
    let spans = collector.wait_for("the sampled parent's request", |s| request_spans(s, &sampled).len() == 1).await;
    let children = children_of(&spans, &request_spans(&spans, &sampled)[0]).len();
    assert!(children > 0, "a sampled request's statements are sampled with it");
    // Give the batch that would carry the others time to leave.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let spans = collector.spans();
    for (what, trace) in [("always_off", &skipped), ("an unsampled parent", &unsampled), ("ratio 0", &root_trace)] {
        assert!(spans.iter().all(|s| hex(&s.trace_id) != *trace), "{what}: exported anyway");
    }
}

async fn a_slow_or_dead_collector_costs_requests_nothing_and_is_counted(backend: Backend) {
    let collector = Collector::http().await;
    collector.set_mode(Mode::Slow(Duration::from_secs(6)));
    let small_queue = [("OTEL_BSP_MAX_QUEUE_SIZE", Some("4")), ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", Some("4"))];
    let app = exporting(&backend, &collector, &small_queue).await;
    let dead = format!("http://127.0.0.1:{}", free_port());
    let down = Served::start(
        &backend,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", Some(dead.as_str())), ("OTEL_BSP_SCHEDULE_DELAY", Some("50"))],
    )
    .await;
    // A queue with room, and a timeout that gives up on the slow collector first.
    let timing_out = exporting(&backend, &collector, &[("OTEL_EXPORTER_OTLP_TIMEOUT", Some("1000"))]).await;
    for served in [&app, &down, &timing_out] {
        for _ in 0..30 {
            let started = Instant::now();
            served.get("/api/v2/users").await.assert_status(200);
            // Far below the collector's 6 s: the request never waits for export.
            assert!(started.elapsed() < Duration::from_secs(2), "a request waited {:?}", started.elapsed());
        }
    }
    for (what, served) in
        [("a slow collector", &app), ("a dead collector", &down), ("a collector past the timeout", &timing_out)]
    {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let metrics = served.get("/metrics").await;
            let dropped = metric(&metrics, "tandem_spans_dropped_total");
            if dropped > 0.0 {
                break;
            }
            assert!(Instant::now() < deadline, "{what}: no span counted dropped: {dropped}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn metric(reply: &Reply, name: &str) -> f64 {
    reply
        .text
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.trim().parse().ok()))
        .unwrap_or_else(|| panic!("{name} is not in /metrics"))
}

async fn grpc_exports_as_http_does(backend: Backend) {
    let collector = Collector::grpc().await;
    let app = exporting(
        &backend,
        &collector,
        &[
            ("OTEL_EXPORTER_OTLP_PROTOCOL", Some("grpc")),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", Some("x-vendor-key=over-grpc")),
        ],
    )
    .await;
    let trace = unique_trace();
    send(
        app.client
            .get(app.url("/api/v2/users"))
            .bearer_auth(&app.admin)
            .header("traceparent", traceparent(&trace, "01")),
    )
    .await
    .assert_status(200);
    let spans = collector.wait_for("the request over gRPC", |s| request_spans(s, &trace).len() == 1).await;
    assert_eq!(request_spans(&spans, &trace)[0].name, "GET /api/v2/users");
    assert!(!children_of(&spans, &request_spans(&spans, &trace)[0]).is_empty(), "its statements under it");
    assert!(collector.headers().contains(&("x-vendor-key".into(), "over-grpc".into())), "as metadata");
}

async fn an_invalid_otel_variable_refuses_to_start(_backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    for (variable, value) in [
        ("OTEL_TRACES_SAMPLER", "sometimes"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
    ] {
        let sampler = if variable == "OTEL_TRACES_SAMPLER_ARG" { Some("traceidratio") } else { None };
        let mut env = vec![
            ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", Some("http://127.0.0.1:4318")),
            (variable, Some(value)),
        ];
        if let Some(sampler) = sampler {
            env.push(("OTEL_TRACES_SAMPLER", Some(sampler)));
        }
        let output = binary::run(dir.path(), &["serve"], &env);
        assert_eq!(output.status.code(), Some(2), "{variable}={value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("{variable}={value}")), "{stderr}");
    }
}

async fn redis_commands_are_spans_under_the_request(backend: Backend) {
    let collector = Collector::http().await;
    let redis = backend.redis.clone().unwrap();
    let app = exporting(&backend, &collector, &[("TANDEM_REDIS_URL", Some(redis.as_str()))]).await;
    let trace = unique_trace();
    let key = uuid::Uuid::new_v4().to_string();
    send(
        app.client
            .post(app.url("/api/v2/users"))
            .bearer_auth(&app.admin)
            .header("traceparent", traceparent(&trace, "01"))
            .header("idempotency-key", &key)
            .json(&json!({"name": "Redis Traced", "email": format!("r-{key}@example.com"), "age": 30})),
    )
    .await
    .assert_status(201);
    let spans = collector
        .wait_for("the keyed create's Redis commands", |s| {
            s.iter()
                .filter(|s| hex(&s.trace_id) == trace && attribute(s, "db.system.name").as_deref() == Some("redis"))
                .count()
                >= 2
        })
        .await;
    let request = &request_spans(&spans, &trace)[0];
    let commands: Vec<String> = children_of(&spans, request)
        .into_iter()
        .filter(|s| attribute(s, "db.system.name").as_deref() == Some("redis"))
        .map(|s| s.name.clone())
        .collect();
    assert!(commands.contains(&"SET".to_string()) && commands.contains(&"EVALSHA".to_string()), "{commands:?}");
    for span in spans.iter().filter(|s| attribute(s, "db.system.name").as_deref() == Some("redis")) {
        assert!(span.attributes.iter().all(|kv| !kv.value.as_ref().map(text).unwrap_or_default().contains(&key)));
    }
}
