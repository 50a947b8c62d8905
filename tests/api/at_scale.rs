//! The migration tools as a large API's operators use them (CONTRACT §18): pages of clients in
//! the at-risk order, their filters and the CSV, readiness against a count of what was sent,
//! usage in pages, and counts that survive a shutdown, a lost commit answer and a panic in the
//! background work.

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{
    Backend, Reply, TestApp,
    app::{FixedClock, test_settings},
    binary::Served,
    logs, send,
    tokens::{self, now},
};

crate::scenarios![
    pages_hold_every_client_once_in_order_while_counts_are_written,
    each_filter_pages_its_clients_and_counts_them_all,
    the_csv_is_every_page,
    bad_page_parameters_are_400,
    readiness_counts_what_was_answered_in_each_window,
    usage_pages_through_every_client,
    sigterm_while_a_flush_waits_on_a_lock_loses_no_count,
    counts_that_cannot_be_written_at_shutdown_are_logged_with_their_number,
    a_panic_in_the_background_work_does_not_stop_it;
    postgres only:
    a_batch_whose_commit_answer_was_lost_is_counted_once,
    an_admin_question_whose_client_left_stops,
];

pub(crate) const NOW: &str = "2026-06-15T12:00:00Z";
const TENANTS: [&str; 3] = ["acme", "globex", "initech"];

pub(crate) fn deprecated(s: &mut tandem::Settings) {
    s.lifecycle_mut(1).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    s.lifecycle_mut(1).sunset_at = Some("2027-01-01T00:00:00Z".into());
}

pub(crate) fn token(subject: &str, tenant: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": tenant, "roles": []}))
}

pub(crate) async fn call(app_url: &str, client: &reqwest::Client, token: &str, path: &str, rehearsal: bool) -> u16 {
    let mut request = client.get(format!("{app_url}{path}")).bearer_auth(token);
    if rehearsal {
        request = request.header("x-api-sunset-rehearsal", "true");
    }
    send(request).await.status
}

/// A client of the population: its tenant and subject.
fn client(i: usize) -> (&'static str, String) {
    (TENANTS[i % 3], format!("c{i:03}"))
}

/// `n` clients of every kind: some met a change (sortBy), some rehearsed, some moved to v2, some
/// done (quiet on v1 for over a week), with 1 to 5 requests each.
pub(crate) async fn populate(app: &TestApp, clock: &FixedClock, n: usize) {
    let url = format!("http://{}", app.addr);
    for i in 0..n {
        let (tenant, subject) = client(i);
        let bot = token(&subject, tenant);
        if i % 9 == 0 {
            clock.set("2026-06-01T12:00:00Z");
        }
        for _ in 0..(i % 5) + 1 {
            assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
        }
        if i % 4 == 0 {
            assert_eq!(call(&url, &app.client, &bot, "/api/v1/customers?sortBy=name", false).await, 200);
        }
        clock.set(NOW);
        if i % 6 == 0 {
            assert_eq!(call(&url, &app.client, &bot, "/users", true).await, 410);
        }
        if i % 7 == 0 || i % 9 == 0 {
            assert_eq!(call(&url, &app.client, &bot, "/api/v2/users", false).await, 200);
        }
    }
}

/// A record's requests on the retiring version (every route).
pub(crate) fn requests(record: &Value) -> u64 {
    record["routes"].as_array().unwrap().iter().map(|r| r["requests"].as_u64().unwrap()).sum()
}

/// A record's place in the at-risk order, as the book's operators/workbench.md states it.
fn place(record: &Value) -> (u8, std::cmp::Reverse<u64>, String, String) {
    let met = record["routes"].as_array().unwrap().iter().any(|r| !r["exposures"].as_array().unwrap().is_empty());
    let risk = if met { 0 } else { 2 } + u8::from(!record["lastRehearsal"].is_null());
    let who = |k: &str| record[k].as_str().unwrap().to_string();
    (risk, std::cmp::Reverse(requests(record)), who("tenant"), who("subject"))
}

pub(crate) fn subject(record: &Value) -> String {
    format!("{}/{}", record["tenant"].as_str().unwrap(), record["subject"].as_str().unwrap())
}

