//! Customers: v1 and v2 lists, exact totals from counters, deep pages, tenants. Imports are in
//! `imports.rs`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{Backend, TestApp, app::multipart, send};

crate::scenarios![
    v1_lists_sort_ascending_by_sort_by,
    v1_branch_list_needs_a_digit_branch_code,
    v2_lists_sort_filter_search_and_slice,
    envelope_arithmetic_on_every_customer_list,
    totals_follow_imports_skips_and_rejections,
    tenants_never_see_each_others_customers_or_reports,
    deep_offset_pages_match_a_keyset_walk,
];

pub const HEADER: &str = "customerNumber,name,email,phone,branchCode";

/// `n` valid rows numbered from `start`, spread over branches 1 to 3.
pub fn rows(start: u64, n: u64) -> String {
    let mut csv = format!("{HEADER}\n");
    for i in start..start + n {
        csv.push_str(&format!("{i:07},Customer {i},c{i}@example.com,555-{i:04},{}\n", i % 3 + 1));
    }
    csv
}

pub fn numbers(page: &Value) -> Vec<String> {
    page["content"].as_array().unwrap().iter().map(|c| c["customerNumber"].as_str().unwrap().to_string()).collect()
}

pub async fn total(app: &TestApp, query: &str) -> u64 {
    app.get(&format!("/api/v2/customers?{query}")).await.json()["totalElements"].as_u64().unwrap()
}

async fn v1_lists_sort_ascending_by_sort_by(backend: Backend) {
    let app = backend.spawn().await;
    let csv = format!(
        "{HEADER}\n3,Cy,c@example.com,555-0003,1\n1,Bo,b@example.com,555-0001,2\n2,Bo,a@example.com,555-0002,1\n"
    );
    app.upload("/upload", &csv, None).await.assert_status(201);
    let by_id = app.get("/api/customers").await.json();
    assert_eq!(numbers(&by_id), ["3", "1", "2"]);
    assert_eq!(by_id["sort"], json!([{"property": "id", "direction": "ASC"}]));
    assert_eq!(numbers(&app.get("/api/customers?sortBy=name").await.json()), ["1", "2", "3"], "ties by id");
    assert_eq!(numbers(&app.get("/api/v1/customers?sortBy=email").await.json()), ["2", "1", "3"]);
    assert_eq!(numbers(&app.get("/api/customers?sortBy=customerNumber").await.json()), ["1", "2", "3"]);
    let bad = app.get("/api/customers?sortBy=secret").await;
    bad.assert_status(400);
    assert_eq!(bad.error_codes(), vec![("sortBy".into(), "one_of".into())]);
    assert_eq!(
        bad.json()["errors"][0]["message"],
        "must be one of: id, customerNumber, name, email, phone, branchCode, createdDate"
    );
}

async fn v1_branch_list_needs_a_digit_branch_code(backend: Backend) {
    let app = backend.spawn().await;
    app.upload("/upload", &rows(1, 7), None).await.assert_status(201);
    let branch = app.get("/api/customers/branch/?branchCode=2&size=2").await;
    branch.assert_status(200);
    let body = branch.json();
    assert_eq!(numbers(&body), ["0000001", "0000004"]);
    assert_eq!((&body["totalElements"], &body["totalPages"]), (&json!(3), &json!(2)));
    app.get("/api/v1/customers/branch/?branchCode=2").await.assert_status(200);
    for (query, code) in [("", "required"), ("?branchCode=", "required"), ("?branchCode=a1", "digits")] {
        let reply = app.get(&format!("/api/customers/branch/{query}")).await;
        reply.assert_status(400);
        assert_eq!(reply.error_codes(), vec![("branchCode".into(), code.into())], "{query}");
    }
    assert_eq!(app.get("/api/customers/branch/?branchCode=9").await.json()["totalElements"], 0);
}

