//! Notices by e-mail (the book's clients/email.md), against a real SMTP server on loopback
//! (aiosmtpd), each message it received parsed as a mail reader parses it: an address is set,
//! confirmed by a person's click on a page (a GET confirms nothing), told at each milestone with
//! its guide in text and HTML, and left with one click; 451 is retried and 550 fails the notice and
//! disables the endpoint; bad addresses are refused with nothing stored; no header carries what a
//! client chose.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::FixedClock,
    browser::Browser,
    send,
    smtp::{Mail, Relay},
    tokens::{self, now},
};

crate::scenarios![
    e_mail_endpoints_need_a_relay;
    with a mail server:
    an_address_is_confirmed_by_a_person_then_told_with_its_guide_and_left_with_one_click,
    a_busy_relay_is_retried_and_a_refused_address_disables_its_endpoint,
    a_tenants_address_set_by_an_admin_is_confirmed_the_same_way,
    bad_addresses_are_refused_and_nothing_is_stored,
    a_confirmation_link_lasts_seven_days_and_dies_with_its_endpoint,
    no_header_carries_what_a_client_chose;
    in a browser with a mail server:
    a_notice_reads_well_in_a_browser,
];

/// Long enough for a scan, a delivery and a slow machine.
const WITHIN: Duration = Duration::from_secs(15);
const PUBLIC: &str = "https://tandem.example";

fn token(tenant: &str, subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 3600, "tenant": tenant, "roles": []}))
}

/// An instance with v1 deprecated, sending e-mail through `relay`, on `clock`.
async fn mailing(backend: &Backend, relay: &Relay, clock: &FixedClock) -> TestApp {
    let url = relay.url();
    backend
        .spawn_at(
            |s| {
                s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
                s.lifecycle_mut(1).sunset_at = Some("2026-07-01T00:00:00Z".into());
                s.notices.smtp_url = Some(tandem::settings::DatabaseUrl::new(url));
                s.notices.notices_from = Some("notices@tandem.example".into());
                s.notices.public_url = Some(PUBLIC.into());
            },
            clock.clock(),
        )
        .await
}

async fn calls_v1(app: &TestApp, token: &str) {
    send(app.client.get(app.url("/users")).bearer_auth(token)).await.assert_status(200);
    app.counts_written().await;
}

async fn subscribe(app: &TestApp, token: &str, address: &str) -> Value {
    let body = json!({"url": format!("mailto:{address}"), "format": "email"});
    let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(token).json(&body)).await;
    reply.assert_status(200);
    reply.json()
}

async fn endpoint(app: &TestApp, token: &str) -> Value {
    let reply = send(app.client.get(app.url("/api/migration/notices")).bearer_auth(token)).await;
    reply.assert_status(200);
    reply.json()
}

/// The caller's notices, newest first.
async fn deliveries(app: &TestApp, token: &str) -> Vec<Value> {
    let reply = send(app.client.get(app.url("/api/migration/notices/deliveries")).bearer_auth(token)).await;
    reply.assert_status(200);
    reply.json()["notices"].as_array().cloned().unwrap_or_default()
}

