//! v2 lists: the page envelope, sorting, filters, and keyset slices that visit every record
//! exactly once.

use serde_json::{Value, json};

use crate::harness::{Backend, TestApp};

crate::scenarios![
    the_envelope_on_first_middle_last_and_empty_pages,
    every_sort_field_in_both_directions_with_ties,
    sort_keys_apply_in_order,
    bad_list_parameters_are_400_naming_what_is_allowed,
    keyword_and_email_filter,
    slices_walk_every_record_once_for_every_sort,
    a_cursor_is_bound_to_its_query,
];

/// Six users with repeated names and ages (and one null age, from v1).
async fn seed(app: &TestApp) {
    for (name, email, age) in [
        ("Bo", "bo1@example.com", 30),
        ("ada", "ada@example.com", 41),
        ("Bo", "bo2@example.com", 30),
        ("Cy", "cy@example.com", 25),
        ("Bo", "bo3@example.com", 52),
    ] {
        app.create_user_v2(name, email, age).await;
    }
    let reply = app.post_json("/users", &json!({"name": "Di", "email": "DI@example.com"})).await;
    reply.assert_status(201);
}

fn names(page: &Value) -> Vec<String> {
    page["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| format!("{}:{}", u["name"].as_str().unwrap(), u["email"].as_str().unwrap()))
        .collect()
}

fn emails(page: &Value) -> Vec<String> {
    page["content"].as_array().unwrap().iter().map(|u| u["email"].as_str().unwrap().to_string()).collect()
}

async fn the_envelope_on_first_middle_last_and_empty_pages(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;

    let first = app.get("/api/v2/users?size=4").await.json();
    let content = first["content"].clone();
    assert_eq!(content.as_array().unwrap().len(), 4);
    let mut expected = json!({
        "content": content,
        "pageable": {"pageNumber": 0, "pageSize": 4, "sort": [], "offset": 0, "paged": true, "unpaged": false},
        "totalElements": 6, "totalPages": 2, "size": 4, "number": 0, "numberOfElements": 4,
        "first": true, "last": false, "sort": [], "empty": false,
    });
    assert_eq!(first, expected);

    let middle = app.get("/api/v2/users?size=2&page=1&sort=email,asc").await.json();
    assert_eq!(emails(&middle), ["bo2@example.com", "bo3@example.com"]);
    let order = json!([{"property": "email", "direction": "ASC"}]);
    assert_eq!(
        middle["pageable"],
        json!({"pageNumber": 1, "pageSize": 2, "sort": order, "offset": 2, "paged": true, "unpaged": false})
    );
    assert_eq!(
        (&middle["first"], &middle["last"], &middle["totalPages"], &middle["sort"]),
        (&json!(false), &json!(false), &json!(3), &order)
    );

    let last = app.get("/api/v2/users?size=4&page=1").await.json();
    assert_eq!(
        (&last["numberOfElements"], &last["first"], &last["last"], &last["empty"]),
        (&json!(2), &json!(false), &json!(true), &json!(false))
    );

    let empty = app.get("/api/v2/users?size=4&page=5").await.json();
    expected = json!({
        "content": [],
        "pageable": {"pageNumber": 5, "pageSize": 4, "sort": [], "offset": 20, "paged": true, "unpaged": false},
        "totalElements": 6, "totalPages": 2, "size": 4, "number": 5, "numberOfElements": 0,
        "first": false, "last": true, "sort": [], "empty": true,
    });
    assert_eq!(empty, expected);
}

async fn every_sort_field_in_both_directions_with_ties(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;
    let all = app.get("/api/v2/users?size=100&sort=id,asc").await.json();
    let users: Vec<Value> = all["content"].as_array().unwrap().clone();
    let id_rank = |u: &Value| users.iter().position(|x| x["id"] == u["id"]).unwrap();

    for field in ["id", "name", "email", "age", "createdAt", "updatedAt"] {
        for direction in ["asc", "desc"] {
            let page = app.get(&format!("/api/v2/users?size=100&sort={field},{direction}")).await.json();
            let got: Vec<Value> = page["content"].as_array().unwrap().clone();
            let mut expected = users.clone();
            expected.sort_by(|a, b| {
                let key = |u: &Value| match field {
                    "email" => json!(u["email"].as_str().unwrap().to_lowercase()),
                    "id" => json!(id_rank(u)),
                    _ => u[field].clone(),
                };
                let (ka, kb) = (key(a), key(b));
                // Nulls last in both directions; then the requested direction; then id ascending.
                let ordering = match (ka.is_null(), kb.is_null()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ => {
                        let o = compare(&ka, &kb);
                        if direction == "desc" { o.reverse() } else { o }
                    }
                };
                ordering.then(id_rank(a).cmp(&id_rank(b)))
            });
            assert_eq!(got, expected, "sort={field},{direction}");
        }
    }
}

fn compare(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64().unwrap().partial_cmp(&y.as_f64().unwrap()).unwrap(),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => panic!("incomparable {a} {b}"),
    }
}

async fn sort_keys_apply_in_order(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;
    let page = app.get("/api/v2/users?size=100&sort=name,desc&sort=age,desc").await.json();
    assert_eq!(
        names(&page),
        [
            "ada:ada@example.com",
            "Di:DI@example.com",
            "Cy:cy@example.com",
            "Bo:bo3@example.com",
            "Bo:bo1@example.com",
            "Bo:bo2@example.com"
        ]
    );
    assert_eq!(
        page["sort"],
        json!([{"property": "name", "direction": "DESC"}, {"property": "age", "direction": "DESC"}])
    );
    // Byte order: upper case sorts before lower case on both stores.
    let by_name = app.get("/api/v2/users?size=100&sort=name").await.json();
    assert_eq!(names(&by_name)[5], "ada:ada@example.com");
}

