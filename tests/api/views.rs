//! The views the dashboard reads (CONTRACT §25) as the admin API answers them: numbered pages
//! of the at-risk order, the search, the "changes met" filter, and one client's guide at its
//! own address.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    at_scale::{NOW, call, deprecated, populate, requests, subject, token},
    harness::{Backend, Reply, TestApp, app::FixedClock, browser::Browser, send},
};

crate::scenarios![
    numbered_pages_hold_the_order_a_full_list_holds,
    the_other_orders_hold_in_pages_by_number_and_by_cursor,
    the_search_and_changes_met_filter_as_the_full_list_says,
    bad_view_parameters_are_400_and_change_nothing,
    an_admin_opens_one_clients_guide_at_its_own_address;
    in a browser:
    the_dashboard_keeps_its_view_through_a_reload_and_a_refresh,
];

fn records(body: &Value) -> Vec<String> {
    body["records"].as_array().unwrap().iter().map(subject).collect()
}

/// Every numbered page of `query` in pages of `limit`, checking each says where it is.
async fn numbered(app: &TestApp, query: &str, limit: usize) -> Vec<String> {
    let first = app.get(&format!("/admin/migration?{query}&limit={limit}&page=1")).await;
    first.assert_status(200);
    let pages = first.json()["pages"].as_u64().unwrap();
    let mut listed = Vec::new();
    for page in 1..=pages {
        let body = app.get(&format!("/admin/migration?{query}&limit={limit}&page={page}")).await.json();
        assert_eq!((body["page"].as_u64(), body["pages"].as_u64()), (Some(page), Some(pages)), "{query}");
        let these = records(&body);
        assert!(these.len() == limit || page == pages, "only the last page is short: {query} page {page}");
        // A page that has another after it says so with a cursor, as a cursor's page does.
        assert_eq!(body["nextCursor"].is_null(), page == pages, "{query} page {page}");
        listed.extend(these);
    }
    listed
}

async fn numbered_pages_hold_the_order_a_full_list_holds(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 45).await;
    app.counts_written().await;
    // Some clients call again and new ones arrive: this instance holds their counts unwritten,
    // and they move in the order (the pages must place them where the merged order has them).
    let url = format!("http://{}", app.addr);
    for (who, tenant) in
        [("c003", "acme"), ("c010", "globex"), ("c044", "initech"), ("late1", "acme"), ("late2", "globex")]
    {
        let bot = token(who, tenant);
        assert_eq!(call(&url, &app.client, &bot, "/api/v1/customers?sortBy=name", false).await, 200);
        assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
    }
    for _ in 0..2 {
        let all = app.get("/admin/migration?version=1&limit=1000").await.json();
        let everyone = records(&all);
        assert_eq!(everyone.len(), 47);
        for limit in [1, 4, 7, 47, 100] {
            assert_eq!(numbered(&app, "version=1", limit).await, everyone, "pages of {limit}");
        }
        let tenant: Vec<String> = everyone.iter().filter(|s| s.starts_with("acme/")).cloned().collect();
        assert_eq!(numbered(&app, "version=1&tenant=acme", 3).await, tenant);
        let not_started = app.get("/admin/migration?version=1&limit=1000&status=not-started").await.json();
        assert_eq!(numbered(&app, "version=1&status=not-started", 5).await, records(&not_started));
        // Past the last page: no records, and where the last one is.
        let past = app.get("/admin/migration?version=1&limit=10&page=9").await;
        past.assert_status(200);
        let past = past.json();
        assert_eq!((records(&past).len(), &past["page"], &past["pages"]), (0, &9.into(), &5.into()));
        assert_eq!(past["summary"], all["summary"]);
        // The same once every count is written.
        app.counts_written().await;
    }
    // No client at all: one empty page.
    let none = app.get("/admin/migration?version=1&tenant=nobody&page=1").await.json();
    assert_eq!((records(&none).len(), &none["pages"]), (0, &1.into()));
}

/// Every page of `query` walked by cursor in pages of `limit`.
async fn by_cursor(app: &TestApp, query: &str, limit: usize) -> Vec<String> {
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/admin/migration?{query}&limit={limit}&cursor={c}"),
            None => format!("/admin/migration?{query}&limit={limit}"),
        };
        let page = app.get(&path).await;
        page.assert_status(200);
        let page = page.json();
        walked.extend(records(&page));
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return walked,
        }
    }
}