/// One page of `query` after `cursor`: its records and the next cursor.
async fn page_after(app: &TestApp, query: &str, cursor: Option<&str>) -> (Vec<Value>, Option<String>) {
    let path = match cursor {
        Some(c) => format!("/admin/migration?{query}&cursor={c}"),
        None => format!("/admin/migration?{query}"),
    };
    let reply = app.get(&path).await;
    reply.assert_status(200);
    let body = reply.json();
    (body["records"].as_array().unwrap().clone(), body["nextCursor"].as_str().map(str::to_string))
}

/// Every page of `query`, following `nextCursor`.
async fn every_page(app: &TestApp, query: &str) -> Vec<Vec<Value>> {
    let (mut pages, mut cursor) = (Vec::new(), None);
    loop {
        let (records, next) = page_after(app, query, cursor.as_deref()).await;
        pages.push(records);
        match next {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
        assert!(pages.len() < 1000, "paging never ends");
    }
}

async fn pages_hold_every_client_once_in_order_while_counts_are_written(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 60).await;
    app.counts_written().await;
    let all = app.get("/admin/migration?version=1&limit=1000").await.json();
    let everyone: Vec<String> = all["records"].as_array().unwrap().iter().map(subject).collect();
    assert_eq!(everyone.len(), 60);
    assert!(all["nextCursor"].is_null());
    let places: Vec<_> = all["records"].as_array().unwrap().iter().map(place).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "the at-risk order: {places:?}");

    // Walk in pages of 7 while new clients call v1 and clients already listed call it again:
    // the instance writes those counts every second, between and during the pages.
    let url = format!("http://{}", app.addr);
    let (http, newcomers) = (app.client.clone(), Arc::new(std::sync::atomic::AtomicUsize::new(0)));
    let traffic = tokio::spawn({
        let (url, newcomers) = (url.clone(), newcomers.clone());
        async move {
            for i in 0.. {
                let n = newcomers.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                assert_eq!(
                    call(&url, &http, &token(&format!("new{n:03}"), TENANTS[i % 3]), "/users", false).await,
                    200
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    });
    let (mut pages, mut cursor) = (Vec::new(), None);
    loop {
        let (records, next) = page_after(&app, "version=1&limit=7", cursor.as_deref()).await;
        // Clients already listed call again: they move up the order, never past the cursor.
        for record in records.iter().take(2) {
            let bot = token(record["subject"].as_str().unwrap(), record["tenant"].as_str().unwrap());
            assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
        pages.push(records);
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    traffic.abort();
    assert!(newcomers.load(std::sync::atomic::Ordering::SeqCst) > 10, "the walk ran beside new traffic");
    let walked: Vec<String> = pages.iter().flatten().map(subject).collect();
    let unique: HashSet<&String> = walked.iter().collect();
    assert_eq!(unique.len(), walked.len(), "no client twice: {walked:?}");
    for client in &everyone {
        assert!(unique.contains(client), "{client} was skipped");
    }
    for page in &pages {
        assert!(page.len() <= 7);
        let places: Vec<_> = page.iter().map(place).collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]), "each page in order: {places:?}");
    }
}

async fn each_filter_pages_its_clients_and_counts_them_all(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 45).await;
    let all = app.get("/admin/migration?version=1&limit=1000").await.json();
    let records = all["records"].as_array().unwrap();
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    for record in records {
        *by_status.entry(record["status"].as_str().unwrap().into()).or_default() += 1;
    }
    for status in ["not-started", "in-progress", "ready", "done"] {
        assert!(by_status.get(status).is_some_and(|n| *n > 0), "the population has {status} clients: {by_status:?}");
    }
    assert_eq!(all["summary"]["clients"], 45);
    for (status, n) in &by_status {
        assert_eq!(all["summary"]["byStatus"][status], *n, "{status}");
    }
    // Each status alone, in pages of 4, lists exactly its clients and counts them.
    for status in ["not-started", "in-progress", "ready", "done", "unknown"] {
        let pages = every_page(&app, &format!("version=1&limit=4&status={status}")).await;
        let listed: Vec<String> = pages.iter().flatten().map(subject).collect();
        let expected: Vec<String> = records.iter().filter(|r| r["status"] == status).map(subject).collect();
        assert_eq!(listed, expected, "{status}");
        let first = app.get(&format!("/admin/migration?version=1&limit=4&status={status}")).await.json();
        assert_eq!(first["summary"]["clients"], expected.len() as u64, "{status}");
        assert_eq!(first["summary"]["byStatus"][status], expected.len() as u64, "{status}");
    }
    // A tenant, alone and with a status.
    let pages = every_page(&app, "version=1&limit=5&tenant=globex").await;
    let listed: Vec<String> = pages.iter().flatten().map(subject).collect();
    let expected: Vec<String> = records.iter().filter(|r| r["tenant"] == "globex").map(subject).collect();
    assert_eq!((listed.len(), &listed), (15, &expected));
    let both = app.get("/admin/migration?version=1&limit=1000&tenant=acme&status=not-started").await.json();
    let expected: Vec<String> =
        records.iter().filter(|r| r["tenant"] == "acme" && r["status"] == "not-started").map(subject).collect();
    assert_eq!(both["records"].as_array().unwrap().iter().map(subject).collect::<Vec<_>>(), expected);
    assert_eq!(both["summary"]["clients"], expected.len() as u64);
    // The same answers once every count is written (the store's own aggregates).
    app.counts_written().await;
    assert_eq!(app.get("/admin/migration?version=1&limit=1000").await.json(), all);
}

