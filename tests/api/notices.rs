//! Notices to clients (the book's clients/notices.md): a client's owners subscribe an endpoint and
//! are told, signed and once, at every milestone of its version's retirement, each notice with its
//! own guide; retries keep their id, a 410 disables the endpoint, a restart or a second instance
//! loses and doubles nothing, and no notice ever reaches an internal address. Receivers listen on
//! loopback, allow-listed with `TANDEM_NOTICES_ALLOW_HOSTS`; signatures are verified with the
//! Standard Webhooks reference implementation.

use std::time::Duration;

use reqwest::{Method, header::HeaderMap};
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::{FixedClock, test_settings},
    binary, logs,
    receiver::{Answer, Received, Receiver},
    send,
    tokens::{self, now},
};

crate::scenarios![
    every_event_reaches_its_endpoint_signed_with_the_clients_guide,
    endpoints_are_set_read_and_removed_by_their_owners,
    every_internal_address_is_refused,
    the_address_is_checked_again_when_a_notice_is_sent,
    retries_keep_their_id_and_honour_retry_after,
    a_notice_fails_after_its_last_retry_and_a_410_disables_the_endpoint,
    a_restart_between_an_event_and_its_delivery_loses_nothing,
    reminders_come_at_their_thresholds,
    an_acknowledgement_shows_in_readiness_and_is_voided_when_the_sunset_moves,
    a_client_using_a_deprecated_element_is_told_once_and_reminded,
    a_tenants_endpoint_reaches_every_client_that_uses_an_element;
    postgres only:
    two_instances_send_each_notice_once,
];

/// Long enough for a scan, a delivery and a slow machine.
const TOLD_WITHIN: Duration = Duration::from_secs(15);

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2026-07-01T00:00:00Z".into());
    s.notices.notices_allow_hosts = Some("127.0.0.1".into());
}

/// The settings of an instance with v1 deprecated, on the database `url`.
fn deprecated_on(url: &str) -> tandem::Settings {
    let mut s = test_settings(url);
    deprecated(&mut s);
    s
}

/// An instance with v1 deprecated, on `clock`; a receiver; and `acme/ci-bot`, who has called v1
/// and is counted.
async fn a_v1_caller(backend: &Backend, clock: &FixedClock) -> (TestApp, Receiver, String) {
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let receiver = Receiver::start().await;
    let bot = token("acme", "ci-bot");
    call(&app, &bot, "/users").await;
    app.counts_written().await;
    (app, receiver, bot)
}

fn token(tenant: &str, subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 3600, "tenant": tenant, "roles": []}))
}

async fn call(app: &TestApp, token: &str, path: &str) {
    let reply = send(app.client.get(app.url(path)).bearer_auth(token)).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text);
}

/// Sets the caller's endpoint; its secret.
async fn subscribe(app: &TestApp, token: &str, url: &str, format: &str) -> String {
    let body = json!({"url": url, "format": format});
    let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(token).json(&body)).await;
    reply.assert_status(200);
    reply.json()["secret"].as_str().unwrap().to_string()
}

/// Verifies a notice as a receiver would, with the Standard Webhooks reference implementation.
fn verify(received: &Received, secret: &str) {
    let mut headers = HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, received.header(name).unwrap_or_else(|| panic!("no {name}")).parse().unwrap());
    }
    let verifier = standardwebhooks::Webhook::new(secret).unwrap();
    verifier.verify(&received.body, &headers).unwrap_or_else(|e| panic!("{e:?}: {received:?}"));
}

fn of_type<'a>(received: &'a [Received], kind: &str) -> Vec<&'a Received> {
    received.iter().filter(|r| r.kind() == kind).collect()
}

