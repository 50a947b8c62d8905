//! Bulk import: both modes, every way a file can be wrong, limits, roles and retries.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    customers::{HEADER, rows, total},
    harness::{Backend, TestApp, app::multipart, send},
};

crate::scenarios![
    an_import_creates_customers_and_a_report,
    reject_writes_nothing_when_a_late_row_is_bad,
    skip_writes_the_valid_rows_and_reports_the_rest,
    duplicates_in_the_file_and_in_the_store_are_row_errors,
    files_that_cannot_be_read_are_400_with_the_line,
    bom_crlf_quotes_formulas_and_foreign_columns,
    an_upload_over_the_limit_is_413_and_writes_nothing,
    only_admins_import_and_read_reports,
    a_retried_upload_with_a_new_boundary_replays,
    a_file_of_many_batches_finds_duplicates_across_them,
    a_client_gone_mid_upload_leaves_nothing_and_holds_nothing,
    a_row_past_the_record_limit_makes_the_file_unreadable,
    a_number_written_during_an_import_is_taken_once,
    imports_hold_at_most_half_the_pool,
    an_import_behind_a_held_lock_is_503_and_leaves_nothing;
    postgres only:
    two_imports_that_deadlock_answer_503_and_the_other_completes,
];

async fn an_import_creates_customers_and_a_report(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.upload("/upload", &rows(1, 3), None).await;
    reply.assert_status(201);
    let report = reply.json();
    let id = report["id"].as_str().unwrap();
    assert_eq!(
        report,
        json!({"id": id, "status": "completed", "received": 3, "created": 3, "skipped": 0, "errors": []})
    );
    assert_eq!(reply.header("location"), Some(format!("/imports/{id}").as_str()));
    assert_eq!(app.get(&format!("/imports/{id}")).await.json(), report);
    assert_eq!(app.get(&format!("/api/v1/imports/{id}")).await.json(), report);
    assert_eq!(app.get(&format!("/api/v2/customers/imports/{id}")).await.json(), report);

    let v2 = app.upload("/api/v2/customers/imports", &rows(10, 2), None).await;
    v2.assert_status(201);
    let v2_id = v2.json()["id"].as_str().unwrap().to_string();
    assert_eq!(v2.header("location"), Some(format!("/api/v2/customers/imports/{v2_id}").as_str()));

    let one = app.get("/api/v2/customers/1").await;
    one.assert_status(200);
    let created = one.json()["createdDate"].as_str().unwrap().to_string();
    assert_eq!(
        one.json(),
        json!({"id": 1, "customerNumber": "0000001", "name": "Customer 1", "email": "c1@example.com",
               "phone": "555-0001", "branchCode": "2", "createdDate": created})
    );
    assert!(created.ends_with('Z'));
    app.get("/api/v2/customers/999").await.assert_status(404);
    assert_eq!(app.get("/api/v2/customers/abc").await.error_codes(), vec![("id".into(), "type".into())]);
    assert_eq!(app.get("/imports/not-a-uuid").await.error_codes(), vec![("id".into(), "type".into())]);
    app.get(&format!("/imports/{}", uuid::Uuid::now_v7())).await.assert_status(404);
}

async fn reject_writes_nothing_when_a_late_row_is_bad(backend: Backend) {
    let app = backend.spawn().await;
    let mut csv = rows(1, 3000);
    csv.push_str("0009999,Late,late@example.com,555-9999,abc\n");
    csv.push_str("0010000,Fine,fine@example.com,555-1000,1\n");
    let reply = app.upload("/upload", &csv, None).await;
    reply.assert_status(422);
    assert_eq!(reply.json()["message"], "1 row(s) are invalid; nothing was written");
    assert_eq!(
        reply.json()["errors"],
        json!([{"line": 3002, "column": "branchCode", "code": "digits", "message": "must contain only digits"}])
    );
    assert_eq!(total(&app, "").await, 0);
    assert_eq!(app.get("/api/customers").await.json()["totalElements"], 0);
}

