//! Database connections under load: more concurrent requests than connections, each list
//! needing two statements (the page and its count), all answer. On PostgreSQL this checks the
//! held connections' bookkeeping: with more holders than the pool has connections, a request
//! would wait out the store's timeout for a connection that never comes back, and answer 503.
//! Reads by key and first list pages run on pipelined sessions of their own, unless the URL
//! has an option only sqlx knows; both ways serve the same reads.

use sqlx::Row;

use crate::harness::{Backend, TestApp, app::test_settings};

crate::scenarios![
    more_concurrent_lists_than_connections_all_answer;
    postgres only: concurrent_reads_by_key_share_pipelined_sessions,
    pipelined_reads_survive_a_column_type_change,
    first_pages_are_read_on_the_pipelined_sessions,
    a_url_only_sqlx_reads_keeps_reads_on_the_pool
];

/// Open connections of the app's database named `tandem-reads` in pg_stat_activity.
async fn read_sessions(database_url: &str) -> i64 {
    let pool = sqlx::PgPool::connect(database_url).await.unwrap();
    let row = sqlx::query(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'tandem-reads' AND pid <> pg_backend_pid()",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    row.get(0)
}

async fn concurrent_reads_by_key_share_pipelined_sessions(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let paths: Vec<String> =
        (0..64).map(|i| if i % 2 == 0 { format!("/users/{id}") } else { "/users/999999".into() }).collect();
    let replies = futures_util::future::join_all(paths.iter().map(|path| app.get(path))).await;
    for (i, reply) in replies.iter().enumerate() {
        if i % 2 == 0 {
            reply.assert_status(200);
            assert_eq!(reply.json(), serde_json::json!({"id": id, "name": "Ada"}));
        } else {
            reply.assert_status(404);
        }
    }
    let sessions = read_sessions(&app.database_url).await;
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as i64;
    assert!((1..=cores).contains(&sessions), "{sessions} read sessions for {cores} cores");
}

async fn first_pages_are_read_on_the_pipelined_sessions(backend: Backend) {
    let app = backend.spawn().await;
    app.create_user("Ada", "ada@example.com").await;
    // A keyword scans the table: that stays on the pool.
    let search = app.get("/api/v2/users?keyword=ad").await;
    search.assert_status(200);
    assert_eq!((&search.json()["totalElements"], &search.json()["content"][0]["name"]), (&1.into(), &"Ada".into()));
    assert_eq!(read_sessions(&app.database_url).await, 0);
    let page = app.get("/api/v2/users?size=5").await;
    page.assert_status(200);
    assert_eq!((&page.json()["totalElements"], &page.json()["content"][0]["name"]), (&1.into(), &"Ada".into()));
    assert!(read_sessions(&app.database_url).await >= 1, "page 0 opened a pipelined session");
}

async fn a_url_only_sqlx_reads_keeps_reads_on_the_pool(backend: Backend) {
    let database_url = backend.fresh_database().await;
    let sqlx_only = format!("{database_url}?statement-cache-capacity=50");
    let app = TestApp::start(test_settings(&sqlx_only)).await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let found = app.get(&format!("/users/{id}")).await;
    found.assert_status(200);
    assert_eq!(found.json(), serde_json::json!({"id": id, "name": "Ada"}));
    app.get("/users/999999").await.assert_status(404);
    assert_eq!(read_sessions(&database_url).await, 0);
}

async fn more_concurrent_lists_than_connections_all_answer(backend: Backend) {
    // Straight after start: the pool opens its connections while the requests arrive, so
    // they interleave the way they do on a busy instance.
    let app = backend.spawn_with(|s| s.database.db_pool_size = 2).await;
    let lists = (0..32).map(|_| app.get("/api/v2/users?size=1"));
    let replies = futures_util::future::join_all(lists).await;
    for reply in &replies {
        reply.assert_status(200);
        assert_eq!(reply.json()["totalElements"], 0);
    }
}

/// A migration under a running instance changes the type of a column the prepared statements
/// return: PostgreSQL refuses their cached plans. Reads by key retry on a new session; the
/// pool closes the connections that hold the old plans.
async fn pipelined_reads_survive_a_column_type_change(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let path = format!("/users/{id}");
    let first_page = "/api/v2/users?size=1";
    // A keyword scans: such lists run on the pool, where concurrent ones prepare their
    // statements on several connections.
    let list = "/api/v2/users?size=1&keyword=ad";
    for _ in 0..4 {
        app.get(&path).await.assert_status(200);
        app.get(first_page).await.assert_status(200);
    }
    for reply in futures_util::future::join_all((0..8).map(|_| app.get(list))).await {
        reply.assert_status(200);
    }
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    sqlx::query("ALTER TABLE users ALTER COLUMN name TYPE varchar(300)").execute(&pool).await.unwrap();
    pool.close().await;
    // The pipelined sessions prepare afresh: reads by key and first pages answer throughout.
    for _ in 0..8 {
        let reply = app.get(&path).await;
        reply.assert_status(200);
        assert_eq!(reply.json(), serde_json::json!({"id": id, "name": "Ada"}));
        let page = app.get(first_page).await;
        page.assert_status(200);
        assert_eq!(page.json()["content"][0]["name"], "Ada");
    }
    // The pool has no retry: the first list meets the old plan and answers 500, and takes
    // every idle connection's statement cache with it; from then on lists answer.
    let first = app.get(list).await;
    assert!([200, 500].contains(&first.status), "{}", first.status);
    for _ in 0..8 {
        app.get(list).await.assert_status(200);
    }
}