async fn the_csv_is_every_page(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 25).await;
    let pages = every_page(&app, "version=1&limit=6").await;
    let csv = send(app.request(Method::GET, "/admin/migration?version=1").header("accept", "text/csv")).await;
    csv.assert_status(200);
    let mut lines = csv.text.lines();
    assert_eq!(
        lines.next(),
        Some("tenant,subject,status,method,route,requests,firstSeen,lastSeen,changes,exposures,successor,deprecations")
    );
    // One row per client and route, every client of the pages in (tenant, subject) order,
    // routes as each record lists them.
    let mut records: Vec<&Value> = pages.iter().flatten().collect();
    let client = |r: &Value| (r["tenant"].as_str().unwrap().to_string(), r["subject"].as_str().unwrap().to_string());
    records.sort_by_key(|r| client(r));
    let expected: Vec<String> = records
        .into_iter()
        .flat_map(|r| {
            r["routes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|route| {
                    let exposures: Vec<String> = route["exposures"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| format!("{}:{}", e["change"].as_str().unwrap(), e["requests"]))
                        .collect();
                    let changes: Vec<&str> =
                        route["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
                    [
                        r["tenant"].as_str().unwrap(),
                        r["subject"].as_str().unwrap(),
                        r["status"].as_str().unwrap(),
                        route["method"].as_str().unwrap(),
                        route["route"].as_str().unwrap(),
                        &route["requests"].to_string(),
                        route["firstSeen"].as_str().unwrap_or(""),
                        route["lastSeen"].as_str().unwrap_or(""),
                        &changes.join(" "),
                        &exposures.join(" "),
                        route["successor"].as_str().unwrap(),
                        // No element is declared: the client's uses of elements, none.
                        "",
                    ]
                    .join(",")
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(lines.map(str::to_string).collect::<Vec<_>>(), expected);
    // The same with a filter: only its clients.
    let filtered = app.get("/admin/migration?version=1&format=csv&tenant=initech").await.text;
    assert!(filtered.lines().skip(1).all(|l| l.starts_with("initech,")), "{filtered}");
    assert_eq!(filtered.lines().skip(1).count(), expected.iter().filter(|l| l.starts_with("initech,")).count());
    // A status too: the clients that have it now, this instance's unwritten counts included.
    let by_status = app.get("/admin/migration?version=1&format=csv&status=not-started").await.text;
    let not_started: Vec<&String> = expected.iter().filter(|l| l.split(',').nth(2) == Some("not-started")).collect();
    assert!(!not_started.is_empty());
    assert_eq!(by_status.lines().skip(1).collect::<Vec<_>>(), not_started, "{by_status}");
}

async fn bad_page_parameters_are_400(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 3).await;
    let codes = |reply: Reply| {
        reply.assert_status(400);
        reply.error_codes()
    };
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("cursor=nonsense", "cursor"),
        ("status=retired", "status"),
        ("tenant=Not_A_Tenant", "tenant"),
    ] {
        let errors = codes(app.get(&format!("/admin/migration?version=1&{query}")).await);
        assert_eq!(errors.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(), vec![field], "{query}");
    }
    // Every bad parameter is named at once.
    let errors = codes(app.get("/admin/migration?version=1&limit=0&status=retired").await);
    assert_eq!(errors.len(), 2);
    // A cursor is bound to the query that made it.
    let first = app.get("/admin/migration?version=1&limit=1&status=not-started").await.json();
    let cursor = first["nextCursor"].as_str().unwrap();
    let errors = codes(app.get(&format!("/admin/migration?version=1&limit=1&status=ready&cursor={cursor}")).await);
    assert_eq!(errors, vec![("cursor".to_string(), "cursor_mismatch".to_string())]);
    for query in ["limit=0", "cursor=x", "limit=-1"] {
        codes(app.get(&format!("/admin/usage?version=1&{query}")).await);
    }
    for query in ["limit=0", "limit=1001", "limit=x"] {
        codes(app.get(&format!("/admin/versions/1/readiness?{query}")).await);
    }
    // Nothing was written by any of them: the counts are the population's.
    let all = app.get("/admin/migration?version=1").await.json();
    assert_eq!(all["summary"]["clients"], 3);
}

/// What the test sent: per client, per day, requests v1 answered.
type Sent = BTreeMap<(String, String), BTreeMap<String, u64>>;

async fn readiness_counts_what_was_answered_in_each_window(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    let url = format!("http://{}", app.addr);
    let mut sent: Sent = BTreeMap::new();
    // 12 clients over the last 8 days, each on its own days and in its own amounts.
    for day in 0..8u64 {
        let date = format!("2026-06-{:02}", 15 - day);
        clock.set(&format!("{date}T09:00:00Z"));
        for i in 0..12u64 {
            if (i + day) % 3 == 0 {
                continue;
            }
            let (tenant, subject) = (TENANTS[i as usize % 3], format!("r{i:02}"));
            let times = (i * 7 + day * 3) % 5 + 1;
            for _ in 0..times {
                assert_eq!(call(&url, &app.client, &token(&subject, tenant), "/users", false).await, 200);
            }
            *sent.entry((tenant.into(), subject)).or_default().entry(date.clone()).or_default() += times;
            // A dry run is never a request the version answered.
            let dry_run = send(
                app.client
                    .get(format!("{url}/users"))
                    .bearer_auth(token(&format!("r{i:02}"), tenant))
                    .header("x-api-dry-run", "true"),
            )
            .await;
            dry_run.assert_status(200);
        }
    }
    clock.set(NOW);
    for check in ["before its counts are written", "after"] {
        for window in [1u64, 2, 3, 5, 8] {
            let first = format!("2026-06-{:02}", 15 - (window - 1));
            let mut expected: Vec<(u64, String, String)> = sent
                .iter()
                .filter_map(|((tenant, subject), days)| {
                    let n: u64 = days.iter().filter(|(d, _)| **d >= first).map(|(_, n)| n).sum();
                    (n > 0).then(|| (n, tenant.clone(), subject.clone()))
                })
                .collect();
            expected.sort_by(|a, b| b.0.cmp(&a.0).then((&a.1, &a.2).cmp(&(&b.1, &b.2))));
            let answer = app.get(&format!("/admin/versions/1/readiness?window={window}&limit=1000")).await.json();
            let listed: Vec<(u64, String, String)> = answer["blocking"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b["requests"].as_u64().unwrap(),
                        b["tenant"].as_str().unwrap().into(),
                        b["subject"].as_str().unwrap().into(),
                    )
                })
                .collect();
            assert_eq!(listed, expected, "window {window}, {check}");
            assert_eq!(answer["clients"]["seen"], expected.len() as u64, "window {window}, {check}");
            let per_day: Vec<u64> =
                answer["requestsPerDay"].as_array().unwrap().iter().map(|d| d["requests"].as_u64().unwrap()).collect();
            let expected_days: Vec<u64> = (0..window)
                .rev()
                .map(|ago| {
                    let date = format!("2026-06-{:02}", 15 - ago);
                    sent.values().map(|days| days.get(&date).copied().unwrap_or(0)).sum()
                })
                .collect();
            assert_eq!(per_day, expected_days, "window {window}, {check}");
            // A limit lists the busiest, and still counts every client.
            let top = app.get(&format!("/admin/versions/1/readiness?window={window}&limit=3")).await.json();
            assert_eq!(top["blocking"].as_array().unwrap().len(), expected.len().min(3));
            assert_eq!(
                top["blocking"].as_array().unwrap()[..],
                answer["blocking"].as_array().unwrap()[..expected.len().min(3)]
            );
            assert_eq!(top["clients"], answer["clients"]);
        }
        app.counts_written().await;
    }
}