/// A record's key in `sort`, as the book's operators/dashboard.md states the orders: most requests
/// first; the most recent last v1 request first (whole seconds), never answered last.
fn key_in(sort: &str, record: &Value) -> i64 {
    match sort {
        "requests" => -(requests(record) as i64),
        _ => record["lastV1Request"]
            .as_str()
            .map_or(i64::MAX, |t| -chrono::DateTime::parse_from_rfc3339(t).unwrap().timestamp()),
    }
}

async fn the_other_orders_hold_in_pages_by_number_and_by_cursor(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 45).await;
    app.counts_written().await;
    // Later calls, held unwritten here: these clients move up in both orders.
    clock.set("2026-06-15T12:05:00Z");
    let url = format!("http://{}", app.addr);
    for (who, tenant, calls) in [("c003", "acme", 9), ("c044", "initech", 1), ("late1", "acme", 2)] {
        let bot = token(who, tenant);
        for _ in 0..calls {
            assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
        }
    }
    let at_risk = records(&app.get("/admin/migration?version=1&limit=1000").await.json());
    assert_eq!(at_risk.len(), 46);
    for _ in 0..2 {
        for sort in ["requests", "last-seen"] {
            let all = app.get(&format!("/admin/migration?version=1&limit=1000&sort={sort}")).await.json();
            let listed = records(&all);
            let (mut these, mut every) = (listed.clone(), at_risk.clone());
            these.sort();
            every.sort();
            assert_eq!(these, every, "{sort} lists every client once");
            let keys: Vec<(i64, String)> =
                all["records"].as_array().unwrap().iter().map(|r| (key_in(sort, r), subject(r))).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted, "{sort}: in its order, then by tenant and subject");
            assert_eq!(all["summary"]["clients"], 46);
            for limit in [1, 4, 7] {
                let query = format!("version=1&sort={sort}");
                assert_eq!(numbered(&app, &query, limit).await, listed, "{sort} in numbered pages of {limit}");
                assert_eq!(by_cursor(&app, &query, limit).await, listed, "{sort} by cursor, pages of {limit}");
            }
            let acme: Vec<String> = listed.iter().filter(|s| s.starts_with("acme/")).cloned().collect();
            assert_eq!(numbered(&app, &format!("version=1&sort={sort}&tenant=acme"), 3).await, acme);
        }
        app.counts_written().await;
    }
    // The most requests first is the client that called most, the most recent one that called last.
    let first = |sort: &str| {
        let app = &app;
        let path = format!("/admin/migration?version=1&limit=1&sort={sort}");
        async move { records(&app.get(&path).await.json()).remove(0) }
    };
    assert_eq!(first("requests").await, "acme/c003");
    assert_eq!(first("last-seen").await, "acme/c003");
}

async fn the_search_and_changes_met_filter_as_the_full_list_says(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 45).await;
    let all = app.get("/admin/migration?version=1&limit=1000").await.json();
    let every = all["records"].as_array().unwrap();
    let met = |r: &&Value| {
        r["routes"].as_array().unwrap().iter().any(|route| !route["exposures"].as_array().unwrap().is_empty())
    };
    let expect = |keep: &dyn Fn(&&Value) -> bool| every.iter().filter(|r| keep(r)).map(subject).collect::<Vec<_>>();
    for (query, expected) in [
        // Part of the subject; part of the tenant (every subject of `globex`).
        ("q=c01", expect(&|r| r["subject"].as_str().unwrap().contains("c01"))),
        ("q=obe", expect(&|r| r["tenant"] == "globex")),
        ("q=C01", vec![]),
        ("changes=met", expect(&met)),
        ("changes=none", expect(&|r| !met(r))),
        (
            "q=c0&changes=met&tenant=acme",
            expect(&|r| met(r) && r["tenant"] == "acme" && r["subject"].as_str().unwrap().contains("c0")),
        ),
    ] {
        assert!(query == "q=C01" || !expected.is_empty(), "{query} has clients to find");
        let body = app.get(&format!("/admin/migration?version=1&limit=1000&{query}")).await.json();
        assert_eq!(records(&body), expected, "{query}");
        assert_eq!(body["summary"]["clients"], expected.len() as u64, "{query}");
        // In pages, by cursor and by number, the same.
        let mut walked = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/admin/migration?version=1&limit=4&{query}&cursor={c}"),
                None => format!("/admin/migration?version=1&limit=4&{query}"),
            };
            let page = app.get(&path).await;
            page.assert_status(200);
            let page = page.json();
            walked.extend(records(&page));
            match page["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
        }
        assert_eq!(walked, expected, "{query} by cursor");
        assert_eq!(numbered(&app, &format!("version=1&{query}"), 4).await, expected, "{query} by number");
        // The CSV lists the same clients.
        let csv = app.get(&format!("/admin/migration?version=1&format=csv&{query}")).await.text;
        let mut listed: Vec<String> =
            csv.lines().skip(1).map(|l| l.split(',').take(2).collect::<Vec<_>>().join("/")).collect();
        listed.dedup();
        let mut sorted = expected.clone();
        sorted.sort();
        assert_eq!(listed, sorted, "{query} as CSV");
    }
    // The same once every count is written (the store's own search).
    app.counts_written().await;
    assert_eq!(app.get("/admin/migration?version=1&limit=1000&q=c01").await.json()["summary"]["clients"], 10);
}

