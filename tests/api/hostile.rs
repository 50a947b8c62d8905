//! Hostile clients: a JWT attack corpus, request smuggling, too many headers, too long a URL.
//! Each is refused with a precise status, never a 500, and nothing is written.

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::PathBuf,
    time::Duration,
};

use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::json;
use tandem::encoding::base64url;

use crate::harness::{
    Backend, TestApp,
    tokens::{self, now},
};

crate::scenarios![
    a_jwt_attack_corpus_is_401_never_500,
    a_jwt_signed_with_the_public_key_as_a_secret_is_401,
    smuggling_shaped_requests_cannot_smuggle,
    too_many_headers_or_too_long_a_url_is_431_or_414,
    a_client_that_trickles_its_headers_is_cut_off,
    a_body_after_100_continue_is_not_held_to_the_header_timeout,
    a_thousand_idle_connections_are_held_within_the_limit,
];

/// A token from raw header and claims JSON (duplicates and odd types included), HS256-signed
/// with `secret`.
fn raw_token(header: &str, claims: &str, secret: &[u8]) -> String {
    let message = format!("{}.{}", base64url::encode(header.as_bytes()), base64url::encode(claims.as_bytes()));
    let signature =
        jsonwebtoken::crypto::sign(message.as_bytes(), &EncodingKey::from_secret(secret), Algorithm::HS256).unwrap();
    format!("{message}.{signature}")
}

async fn status(app: &TestApp, token: &str) -> u16 {
    crate::harness::send(app.client.get(app.url("/api/v2/users")).bearer_auth(token)).await.status
}

