//! The published contract: each version's served OpenAPI document is exactly the committed
//! `versions/v<N>/openapi.json`, so a change to a version's contract cannot slip through. After
//! a deliberate change: `cargo run -- export-openapi`, then review the diff.

use serde_json::Value;

use crate::harness::{Backend, send};

crate::scenarios![
    served_documents_match_the_committed_ones,
    the_committed_change_records_are_derived_from_the_code,
    every_problem_type_has_a_page,
    optional_sort_and_a_null_next_cursor_are_documented_as_served
];

async fn served_documents_match_the_committed_ones(backend: Backend) {
    // Notices may go to loopback, so the walk below can set the endpoints it then reads.
    let app = backend.spawn_with(|s| s.notices.notices_allow_hosts = Some("127.0.0.1".into())).await;
    for (number, exported) in tandem::app::documents() {
        let path = format!("{}/versions/v{number}/openapi.json", env!("CARGO_MANIFEST_DIR"));
        let committed: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("committed document"))
            .expect("committed document is JSON");
        let exported: Value = serde_json::from_str(&exported).unwrap();
        assert!(
            exported == committed,
            "versions/v{number}/openapi.json is out of date: run `cargo run -- export-openapi` and review the diff"
        );
        let served = send(app.client.get(app.url(&format!("/api/v{number}/openapi.json")))).await;
        served.assert_status(200);
        assert_eq!(served.json(), committed, "the served v{number} document differs from the committed one");
    }
    // The routes outside the versions: every one the router has is described, and only those.
    let path = format!("{}/versions/operations/openapi.json", env!("CARGO_MANIFEST_DIR"));
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("committed document")).unwrap();
    let served = send(app.client.get(app.url("/api/operations/openapi.json"))).await;
    served.assert_status(200);
    assert_eq!(served.json(), committed, "versions/operations/openapi.json is out of date: run export-openapi");
    for (path, operations) in committed["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            // Each described operation is routed: answered by anything but 404 or 405.
            let path = path
                .replace("{slug}", "not-found")
                .replace("{tenant}", "acme")
                .replace("{id}", "x")
                .replace("{subject}", "x")
                .replace("{module}", "app.js")
                .replace("{version}", "1");
            if ["/api/migration/notices", "/admin/tenants/acme/notices"].contains(&path.as_str()) {
                // A notices endpoint answers 404 until one is set: set it before each call.
                let endpoint = serde_json::json!({"url": "http://127.0.0.1:9/hook"});
                send(app.request(reqwest::Method::PUT, &path).json(&endpoint)).await.assert_status(200);
            }
            // An element's readiness is 404 for an id no version declares (this service declares
            // none): a bad window, checked first, shows that it is routed.
            let path = match path.as_str() {
                "/admin/deprecations/x/readiness" => format!("{path}?window=0"),
                // As is one client's guide for a client never seen: a bad format, checked first.
                "/admin/clients/acme/x/guide" => format!("{path}?format=x"),
                _ => path,
            };
            let reply = send(app.request(method.to_uppercase().parse().unwrap(), &path)).await;
            assert!(![404, 405].contains(&reply.status), "{method} {path}: {}", reply.status);
        }
    }
}

/// Each version's catalogue of changes and the table in the older version's CHANGELOG are written
/// by `export-openapi` from the changes declared in code, never by hand.
async fn the_committed_change_records_are_derived_from_the_code(backend: Backend) {
    let app = backend.spawn().await;
    let records = tandem::app::change_records().unwrap();
    assert_eq!(
        records.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>(),
        ["v2/changes.json", "v1/CHANGELOG.md"]
    );
    for (name, derived) in records {
        let committed = std::fs::read_to_string(format!("{}/versions/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(committed == derived, "versions/{name} is out of date: run `cargo run -- export-openapi`");
    }
    let served = send(app.client.get(app.url("/api/v2/changes"))).await;
    let committed =
        std::fs::read_to_string(format!("{}/versions/v2/changes.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(served.text, committed);
}

async fn every_problem_type_has_a_page(backend: Backend) {
    let app = backend.spawn().await;
    for kind in tandem::wire::error::Kind::ALL {
        let page = send(app.client.get(app.url(&format!("/problems/{}", kind.slug())))).await;
        page.assert_status(200);
        assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
        assert!(page.text.contains(kind.title(tandem::wire::error::i18n::Lang::En)), "{}", kind.slug());
    }
    send(app.client.get(app.url("/problems/no-such-problem"))).await.assert_status(404);
}

/// What a generated client reads from v2's document: `sort` may be left out, and the last slice's
/// `nextCursor` is null. Both as the service answers them.
async fn optional_sort_and_a_null_next_cursor_are_documented_as_served(backend: Backend) {
    let app = backend.spawn().await;
    let v2: Value = send(app.client.get(app.url("/api/v2/openapi.json"))).await.json();
    for path in ["/users", "/customers"] {
        let parameters = v2["paths"][path]["get"]["parameters"].as_array().unwrap();
        let sort = parameters.iter().find(|p| p["name"] == "sort").unwrap();
        assert_eq!(sort["required"], false, "{path}");
    }
    for page in ["Page_User", "Page_Customer"] {
        assert_eq!(v2["components"]["schemas"][page]["properties"]["nextCursor"]["nullable"], true, "{page}");
    }
    app.create_user_v2("Ada", "ada@example.com", 36).await;
    let slice = app.get("/api/v2/users?count=false").await;
    slice.assert_status(200);
    assert!(slice.json().as_object().unwrap().contains_key("nextCursor"));
    assert_eq!(slice.json()["nextCursor"], Value::Null);
}