/// Waits until the caller's notice of `kind` is no longer pending.
async fn settled(app: &TestApp, token: &str, kind: &str) -> Value {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let mine = deliveries(app, token).await;
        if let Some(n) = mine.iter().find(|n| n["type"] == kind && n["status"] != "pending") {
            return n.clone();
        }
        assert!(std::time::Instant::now() < deadline, "{kind} never settled: {mine:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The path and query of a link into the public URL, to send to the test's own instance.
fn path_of(link: &str) -> String {
    link.strip_prefix(PUBLIC).unwrap_or_else(|| panic!("{link} is not under {PUBLIC}")).to_string()
}

fn assert_no_outside_loads(html: &str) {
    for load in ["<script", "<img", "<link", "<iframe", "src=", "url(", "@import"] {
        assert!(!html.contains(load), "the HTML part loads something ({load}): {html}");
    }
}

/// What every message carries: one sender, one recipient, a stable id, a list and its
/// one-click unsubscribe, and both parts.
fn assert_well_formed(mail: &Mail, to: &str) {
    assert_eq!(mail.header("From"), "Tandem notices <notices@tandem.example>");
    assert_eq!(mail.header("To"), to);
    assert_eq!(mail.envelope_to(), [to]);
    assert!(mail.headers("Cc").is_empty() && mail.headers("Bcc").is_empty() && mail.headers("Reply-To").is_empty());
    assert!(!mail.header("Date").is_empty());
    assert_eq!(mail.header("List-Id"), "Tandem notices <notices.tandem.example>");
    let leave = mail.header("List-Unsubscribe");
    assert!(leave.starts_with("<https://tandem.example/api/migration/notices/unsubscribe?token="), "{leave}");
    assert_eq!(mail.header("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click");
    assert_eq!(mail.part_types(), ["multipart/alternative", "text/plain", "text/html"]);
    assert_no_outside_loads(&mail.part("text/html"));
}

async fn an_address_is_confirmed_by_a_person_then_told_with_its_guide_and_left_with_one_click(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    calls_v1(&app, &bot).await;

    let set = subscribe(&app, &bot, "owners@acme.example").await;
    assert_eq!(
        set,
        json!({"url": "mailto:owners@acme.example", "format": "email", "createdAt": set["createdAt"], "confirmed": false})
    );
    // First the confirmation, and nothing else until a person confirms.
    let confirmation = relay.wait_for(1, WITHIN).await.remove(0);
    assert_well_formed(&confirmation, "owners@acme.example");
    assert_eq!(confirmation.header("Subject"), "Confirm notices about acme/ci-bot");
    let sent = settled(&app, &bot, "endpoint.confirmation").await;
    assert_eq!((sent["status"].clone(), sent["lastStatus"].clone()), (json!("delivered"), json!(250)));
    assert_eq!(confirmation.header("Message-ID"), format!("<{}@tandem.example>", sent["id"].as_str().unwrap()));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(relay.received().len(), 1, "nothing but the confirmation before a person confirms");

    // The link opens a page; opening it (as a mail scanner does) confirms nothing.
    let confirm = path_of(&confirmation.link("https://tandem.example/api/migration/notices/confirm?token="));
    let html = confirmation.part("text/html");
    assert!(html.contains(&format!("href=\"{PUBLIC}{confirm}\"")), "{html}");
    let page = send(app.client.get(app.url(&confirm))).await;
    page.assert_status(200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.text.contains("<form method=\"post\">") && page.text.contains(">Confirm</button>"), "{}", page.text);
    assert_eq!(endpoint(&app, &bot).await["confirmed"], false);
    // Its button POSTs the same address: confirmed.
    let confirmed = send(app.client.post(app.url(&confirm))).await;
    confirmed.assert_status(200);
    assert_eq!(
        confirmed.json(),
        json!({"url": "mailto:owners@acme.example", "format": "email", "createdAt": set["createdAt"],
               "disabledAt": null, "confirmed": true})
    );
    assert_eq!(endpoint(&app, &bot).await["confirmed"], true);

    // From then on, each milestone: here v1's deprecation and the 30 days' reminder (22 days
    // are left), each with the client's guide.
    let mut told = relay.wait_for(3, WITHIN).await.split_off(1);
    told.sort_by_key(|m| m.header("Subject"));
    let subjects: Vec<String> = told.iter().map(|m| m.header("Subject")).collect();
    assert_eq!(
        subjects,
        [
            "Fewer than 30 days left: acme/ci-bot must move from v1 to v2 by 2026-07-01",
            "v1 is deprecated: acme/ci-bot must move to v2 by 2026-07-01"
        ]
    );
    let told = told.remove(1);
    assert_well_formed(&told, "owners@acme.example");
    let notice = settled(&app, &bot, "version.deprecated").await;
    assert_eq!((notice["status"].clone(), notice["lastStatus"].clone()), (json!("delivered"), json!(250)));
    assert_eq!(told.header("Message-ID"), format!("<{}@tandem.example>", notice["id"].as_str().unwrap()));
    let text = told.part("text/plain");
    assert!(text.starts_with("v1 of the API is deprecated: move acme/ci-bot to v2."), "{text}");
    assert!(
        text.contains("# Migration guide: v1 to v2") && text.contains("GET /api/migration/guide?version=1"),
        "{text}"
    );
    let html = told.part("text/html");
    assert!(html.contains("<h1>Migration guide: v1 to v2</h1>") && html.contains("Next step:"), "{html}");
    assert!(html.contains(">Receive no more</a>"), "{html}");

    // One click in the mail reader (RFC 8058): a POST with no other authentication.
    let leave = path_of(told.header("List-Unsubscribe").trim_matches(['<', '>']));
    let page = send(app.client.get(app.url(&leave))).await;
    page.assert_status(200);
    assert!(page.text.contains(">Unsubscribe</button>"), "{}", page.text);
    assert_eq!(endpoint(&app, &bot).await["disabledAt"], Value::Null, "a GET leaves nothing");
    let left = send(
        app.client
            .post(app.url(&leave))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("List-Unsubscribe=One-Click"),
    )
    .await;
    left.assert_status(200);
    assert_eq!(left.json()["disabledAt"], json!("2026-06-09T12:00:00Z"));
    assert_eq!(endpoint(&app, &bot).await["disabledAt"], json!("2026-06-09T12:00:00Z"));
    // Again: still 200, and nothing more is sent.
    send(app.client.post(app.url(&leave))).await.assert_status(200);
    clock.set("2026-06-25T12:00:00Z");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(relay.received().len(), 3, "no 7 days' reminder to an address that left");
}

async fn confirmed(app: &TestApp, relay: &Relay, token: &str, address: &str, nth: usize) {
    subscribe(app, token, address).await;
    let confirmation = relay.wait_for(nth, WITHIN).await.remove(nth - 1);
    let confirm = path_of(&confirmation.link("https://tandem.example/api/migration/notices/confirm?token="));
    send(app.client.post(app.url(&confirm))).await.assert_status(200);
}

async fn a_busy_relay_is_retried_and_a_refused_address_disables_its_endpoint(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    calls_v1(&app, &bot).await;
    // 451 to the first attempt: tried again on the schedule (about 5 s on), then delivered.
    subscribe(&app, &bot, "busy-1-owners@acme.example").await;
    let deadline = std::time::Instant::now() + WITHIN;
    let first = loop {
        let mine = deliveries(&app, &bot).await;
        if mine.first().is_some_and(|n| n["attempts"] == 1) {
            break mine[0].clone();
        }
        assert!(std::time::Instant::now() < deadline, "the first attempt never recorded: {mine:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!((first["status"].clone(), first["lastStatus"].clone()), (json!("pending"), json!(451)));
    assert!(relay.received().is_empty());
    clock.set("2026-06-09T12:00:06Z");
    let mail = relay.wait_for(1, WITHIN).await.remove(0);
    let sent = settled(&app, &bot, "endpoint.confirmation").await;
    assert_eq!((sent["attempts"].clone(), sent["lastStatus"].clone()), (json!(2), json!(250)));
    assert_eq!(mail.header("Message-ID"), format!("<{}@tandem.example>", sent["id"].as_str().unwrap()));

    // 550 for the recipient: the notice fails at once and the endpoint is disabled.
    let other = token("acme", "chat-bot");
    calls_v1(&app, &other).await;
    subscribe(&app, &other, "gone@acme.example").await;
    let failed = settled(&app, &other, "endpoint.confirmation").await;
    assert_eq!(
        (failed["status"].clone(), failed["attempts"].clone(), failed["lastStatus"].clone()),
        (json!("failed"), json!(1), json!(550))
    );
    assert_eq!(endpoint(&app, &other).await["disabledAt"], json!("2026-06-09T12:00:06Z"));
    assert_eq!(relay.received().len(), 1);
}

async fn bad_addresses_are_refused_and_nothing_is_stored(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    let long =
        format!("mailto:{}@{}.example", "a".repeat(64), ["b".repeat(60), "c".repeat(60), "d".repeat(60)].join("."));
    for url in [
        "owners@acme.example",
        "mailto:",
        "mailto:owners",
        "mailto:owners@acme",
        "mailto:Ops <ops@acme.example>",
        "mailto:a@acme.example,b@acme.example",
        "mailto:owners@acme.example?subject=hello",
        "mailto:owners@acme.example?bcc=evil@evil.example",
        "mailto:owners@acme.example\r\nBcc: evil@evil.example",
        "mailto:\"quoted\"@acme.example",
        "mailto:ops@[10.0.0.1]",
        "mailto:bücher@acme.example",
        "https://hooks.acme.example/x",
        long.as_str(),
    ] {
        let body = json!({"url": url, "format": "email"});
        let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), [("/url".to_string(), "invalid".to_string())], "{url:?}");
    }
    let body = json!({"format": "email"});
    let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await;
    assert_eq!(reply.error_codes(), [("/url".to_string(), "required".to_string())]);
    // A mailto: URL as a webhook is no URL notices can reach.
    let body = json!({"url": "mailto:owners@acme.example"});
    let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await;
    assert_eq!(reply.error_codes(), [("/url".to_string(), "invalid".to_string())]);
    // Nothing was stored, nothing written to the outbox, nothing sent.
    send(app.client.get(app.url("/api/migration/notices")).bearer_auth(&bot)).await.assert_status(404);
    assert!(deliveries(&app, &bot).await.is_empty());
    let all = send(app.request(Method::GET, "/admin/notices")).await;
    assert_eq!(all.json()["notices"], json!([]));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(relay.received().is_empty());
}

async fn e_mail_endpoints_need_a_relay(backend: Backend) {
    let app = backend.spawn().await;
    let bot = token("acme", "ci-bot");
    let body = json!({"url": "mailto:owners@acme.example", "format": "email"});
    let reply = send(app.client.put(app.url("/api/migration/notices")).bearer_auth(&bot).json(&body)).await;
    reply.assert_status(400);
    assert_eq!(reply.error_codes(), [("/format".to_string(), "email_not_configured".to_string())]);
    send(app.client.get(app.url("/api/migration/notices")).bearer_auth(&bot)).await.assert_status(404);
    // The links' pages need a token that reads.
    for path in ["/api/migration/notices/confirm", "/api/migration/notices/unsubscribe"] {
        let none = send(app.client.post(app.url(path))).await;
        none.assert_status(400);
        assert_eq!(none.error_codes(), [("token".to_string(), "required".to_string())]);
        let garbage = send(app.client.post(app.url(&format!("{path}?token=not-a-token")))).await;
        assert_eq!(garbage.error_codes(), [("token".to_string(), "invalid".to_string())]);
    }
}

async fn a_confirmation_link_lasts_seven_days_and_dies_with_its_endpoint(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-01T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    subscribe(&app, &bot, "owners@acme.example").await;
    let first = relay.wait_for(1, WITHIN).await.remove(0);
    let link = path_of(&first.link("https://tandem.example/api/migration/notices/confirm?token="));
    // Eight days on, the link is gone (410) and the address stays unconfirmed.
    clock.set("2026-06-09T12:00:01Z");
    let late = send(app.client.post(app.url(&link))).await;
    late.assert_status(410);
    assert_eq!(late.json()["type"], "/problems/link-expired");
    send(app.client.get(app.url(&link))).await.assert_status(410);
    assert_eq!(endpoint(&app, &bot).await["confirmed"], false);
    // Set again: a new confirmation, whose link works; the old one reaches nothing.
    subscribe(&app, &bot, "owners@acme.example").await;
    let second = relay.wait_for(2, WITHIN).await.remove(1);
    let fresh = path_of(&second.link("https://tandem.example/api/migration/notices/confirm?token="));
    assert_ne!(fresh, link);
    send(app.client.post(app.url(&link))).await.assert_status(410);
    send(app.client.post(app.url(&fresh))).await.assert_status(200);
    // A token changed by one character is no link at all.
    let mut forged = fresh.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    send(app.client.post(app.url(&forged))).await.assert_status(410);
    // A removed endpoint's links reach nothing.
    send(app.client.delete(app.url("/api/migration/notices")).bearer_auth(&bot)).await.assert_status(204);
    send(app.client.post(app.url(&fresh))).await.assert_status(410);
}

async fn no_header_carries_what_a_client_chose(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    // A token's subject is the client's to choose: line breaks and a header of its own.
    let evil = token("acme", "bot\r\nBcc: evil@evil.example\r\nX-Injected: yes");
    // Such a token is taken (a subject is the identity provider's to choose): what it sets is
    // kept out of every header but `Subject`, where its line breaks are dropped.
    send(app.client.get(app.url("/users")).bearer_auth(&evil)).await.assert_status(200);
    subscribe(&app, &evil, "owners@acme.example").await;
    let mail = relay.wait_for(1, WITHIN).await.remove(0);
    assert_well_formed(&mail, "owners@acme.example");
    assert!(mail.headers("X-Injected").is_empty(), "{:#?}", mail.0);
    assert_eq!(mail.header("Subject"), "Confirm notices about acme/botBcc: evil@evil.exampleX-Injected: yes");
    // Text beyond ASCII is encoded (RFC 2047) and reads back as it was.
    let accented = token("acme", "bøt-ünïcode");
    let before = relay.received().len();
    subscribe(&app, &accented, "owners2@acme.example").await;
    let mail = relay.wait_for(before + 1, WITHIN).await.pop().unwrap();
    assert_eq!(mail.header("To"), "owners2@acme.example");
    assert_eq!(mail.header("Subject"), "Confirm notices about acme/bøt-ünïcode");
    assert!(mail.raw_headers().is_ascii(), "{}", mail.raw_headers());
    assert!(mail.raw_headers().contains("Subject: Confirm notices about =?utf-8?b?"), "{}", mail.raw_headers());
}

/// The HTML part of a milestone's message, opened in headless Chromium as a person reads it:
/// nothing loaded from anywhere, the event first, the guide readable without zooming or
/// scrolling sideways, no serious or critical axe-core violation. Leaves `target/email-notice.png`.
async fn a_notice_reads_well_in_a_browser(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    calls_v1(&app, &bot).await;
    confirmed(&app, &relay, &bot, "owners@acme.example", 1).await;
    let received = relay.wait_for(3, WITHIN).await;
    let told = received.iter().find(|m| m.header("Subject").starts_with("v1 is deprecated")).expect("the deprecation");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notice.html");
    std::fs::write(&file, told.part("text/html")).unwrap();

    let mut browser = Browser::launch().await;
    browser
        .call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 700, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await;
    browser.open(&format!("file://{}", file.display())).await;
    assert_eq!(browser.eval("performance.getEntriesByType('resource').length").await, 0, "nothing is fetched");
    assert_eq!(browser.eval("document.title").await, "Migration guide: v1 to v2");
    let lead = browser.eval("document.body.firstElementChild.innerText").await;
    assert!(lead.as_str().unwrap().starts_with("v1 of the API is deprecated: move acme/ci-bot to v2."), "{lead}");
    assert_eq!(browser.eval("document.documentElement.scrollWidth <= innerWidth").await, true, "no sideways scroll");
    let size = browser.eval("parseFloat(getComputedStyle(document.body).fontSize)").await;
    assert!(size.as_f64().unwrap() >= 14.0, "{size}");
    assert_eq!(browser.eval("[...document.querySelectorAll('h2')].length > 0").await, true, "a route per heading");
    assert_eq!(browser.eval("document.querySelector('a[href*=\"/notices/unsubscribe?token=\"]') !== null").await, true);
    browser.screenshot(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/email-notice.png")).await;
    assert_eq!(browser.serious_violations().await, json!([]), "axe-core's serious and critical violations");
}

async fn a_tenants_address_set_by_an_admin_is_confirmed_the_same_way(backend: Backend) {
    let relay = Relay::start().await;
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = mailing(&backend, &relay, &clock).await;
    let bot = token("acme", "ci-bot");
    calls_v1(&app, &bot).await;
    let body = json!({"url": "mailto:platform@acme.example", "format": "email"});
    let set = send(app.request(Method::PUT, "/admin/tenants/acme/notices").json(&body)).await;
    set.assert_status(200);
    assert_eq!(set.json()["confirmed"], false);
    assert!(set.json().get("secret").is_none());
    let confirmation = relay.wait_for(1, WITHIN).await.remove(0);
    assert_well_formed(&confirmation, "platform@acme.example");
    assert_eq!(confirmation.header("Subject"), "Confirm notices about acme");
    assert!(confirmation.part("text/plain").contains("every client of the tenant acme"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(relay.received().len(), 1, "nothing but the confirmation before a person confirms");
    let confirm = path_of(&confirmation.link("https://tandem.example/api/migration/notices/confirm?token="));
    send(app.client.post(app.url(&confirm))).await.assert_status(200);
    let shown = send(app.request(Method::GET, "/admin/tenants/acme/notices")).await;
    assert_eq!(shown.json()["confirmed"], true);
    // Every client of the tenant is told through it.
    let told = relay.wait_for(3, WITHIN).await;
    let subjects: Vec<String> = told.iter().map(|m| m.header("Subject")).collect();
    assert!(
        subjects.contains(&"v1 is deprecated: acme/ci-bot must move to v2 by 2026-07-01".to_string()),
        "{subjects:?}"
    );
}