async fn a_jwt_attack_corpus_is_401_never_500(backend: Backend) {
    let app = backend.spawn_with(|s| s.tokens.jwt_audience = Some("tandem".into())).await;
    let ours = tokens::SECRET.as_bytes();
    let theirs = b"an-attackers-secret-an-attackers-secret";
    let exp = now() + 600;
    let claims = format!(r#"{{"sub": "ada", "exp": {exp}, "aud": "tandem"}}"#);
    let hs256 = r#"{"alg": "HS256", "typ": "JWT"}"#;
    // Sound, for contrast: signed with our secret, even with key-locating headers (ignored).
    assert_eq!(status(&app, &raw_token(hs256, &claims, ours)).await, 200);
    for header in [
        r#"{"alg": "HS256", "kid": "../../../dev/null"}"#,
        r#"{"alg": "HS256", "jku": "https://evil.example/keys.json"}"#,
        r#"{"alg": "HS256", "x5u": "https://evil.example/cert.pem"}"#,
        r#"{"alg": "HS256", "jwk": {"kty": "oct", "k": "YXR0YWNrZXI"}}"#,
    ] {
        assert_eq!(status(&app, &raw_token(header, &claims, ours)).await, 200, "{header} with our key");
        assert_eq!(status(&app, &raw_token(header, &claims, theirs)).await, 401, "{header} with another key");
    }
    let mut corpus: Vec<(String, String)> = Vec::new();
    for alg in ["none", "None", "NONE", "nOnE"] {
        let header = format!(r#"{{"alg": "{alg}", "typ": "JWT"}}"#);
        let unsigned = format!("{}.{}.", base64url::encode(header.as_bytes()), base64url::encode(claims.as_bytes()));
        corpus.push((format!("alg {alg}"), unsigned.clone()));
        corpus.push((format!("alg {alg} with a signature"), format!("{unsigned}c2lnbmF0dXJl")));
        corpus.push((format!("alg {alg}, signed"), raw_token(&header, &claims, ours)));
    }
    corpus
        .push(("unknown crit".into(), raw_token(r#"{"alg": "HS256", "crit": ["exp-x"], "exp-x": 1}"#, &claims, ours)));
    let with = |claims: String| raw_token(hs256, &claims, ours);
    for (case, value) in [
        ("exp as a string", format!(r#""{exp}""#)),
        ("exp as a float", format!("{exp}.5")),
        ("exp huge", "1e300".to_string()),
        ("exp past i64", "99999999999999999999999".to_string()),
        ("exp negative", "-1".to_string()),
        ("exp null", "null".to_string()),
    ] {
        corpus.push((case.into(), with(format!(r#"{{"sub": "ada", "exp": {value}, "aud": "tandem"}}"#))));
    }
    for (case, value) in [
        ("nbf as a string", format!(r#""{exp}""#)),
        ("nbf huge", "1e300".into()),
        ("nbf far ahead", format!("{}", exp + 3600)),
    ] {
        corpus.push((case.into(), with(format!(r#"{{"sub": "ada", "exp": {exp}, "nbf": {value}, "aud": "tandem"}}"#))));
    }
    for (case, aud) in [
        ("aud array without ours", r#"["other", "another"]"#),
        ("aud array of numbers", "[1, 2]"),
        ("aud empty array", "[]"),
        ("aud an object", r#"{"aud": "tandem"}"#),
    ] {
        corpus.push((case.into(), with(format!(r#"{{"sub": "ada", "exp": {exp}, "aud": {aud}}}"#))));
    }
    corpus.push((
        "duplicate sub".into(),
        with(format!(r#"{{"sub": "ada", "sub": "root", "exp": {exp}, "aud": "tandem"}}"#)),
    ));
    corpus
        .push(("duplicate exp".into(), with(format!(r#"{{"sub": "ada", "exp": {exp}, "exp": 1, "aud": "tandem"}}"#))));
    corpus.push(("sub not a string".into(), with(format!(r#"{{"sub": 7, "exp": {exp}, "aud": "tandem"}}"#))));
    corpus.push(("claims not an object".into(), with("[1, 2, 3]".into())));
    corpus.push(("claims not JSON".into(), with("not json".into())));
    corpus.push(("8 KB of garbage".into(), "x".repeat(8 * 1024)));
    let padding = "p".repeat(8 * 1024);
    corpus.push((
        "8 KB claims signed by another".into(),
        raw_token(hs256, &format!(r#"{{"sub": "ada", "exp": {exp}, "aud": "tandem", "pad": "{padding}"}}"#), theirs),
    ));
    corpus.push(("two dots too many".into(), format!("{}.x.y", raw_token(hs256, &claims, ours))));
    corpus.push(("header not base64".into(), format!("!!!.{}.sig", base64url::encode(claims.as_bytes()))));
    for (case, token) in corpus {
        assert_eq!(status(&app, &token).await, 401, "{case}");
    }
    // An aud array that names this service is one the RFC allows.
    let listed = with(format!(r#"{{"sub": "ada", "exp": {exp}, "aud": ["other", "tandem"]}}"#));
    assert_eq!(status(&app, &listed).await, 200);
}

async fn a_jwt_signed_with_the_public_key_as_a_secret_is_401(backend: Backend) {
    let key = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rsa_public.pem");
    let pem = std::fs::read(&key).unwrap();
    let app = backend
        .spawn_with(|s| {
            s.tokens.jwt_secret = None;
            s.tokens.jwt_public_key = Some(key);
        })
        .await;
    let claims = format!(r#"{{"sub": "ada", "exp": {}}}"#, now() + 600);
    // The classic confusion: the verifier's own public key used as an HMAC secret.
    assert_eq!(status(&app, &raw_token(r#"{"alg": "HS256"}"#, &claims, &pem)).await, 401);
    assert_eq!(status(&app, &raw_token(r#"{"alg": "HS256"}"#, &claims, pem.trim_ascii())).await, 401);
    assert_eq!(status(&app, &tokens::rs256(&json!({"sub": "ada", "exp": now() + 600}))).await, 200);
}

/// A raw connection to the app, for requests no HTTP client would send.
struct Wire(std::net::SocketAddr);

impl Wire {
    /// Writes `request` on a fresh connection and reads the answer's status line; the flag
    /// tells whether the server then closed the connection.
    fn exchange(&self, request: &[u8]) -> (String, bool) {
        let mut stream = TcpStream::connect(self.0).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.write_all(request).unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 65536];
        let closed = loop {
            match stream.read(&mut buffer) {
                Ok(0) => break true,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
                Err(_) => break false,
            }
        };
        (String::from_utf8_lossy(&answer).lines().next().unwrap_or("").to_string(), closed)
    }
}

/// `Content-Length` with `Transfer-Encoding` is read by the latter alone and the connection
/// closes after its answer (RFC 9112 §6.3), so a request hidden behind it never runs; two
/// `Content-Length`s are refused outright.
async fn smuggling_shaped_requests_cannot_smuggle(backend: Backend) {
    let app = backend.spawn().await;
    let auth = format!("Authorization: Bearer {}\r\n", app.admin);
    let user = |name: &str| format!(r#"{{"name": "{name}", "email": "{name}@example.com", "age": 36}}"#);
    let (first, hidden) = (user("ada"), user("mallory"));
    let smuggled = format!(
        "POST /api/v2/users HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{hidden}",
        hidden.len()
    );
    // A front end that trusts Content-Length (4) would see the chunked body as a second request.
    let both = format!(
        "POST /api/v2/users HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: 4\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n0\r\n\r\n{smuggled}",
        first.len()
    );
    let two = format!(
        "POST /api/v2/users HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\
         Content-Length: 4\r\n\r\n{hidden}",
        hidden.len()
    );
    let wire = Wire(app.addr);
    let (both, two) =
        tokio::task::spawn_blocking(move || (wire.exchange(both.as_bytes()), wire.exchange(two.as_bytes())))
            .await
            .unwrap();
    assert_eq!(both, ("HTTP/1.1 201 Created".to_string(), true), "read by Transfer-Encoding, then closed");
    assert_eq!(two, ("HTTP/1.1 400 Bad Request".to_string(), true), "two Content-Lengths");
    let listed = app.get("/api/v2/users?email=mallory@example.com").await.json();
    assert_eq!(listed["totalElements"], 0, "the hidden request never ran");
    assert_eq!(app.user_count().await, 1);
}

async fn too_many_headers_or_too_long_a_url_is_431_or_414(backend: Backend) {
    let app = backend.spawn().await;
    let fake = Wire(app.addr);
    let (many, long, fine) = tokio::task::spawn_blocking(move || {
        let headers: String = (0..101).map(|i| format!("X-Header-{i}: a\r\n")).collect();
        let many = fake.exchange(format!("GET /health/live HTTP/1.1\r\nHost: x\r\n{headers}\r\n").as_bytes());
        let query = "a".repeat(16 * 1024);
        let long = fake.exchange(format!("GET /api/v2/users?keyword={query} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        let fine = fake.exchange(b"GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        (many, long, fine)
    })
    .await
    .unwrap();
    assert_eq!(many.0, "HTTP/1.1 431 Request Header Fields Too Large");
    assert_eq!(long, ("HTTP/1.1 414 URI Too Long".to_string(), true));
    assert_eq!(fine.0, "HTTP/1.1 200 OK");
    let problem =
        crate::harness::send(app.client.get(app.url(&format!("/api/v2/users?keyword={}", "b".repeat(9000))))).await;
    assert_eq!((problem.status, problem.json()["type"].clone()), (414, json!("/problems/uri-too-long")));
}

/// A client that trickles its headers (slowloris) is cut off after the header-read timeout,
/// while other clients are served and a merely slow one, within the timeout, is too.
async fn a_client_that_trickles_its_headers_is_cut_off(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.header_read_timeout_ms = 600).await;
    let addr = app.addr;
    let trickler = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let started = std::time::Instant::now();
        stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n").unwrap();
        while started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(100));
            if stream.write_all(b"X-Slow: a\r\n").is_err() {
                return started.elapsed();
            }
            let mut byte = [0u8; 1];
            match stream.read(&mut byte) {
                Ok(0) => return started.elapsed(),
                Ok(_) => panic!("the trickler got an answer"),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return started.elapsed(),
            }
        }
        panic!("still connected after 5 s");
    });
    let patient = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        stream.write_all(b"Connection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer.lines().next().unwrap_or("").to_string()
    });
    for _ in 0..5 {
        app.get("/api/v2/users").await.assert_status(200);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cut_after = trickler.await.unwrap();
    assert!((Duration::from_millis(500)..Duration::from_millis(2500)).contains(&cut_after), "cut after {cut_after:?}");
    assert_eq!(patient.await.unwrap(), "HTTP/1.1 200 OK");
}

/// A client that asks `Expect: 100-continue` sends its body after the interim answer; the body
/// may take longer than the header-read timeout (it bounds headers, not bodies), and the
/// request is answered. The user it creates is there once.
async fn a_body_after_100_continue_is_not_held_to_the_header_timeout(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.header_read_timeout_ms = 400).await;
    let (addr, token) = (app.addr, app.user.clone());
    let created = tokio::task::spawn_blocking(move || {
        let body = br#"{"name":"Slow Body","email":"slow.body@example.com","age":30}"#;
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = format!(
            "POST /api/v2/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        let mut interim = [0u8; 25];
        stream.read_exact(&mut interim).unwrap();
        assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
        // 900 ms for the body: more than twice the header-read timeout.
        for chunk in body.chunks(10) {
            stream.write_all(chunk).unwrap();
            std::thread::sleep(Duration::from_millis(150));
        }
        let mut answer = [0u8; 12];
        stream.read_exact(&mut answer).unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    });
    assert_eq!(created.await.unwrap(), "HTTP/1.1 201");
    let listed = app.get("/api/v2/users?email=slow.body@example.com").await.json();
    assert_eq!(listed["totalElements"], 1);
}

/// A thousand clients that connect, ask once and stay idle: the service holds at most
/// TANDEM_MAX_CONNECTIONS of them at a time (the others wait unaccepted, costing it nothing),
/// closes idle ones after TANDEM_IDLE_TIMEOUT_MS, and answers again once they are gone.
async fn a_thousand_idle_connections_are_held_within_the_limit(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.http.max_connections = 50;
            s.http.idle_timeout_ms = 500;
        })
        .await;
    let addr = app.addr;
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    // A thousand clients at once: each connects (as soon as the service lets it), asks once,
    // never reads the answer, and holds the connection until told to stop.
    let clients: Vec<_> = (0..1000)
        .map(|_| {
            let stop = stop.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let stopped = stop.notified();
                tokio::pin!(stopped);
                tokio::select! {
                    _ = &mut stopped => {}
                    connected = tokio::net::TcpStream::connect(addr) => {
                        let mut stream = connected.unwrap();
                        let _ = stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n").await;
                        stopped.await;
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (mut most, started) = (0, std::time::Instant::now());
    while started.elapsed() < Duration::from_secs(2) {
        most = most.max(app.state.connections.open.load(std::sync::atomic::Ordering::Relaxed));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each open connection is one socket (a file descriptor) and its buffers on the service's
    // side; the rest wait in the kernel. (This process's own descriptors also count the test's
    // clients and other tests', so the service's count is read instead.)
    assert!((1..=50).contains(&most), "at most the limit open at once: {most}");
    stop.notify_waiters();
    for client in clients {
        client.await.unwrap();
    }
    let started = std::time::Instant::now();
    loop {
        let answer = tokio::time::timeout(
            Duration::from_secs(1),
            crate::harness::send(reqwest::Client::new().get(app.url("/health/live"))),
        )
        .await;
        if matches!(answer, Ok(ref reply) if reply.status == 200) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the service never answered again");
    }
}