async fn usage_pages_through_every_client(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    populate(&app, &clock, 20).await;
    let whole = app.get("/admin/usage?version=1&since=2026-05-01T00:00:00Z&limit=1000").await.json();
    assert!(whole["nextCursor"].is_null());
    assert_eq!(whole["summary"]["clients"], 20);
    let everyone: Vec<String> = whole["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}/{}", c["tenant"].as_str().unwrap(), c["subject"].as_str().unwrap()))
        .collect();
    let mut sorted = everyone.clone();
    sorted.sort();
    assert_eq!(everyone, sorted, "by tenant and subject");
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = format!(
            "/admin/usage?version=1&since=2026-05-01T00:00:00Z&limit=6{}",
            cursor.as_ref().map(|c| format!("&cursor={c}")).unwrap_or_default()
        );
        let page = app.get(&path).await.json();
        assert_eq!(page["summary"], whole["summary"], "every page carries the totals of all");
        assert_eq!(page["days"], whole["days"]);
        walked.extend(page["clients"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(Value::Array(walked), whole["clients"]);
    let total: u64 = whole["clients"].as_array().unwrap().iter().map(|c| c["requests"].as_u64().unwrap()).sum();
    assert_eq!(whole["requests"], total);
    app.counts_written().await;
    assert_eq!(app.get("/admin/usage?version=1&since=2026-05-01T00:00:00Z&limit=1000").await.json(), whole);
}

/// Distinct clients' v1 requests sent concurrently to a served binary; the number answered 200.
async fn load(served: &Served, clients: usize, each: usize) -> u64 {
    let answered = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut workers = Vec::new();
    for worker in 0..8 {
        let (client, base, answered) = (served.client.clone(), served.base.clone(), answered.clone());
        workers.push(tokio::spawn(async move {
            for i in (worker..clients).step_by(8) {
                let bot = token(&format!("load-{i:05}"), "load");
                for _ in 0..each {
                    if call(&base, &client, &bot, "/api/v1/users?size=1", false).await == 200 {
                        answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    answered.load(std::sync::atomic::Ordering::SeqCst)
}

/// What the database holds of the load's clients: (requests, route requests, usage).
async fn stored_counts(backend: &Backend, database_url: &str) -> (i64, i64, i64) {
    let sums = ["client_versions", "client_routes", "usage_daily"].map(|t| {
        format!("SELECT CAST(coalesce(sum(requests), 0) AS BIGINT) FROM {t} WHERE version = 1 AND tenant = 'load'")
    });
    let mut out = Vec::new();
    for sql in &sums {
        let n: i64 = if backend.is_postgres() {
            let pool = sqlx::PgPool::connect(database_url).await.unwrap();
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        } else {
            let pool = sqlx::SqlitePool::connect(database_url).await.unwrap();
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
            pool.close().await;
            n
        };
        out.push(n);
    }
    (out[0], out[1], out[2])
}

/// Holds the write lock on what every batch writes, as a long transaction would.
enum Lock {
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
    Sqlite(sqlx::pool::PoolConnection<sqlx::Sqlite>),
}

async fn lock_the_counts(backend: &Backend, database_url: &str) -> Lock {
    if backend.is_postgres() {
        let pool = sqlx::PgPool::connect(database_url).await.unwrap();
        let mut tx = pool.begin().await.unwrap();
        sqlx::query("LOCK TABLE usage_days IN ACCESS EXCLUSIVE MODE").execute(&mut *tx).await.unwrap();
        Lock::Postgres(tx)
    } else {
        let pool = sqlx::SqlitePool::connect(database_url).await.unwrap();
        let mut conn = pool.acquire().await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.unwrap();
        Lock::Sqlite(conn)
    }
}

async fn release(lock: Lock) {
    match lock {
        Lock::Postgres(tx) => tx.rollback().await.unwrap(),
        Lock::Sqlite(mut conn) => {
            sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
        }
    }
}

fn sigterm(served: &Served) {
    std::process::Command::new("kill").args(["-TERM", &served.pid().to_string()]).status().unwrap();
}

const SERVED_DEPRECATED: [(&str, Option<&str>); 2] =
    [("TANDEM_V1_DEPRECATED_AT", Some("2026-01-01T00:00:00Z")), ("TANDEM_DB_TIMEOUT_MS", Some("1000"))];

/// SIGTERM lands while the counts of two thousand clients wait on a lock the database holds:
/// the instance finishes what it holds, writes the rest once the lock goes, and every request
/// it answered is counted, once.
async fn sigterm_while_a_flush_waits_on_a_lock_loses_no_count(backend: Backend) {
    let mut served = Served::start(&backend, &SERVED_DEPRECATED).await;
    let answered = load(&served, 2000, 2).await;
    let lock = lock_the_counts(&backend, &served.database_url).await;
    tokio::time::sleep(Duration::from_millis(1200)).await; // a flush is waiting on the lock
    sigterm(&served);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    release(lock).await;
    assert_eq!(served.exited_within(Duration::from_secs(20)).await, Some(0), "{}", served.stdout());
    let answered = answered as i64;
    assert_eq!(
        stored_counts(&backend, &served.database_url).await,
        (answered, answered, answered),
        "{}",
        served.stdout()
    );
    assert!(!served.stdout().contains("they are lost"), "{}", served.stdout());
}

/// A lock that never goes: the instance gives up after a few tries, exits, and says how many
/// rows it could not write, as an error.
async fn counts_that_cannot_be_written_at_shutdown_are_logged_with_their_number(backend: Backend) {
    let mut served = Served::start(&backend, &SERVED_DEPRECATED).await;
    let lock = lock_the_counts(&backend, &served.database_url).await;
    assert!(load(&served, 50, 1).await > 0);
    sigterm(&served);
    let exited = served.exited_within(Duration::from_secs(30)).await;
    release(lock).await;
    assert_eq!(exited, Some(0), "{}", served.stdout());
    let out = served.stdout();
    let line = out
        .lines()
        .find(|l| l.contains("counts not written at shutdown: they are lost"))
        .unwrap_or_else(|| panic!("{out}"));
    let line: Value = serde_json::from_str(line).unwrap();
    assert_eq!(line["level"], "ERROR");
    assert!(line["fields"]["rows"].as_u64().unwrap() >= 50, "{line}");
}

/// The answer to a batch's COMMIT is lost on the way back (a network that drops it): the batch
/// committed, the instance cannot know, and writes it again under the same id, which the
/// store finds, adding nothing. Meanwhile a client's record counts it exactly once.
async fn a_batch_whose_commit_answer_was_lost_is_counted_once(backend: Backend) {
    let admin_url = match &backend.store {
        crate::harness::Store::Postgres { admin_url, .. } => admin_url.clone(),
        crate::harness::Store::Sqlite { .. } => unreachable!("postgres only"),
    };
    let database_url = backend.fresh_database().await;
    let upstream: std::net::SocketAddr = "127.0.0.1:5432".parse().unwrap();
    let proxy = crate::harness::proxy::Proxy::start(upstream).await;
    let through_proxy = database_url.replace("127.0.0.1:5432", &proxy.addr.to_string());
    assert_ne!(through_proxy, database_url, "{admin_url}");
    let mut settings = test_settings(&through_proxy);
    deprecated(&mut settings);
    settings.database.db_timeout_ms = 300;
    let app = TestApp::start(settings).await;
    let bot = token("lost-commit", "acme");
    let url = format!("http://{}", app.addr);
    app.counts_written().await;
    // The batch's own COMMIT: a prune's or a snapshot's also names the table. This instance has
    // written no batch yet, so its INSERT is still parsed (sent as text) on its connection.
    proxy.lose_the_next_commit_answer_after("INSERT INTO flushed_batches");
    for _ in 0..5 {
        assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
    }
    let started = Instant::now();
    while !proxy.lost_a_commit_answer() {
        assert!(started.elapsed() < Duration::from_secs(5), "no batch was written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The batch is in the store; this instance does not know it yet, and counts it once.
    let mine = send(app.client.get(format!("{url}/api/migration")).bearer_auth(&bot)).await.json();
    assert_eq!(mine["routes"][0]["requests"], 5, "{mine}");
    app.counts_written().await;
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    let stored: i64 =
        sqlx::query_scalar("SELECT requests FROM client_versions WHERE version = 1 AND subject = 'lost-commit'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(stored, 5, "written once");
    let usage: i64 = sqlx::query_scalar("SELECT sum(requests)::bigint FROM usage_daily WHERE subject = 'lost-commit'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(usage, 5);
    pool.close().await;
    assert!(logs::captured().contains("a batch whose write went unanswered was written after all"));
    let mine = send(app.client.get(format!("{url}/api/migration")).bearer_auth(&bot)).await.json();
    assert_eq!(mine["routes"][0]["requests"], 5);
}

/// A panic in the background work is logged, and the work goes on: counts are still written.
async fn a_panic_in_the_background_work_does_not_stop_it(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend.spawn_at(deprecated, clock.clock()).await;
    clock.panic_in_the_background_work();
    // The flag falls as the panic starts; the line is logged once it has unwound: wait for both.
    let started = Instant::now();
    while !clock.panicked_in_the_background_work() {
        assert!(started.elapsed() < Duration::from_secs(5), "the background work never read the clock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    while !logs::captured().contains("background work panicked; it goes on at its next tick") {
        assert!(started.elapsed() < Duration::from_secs(5), "the panic was not logged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let url = format!("http://{}", app.addr);
    let bot = token("after-the-panic", "acme");
    for _ in 0..3 {
        assert_eq!(call(&url, &app.client, &bot, "/users", false).await, 200);
    }
    // Written by the background work, as before the panic.
    app.counts_written().await;
    let second = TestApp::start_with_clock(
        {
            let mut settings = test_settings(&app.database_url);
            deprecated(&mut settings);
            settings
        },
        FixedClock::at(NOW).clock(),
    )
    .await;
    let record = send(second.client.get(second.url("/api/migration")).bearer_auth(&bot)).await.json();
    assert_eq!(record["routes"][0]["requests"], 3, "another instance reads them from the store: {record}");
}

/// An operator's question that waits on the database (a table lock here) stops when its client
/// goes away: its statement is gone from the database long before its own timeout.
async fn an_admin_question_whose_client_left_stops(backend: Backend) {
    let clock = FixedClock::at(NOW);
    let app = backend
        .spawn_at(
            |s| {
                deprecated(s);
                s.database.db_timeout_ms = 20_000;
            },
            clock.clock(),
        )
        .await;
    populate(&app, &clock, 3).await;
    app.counts_written().await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let mut lock = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE client_versions IN ACCESS EXCLUSIVE MODE").execute(&mut *lock).await.unwrap();
    let waiting = || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        n
    };
    // A client that asks, waits half a second, and closes its connection (a closed tab, ^C).
    let mut socket = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let ask = format!(
        "GET /admin/migration?version=1 HTTP/1.1\r\nHost: tandem\r\nAuthorization: Bearer {}\r\n\r\n",
        app.admin
    );
    tokio::io::AsyncWriteExt::write_all(&mut socket, ask.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(waiting().await > 0, "its statement waits on the lock");
    drop(socket);
    let started = Instant::now();
    while waiting().await > 0 {
        assert!(started.elapsed() < Duration::from_secs(3), "the question went on after its client left");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    lock.rollback().await.unwrap();
    pool.close().await;
}
