//! The sunset as a decision (the book's operators/sunset.md): readiness, who blocks and when the
//! traffic ends, from every instance's records; `tandem sunset-check` as a release pipeline runs
//! it; the API catalog, for tools that discover where each version's contract, docs and retirement
//! are.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    app::{FixedClock, test_settings},
    binary, send,
    tokens::{self, now},
};

crate::scenarios![
    readiness_names_who_blocks_and_when_the_traffic_ends,
    readiness_counts_every_instance,
    sunset_check_gates_a_release_pipeline,
    a_deprecated_version_takes_no_new_clients,
    the_api_catalog_links_every_version_and_its_retirement;
    in a browser:
    the_dashboard_leads_with_the_verdict,
];

fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2026-07-01T00:00:00Z".into());
}

fn token(subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": "acme", "roles": []}))
}

async fn call(app: &TestApp, token: &str, path: &str) -> u16 {
    send(app.client.get(app.url(path)).bearer_auth(token)).await.status
}

async fn readiness(app: &TestApp, query: &str) -> Value {
    let reply = app.get(&format!("/admin/versions/1/readiness{query}")).await;
    reply.assert_status(200);
    reply.json()
}

async fn readiness_names_who_blocks_and_when_the_traffic_ends(backend: Backend) {
    let clock = FixedClock::at("2026-06-09T12:00:00Z");
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let (bot, careful, modern) = (token("ci-bot"), token("careful"), token("modern"));
    // The bot's v1 traffic falls by one a day, 6 to 0, over the week to 15 June; one of its
    // requests meets a change. The careful client only rehearses and dry-runs; the modern one
    // only calls v2.
    for (day, requests) in [6, 5, 4, 3, 2, 1, 0].into_iter().enumerate() {
        clock.set(&format!("2026-06-{:02}T12:00:00Z", 9 + day));
        for i in 0..requests {
            let path = if day == 0 && i == 0 { "/api/v1/customers?sortBy=name" } else { "/users" };
            assert_eq!(call(&app, &bot, path).await, 200);
        }
        let rehearsal =
            app.client.get(app.url("/users")).bearer_auth(&careful).header("x-api-sunset-rehearsal", "true");
        assert_eq!(send(rehearsal).await.status, 410);
        let dry = app.client.get(app.url("/users")).bearer_auth(&careful).header("x-api-dry-run", "true");
        assert_eq!(send(dry).await.status, 200);
        assert_eq!(call(&app, &modern, "/api/v2/users").await, 200);
    }
    let days = |counts: &[u64], from: u32| -> Vec<Value> {
        counts
            .iter()
            .enumerate()
            .map(|(i, n)| json!({"day": format!("2026-06-{:02}", from + i as u32), "requests": n}))
            .collect()
    };
    assert_eq!(
        readiness(&app, "").await,
        json!({"version": 1, "sunsetAt": "2026-07-01T00:00:00Z", "daysLeft": 15, "window": 7, "ready": false,
               "blocking": [{"tenant": "acme", "subject": "ci-bot", "status": "not-started", "requests": 21,
                             "lastRequest": "2026-06-14T12:00:00Z", "mustChange": 1, "acknowledged": false}],
               "clients": {"seen": 1, "blocking": 1, "acknowledged": 0},
               "requestsPerDay": days(&[6, 5, 4, 3, 2, 1, 0], 9),
               "projectedLastDay": "2026-06-15"})
    );
    let short = readiness(&app, "?window=3").await;
    assert_eq!(short["requestsPerDay"], json!(days(&[2, 1, 0], 13)));
    assert_eq!(
        (short["blocking"][0]["requests"].clone(), short["projectedLastDay"].clone()),
        (json!(3), json!("2026-06-15"))
    );
    // A week after its last request nobody blocks, and nothing is falling.
    clock.set("2026-06-21T12:00:00Z");
    let later = readiness(&app, "").await;
    assert_eq!((later["ready"].clone(), later["blocking"].clone()), (json!(true), json!([])));
    assert_eq!(
        (later["clients"].clone(), later["projectedLastDay"].clone()),
        (json!({"seen": 0, "blocking": 0, "acknowledged": 0}), Value::Null)
    );
    // A version that is not deprecated answers the same shape, without a sunset.
    let current = app.get("/admin/versions/2/readiness").await.json();
    assert_eq!((current["sunsetAt"].clone(), current["daysLeft"].clone()), (Value::Null, Value::Null));
    assert_eq!(current["ready"], true, "v2 has no successor: no usage of it is a client to move");
    // Bad input.
    for window in ["0", "91", "week"] {
        let reply = app.get(&format!("/admin/versions/1/readiness?window={window}")).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("window".to_string(), "invalid".to_string())], "{window}");
    }
    app.get("/admin/versions/9/readiness").await.assert_status(404);
    app.get("/admin/versions/one/readiness").await.assert_status(404);
    send(app.client.get(app.url("/admin/versions/1/readiness")).bearer_auth(token("ci-bot"))).await.assert_status(403);
}