async fn skip_writes_the_valid_rows_and_reports_the_rest(backend: Backend) {
    let app = backend.spawn().await;
    let mut csv = rows(1, 150);
    for i in 0..120 {
        csv.push_str(&format!("9{i:06},Bad {i},not-an-email,555-0000,1\n"));
    }
    let reply = app.upload("/api/v2/customers/imports", &csv, Some(r#"{"onError":"skip"}"#)).await;
    reply.assert_status(201);
    let report = reply.json();
    assert_eq!(
        (&report["status"], &report["received"], &report["created"], &report["skipped"]),
        (&json!("completed_with_skips"), &json!(270), &json!(150), &json!(120))
    );
    assert_eq!(report["errors"].as_array().unwrap().len(), 100, "at most 100 listed");
    assert_eq!(
        report["errors"][0],
        json!({"line": 152, "column": "email", "code": "email", "message": "must be a valid e-mail address"})
    );
    assert_eq!(total(&app, "").await, 150);
    let bad_options = app.upload("/upload", &rows(500, 1), Some(r#"{"onError":"maybe"}"#)).await;
    bad_options.assert_status(400);
    assert_eq!(bad_options.error_codes(), vec![("/options".into(), "invalid".into())]);
}

async fn duplicates_in_the_file_and_in_the_store_are_row_errors(backend: Backend) {
    let app = backend.spawn().await;
    app.upload("/upload", &rows(1, 2), None).await.assert_status(201);
    let csv = format!(
        "{HEADER}\n0000001,Again,a@example.com,555-0001,1\n0000050,New,n@example.com,555-0050,1\n0000050,Twin,t@example.com,555-0051,1\n"
    );
    let reply = app.upload("/upload", &csv, None).await;
    reply.assert_status(422);
    assert_eq!(
        reply.json()["errors"],
        json!([
            {"line": 2, "column": "customerNumber", "code": "exists", "message": "already exists"},
            {"line": 4, "column": "customerNumber", "code": "duplicate", "message": "repeats the value of line 3"},
        ])
    );
    assert_eq!(total(&app, "").await, 2);
}

async fn files_that_cannot_be_read_are_400_with_the_line(backend: Backend) {
    let app = backend.spawn().await;
    let mut latin1 = format!("{HEADER}\n1,A,a@example.com,555-0100,1\n").into_bytes();
    latin1.extend_from_slice(b"2,Ren\xe9,r@example.com,555-0100,1\n");
    let (content_type, body) = multipart(&latin1, None, "b1");
    let reply = send(app.request(Method::POST, "/upload").header("content-type", content_type).body(body)).await;
    reply.assert_status(400);
    assert_eq!(
        reply.json()["errors"],
        json!([{"line": 3, "column": "", "code": "not_utf8", "message": "is not UTF-8 text"}])
    );

    let nul = format!("{HEADER}\n1,A\0,a@example.com,555-0100,1\n");
    let reply = app.upload("/upload", &nul, None).await;
    assert_eq!(reply.error_codes(), vec![("".into(), "nul_byte".into())]);
    assert_eq!(reply.json()["errors"][0]["line"], 2);

    let empty = app.upload("/upload", "", None).await;
    empty.assert_status(400);
    assert_eq!(empty.error_codes(), vec![("/file".into(), "no_header".into())]);
    let missing = app.upload("/upload", "customerNumber,name\n1,A\n", None).await;
    assert_eq!(missing.json()["errors"].as_array().unwrap().len(), 3);
    assert_eq!(missing.json()["errors"][0]["column"], "email");

    let no_file = send(
        app.request(Method::POST, "/upload")
            .header("content-type", "multipart/form-data; boundary=x")
            .body("--x--\r\n"),
    )
    .await;
    assert_eq!(no_file.error_codes(), vec![("/file".into(), "required".into())]);
    let not_multipart =
        send(app.request(Method::POST, "/upload").header("content-type", "text/csv").body(rows(1, 1))).await;
    not_multipart.assert_status(415);
    assert_eq!(total(&app, "").await, 0);
}

async fn bom_crlf_quotes_formulas_and_foreign_columns(backend: Backend) {
    let app = backend.spawn().await;
    let csv = format!(
        "\u{FEFF}id,{HEADER},tenant_id,role\r\n999,1,\"Ada\r\nLovelace\",ada@example.com,555-0100,1,other,admin\r\n\
         998,2,=HYPERLINK(\"x\"),b@example.com,+41 44 000 00 00,1,other,admin\r\n\
         997,3,@SUM(A1),c@example.com,-555-0100,1,other,admin\r\n"
    );
    let reply = app.upload("/upload", &csv, None).await;
    reply.assert_status(201);
    assert_eq!(reply.json()["created"], 3);
    let page = app.get("/api/customers?sortBy=customerNumber").await.json();
    assert_eq!(page["content"][0]["name"], "Ada\r\nLovelace");
    assert_eq!(page["content"][0]["id"], 1, "the file's id column is ignored");
    assert_eq!(page["content"][1]["name"], "=HYPERLINK(\"x\")");
    assert_eq!((&page["content"][2]["name"], &page["content"][2]["phone"]), (&json!("@SUM(A1)"), &json!("-555-0100")));
    assert_eq!(total(&app, "").await, 3);
    let other = send(app.request(Method::GET, "/api/v2/customers").header("x-tenant-id", "other")).await;
    assert_eq!(other.json()["totalElements"], 0, "the file's tenant column is ignored");
}

async fn an_upload_over_the_limit_is_413_and_writes_nothing(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.max_upload_bytes = 64 * 1024).await;
    let big = rows(1, 4000);
    assert!(big.len() > 64 * 1024);
    let reply = app.upload("/upload", &big, None).await;
    reply.assert_status(413);
    assert_eq!(reply.json()["message"], "The body exceeds 65536 bytes");
    let (status, _) = crate::harness::raw::post_chunked_as(
        app.addr,
        "/upload",
        &app.admin,
        "multipart/form-data; boundary=tandem-test-boundary",
        &multipart(big.as_bytes(), None, "tandem-test-boundary").1,
    )
    .await;
    assert_eq!(status, 413);
    assert_eq!(total(&app, "").await, 0);
    app.upload("/upload", &rows(1, 100), None).await.assert_status(201);
}

async fn only_admins_import_and_read_reports(backend: Backend) {
    let app = backend.spawn().await;
    let id = app.upload("/upload", &rows(1, 1), None).await.json()["id"].as_str().unwrap().to_string();
    let (content_type, body) = multipart(rows(5, 1).as_bytes(), None, "b");
    for path in ["/upload", "/api/v2/customers/imports"] {
        let reply = send(
            app.client
                .post(app.url(path))
                .bearer_auth(&app.user)
                .header("content-type", &content_type)
                .body(body.clone()),
        )
        .await;
        reply.assert_status(403);
    }
    for path in [format!("/imports/{id}"), format!("/api/v2/customers/imports/{id}")] {
        send(app.client.get(app.url(&path)).bearer_auth(&app.user)).await.assert_status(403);
    }
    // Reading customers needs only a token.
    send(app.client.get(app.url("/api/v2/customers")).bearer_auth(&app.user)).await.assert_status(200);
    assert_eq!(total(&app, "").await, 1);
}

async fn a_retried_upload_with_a_new_boundary_replays(backend: Backend) {
    let app = backend.spawn().await;
    let key = format!("upload-{}", uuid::Uuid::new_v4());
    let csv = rows(1, 5);
    let post = |boundary: &str| {
        let (content_type, body) = multipart(csv.as_bytes(), None, boundary);
        app.request(Method::POST, "/upload")
            .header("idempotency-key", &key)
            .header("content-type", content_type)
            .body(body)
    };
    let first = send(post("browser-boundary-1")).await;
    first.assert_status(201);
    let again = send(post("browser-boundary-2")).await;
    assert_eq!((again.status, again.header("idempotent-replayed"), &again.text), (201, Some("true"), &first.text));
    assert_eq!(total(&app, "").await, 5);
    let (content_type, body) = multipart(rows(1, 6).as_bytes(), None, "b3");
    let other = send(
        app.request(Method::POST, "/upload")
            .header("idempotency-key", &key)
            .header("content-type", content_type)
            .body(body),
    )
    .await;
    other.assert_status(422);
}

/// The file is written batch by batch as it arrives: a duplicate's first row may be thousands
/// of rows (several batches) back, and `options` may come before the file.
async fn a_file_of_many_batches_finds_duplicates_across_them(backend: Backend) {
    let app = backend.spawn().await;
    app.upload("/upload", &rows(9000, 1), None).await.assert_status(201);
    let mut csv = rows(1, 5000);
    csv.push_str("0000001,Twin,twin@example.com,555-0001,1\n");
    csv.push_str("0009000,Stored,stored@example.com,555-9000,2\n");
    csv.push_str("0000002,Late twin,late@example.com,555-0002,3\n");
    let boundary = "options-first";
    let mut body =
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{{\"onError\":\"skip\"}}\r\n")
            .into_bytes();
    body.extend_from_slice(&multipart(csv.as_bytes(), None, boundary).1);
    let reply = send(
        app.request(Method::POST, "/api/v2/customers/imports")
            .header("content-type", format!("multipart/form-data; boundary={boundary}"))
            .body(body),
    )
    .await;
    reply.assert_status(201);
    let report = reply.json();
    assert_eq!((&report["received"], &report["created"], &report["skipped"]), (&json!(5003), &json!(5000), &json!(3)));
    assert_eq!(
        report["errors"],
        json!([
            {"line": 5002, "column": "customerNumber", "code": "duplicate", "message": "repeats the value of line 2"},
            {"line": 5003, "column": "customerNumber", "code": "exists", "message": "already exists"},
            {"line": 5004, "column": "customerNumber", "code": "duplicate", "message": "repeats the value of line 3"},
        ])
    );
    assert_eq!(total(&app, "").await, 5001);
    let branches =
        [total(&app, "branchCode=1").await, total(&app, "branchCode=2").await, total(&app, "branchCode=3").await];
    assert_eq!(branches, [1667, 1667, 1667], "each branch counter moved by what was written there");
}

/// A client that goes away halfway through its upload: the rows already written roll back,
/// and the import holds no connection or lock afterwards (the next import and write go through).
async fn a_client_gone_mid_upload_leaves_nothing_and_holds_nothing(backend: Backend) {
    let app = backend.spawn().await;
    let (content_type, body) = multipart(rows(1, 20_000).as_bytes(), None, "gone");
    let mut stream = raw_import(&app, &content_type, body.len()).await;
    stream.write_all(&body[..body.len() / 2]).await.unwrap();
    // Time for the server to write the batches it has.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(stream);
    tokio::time::sleep(Duration::from_millis(200)).await;

    assert_eq!(total(&app, "").await, 0);
    let next = app.upload("/api/v2/customers/imports", &rows(1, 3000), None).await;
    next.assert_status(201);
    assert_eq!(next.json()["created"], 3000, "no row of the abandoned import is left to collide with");
    app.create_user("Ada", "ada@example.com").await;
    assert_eq!(total(&app, "").await, 3000);
}

async fn a_row_past_the_record_limit_makes_the_file_unreadable(backend: Backend) {
    let app = backend.spawn().await;
    let mut csv = format!("{HEADER},notes\n1,A,a@example.com,555-0100,1,short\n");
    csv.push_str(&format!("2,B,b@example.com,555-0100,1,{}\n", "x".repeat(tandem::core::import::MAX_RECORD_BYTES)));
    let reply = app.upload("/upload", &csv, None).await;
    reply.assert_status(400);
    assert_eq!(reply.json()["errors"], json!([{"line": 3, "column": "", "code": "invalid", "message": "is invalid"}]));
    assert_eq!(total(&app, "").await, 0);
}

/// Another request writes a customer number while an import that holds it is still arriving.
/// PostgreSQL writes the import's batches at once, so the other request waits for the import
/// and finds the number taken; SQLite stages them (one writer: a slow upload must not hold the
/// lock), so the other request goes first and the import's commit is the conflict. Either way
/// the number is written once, and the loser writes nothing.
async fn a_number_written_during_an_import_is_taken_once(backend: Backend) {
    // A store bound of 8 s (the database's lock timeout 6 s): the other request must outwait
    // the import's last batches and commit even on a loaded machine (at 3 s it once timed out).
    let app = backend.spawn_with(|s| s.database.db_timeout_ms = 8000).await;
    let (content_type, body) = multipart(rows(1, 3000).as_bytes(), None, "slow");
    let mut slow = raw_import(&app, &content_type, body.len()).await;
    let first = body.len() * 3 / 4; // past the first batch of 2,000 rows
    slow.write_all(&body[..first]).await.unwrap();
    // Time for the first batch to be written (PostgreSQL) or staged (SQLite).
    tokio::time::sleep(Duration::from_secs(1)).await;

    let (other_type, other_body) = multipart(rows(5, 1).as_bytes(), None, "quick");
    let quick = app.request(Method::POST, "/api/v2/customers/imports").header("content-type", other_type);
    let mut quick = tokio::spawn(send(quick.body(other_body)));
    // On PostgreSQL it waits for the import's row, for less than the lock timeout (6 s).
    let wait = Duration::from_secs(if backend.is_postgres() { 1 } else { 10 });
    let quick_done_first = tokio::time::timeout(wait, &mut quick).await.ok().map(|r| r.unwrap());
    assert_eq!(quick_done_first.is_some(), !backend.is_postgres(), "only SQLite lets the other import go first");

    slow.write_all(&body[first..]).await.unwrap();
    let slow_status: u16 = answer(&mut slow).await[9..12].parse().unwrap();
    let quick = match quick_done_first {
        Some(reply) => reply,
        None => quick.await.unwrap(),
    };
    if backend.is_postgres() {
        assert_eq!((slow_status, quick.status), (201, 422));
        assert_eq!(quick.json()["errors"][0]["code"], "exists");
        assert_eq!(total(&app, "").await, 3000);
    } else {
        assert_eq!((slow_status, quick.status), (409, 201));
        assert_eq!(total(&app, "").await, 1);
        assert_eq!(total(&app, "branchCode=3").await, 1, "the counters hold the quick import alone");
    }
}

/// Two imports write their first batches, then each reaches numbers the other holds: PostgreSQL
/// finds the deadlock and aborts one. That one is told to retry (503 with `Retry-After`), not
/// that the service failed, and the other completes.
async fn two_imports_that_deadlock_answer_503_and_the_other_completes(backend: Backend) {
    let app = backend.spawn().await;
    // Each file: its own 2,000 rows (the first batch), then 10 of the other's, then 2,000 more.
    let file = |own: u64, theirs: u64, more: u64| {
        let mut csv = rows(own, 2000);
        csv.push_str(rows(theirs, 10).split_once('\n').unwrap().1);
        csv.push_str(rows(more, 2000).split_once('\n').unwrap().1);
        csv
    };
    let mut imports = Vec::new();
    for (own, theirs, more, boundary) in [(1, 3001, 6001, "a"), (3001, 1, 9001, "b")] {
        let (content_type, body) = multipart(file(own, theirs, more).as_bytes(), None, boundary);
        let mut stream = raw_import(&app, &content_type, body.len()).await;
        let first = body.len() * 55 / 100; // past the first batch, short of the second
        stream.write_all(&body[..first]).await.unwrap();
        imports.push((stream, body, first));
    }
    // Time for both first batches to be written: each import then holds its own numbers.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let answers = imports.into_iter().map(|(mut stream, body, first)| async move {
        stream.write_all(&body[first..]).await.unwrap();
        answer(&mut stream).await
    });
    let mut answers = futures_util::future::join_all(answers).await;
    answers.sort_by_key(|a| a[9..12].to_string());
    assert_eq!((&answers[0][9..12], &answers[1][9..12]), ("201", "503"), "{answers:?}");
    assert!(answers[1].to_ascii_lowercase().contains("retry-after: 5"), "{}", answers[1]);
    assert_eq!(total(&app, "").await, 4010, "the winner's rows alone");
}

/// An import holds a connection while its file arrives, so imports may hold at most half the
/// pool (PostgreSQL here: 2 connections, SQLite: 4). One more is told to retry, and every other
/// request is still served meanwhile.
async fn imports_hold_at_most_half_the_pool(backend: Backend) {
    let app = backend.spawn_with(|s| s.database.db_pool_size = 2).await;
    let slots = if backend.is_postgres() { 1 } else { 2 };
    let (content_type, body) = multipart(rows(1, 3000).as_bytes(), None, "held");
    let mut holding = Vec::new();
    for _ in 0..slots {
        let mut stream = raw_import(&app, &content_type, body.len()).await;
        stream.write_all(&body[..body.len() / 2]).await.unwrap();
        holding.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = app.upload("/api/v2/customers/imports", &rows(9001, 1), None).await;
    refused.assert_status(503);
    assert_eq!(refused.header("retry-after"), Some("5"));
    app.get("/api/v2/customers").await.assert_status(200);
    assert_eq!(app.create_user("Ada", "ada@example.com").await, 1);

    let mut first = holding.remove(0);
    first.write_all(&body[body.len() / 2..]).await.unwrap();
    assert!(answer(&mut first).await.starts_with("HTTP/1.1 201"));
    drop(holding);
    app.upload("/api/v2/customers/imports", &rows(9001, 1), None).await.assert_status(201);
    assert_eq!(total(&app, "").await, 3001, "the abandoned import wrote nothing");
}

/// The store is slow, not down: another transaction holds the customers table (PostgreSQL) or
/// the write lock (SQLite) while an import arrives. The import answers 503 within the
/// database's lock limit and leaves nothing behind: no rows, no open transaction, and the same
/// file imports whole once the lock is gone.
async fn an_import_behind_a_held_lock_is_503_and_leaves_nothing(backend: Backend) {
    let app = backend.spawn().await;
    let lock = crate::outage::WriteLock::on(&app.database_url, "customers").await;

    let started = std::time::Instant::now();
    let reply = app.upload("/api/v2/customers/imports", &rows(1, 3000), None).await;
    reply.assert_status(503);
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert!(started.elapsed() < Duration::from_secs(5), "answered within the lock limit");
    lock.release().await;

    assert_eq!(total(&app, "").await, 0);
    let again = app.upload("/api/v2/customers/imports", &rows(1, 3000), None).await;
    again.assert_status(201);
    assert_eq!(again.json()["created"], 3000);
}

/// A v2 import begun on a connection of its own, its head sent: the test sends the body.
async fn raw_import(app: &TestApp, content_type: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    let head = format!(
        "POST /api/v2/customers/imports HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n",
        app.admin
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// What the server answered on a raw connection, at least its status line and headers.
async fn answer(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the server answers");
        answer.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&answer).to_string()
}
