//! Many users created at once: PostgreSQL writes concurrent inserts together (one statement,
//! one commit); every request must still get its own user, or its own error.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;

use crate::harness::{Backend, Reply, TestApp, send};

crate::scenarios![
    each_of_many_concurrent_creates_gets_its_own_user,
    a_conflict_among_concurrent_creates_fails_only_its_own_request,
    concurrent_creates_of_one_address_make_one_user,
];

/// Creates a user for each address, all at once; every other one under an Idempotency-Key.
async fn create_all(app: &TestApp, emails: &[String]) -> Vec<Reply> {
    join_all(emails.iter().enumerate().map(|(i, email)| {
        let body = json!({"name": format!("User {i}"), "email": email, "age": 18 + i});
        let request = app.request(Method::POST, "/api/v2/users").json(&body);
        let request = match i % 2 {
            0 => request.header("idempotency-key", format!("key-{i}-{}", uuid::Uuid::new_v4())),
            _ => request,
        };
        send(request)
    }))
    .await
}

fn emails(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("ada{i}@example.com")).collect()
}

async fn each_of_many_concurrent_creates_gets_its_own_user(backend: Backend) {
    let app = backend.spawn().await;
    let emails = emails(48);
    let replies = create_all(&app, &emails).await;

    let mut ids = Vec::new();
    for (i, reply) in replies.iter().enumerate() {
        reply.assert_status(201);
        let body = reply.json();
        assert_eq!(
            (&body["name"], &body["email"], &body["age"]),
            (&json!(format!("User {i}")), &json!(emails[i]), &json!(18 + i))
        );
        let id = body["id"].as_str().unwrap().to_owned();
        assert_eq!(reply.header("location"), Some(format!("/api/v2/users/{id}").as_str()));
        // What was answered is what was stored.
        let read = app.get(&format!("/api/v2/users/{id}")).await;
        read.assert_status(200);
        assert_eq!(read.json(), body);
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 48, "every request made its own user");
    assert_eq!(app.user_count().await, 48);

    // The metrics tell operators how much was gathered: where, every row is counted once.
    let metrics = send(app.client.get(app.url("/metrics"))).await.text;
    let counter = |name: &str| {
        let line = metrics.lines().find(|l| l.starts_with(&format!("{name} ")));
        line.map(|l| l[name.len() + 1..].parse::<u64>().unwrap())
    };
    let (statements, rows) =
        (counter("tandem_db_user_insert_statements_total"), counter("tandem_db_user_insert_rows_total"));
    if backend.is_postgres() {
        assert_eq!(rows, Some(48), "{metrics}");
        assert!((1..=48).contains(&statements.unwrap()), "{metrics}");
    } else {
        assert_eq!((statements, rows), (None, None), "SQLite writes each insert alone");
    }
}

async fn a_conflict_among_concurrent_creates_fails_only_its_own_request(backend: Backend) {
    let app = backend.spawn().await;
    app.create_user_v2("Taken", "ADA7@example.com", 40).await;
    app.create_user_v2("Taken too", "ada30@example.com", 40).await;
    let emails = emails(40);
    let replies = create_all(&app, &emails).await;

    for (i, reply) in replies.iter().enumerate() {
        if i == 7 || i == 30 {
            reply.assert_status(409);
            assert_eq!(reply.json()["type"], "/problems/duplicate-email", "{}", reply.text);
        } else {
            reply.assert_status(201);
            assert_eq!(reply.json()["email"], json!(emails[i]));
        }
    }
    assert_eq!(app.user_count().await, 2 + 38);
}

async fn concurrent_creates_of_one_address_make_one_user(backend: Backend) {
    let app = backend.spawn().await;
    let same: Vec<String> =
        (0..24).map(|i| if i % 2 == 0 { "ada@example.com" } else { "ADA@example.com" }.into()).collect();
    let replies = create_all(&app, &same).await;

    let created = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(created, 1, "{:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
    for reply in replies.iter().filter(|r| r.status != 201) {
        reply.assert_status(409);
        assert_eq!(reply.json()["type"], "/problems/duplicate-email", "{}", reply.text);
    }
    assert_eq!(app.user_count().await, 1);
}