/// Two instances sharing one database: each counts its own clients, readiness counts both.
async fn readiness_counts_every_instance(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let a = backend.spawn_at(deprecated, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    deprecated(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    assert_eq!(call(&a, &token("on-a"), "/users").await, 200);
    for _ in 0..2 {
        assert_eq!(call(&b, &token("on-b"), "/users").await, 200);
    }
    // B writes its counts within a second; A then reads them with its own.
    b.counts_written().await;
    let answer = readiness(&a, "").await;
    let blocking: Vec<(String, u64)> = answer["blocking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["subject"].as_str().unwrap().to_string(), c["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(blocking, vec![("on-b".to_string(), 2), ("on-a".to_string(), 1)]);
    assert_eq!(answer["clients"]["seen"], 2);
}

/// `tandem sunset-check` as a release pipeline's gate runs it: against the database the
/// settings name, exit 0 when ready, 1 when not, 2 when it cannot tell.
async fn sunset_check_gates_a_release_pipeline(backend: Backend) {
    // On the real clock: deprecated, with the sunset far ahead (the command reads the same).
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
        })
        .await;
    let dir = tempfile::tempdir().unwrap();
    let check = |database_url: &str, args: &[&str]| {
        let mut all = vec!["sunset-check"];
        all.extend_from_slice(args);
        let env = [
            ("TANDEM_DATABASE_URL", Some(database_url)),
            ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
            ("TANDEM_V1_DEPRECATED_AT", Some("2026-01-01T00:00:00Z")),
            ("TANDEM_V1_SUNSET_AT", Some("2099-01-01T00:00:00Z")),
        ];
        let output = binary::run(dir.path(), &all, &env);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        (output.status.code(), text(output.stdout), text(output.stderr))
    };
    let (code, stdout, stderr) = check(&app.database_url, &["--version", "1"]);
    assert_eq!(code, Some(0), "nobody called v1: {stdout}{stderr}");
    assert!(stdout.starts_with("v1 is ready to turn off: no client called it in the last 7 days."), "{stdout}");

    assert_eq!(call(&app, &token("ci-bot"), "/users").await, 200);
    app.counts_written().await; // the command reads the database alone
    let (code, stdout, _) = check(&app.database_url, &["--version", "1"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.starts_with("v1 is NOT ready to turn off: 1 client(s) called it in the last 7 days."), "{stdout}");
    assert!(stdout.contains("  acme/ci-bot: 1 requests, last "), "{stdout}");
    let (code, stdout, _) = check(&app.database_url, &["--version", "1", "--window", "30", "--format", "json"]);
    assert_eq!(code, Some(1));
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((answer["ready"].clone(), answer["window"].clone()), (json!(false), json!(30)));
    assert_eq!(answer["requestsPerDay"].as_array().unwrap().len(), 30);
    assert_eq!(answer["blocking"][0]["subject"], "ci-bot");
    assert_eq!(answer, readiness(&app, "?window=30").await, "the command and the route answer alike");

    // It cannot tell: an unknown version, a bad window, bad arguments, no database.
    for (args, reason) in [
        (&["--version", "9"][..], "no such version is served"),
        (&["--version", "1", "--window", "0"][..], "the window must be 1 to 90 days"),
    ] {
        let (code, stdout, stderr) = check(&app.database_url, args);
        assert_eq!((code, stdout.as_str()), (Some(2), ""), "{args:?}");
        assert!(stderr.contains(reason), "{stderr}");
    }
    let (code, _, _) = check(&app.database_url, &["--version", "1", "--format", "yaml"]);
    assert_eq!(code, Some(2));
    let nowhere = if backend.is_postgres() {
        format!("postgres://postgres@127.0.0.1:{}/postgres", binary::free_port())
    } else {
        format!("sqlite://{}/missing/t.db", dir.path().display())
    };
    let (code, stdout, stderr) = check(&nowhere, &["--version", "1"]);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert!(stderr.contains("tandem sunset-check: cannot tell"), "{stderr}");
}

async fn the_api_catalog_links_every_version_and_its_retirement(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let app = backend
        .spawn_at(
            |s| {
                s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
                s.lifecycle_mut(1).sunset_at = Some("2027-01-01T00:00:00Z".into());
            },
            clock.clock(),
        )
        .await;
    let reply = send(app.client.get(app.url("/.well-known/api-catalog"))).await;
    reply.assert_status(200);
    assert_eq!(reply.header("content-type"), Some("application/linkset+json"));
    assert_eq!(reply.header("link"), Some("</.well-known/api-catalog>; rel=\"api-catalog\""));
    let v1_page = json!([{"href": "/docs/v1/deprecation", "type": "text/html"}]);
    assert_eq!(
        reply.json(),
        json!({"linkset": [
            {"anchor": "/api/v1",
             "service-desc": [{"href": "/api/v1/openapi.json", "type": "application/vnd.oai.openapi+json"}],
             "service-doc": [{"href": "/docs/v1/", "type": "text/html"}],
             "deprecation": v1_page,
             "sunset": [{"href": "/docs/v1/deprecation", "type": "text/html", "title": "2027-01-01T00:00:00Z"}]},
            {"anchor": "/api/v2",
             "service-desc": [{"href": "/api/v2/openapi.json", "type": "application/vnd.oai.openapi+json"}],
             "service-doc": [{"href": "/docs/v2/", "type": "text/html"}]},
        ]})
    );
    // Every link it gives answers.
    for path in ["/api/v1/openapi.json", "/docs/v1/", "/docs/v1/deprecation", "/api/v2/openapi.json", "/docs/v2/"] {
        assert_eq!(send(app.client.get(app.url(path))).await.status, 200, "{path}");
    }
    let head = send(app.client.request(Method::HEAD, app.url("/.well-known/api-catalog"))).await;
    head.assert_status(200);
    assert_eq!(head.header("link"), Some("</.well-known/api-catalog>; rel=\"api-catalog\""));
    assert_eq!(head.text, "");
    // Before v1's deprecation, nothing says it retires.
    clock.set("2025-12-31T00:00:00Z");
    let before = send(app.client.get(app.url("/.well-known/api-catalog"))).await.json();
    assert!(before["linkset"][0].get("deprecation").is_none() && before["linkset"][0].get("sunset").is_none());
}

/// `TANDEM_V1_NEW_CLIENTS=refuse`: a client v1 served before its deprecation is served as ever,
/// on every instance; one that comes after is turned away to v2, dry runs included.
async fn a_deprecated_version_takes_no_new_clients(backend: Backend) {
    let closed = |s: &mut tandem::Settings| {
        s.lifecycle_mut(1).deprecated_at = Some("2026-06-01T00:00:00Z".into());
        s.lifecycle_mut(1).new_clients = Some("refuse".into());
    };
    let clock = FixedClock::at("2026-05-20T12:00:00Z");
    let a = backend.spawn_at(closed, clock.clock()).await;
    let (old, newcomer) = (token("old-app"), token("new-app"));
    // Before the deprecation anyone may start; the old app does (a dry run or a rehearsal
    // would not have counted).
    assert_eq!(call(&a, &old, "/users").await, 200);
    clock.set("2026-06-15T12:00:00Z");
    let mut settings = test_settings(&a.database_url);
    closed(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    for app in [&a, &b] {
        // A writes its counts within a second; B reads who came before the first time it sees
        // a client, and asks again a little later while it found none.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while call(app, &old, "/users").await != 200 {
            assert!(std::time::Instant::now() < deadline, "the old client is still refused");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let refused = send(app.client.get(app.url("/api/v1/users")).bearer_auth(&newcomer)).await;
        refused.assert_status(410);
        assert!(refused.json()["message"].as_str().unwrap().contains("takes no new clients"), "{}", refused.text);
        assert!(
            refused.header("link").is_some_and(|l| l.contains("</api/v2/users>; rel=\"successor-version\"")),
            "{refused:?}"
        );
        assert_eq!(refused.header("deprecation"), Some("@1780272000"));
        let dry = send(
            app.client
                .post(app.url("/users"))
                .bearer_auth(&newcomer)
                .header("x-api-dry-run", "true")
                .json(&json!({"name": "N", "email": "n@example.com"})),
        )
        .await;
        dry.assert_status(410);
        assert_eq!(dry.header("x-api-dry-run"), Some("true"));
        assert_eq!(call(app, &newcomer, "/api/v2/users").await, 200, "v2 takes it");
    }
    // Refused requests are no first request: the newcomer stays new, and blocks nothing.
    let refused = |metrics: String| -> u64 {
        let line = metrics.lines().find(|l| l.starts_with("tandem_new_clients_refused_total{version=\"1\"}")).unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let before = refused(send(a.client.get(a.url("/metrics"))).await.text);
    clock.set("2026-06-16T12:00:00Z");
    assert_eq!(call(&a, &newcomer, "/users").await, 410);
    assert_eq!(refused(send(a.client.get(a.url("/metrics"))).await.text), before + 1);
    let answer = readiness(&a, "").await;
    let subjects: Vec<&str> =
        answer["blocking"].as_array().unwrap().iter().map(|c| c["subject"].as_str().unwrap()).collect();
    assert_eq!(subjects, vec!["old-app"]);
}

/// The dashboard in a real Chromium opens with the verdict, shows each client's changes to make
/// in its row, and says so in words where a table is empty. Leaves `target/dashboard-verdict.png`.
async fn the_dashboard_leads_with_the_verdict(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
            s.lifecycle_mut(1).sunset_at = Some("2099-01-01T00:00:00Z".into());
        })
        .await;
    for _ in 0..2 {
        assert_eq!(call(&app, &token("ci-bot"), "/api/v1/customers?sortBy=name").await, 200);
    }
    assert_eq!(call(&app, &token("web"), "/users").await, 200);

    let mut browser = crate::harness::browser::Browser::launch().await;
    browser.log_in_to_dashboard(&app.url("/admin/dashboard"), &app.admin).await;
    browser
        .wait_for(
            "['ready', 'blocked'].includes(document.getElementById('verdict').dataset.state)",
            std::time::Duration::from_secs(10),
        )
        .await;
    browser.wait_for("!document.getElementById('migration').hidden", std::time::Duration::from_secs(10)).await;
    let verdict = browser.eval("document.getElementById('verdict-text').textContent").await;
    assert_eq!(verdict, "v1 is not ready to turn off: 2 clients called it in the last 7 days.");
    let detail = browser.eval("document.getElementById('verdict-detail').textContent").await;
    assert!(detail.as_str().unwrap().starts_with("Sunset 2099-01-01 00:00 UTC ("), "{detail}");
    let verdict_first = browser
        .eval("document.getElementById('verdict').compareDocumentPosition(document.getElementById('report')) === Node.DOCUMENT_POSITION_FOLLOWING")
        .await;
    assert_eq!(verdict_first, true, "the page opens with the verdict");
    let must_change = browser
        .eval("[...document.querySelectorAll('#progress tbody tr')].map(r => [r.cells[1].textContent, r.cells[6].textContent])")
        .await;
    assert_eq!(must_change, json!([["ci-bot", "1"], ["web", "0"]]));
    let empty = browser.eval("document.querySelector('#pins td.empty').textContent").await;
    assert_eq!(empty, "No tenant is pinned to a version.");
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-verdict.png");
    browser.screenshot(&shot).await;
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000, "a screenshot was written");
}