async fn bad_view_parameters_are_400_and_change_nothing(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 3).await;
    let before = app.get("/admin/migration?version=1").await.json();
    let codes = |reply: Reply| {
        reply.assert_status(400);
        reply.error_codes()
    };
    let cursor = app.get("/admin/migration?version=1&limit=1").await.json()["nextCursor"].as_str().unwrap().to_string();
    let long = "x".repeat(256);
    for (query, field, code) in [
        ("page=0".to_string(), "page", "min"),
        ("page=-2".to_string(), "page", "min"),
        ("page=two".to_string(), "page", "type"),
        (format!("page=2&limit=1&cursor={cursor}"), "page", "not_with_cursor"),
        ("changes=some".to_string(), "changes", "one_of"),
        (format!("q={long}"), "q", "too_long"),
        ("sort=name".to_string(), "sort", "one_of"),
    ] {
        let errors = codes(app.get(&format!("/admin/migration?version=1&{query}")).await);
        assert_eq!(errors, vec![(field.to_string(), code.to_string())], "{query}");
    }
    // A cursor is bound to its search as to its other filters.
    let searched = app.get("/admin/migration?version=1&limit=1&q=c").await.json();
    let cursor = searched["nextCursor"].as_str().unwrap();
    let errors = codes(app.get(&format!("/admin/migration?version=1&limit=1&q=c0&cursor={cursor}")).await);
    assert_eq!(errors, vec![("cursor".to_string(), "cursor_mismatch".to_string())]);
    // And to its order: a cursor of one order is no place in another.
    let by_requests = app.get("/admin/migration?version=1&limit=1&sort=requests").await.json();
    let cursor = by_requests["nextCursor"].as_str().unwrap();
    let errors = codes(app.get(&format!("/admin/migration?version=1&limit=1&cursor={cursor}")).await);
    assert_eq!(errors, vec![("cursor".to_string(), "cursor_mismatch".to_string())]);
    // Nothing was written by any of them.
    assert_eq!(app.get("/admin/migration?version=1").await.json(), before);
}