async fn v2_lists_sort_filter_search_and_slice(backend: Backend) {
    let app = backend.spawn().await;
    app.upload("/api/v2/customers/imports", &rows(1, 9), None).await.assert_status(201);
    let desc = app.get("/api/v2/customers?sort=branchCode,desc&sort=customerNumber,desc&size=4").await.json();
    assert_eq!(numbers(&desc), ["0000008", "0000005", "0000002", "0000007"]);
    let branch = app.get("/api/v2/customers?branchCode=1&sort=name,asc").await.json();
    assert_eq!(numbers(&branch), ["0000003", "0000006", "0000009"]);
    assert_eq!(branch["totalElements"], 3);
    let keyword = app.get("/api/v2/customers?keyword=C7%40EXAMPLE").await.json();
    assert_eq!(numbers(&keyword), ["0000007"]);
    assert_eq!(keyword["totalElements"], 1);
    let by_number = app.get("/api/v2/customers?keyword=00005").await.json();
    assert_eq!(numbers(&by_number), ["0000005"]);
    assert_eq!(
        app.get("/api/v2/customers?branchCode=x").await.error_codes(),
        vec![("branchCode".into(), "digits".into())]
    );

    // A keyset walk over a filtered, sorted list visits each record once.
    let mut seen = Vec::new();
    let mut url = "/api/v2/customers?count=false&size=2&branchCode=2&sort=email,desc".to_string();
    loop {
        let slice = app.get(&url).await.json();
        assert!(slice.get("totalElements").is_none());
        seen.extend(numbers(&slice));
        match slice["nextCursor"].as_str() {
            Some(cursor) => url = format!("/api/v2/customers?size=2&branchCode=2&sort=email,desc&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, ["0000007", "0000004", "0000001"]);
}

async fn envelope_arithmetic_on_every_customer_list(backend: Backend) {
    let app = backend.spawn().await;
    app.upload("/upload", &rows(1, 7), None).await.assert_status(201);
    // (path, number, numberOfElements, first, last, empty, totalElements, totalPages)
    let cases = [
        ("/api/customers?size=3", 0, 3, true, false, false, 7, 3),
        ("/api/customers?size=3&page=1", 1, 3, false, false, false, 7, 3),
        ("/api/customers?size=3&page=2", 2, 1, false, true, false, 7, 3),
        ("/api/customers?size=3&page=3", 3, 0, false, true, true, 7, 3),
        ("/api/customers/branch/?branchCode=2&size=2&page=1", 1, 1, false, true, false, 3, 2),
        ("/api/v2/customers?size=5&page=1", 1, 2, false, true, false, 7, 2),
        ("/api/v2/customers?size=5&page=4&branchCode=3", 4, 0, false, true, true, 2, 1),
    ];
    for (path, number, elements, first, last, empty, total, pages) in cases {
        let page = app.get(path).await.json();
        let got = (
            &page["number"],
            &page["numberOfElements"],
            &page["first"],
            &page["last"],
            &page["empty"],
            &page["totalElements"],
            &page["totalPages"],
        );
        let want = (
            &json!(number),
            &json!(elements),
            &json!(first),
            &json!(last),
            &json!(empty),
            &json!(total),
            &json!(pages),
        );
        assert_eq!(got, want, "{path}");
        assert_eq!(page["pageable"]["offset"], json!(number * page["size"].as_u64().unwrap()), "{path}");
    }
}

async fn totals_follow_imports_skips_and_rejections(backend: Backend) {
    let app = backend.spawn().await;
    assert_eq!(total(&app, "").await, 0);
    app.upload("/upload", &rows(1, 6), None).await.assert_status(201);
    assert_eq!(
        (total(&app, "").await, total(&app, "branchCode=1").await, total(&app, "branchCode=2").await),
        (6, 2, 2)
    );
    // A rejected import changes nothing.
    let bad = format!("{}0000099,X,bad,555-0000,1\n", rows(20, 3));
    app.upload("/upload", &bad, None).await.assert_status(422);
    assert_eq!(total(&app, "").await, 6);
    // A skipping import counts only what it wrote.
    app.upload("/upload", &bad, Some(r#"{"onError": "skip"}"#)).await.assert_status(201);
    assert_eq!((total(&app, "").await, total(&app, "branchCode=3").await), (9, 3));
    assert_eq!(total(&app, "keyword=customer 2").await, 4, "Customer 2 and 20..22");
}

async fn tenants_never_see_each_others_customers_or_reports(backend: Backend) {
    let app = backend.spawn().await;
    let (content_type, body) = multipart(rows(1, 2).as_bytes(), None, "b");
    let created = send(
        app.request(Method::POST, "/upload")
            .header("x-tenant-id", "acme")
            .header("content-type", content_type)
            .body(body),
    )
    .await;
    created.assert_status(201);
    let id = created.json()["id"].as_str().unwrap().to_string();
    app.get(&format!("/imports/{id}")).await.assert_status(404);
    app.get("/api/v2/customers/1").await.assert_status(404);
    assert_eq!(app.get("/api/customers").await.json()["totalElements"], 0);
    let theirs = send(app.request(Method::GET, "/api/customers").header("x-tenant-id", "acme")).await;
    assert_eq!(theirs.json()["totalElements"], 2);
    // The same customer numbers are free in another tenant.
    app.upload("/upload", &rows(1, 2), None).await.assert_status(201);
}

/// Offset pages past 1000 pick ids first, and past half the total read from the far end: each
/// must still be exactly its slice of the whole order.
async fn deep_offset_pages_match_a_keyset_walk(backend: Backend) {
    let app = backend.spawn_with(|s| s.http.max_upload_bytes = 1 << 20).await;
    app.upload("/upload", &rows(1, 2500), None).await.assert_status(201);
    for (v1_sort, v2_sort) in [("id", "id,asc"), ("name", "name,asc"), ("branchCode", "branchCode,asc")] {
        let mut walked = Vec::new();
        let mut url = format!("/api/v2/customers?count=false&size=100&sort={v2_sort}");
        loop {
            let slice = app.get(&url).await.json();
            walked.extend(numbers(&slice));
            match slice["nextCursor"].as_str() {
                Some(cursor) => url = format!("/api/v2/customers?size=100&sort={v2_sort}&cursor={cursor}"),
                None => break,
            }
        }
        assert_eq!(walked.len(), 2500);
        let mut paged = Vec::new();
        for page in 0..26 {
            let body = app.get(&format!("/api/customers?sortBy={v1_sort}&size=100&page={page}")).await.json();
            assert_eq!(body["last"], json!(page >= 24), "{v1_sort} page {page}");
            paged.extend(numbers(&body));
        }
        assert_eq!(paged, walked, "sortBy={v1_sort}");
    }
    let mut by_branch = Vec::new();
    for page in 0..10 {
        by_branch.extend(numbers(
            &app.get(&format!("/api/customers/branch/?branchCode=2&size=100&page={page}")).await.json(),
        ));
    }
    let expected: Vec<String> = (1..=2500u64).filter(|i| i % 3 + 1 == 2).map(|i| format!("{i:07}")).collect();
    assert_eq!(by_branch, expected);
}