async fn bad_list_parameters_are_400_naming_what_is_allowed(backend: Backend) {
    let app = backend.spawn().await;
    let reply = app.get("/api/v2/users?sort=password,asc").await;
    reply.assert_status(400);
    assert_eq!(reply.json()["errors"][0]["message"], "must be one of: id, name, email, age, createdAt, updatedAt");
    assert_eq!(reply.error_codes(), vec![("sort".into(), "one_of".into())]);
    let direction = app.get("/api/v2/users?sort=name,sideways").await;
    assert_eq!(direction.json()["errors"][0]["message"], "must be one of: asc, desc");
    assert_eq!(app.get("/api/v2/users?size=500").await.error_codes(), vec![("size".into(), "max".into())]);
    assert_eq!(app.get("/api/v2/users?count=maybe").await.status, 400);
    let long = format!("/api/v2/users?keyword={}", "k".repeat(201));
    assert_eq!(app.get(&long).await.error_codes(), vec![("keyword".into(), "too_long".into())]);
}

async fn keyword_and_email_filter(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;
    let bo = app.get("/api/v2/users?keyword=BO&sort=email").await.json();
    assert_eq!(emails(&bo), ["bo1@example.com", "bo2@example.com", "bo3@example.com"]);
    assert_eq!(bo["totalElements"], 3);
    let by_mail = app.get("/api/v2/users?keyword=ada%40").await.json();
    assert_eq!(emails(&by_mail), ["ada@example.com"]);
    let exact = app.get("/api/v2/users?email=di@EXAMPLE.com").await.json();
    assert_eq!(emails(&exact), ["DI@example.com"]);
    let wildcard = app.get("/api/v2/users?keyword=%25").await.json();
    assert_eq!(wildcard["totalElements"], 0, "% is matched literally");
    let both = app.get("/api/v2/users?keyword=bo&email=cy@example.com").await.json();
    assert_eq!(both["totalElements"], 0);
}

/// Follows `nextCursor` from the first slice to the last; returns every id seen.
async fn walk(app: &TestApp, query: &str, size: u32) -> Vec<String> {
    let mut seen = Vec::new();
    let mut url = format!("/api/v2/users?count=false&size={size}&{query}");
    for _ in 0..100 {
        let slice = app.get(&url).await;
        slice.assert_status(200);
        let body = slice.json();
        assert!(body.get("totalElements").is_none() && body.get("totalPages").is_none(), "{body}");
        assert_eq!(body["pageable"]["offset"], json!(seen.len()), "{query}");
        seen.extend(body["content"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap().to_string()));
        match body["nextCursor"].as_str() {
            Some(cursor) => {
                assert_eq!(body["last"], false);
                url = format!("/api/v2/users?size={size}&{query}&cursor={cursor}");
            }
            None => {
                assert!(body["nextCursor"].is_null(), "the last slice says null: {body}");
                assert_eq!(body["last"], true);
                return seen;
            }
        }
    }
    panic!("the walk did not end");
}

async fn slices_walk_every_record_once_for_every_sort(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;
    for sort in [
        "",
        "sort=name,asc",
        "sort=name,desc",
        "sort=age,asc",
        "sort=age,desc",
        "sort=email,desc",
        "sort=createdAt,desc",
        "sort=updatedAt,asc",
        "sort=name,desc&sort=age,asc",
        "keyword=bo&sort=age,asc",
    ] {
        let offset = app.get(&format!("/api/v2/users?size=100&{sort}")).await.json();
        let expected: Vec<String> =
            offset["content"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap().to_string()).collect();
        for size in [1, 2, 4] {
            assert_eq!(walk(&app, sort, size).await, expected, "{sort} size={size}");
        }
    }
}

async fn a_cursor_is_bound_to_its_query(backend: Backend) {
    let app = backend.spawn().await;
    seed(&app).await;
    let first = app.get("/api/v2/users?count=false&size=2&sort=name,asc").await.json();
    let cursor = first["nextCursor"].as_str().unwrap();

    let other_sort = app.get(&format!("/api/v2/users?size=2&sort=name,desc&cursor={cursor}")).await;
    other_sort.assert_status(400);
    assert_eq!(other_sort.error_codes(), vec![("cursor".into(), "cursor_mismatch".into())]);
    let other_filter = app.get(&format!("/api/v2/users?size=2&sort=name,asc&keyword=bo&cursor={cursor}")).await;
    assert_eq!(other_filter.error_codes(), vec![("cursor".into(), "cursor_mismatch".into())]);
    let with_page = app.get(&format!("/api/v2/users?page=1&sort=name,asc&cursor={cursor}")).await;
    assert_eq!(with_page.error_codes(), vec![("page".into(), "not_with_cursor".into())]);
    // The documented default `page=0`, as clients generated to send every default send it, reads
    // the same slice as the cursor alone.
    let alone = app.get(&format!("/api/v2/users?count=false&size=2&sort=name,asc&cursor={cursor}")).await;
    let with_default = app.get(&format!("/api/v2/users?count=false&page=0&size=2&sort=name,asc&cursor={cursor}")).await;
    with_default.assert_status(200);
    assert_eq!(with_default.json(), alone.json());
    let garbage = app.get("/api/v2/users?cursor=not-a-cursor").await;
    assert_eq!(garbage.error_codes(), vec![("cursor".into(), "invalid".into())]);
    // The same query with another size is fine.
    app.get(&format!("/api/v2/users?size=3&sort=name,asc&cursor={cursor}")).await.assert_status(200);
}