async fn an_admin_opens_one_clients_guide_at_its_own_address(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let url = format!("http://{}", app.addr);
    // A subject with characters a path must escape.
    let bot = token("auth0|ci bot/1", "acme");
    assert_eq!(call(&url, &app.client, &bot, "/api/v1/customers?sortBy=name", false).await, 200);
    let path = "/admin/clients/acme/auth0%7Cci%20bot%2F1/guide";
    let query = "/admin/migration/guide?version=1&tenant=acme&subject=auth0%7Cci%20bot%2F1";

    let json = app.get(path).await;
    json.assert_status(200);
    assert_eq!(json.json(), app.get(query).await.json());
    let html = app.get(&format!("{path}?format=html")).await;
    html.assert_status(200);
    assert_eq!(html.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(html.text.contains("<title>Migration guide for acme / auth0|ci bot/1: v1 to v2</title>"), "{}", html.text);
    let markdown = app.get(&format!("{path}?format=markdown")).await;
    assert_eq!(markdown.header("content-type"), Some("text/markdown; charset=utf-8"));
    assert!(markdown.text.starts_with("# Migration guide for acme / auth0|ci bot/1: v1 to v2\n"), "{}", markdown.text);
    // `format` wins over Accept; Accept still chooses without it.
    let by_accept = send(app.request(Method::GET, path).header("accept", "text/markdown")).await;
    assert_eq!(by_accept.text, markdown.text);
    let both = send(app.request(Method::GET, &format!("{path}?format=html")).header("accept", "text/markdown")).await;
    assert_eq!(both.text, html.text);
    // The guide its owners read names no subject.
    let own =
        send(app.client.get(app.url("/api/migration/guide")).bearer_auth(&bot).header("accept", "text/html")).await;
    assert!(!own.text.contains("auth0|ci bot/1"));

    // Bad input: a form it has not, a client never seen, a version not served, a client's token.
    let bad = app.get(&format!("{path}?format=pdf")).await;
    bad.assert_status(400);
    assert_eq!(bad.error_codes(), vec![("format".to_string(), "one_of".to_string())]);
    app.get("/admin/clients/acme/nobody/guide").await.assert_status(404);
    app.get(&format!("{path}?version=7")).await.assert_status(400);
    send(app.client.get(app.url(path)).bearer_auth(&bot)).await.assert_status(403);
    send(app.client.get(app.url(path))).await.assert_status(401);
}

/// The subjects the dashboard's client table shows.
const SHOWN: &str = "[...document.querySelectorAll('#progress tbody tr')].map(r => r.dataset.client)";

/// The clients the admin API answers for a page of the dashboard's view.
async fn api_page(app: &TestApp, query: &str) -> Value {
    json!(records(&app.get(&format!("/admin/migration?version=1&limit=50&{query}")).await.json()))
}

async fn sign_in(browser: &mut Browser, token: &str) {
    let typed = format!(
        "document.getElementById('token').value = {}; document.getElementById('login').requestSubmit(); true",
        json!(token)
    );
    assert_eq!(browser.eval(&typed).await, true);
}

/// Waits until a load after `before` (the last "Updated" instant) has finished.
async fn loaded_after(browser: &mut Browser, before: &Value) {
    let check = format!(
        "(document.querySelector('#updated time')?.dateTime ?? null) !== {} && document.getElementById('status').textContent === ''",
        before
    );
    browser.wait_for(&check, Duration::from_secs(15)).await;
}

async fn updated(browser: &mut Browser) -> Value {
    browser.eval("document.querySelector('#updated time')?.dateTime ?? null").await
}

/// An operator filters to a tenant, pages, opens a row, scrolls, and the refresh, a reload and
/// a link sent to a colleague all keep that view; every page is what the admin API answers.
/// axe-core finds nothing serious. Leaves `target/dashboard-view*.png`.
async fn the_dashboard_keeps_its_view_through_a_reload_and_a_refresh(backend: Backend) {
    let app = backend.spawn_with(deprecated).await;
    let url = format!("http://{}", app.addr);
    for i in 0..130 {
        let tenant = ["acme", "globex"][i % 2];
        let path = if i % 3 == 0 { "/api/v1/customers?sortBy=name" } else { "/users" };
        for _ in 0..(i % 4) + 1 {
            assert_eq!(call(&url, &app.client, &token(&format!("app-{i:03}"), tenant), path, false).await, 200);
        }
    }
    let mut browser = Browser::launch().await;
    // A link a colleague sent: acme's clients, page 2.
    browser.log_in_to_dashboard(&app.url("/admin/dashboard#tenant=acme&page=2"), &app.admin).await;
    loaded_after(&mut browser, &Value::Null).await;
    assert_eq!(browser.eval("document.getElementById('f-tenant').value").await, "acme");
    assert_eq!(browser.eval("document.getElementById('shown').textContent").await, "page 2 of 2 · 65 clients");
    assert_eq!(browser.eval(SHOWN).await, api_page(&app, "tenant=acme&page=2").await);
    assert_eq!(browser.eval("document.getElementById('who').textContent").await, "admin-1");
    assert_eq!(browser.eval("document.getElementById('login').hidden").await, true, "the form gives way");
    // The verdict comes first, in the space kept for it.
    let verdict_first = browser
        .eval("document.getElementById('verdict').getBoundingClientRect().bottom <= document.getElementById('migration').getBoundingClientRect().top")
        .await;
    assert_eq!(verdict_first, true);

    // Filters and pages, each what the API answers.
    browser.eval("document.getElementById('f-changes').value = 'none'; document.querySelector('#filters button').click(); true").await;
    browser.wait_for("location.hash === '#tenant=acme&changes=none'", Duration::from_secs(10)).await;
    loaded_after(&mut browser, &Value::Null).await;
    browser
        .wait_for(
            &format!(
                "JSON.stringify({SHOWN}) === {}",
                json!(api_page(&app, "tenant=acme&changes=none&page=1").await.to_string())
            ),
            Duration::from_secs(10),
        )
        .await;
    // Another order, the same pages as the API's.
    browser.eval("document.getElementById('f-sort').value = 'last-seen'; document.querySelector('#filters button').click(); true").await;
    browser.wait_for("location.hash === '#tenant=acme&changes=none&sort=last-seen'", Duration::from_secs(10)).await;
    browser
        .wait_for(
            &format!(
                "JSON.stringify({SHOWN}) === {}",
                json!(api_page(&app, "tenant=acme&changes=none&sort=last-seen&page=1").await.to_string())
            ),
            Duration::from_secs(10),
        )
        .await;
    browser.eval("document.getElementById('f-sort').value = ''; document.getElementById('f-changes').value = ''; document.getElementById('f-q').value = 'app'; document.querySelector('#filters button').click(); true").await;
    browser.wait_for("location.hash === '#tenant=acme&q=app'", Duration::from_secs(10)).await;
    browser
        .wait_for(
            "document.getElementById('shown').textContent === 'page 1 of 2 · 65 clients'",
            Duration::from_secs(10),
        )
        .await;
    browser.eval("document.getElementById('last').click(); true").await;
    browser.wait_for("location.hash === '#tenant=acme&q=app&page=2'", Duration::from_secs(10)).await;
    let expected = api_page(&app, "tenant=acme&q=app&page=2").await;
    browser
        .wait_for(&format!("JSON.stringify({SHOWN}) === {}", json!(expected.to_string())), Duration::from_secs(10))
        .await;
    // Rows on one line at 1,400 px.
    let tall = browser.eval("[...document.querySelectorAll('#progress tbody tr')].filter(r => r.getBoundingClientRect().height > 40).length").await;
    assert_eq!(tall, 0, "every row on one line");

    // Open a row, scroll, and refresh: the view, the open row and the scroll stay.
    browser
        .eval("document.querySelector('#progress tbody tr details').open = true; window.scrollTo(0, 600); true")
        .await;
    let opened = browser.eval("document.querySelector('#progress tbody tr').dataset.client").await;
    let scroll = browser.eval("window.scrollY").await;
    assert!(scroll.as_f64().unwrap() > 0.0, "the page scrolls");
    // New traffic moves the counts while the operator looks.
    assert_eq!(call(&url, &app.client, &token("app-000", "acme"), "/users", false).await, 200);
    let before = updated(&mut browser).await;
    browser.eval("document.getElementById('refresh-now').click(); true").await;
    loaded_after(&mut browser, &before).await;
    assert_eq!(browser.eval("location.hash").await, "#tenant=acme&q=app&page=2");
    assert_eq!(browser.eval(SHOWN).await, api_page(&app, "tenant=acme&q=app&page=2").await);
    let still_open = format!("document.querySelector('#progress tr[data-client=\"' + {opened} + '\"] details').open");
    assert_eq!(browser.eval(&still_open).await, true, "the open row stays open");
    assert_eq!(browser.eval("window.scrollY").await, scroll, "the scroll stays");
    // Paused, the refresh says so.
    browser.eval("document.getElementById('pause').click(); true").await;
    browser
        .wait_for("document.getElementById('updated').textContent.includes('refresh paused')", Duration::from_secs(5))
        .await;
    browser.screenshot(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-view.png")).await;

    // axe-core: no serious or critical violation.
    assert_eq!(browser.serious_violations().await, json!([]), "axe-core's serious and critical violations");

    // A reload forgets the token, never the view.
    browser.eval("location.reload(); true").await;
    browser
        .wait_for(
            "document.readyState === 'complete' && !document.getElementById('login').hidden",
            Duration::from_secs(10),
        )
        .await;
    assert_eq!(browser.eval("location.hash").await, "#tenant=acme&q=app&page=2");
    sign_in(&mut browser, &app.admin).await;
    loaded_after(&mut browser, &Value::Null).await;
    assert_eq!(browser.eval(SHOWN).await, api_page(&app, "tenant=acme&q=app&page=2").await);
    assert_eq!(browser.eval("document.getElementById('f-q').value").await, "app");
    // The range is part of the view too.
    browser
        .eval("const r = document.getElementById('range'); r.value = '7'; r.dispatchEvent(new Event('change')); true")
        .await;
    browser
        .wait_for(
            "location.hash.endsWith('&range=7') && document.querySelectorAll('#chart rect').length === 7",
            Duration::from_secs(10),
        )
        .await;
    // Signing out leaves no data on the page.
    browser.eval("document.getElementById('sign-out').click(); true").await;
    assert_eq!(
        browser.eval("document.getElementById('migration').hidden && !document.getElementById('login').hidden").await,
        true
    );
    browser
        .screenshot(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-view-signed-out.png"))
        .await;
}