/// Waits until the caller's newest notice shows `attempts` recorded: the clock may move only
/// once an attempt is written, or its retry is reckoned from the moved clock.
async fn recorded(app: &TestApp, token: &str, attempts: u64) -> Value {
    let deadline = std::time::Instant::now() + TOLD_WITHIN;
    loop {
        let mine = send(app.client.get(app.url("/api/migration/notices/deliveries")).bearer_auth(token)).await.json();
        if mine["notices"][0]["attempts"] == attempts {
            return mine["notices"][0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "attempt {attempts} never recorded: {mine}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Moves the clock to `at`; attempt `n` comes, and is recorded.
async fn attempt_at(app: &TestApp, token: &str, receiver: &Receiver, clock: &FixedClock, at: &str, n: usize) {
    clock.set(at);
    receiver.wait_for(&format!("attempt {n}"), TOLD_WITHIN, |r| r.len() == n).await;
    recorded(app, token, n as u64).await;
}

/// Moves the clock to `at`; no attempt comes beyond the `n` before.
async fn nothing_at(receiver: &Receiver, clock: &FixedClock, at: &str, n: usize, why: &str) {
    clock.set(at);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(receiver.received().len(), n, "{why}");
}

async fn admin_json(app: &TestApp, path: &str) -> Value {
    let reply = send(app.request(Method::GET, path)).await;
    reply.assert_status(200);
    reply.json()
}

async fn every_event_reaches_its_endpoint_signed_with_the_clients_guide(backend: Backend) {
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let receiver = Receiver::start().await;
    let (bot, chat) = (token("acme", "ci-bot"), token("acme", "chat-bot"));
    // The bot calls v1 with a request that meets a change of v2; the other only calls v1.
    call(&app, &bot, "/api/v1/customers?sortBy=name").await;
    call(&app, &bot, "/users").await;
    call(&app, &chat, "/users").await;
    app.counts_written().await;
    let secret = subscribe(&app, &bot, &receiver.url("/hooks/bot"), "standard").await;
    let slack_secret = subscribe(&app, &chat, &receiver.url("/services/T0/B0/chat-secret"), "slack").await;

    // At once: the deprecation, the 30-day reminder (21.5 days left) and the change met.
    let received = receiver
        .wait_for("the first notices", TOLD_WITHIN, |r| {
            r.iter().filter(|r| r.path == "/hooks/bot").count() >= 3
                && r.iter().any(|r| r.path.starts_with("/services"))
        })
        .await;
    let bots: Vec<Received> = received.iter().filter(|r| r.path == "/hooks/bot").cloned().collect();
    for notice in &bots {
        verify(notice, &secret);
        assert_eq!(notice.header("content-type"), Some("application/json"));
    }
    let record = admin_json(&app, "/admin/migration/guide?tenant=acme&subject=ci-bot").await;
    let met = record["routes"].as_array().unwrap().iter().find(|r| !r["mustChange"].as_array().unwrap().is_empty());
    let change = met.unwrap_or_else(|| panic!("no change met: {record}"))["mustChange"][0]["change"].clone();
    let deprecation = of_type(&bots, "version.deprecated")[0].json();
    assert_eq!(deprecation["timestamp"], "2026-06-09T12:00:00Z");
    let data = &deprecation["data"];
    let expected = json!({"tenant": "acme", "subject": "ci-bot", "version": 1, "successor": 2,
                          "deprecatedAt": "2026-01-01T00:00:00Z", "sunsetAt": "2026-07-01T00:00:00Z",
                          "daysLeft": 21, "status": "not-started"});
    for (field, value) in expected.as_object().unwrap() {
        assert_eq!(&data[field], value, "{field}: {data}");
    }
    assert_eq!(data["guide"], record, "the notice carries the client's own guide");
    let reminder = of_type(&bots, "sunset.reminder")[0].json();
    assert_eq!((reminder["data"]["threshold"].clone(), reminder["data"]["daysLeft"].clone()), (json!(30), json!(21)));
    let exposure = of_type(&bots, "migration.exposed")[0].json();
    assert_eq!(exposure["data"]["change"], change);

    let slack = received.iter().find(|r| r.path.starts_with("/services")).unwrap();
    verify(slack, &slack_secret);
    let text = slack.json()["text"].as_str().unwrap().to_string();
    assert!(text.contains("v1") && text.contains("acme/chat-bot") && text.contains("Next step: "), "{text}");
    assert_eq!(slack.json().as_object().unwrap().len(), 1, "Slack takes {{\"text\"}} alone");

    // A brownout covering acme is announced when it is created.
    let brownout = json!({"version": 1, "start": "2026-06-20T10:00:00Z", "end": "2026-06-20T11:00:00Z",
                          "tenant": "acme", "subject": "ci-bot"});
    send(app.request(Method::POST, "/admin/brownouts").json(&brownout)).await.assert_status(201);
    let received =
        receiver.wait_for("the brownout", TOLD_WITHIN, |r| !of_type(r, "brownout.scheduled").is_empty()).await;
    let announced = of_type(&received, "brownout.scheduled");
    assert_eq!(announced.len(), 1, "only the client it covers");
    verify(announced[0], &secret);
    let data = announced[0].json()["data"].clone();
    assert_eq!((data["start"].clone(), data["end"].clone()), (brownout["start"].clone(), brownout["end"].clone()));
    // ... and again a day before it starts.
    clock.set("2026-06-19T10:30:00Z");
    call(&app, &bot, "/users").await;
    receiver.wait_for("the day before", TOLD_WITHIN, |r| of_type(r, "brownout.scheduled").len() == 2).await;

    // Each once: more rounds of the scan send nothing new.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let received = receiver.received();
    let ids: std::collections::HashSet<String> = received.iter().map(Received::id).collect();
    assert_eq!(ids.len(), received.len(), "no notice was sent twice");
    let kinds = |path: &str| {
        let mut kinds: Vec<String> = received.iter().filter(|r| r.path.starts_with(path)).map(Received::kind).collect();
        kinds.sort();
        kinds
    };
    assert_eq!(
        kinds("/hooks/bot"),
        ["brownout.scheduled", "brownout.scheduled", "migration.exposed", "sunset.reminder", "version.deprecated"]
    );
    assert_eq!(kinds("/services").len(), 2, "the chat bot met no change and no brownout covers it");

    // What was sent: the client's own list, the admin's, the metrics and the dashboard's column.
    let mine = send(app.client.get(app.url("/api/migration/notices/deliveries")).bearer_auth(&bot)).await;
    mine.assert_status(200);
    let mine = mine.json();
    assert_eq!(mine["notices"].as_array().unwrap().len(), 5);
    assert_eq!(mine["nextCursor"], Value::Null);
    let first = &mine["notices"][0];
    assert_eq!(first["type"], "brownout.scheduled", "newest first");
    assert_eq!(
        (first["status"].clone(), first["attempts"].clone(), first["lastStatus"].clone(), first["subject"].clone()),
        (json!("delivered"), json!(1), json!(200), json!("ci-bot"))
    );
    assert!(first["id"].as_str().is_some_and(|id| ids.contains(id)));
    let page = admin_json(&app, "/admin/notices?tenant=acme&status=delivered&limit=4").await;
    assert_eq!(page["notices"].as_array().unwrap().len(), 4);
    let cursor = page["nextCursor"].as_str().unwrap().to_string();
    let rest = admin_json(&app, &format!("/admin/notices?tenant=acme&status=delivered&limit=4&cursor={cursor}")).await;
    assert_eq!(rest["notices"].as_array().unwrap().len(), 3);
    assert_eq!(rest["nextCursor"], Value::Null);
    let other = send(app.request(Method::GET, &format!("/admin/notices?status=failed&cursor={cursor}"))).await;
    other.assert_status(400);
    assert_eq!(other.error_codes(), [("cursor".to_string(), "cursor_mismatch".to_string())]);
    let bad = send(app.request(Method::GET, "/admin/notices?status=lost")).await;
    bad.assert_status(400);
    assert_eq!(bad.error_codes()[0].1, "one_of");
    let metrics = send(app.client.get(app.url("/metrics"))).await.text;
    assert!(
        metrics.contains("tandem_notices_total{type=\"version.deprecated\",outcome=\"delivered\"} 2\n"),
        "{metrics}"
    );
    let everyone = admin_json(&app, "/admin/migration?version=1").await;
    let told =
        everyone["records"].as_array().unwrap().iter().find(|r| r["subject"] == "ci-bot").unwrap()["notices"].clone();
    assert_eq!(told["endpoint"], true);
    assert_eq!(
        (told["last"]["type"].clone(), told["last"]["status"].clone()),
        (json!("brownout.scheduled"), json!("delivered"))
    );

    // The Slack URL's path is its secret: the log shows scheme and host only.
    assert!(!logs::captured().contains("chat-secret"), "a notice URL's path reached the log");
}

async fn endpoints_are_set_read_and_removed_by_their_owners(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    let receiver = Receiver::start().await;
    let bot = token("acme", "ci-bot");
    let mine = |method: Method| app.client.request(method, app.url("/api/migration/notices")).bearer_auth(&bot);
    send(mine(Method::GET)).await.assert_status(404);
    send(mine(Method::DELETE)).await.assert_status(404);
    let first = send(mine(Method::PUT).json(&json!({"url": receiver.url("/a")}))).await;
    first.assert_status(200);
    let first = first.json();
    assert_eq!(first["format"], "standard", "the default");
    let secret = first["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() == "whsec_".len() + 44, "{secret}");
    let shown = send(mine(Method::GET)).await.json();
    assert_eq!(
        shown,
        json!({"url": receiver.url("/a"), "format": "standard", "createdAt": first["createdAt"], "disabledAt": null})
    );
    let second = send(mine(Method::PUT).json(&json!({"url": receiver.url("/b"), "format": "slack"}))).await.json();
    assert_ne!(second["secret"], first["secret"], "a new PUT makes a new secret");
    assert_eq!(send(mine(Method::GET)).await.json()["format"], "slack");

    // Bad input: every one refused with what is wrong, and nothing written.
    for (body, field, code) in [
        (json!({}), "/url", "required"),
        (json!({"url": 7}), "/url", "type"),
        (json!({"url": receiver.url("/c"), "format": "teams"}), "/format", "one_of"),
        (json!({"url": receiver.url("/c"), "secret": "mine"}), "/secret", "unknown_field"),
        (json!({"url": "not a url"}), "/url", "invalid"),
    ] {
        let reply = send(mine(Method::PUT).json(&body)).await;
        reply.assert_status(400);
        assert!(reply.error_codes().contains(&(field.to_string(), code.to_string())), "{body}: {}", reply.text);
    }
    let malformed = send(mine(Method::PUT).header("content-type", "application/json").body("{\"url\":")).await;
    malformed.assert_status(400);
    assert!(
        malformed.json()["detail"].as_str().unwrap().starts_with("The body is not valid JSON"),
        "{}",
        malformed.text
    );
    let twice = format!("{{\"url\": \"{}\", \"url\": \"{}\"}}", receiver.url("/c"), receiver.url("/d"));
    let duplicated = send(mine(Method::PUT).header("content-type", "application/json").body(twice)).await;
    assert_eq!(duplicated.error_codes(), [("/url".to_string(), "duplicate_key".to_string())]);
    assert_eq!(send(mine(Method::GET)).await.json()["url"], receiver.url("/b"), "nothing was written");
    send(mine(Method::DELETE)).await.assert_status(204);
    send(mine(Method::GET)).await.assert_status(404);

    // A tenant's endpoint is an operator's.
    let path = "/admin/tenants/acme/notices";
    let body = json!({"url": receiver.url("/acme")});
    send(app.client.put(app.url(path)).bearer_auth(&bot).json(&body)).await.assert_status(403);
    let set = send(app.request(Method::PUT, path).json(&body)).await;
    set.assert_status(200);
    assert!(set.json()["secret"].as_str().unwrap().starts_with("whsec_"));
    assert!(send(app.request(Method::GET, path)).await.json().get("secret").is_none());
    send(app.request(Method::PUT, "/admin/tenants/Not%20A%20Tenant/notices").json(&body)).await.assert_status(400);
    send(app.request(Method::DELETE, path)).await.assert_status(204);
    send(app.request(Method::GET, path)).await.assert_status(404);
}

async fn every_internal_address_is_refused(backend: Backend) {
    // No allow-list: only public https endpoints.
    let app = backend.spawn_with(|s| s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into())).await;
    let bot = token("acme", "ci-bot");
    for (url, code) in [
        ("http://93.184.216.34/hook", "https_required"),
        ("ftp://93.184.216.34/hook", "https_required"),
        ("https://127.0.0.1/hook", "internal_address"),
        ("https://127.8.9.10:8443/hook", "internal_address"),
        ("https://10.1.2.3/hook", "internal_address"),
        ("https://172.16.5.4/hook", "internal_address"),
        ("https://192.168.1.1/hook", "internal_address"),
        ("https://100.64.0.1/hook", "internal_address"),
        ("https://169.254.169.254/latest/meta-data/", "internal_address"),
        ("https://0.0.0.0/hook", "internal_address"),
        ("https://224.0.0.1/hook", "internal_address"),
        ("https://[::1]/hook", "internal_address"),
        ("https://[::]/hook", "internal_address"),
        ("https://[fd00:ec2::254]/hook", "internal_address"),
        ("https://[fe80::1]/hook", "internal_address"),
        ("https://[ff02::1]/hook", "internal_address"),
        ("https://[::ffff:127.0.0.1]/hook", "internal_address"),
        ("https://[::ffff:169.254.169.254]/hook", "internal_address"),
        ("https://[::ffff:10.0.0.1]/hook", "internal_address"),
        ("https://2130706433/hook", "internal_address"),
        ("https://0177.0.0.1/hook", "internal_address"),
        ("https://0x7f.0.0.1/hook", "internal_address"),
        ("https://0x7f.1/hook", "internal_address"),
        ("https://localhost/hook", "internal_address"),
    ] {
        let reply =
            send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&json!({"url": url}))).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), [("/url".to_string(), code.to_string())], "{url}");
    }
    let none = send(app.client.get(app.url("/api/migration/notices")).bearer_auth(&bot)).await;
    none.assert_status(404);
    // Allow-listing an address allows that address, not a name that resolves to it.
    let allowed = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.notices.notices_allow_hosts = Some("127.0.0.1".into());
        })
        .await;
    let put = |url: &str| {
        send(allowed.client.put(allowed.url("/api/migration/notices")).bearer_auth(&bot).json(&json!({"url": url})))
    };
    put("http://127.0.0.1:9/hook").await.assert_status(200);
    assert_eq!(put("https://localhost/hook").await.error_codes()[0].1, "internal_address");
    assert_eq!(put("https://[::1]/hook").await.error_codes()[0].1, "internal_address");
}

