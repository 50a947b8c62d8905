//! The published contract: each version's served OpenAPI document is exactly the committed
//! `versions/v<N>/openapi.json`, so a change to a version's contract cannot slip through. After
//! a deliberate change: `cargo run -- export-openapi`, then review the diff.

use serde_json::Value;

use crate::harness::{Backend, send};

crate::scenarios![served_documents_match_the_committed_ones, every_problem_type_has_a_page];

async fn served_documents_match_the_committed_ones(backend: Backend) {
    let app = backend.spawn().await;
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