async fn the_address_is_checked_again_when_a_notice_is_sent(backend: Backend) {
    // An endpoint set while its host was allow-listed, then sent by an instance that no longer
    // allows it: nothing reaches the receiver, and the notice fails.
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let receiver = Receiver::start().await;
    let database_url = backend.fresh_database().await;
    let settings = |allow: Option<&str>| {
        let mut s = deprecated_on(&database_url);
        s.notices.notices_allow_hosts = allow.map(str::to_string);
        s
    };
    let bot = token("acme", "ci-bot");
    let mut first = TestApp::start_with_clock(settings(Some("127.0.0.1")), clock.clock()).await;
    receiver.script([Answer::Status(503)]);
    call(&first, &bot, "/users").await;
    first.counts_written().await;
    subscribe(&first, &bot, &receiver.url("/hook"), "standard").await;
    receiver.wait_for("the first attempt", TOLD_WITHIN, |r| r.len() >= 2).await;
    first.stop();
    first.stopped.take().unwrap().await.unwrap().unwrap();
    let attempts = receiver.received().len();

    let second = TestApp::start_with_clock(settings(None), clock.clock()).await;
    clock.set("2026-06-09T12:00:30Z");
    let deadline = std::time::Instant::now() + TOLD_WITHIN;
    loop {
        let page = admin_json(&second, "/admin/notices?status=failed").await;
        if page["notices"].as_array().unwrap().len() == 1 {
            assert_eq!(page["notices"][0]["lastStatus"], Value::Null, "no answer: it was never sent");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the refused notice never failed: {page}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(receiver.received().len(), attempts, "nothing more reached the receiver");
}

async fn retries_keep_their_id_and_honour_retry_after(backend: Backend) {
    let clock = FixedClock::at("2026-03-01T12:00:00Z");
    let (app, receiver, bot) = a_v1_caller(&backend, &clock).await;
    // A receiver that never answers, then one busy for ten minutes, then an error, then 200.
    receiver.script([Answer::Silence, Answer::RetryAfter(429, "600".into()), Answer::Status(500)]);
    let secret = subscribe(&app, &bot, &receiver.url("/hook"), "standard").await;
    receiver.wait_for("the first attempt", TOLD_WITHIN, |r| r.len() == 1).await;
    // The silent attempt fails when its 10 s run out, and is tried again.
    let silent = recorded(&app, &bot, 1).await;
    assert_eq!((silent["status"].clone(), silent["lastStatus"].clone()), (json!("pending"), Value::Null));
    attempt_at(&app, &bot, &receiver, &clock, "2026-03-01T12:00:30Z", 2).await;
    // The schedule's 5 minutes pass, but the receiver asked for ten.
    nothing_at(&receiver, &clock, "2026-03-01T12:06:30Z", 2, "Retry-After was not honoured").await;
    attempt_at(&app, &bot, &receiver, &clock, "2026-03-01T12:10:31Z", 3).await;
    // Then about 30 minutes (a tenth either way).
    nothing_at(&receiver, &clock, "2026-03-01T12:36:00Z", 3, "retried before its time").await;
    attempt_at(&app, &bot, &receiver, &clock, "2026-03-01T12:44:00Z", 4).await;
    let received = receiver.received();
    let id = received[0].id();
    for attempt in &received {
        assert_eq!(attempt.id(), id, "every attempt carries the notice's id");
        assert_eq!(attempt.body, received[0].body);
        verify(attempt, &secret);
    }
    let notice = recorded(&app, &bot, 4).await;
    assert_eq!((notice["status"].clone(), notice["lastStatus"].clone()), (json!("delivered"), json!(200)));
    assert_eq!(notice["lastAttemptAt"], "2026-03-01T12:44:00Z");
}

async fn a_notice_fails_after_its_last_retry_and_a_410_disables_the_endpoint(backend: Backend) {
    let clock = FixedClock::at("2026-03-01T00:00:00Z");
    let (app, receiver, bot) = a_v1_caller(&backend, &clock).await;
    receiver.script(std::iter::repeat_n(Answer::Status(502), 8));
    subscribe(&app, &bot, &receiver.url("/hook"), "standard").await;
    receiver.wait_for("the first attempt", TOLD_WITHIN, |r| r.len() == 1).await;
    recorded(&app, &bot, 1).await;
    // Each wait of the schedule, a tenth longer: at once, then 5 s, 5 min, 30 min, 2 h, 5 h,
    // 10 h and 10 h.
    let mut at = chrono::DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z").unwrap();
    for (attempt, wait) in [5, 300, 1800, 7200, 18_000, 36_000, 36_000].into_iter().enumerate() {
        at += chrono::Duration::seconds(wait * 11 / 10 + 1);
        attempt_at(&app, &bot, &receiver, &clock, &at.to_rfc3339(), attempt + 2).await;
    }
    let notice = recorded(&app, &bot, 8).await;
    assert_eq!((notice["status"].clone(), notice["lastStatus"].clone()), (json!("failed"), json!(502)));
    at += chrono::Duration::days(2);
    nothing_at(&receiver, &clock, &at.to_rfc3339(), 8, "no attempt after the last").await;

    // A receiver that answers 410 wants no more: its endpoint is disabled.
    receiver.script([Answer::Status(410)]);
    let brownout =
        json!({"version": 1, "start": "2026-04-20T10:00:00Z", "end": "2026-04-20T11:00:00Z", "tenant": "acme"});
    send(app.request(Method::POST, "/admin/brownouts").json(&brownout)).await.assert_status(201);
    receiver.wait_for("the brownout", TOLD_WITHIN, |r| r.len() == 9).await;
    let deadline = std::time::Instant::now() + TOLD_WITHIN;
    loop {
        let shown = send(app.client.get(app.url("/api/migration/notices")).bearer_auth(&bot)).await.json();
        if shown["disabledAt"].is_string() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never disabled: {shown}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let failed = admin_json(&app, "/admin/notices?status=failed").await;
    assert_eq!(failed["notices"][0]["lastStatus"], 410);
    let second =
        json!({"version": 1, "start": "2026-04-21T10:00:00Z", "end": "2026-04-21T11:00:00Z", "tenant": "acme"});
    send(app.request(Method::POST, "/admin/brownouts").json(&second)).await.assert_status(201);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(receiver.received().len(), 9, "nothing is sent to a disabled endpoint");
    let metrics = send(app.client.get(app.url("/metrics"))).await.text;
    for line in [
        "tandem_notices_total{type=\"brownout.scheduled\",outcome=\"disabled\"} 1",
        "tandem_notices_total{type=\"version.deprecated\",outcome=\"failed\"} 1",
        "tandem_notices_total{type=\"version.deprecated\",outcome=\"retried\"} 7",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }
}

async fn a_restart_between_an_event_and_its_delivery_loses_nothing(backend: Backend) {
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let receiver = Receiver::start().await;
    let database_url = backend.fresh_database().await;
    let settings = || deprecated_on(&database_url);
    let bot = token("acme", "ci-bot");
    let mut first = TestApp::start_with_clock(settings(), clock.clock()).await;
    call(&first, &bot, "/users").await;
    first.counts_written().await;
    // The receiver is down for every first attempt: the notices wait in the outbox.
    receiver.script([Answer::Status(503), Answer::Status(503)]);
    let secret = subscribe(&first, &bot, &receiver.url("/hook"), "standard").await;
    receiver.wait_for("the first attempts", TOLD_WITHIN, |r| r.len() == 2).await;
    first.stop();
    first.stopped.take().unwrap().await.unwrap().unwrap();

    let second = TestApp::start_with_clock(settings(), clock.clock()).await;
    clock.set("2026-06-09T12:00:30Z");
    let received = receiver.wait_for("the retries", TOLD_WITHIN, |r| r.len() == 4).await;
    for notice in &received {
        verify(notice, &secret);
    }
    let mut kinds: Vec<String> = received[2..].iter().map(Received::kind).collect();
    kinds.sort();
    assert_eq!(kinds, ["sunset.reminder", "version.deprecated"]);
    let mut ids: Vec<String> = received.iter().map(Received::id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2, "the retries after the restart carry the first attempts' ids");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(receiver.received().len(), 4, "nothing was written again after the restart");
    let delivered = admin_json(&second, "/admin/notices?status=delivered").await;
    assert_eq!(delivered["notices"].as_array().unwrap().len(), 2);
}

async fn reminders_come_at_their_thresholds(backend: Backend) {
    let clock = FixedClock::at("2026-03-01T00:00:00Z");
    let (app, receiver, bot) = a_v1_caller(&backend, &clock).await;
    subscribe(&app, &bot, &receiver.url("/bot"), "standard").await;
    receiver.wait_for("the deprecation", TOLD_WITHIN, |r| r.len() == 1).await;
    let reminders = |r: &[Received]| -> Vec<(i64, i64)> {
        of_type(r, "sunset.reminder")
            .iter()
            .filter(|n| n.path == "/bot")
            .map(|n| {
                let data = n.json()["data"].clone();
                (data["threshold"].as_i64().unwrap(), data["daysLeft"].as_i64().unwrap())
            })
            .collect()
    };
    // Exactly 90 days before: not yet fewer than 90.
    clock.set("2026-04-02T00:00:00Z");
    call(&app, &bot, "/users").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(reminders(&receiver.received()).is_empty());
    for (at, told) in [
        ("2026-04-02T00:00:01Z", vec![(90, 89)]),
        ("2026-06-01T00:00:01Z", vec![(90, 89), (30, 29)]),
        ("2026-06-24T00:00:01Z", vec![(90, 89), (30, 29), (7, 6)]),
        ("2026-06-30T00:00:01Z", vec![(90, 89), (30, 29), (7, 6), (1, 0)]),
    ] {
        clock.set(at);
        // Still calling v1: told while it answered the client within 30 days.
        call(&app, &bot, "/users").await;
        let received = receiver.wait_for(at, TOLD_WITHIN, |r| reminders(r).len() == told.len()).await;
        assert_eq!(reminders(&received), told, "{at}");
    }
    // An endpoint set late is told the smallest threshold crossed, not those before it.
    let late = token("acme", "late-bot");
    call(&app, &late, "/users").await;
    app.counts_written().await;
    subscribe(&app, &late, &receiver.url("/late"), "standard").await;
    let received = receiver
        .wait_for("the late endpoint", TOLD_WITHIN, |r| r.iter().filter(|n| n.path == "/late").count() == 2)
        .await;
    let late_reminders: Vec<i64> = of_type(&received, "sunset.reminder")
        .iter()
        .filter(|n| n.path == "/late")
        .map(|n| n.json()["data"]["threshold"].as_i64().unwrap())
        .collect();
    assert_eq!(late_reminders, [1]);
    // A client that stopped calling v1 30 days ago is not told.
    let quiet = token("acme", "quiet-bot");
    clock.set("2026-05-20T00:00:00Z");
    call(&app, &quiet, "/users").await;
    app.counts_written().await;
    clock.set("2026-06-30T12:00:00Z");
    subscribe(&app, &quiet, &receiver.url("/quiet"), "standard").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(receiver.received().iter().all(|n| n.path != "/quiet"), "a client quiet for 30 days was told");
}

async fn an_acknowledgement_shows_in_readiness_and_is_voided_when_the_sunset_moves(backend: Backend) {
    // On the real clock, so that `tandem sunset-check` reads the same window.
    let database_url = backend.fresh_database().await;
    let settings = |sunset: &str| {
        let mut s = test_settings(&database_url);
        s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
        s.lifecycle_mut(1).sunset_at = Some(sunset.into());
        s
    };
    let mut app = TestApp::start(settings("2099-01-01T00:00:00Z")).await;
    let (bot, other) = (token("acme", "ci-bot"), token("acme", "other-bot"));
    call(&app, &bot, "/users").await;
    call(&app, &other, "/users").await;
    let ack = |token: &str, body: Value| {
        send(app.client.put(app.url("/api/migration/acknowledgement")).bearer_auth(token.to_string()).json(&body))
    };
    // Bad input, and a date that is not the sunset: refused, nothing written.
    for (body, field, code) in [
        (json!({"sunsetAt": "2099-01-01T00:00:00Z"}), "/version", "required"),
        (json!({"version": 2, "sunsetAt": "2099-01-01T00:00:00Z"}), "/version", "one_of"),
        (json!({"version": 1}), "/sunsetAt", "required"),
        (json!({"version": 1, "sunsetAt": "next year"}), "/sunsetAt", "invalid"),
        (json!({"version": 1, "sunsetAt": "2099-01-01T00:00:00Z", "by": "me"}), "/by", "unknown_field"),
    ] {
        let reply = ack(&bot, body.clone()).await;
        reply.assert_status(400);
        assert!(reply.error_codes().contains(&(field.to_string(), code.to_string())), "{body}: {}", reply.text);
    }
    let stale = ack(&bot, json!({"version": 1, "sunsetAt": "2098-01-01T00:00:00Z"})).await;
    stale.assert_status(409);
    // The migration routes belong to no version: a problem whose type names its code, with the date
    // to acknowledge instead (the book's clients/errors.md).
    assert_eq!(stale.header("content-type"), Some("application/problem+json"));
    assert_eq!(
        (stale.json()["type"].clone(), stale.json()["sunsetAt"].clone()),
        (json!("/problems/sunset-not-current"), json!("2099-01-01T00:00:00Z")),
        "{}",
        stale.text
    );
    assert_eq!(stale.json()["detail"], "The version's sunset is now 2099-01-01T00:00:00Z; acknowledge that date");
    let readiness = admin_json(&app, "/admin/versions/1/readiness").await;
    assert_eq!(readiness["clients"]["acknowledged"], 0);

    // The same instant written another way is the same date.
    let accepted = ack(&bot, json!({"version": 1, "sunsetAt": "2099-01-01T01:00:00+01:00"})).await;
    accepted.assert_status(200);
    let accepted = accepted.json();
    assert_eq!((accepted["version"].clone(), accepted["sunsetAt"].clone()), (json!(1), json!("2099-01-01T00:00:00Z")));
    let readiness = admin_json(&app, "/admin/versions/1/readiness").await;
    assert_eq!(readiness["clients"], json!({"seen": 2, "blocking": 2, "acknowledged": 1}));
    let acknowledged: Vec<(Value, Value)> = readiness["blocking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["subject"].clone(), b["acknowledged"].clone()))
        .collect();
    assert!(acknowledged.contains(&(json!("ci-bot"), json!(true))), "{readiness}");
    assert!(acknowledged.contains(&(json!("other-bot"), json!(false))), "{readiness}");

    // The release pipeline's gate says it too.
    app.counts_written().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("TANDEM_DATABASE_URL", Some(database_url.as_str())),
        ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
        ("TANDEM_V1_DEPRECATED_AT", Some("2026-01-01T00:00:00Z")),
        ("TANDEM_V1_SUNSET_AT", Some("2099-01-01T00:00:00Z")),
    ];
    let output = binary::run(dir.path(), &["sunset-check", "--version", "1"], &env);
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(report.contains("1 of them acknowledged the sunset date."), "{report}");
    assert!(report.contains("acme/ci-bot: 1 requests") && report.contains(", sunset acknowledged"), "{report}");

    // The sunset moves: the acknowledgement was of the old date.
    app.stop();
    app.stopped.take().unwrap().await.unwrap().unwrap();
    let moved = TestApp::start(settings("2099-06-01T00:00:00Z")).await;
    let readiness = admin_json(&moved, "/admin/versions/1/readiness").await;
    assert_eq!(readiness["clients"]["acknowledged"], 0);
    assert!(readiness["blocking"].as_array().unwrap().iter().all(|b| b["acknowledged"] == false), "{readiness}");
}

async fn two_instances_send_each_notice_once(backend: Backend) {
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let receiver = Receiver::start().await;
    let database_url = backend.fresh_database().await;
    let settings = || deprecated_on(&database_url);
    let a = TestApp::start_with_clock(settings(), clock.clock()).await;
    let b = TestApp::start_with_clock(settings(), clock.clock()).await;
    // Forty clients of one tenant call v1 through either instance; the tenant's endpoint tells
    // each of them, through both instances at once.
    for i in 0..40 {
        let app = if i % 2 == 0 { &a } else { &b };
        call(app, &token("acme", &format!("bot-{i:02}")), "/users").await;
    }
    a.counts_written().await;
    b.counts_written().await;
    let set =
        send(a.request(Method::PUT, "/admin/tenants/acme/notices").json(&json!({"url": receiver.url("/acme")}))).await;
    set.assert_status(200);
    let secret = set.json()["secret"].as_str().unwrap().to_string();
    receiver.wait_for("every client told", Duration::from_secs(30), |r| r.len() >= 80).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let received = receiver.received();
    assert_eq!(received.len(), 80, "each client told of the deprecation and the 30-day reminder, once");
    let mut told: Vec<(String, String)> = received
        .iter()
        .map(|n| {
            verify(n, &secret);
            (n.json()["data"]["subject"].as_str().unwrap().to_string(), n.kind())
        })
        .collect();
    told.sort();
    told.dedup();
    assert_eq!(told.len(), 80, "no client was told the same thing twice");
    let ids: std::collections::HashSet<String> = received.iter().map(Received::id).collect();
    assert_eq!(ids.len(), 80);
}

/// `page` on v2's list deprecated, removed on 2027-03-01; v1 itself not deprecated.
pub(crate) fn paging_deprecated(s: &mut tandem::Settings) {
    s.notices.notices_allow_hosts = Some("127.0.0.1".into());
    s.lifecycle_mut(2).deprecations.0 = vec![tandem::settings::DeprecationSettings {
        id: "offset-paging".into(),
        operation: "GET /api/v2/users".into(),
        parameter: Some("page".into()),
        deprecated_at: "2026-06-01T00:00:00Z".into(),
        sunset_at: Some("2027-03-01T00:00:00Z".into()),
        replacement: "the cursor parameter".into(),
        instruction: "Page with nextCursor.".into(),
        ..Default::default()
    }];
}

async fn a_client_using_a_deprecated_element_is_told_once_and_reminded(backend: Backend) {
    let clock = FixedClock::at("2027-02-01T00:00:00Z");
    let app = backend.spawn_at(paging_deprecated, clock.clock()).await;
    let receiver = Receiver::start().await;
    let (bot, web) = (token("acme", "ci-bot"), token("acme", "web"));
    call(&app, &bot, "/api/v2/users?page=0").await;
    call(&app, &bot, "/api/v2/users?page=0").await;
    call(&app, &web, "/api/v2/users").await;
    app.counts_written().await;
    let secret = subscribe(&app, &bot, &receiver.url("/bot"), "standard").await;
    subscribe(&app, &web, &receiver.url("/web"), "standard").await;
    let received = receiver.wait_for("the element's notices", TOLD_WITHIN, |r| r.len() == 2).await;
    for notice in &received {
        verify(notice, &secret);
        assert_eq!(notice.path, "/bot", "only the client that used it is told");
    }
    let used = of_type(&received, "deprecation.used");
    assert_eq!(used.len(), 1, "{received:?}");
    let data = used[0].json()["data"].clone();
    assert_eq!(
        (data["tenant"].clone(), data["subject"].clone(), data["version"].clone()),
        (json!("acme"), json!("ci-bot"), json!(2))
    );
    assert_eq!(data["deprecation"]["id"], "offset-paging");
    assert_eq!(data["deprecation"]["element"], json!({"kind": "parameter", "name": "page"}));
    assert_eq!(data["guide"]["deprecations"][0]["id"], "offset-paging", "its own guide lists it");
    assert_eq!(data["guide"]["deprecations"][0]["requests"], 2);
    // 28 days before the element's sunset: the 30-day reminder, naming the element.
    let reminder = of_type(&received, "sunset.reminder");
    assert_eq!(reminder.len(), 1, "{received:?}");
    let data = reminder[0].json()["data"].clone();
    assert_eq!((data["threshold"].clone(), data["deprecation"]["id"].clone()), (json!(30), json!("offset-paging")));

    // Once per client and element: more use tells nothing more until the next threshold.
    call(&app, &bot, "/api/v2/users?page=1").await;
    nothing_at(&receiver, &clock, "2027-02-10T00:00:00Z", 2, "told twice").await;
    clock.set("2027-02-22T12:00:00Z");
    call(&app, &bot, "/api/v2/users?page=0").await;
    let received = receiver.wait_for("the 7-day reminder", TOLD_WITHIN, |r| r.len() == 3).await;
    let thresholds: Vec<i64> =
        of_type(&received, "sunset.reminder").iter().map(|n| n.json()["data"]["threshold"].as_i64().unwrap()).collect();
    assert_eq!(thresholds, [30, 7]);
}

/// More clients of one tenant than a round tells (500): each round tells the next of them, so
/// every one is told once. Their uses are written straight into the store, as a busy tenant's
/// would stand after many batches.
async fn a_tenants_endpoint_reaches_every_client_that_uses_an_element(backend: Backend) {
    // 120 days before the element's sunset: no reminder is due, only `deprecation.used`.
    let clock = FixedClock::at("2026-11-01T00:00:00Z");
    let app = backend.spawn_at(paging_deprecated, clock.clock()).await;
    let used = chrono::DateTime::parse_from_rfc3339("2026-10-31T12:00:00Z").unwrap().to_utc();
    let subjects: Vec<String> = (0..501).map(|i| format!("bot-{i:03}")).collect();
    let insert = "INSERT INTO element_clients (deprecation, tenant, subject, requests, first_used, last_used) \
                  VALUES ('offset-paging', 'acme', $1, 2, $2, $2)";
    if backend.is_postgres() {
        let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
        for subject in &subjects {
            sqlx::query(insert).bind(subject).bind(used).execute(&pool).await.unwrap();
        }
        pool.close().await;
    } else {
        let pool = sqlx::SqlitePool::connect(&app.database_url).await.unwrap();
        for subject in &subjects {
            sqlx::query(insert).bind(subject).bind(used.timestamp()).execute(&pool).await.unwrap();
        }
        pool.close().await;
    }
    let receiver = Receiver::start().await;
    let set =
        send(app.request(Method::PUT, "/admin/tenants/acme/notices").json(&json!({"url": receiver.url("/acme")})))
            .await;
    set.assert_status(200);
    receiver.wait_for("every client told", Duration::from_secs(90), |r| r.len() >= subjects.len()).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let received = receiver.received();
    let mut told: Vec<String> = received
        .iter()
        .map(|n| {
            assert_eq!(n.kind(), "deprecation.used");
            n.json()["data"]["subject"].as_str().unwrap().to_string()
        })
        .collect();
    told.sort();
    assert_eq!(told, subjects, "each client of the tenant told once");
}
