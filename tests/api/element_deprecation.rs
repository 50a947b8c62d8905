//! Deprecation below the version (the book's operators/elements.md): elements of a live version
//! declared deprecated are announced in the version's document, its catalogue and its page.

use serde_json::{Value, json};

use reqwest::Method;

use crate::harness::{
    Backend, TestApp,
    app::{FixedClock, test_settings},
    binary, send,
    tokens::{self, now},
};

crate::scenarios![
    declared_elements_are_announced_in_the_document_and_the_catalogue,
    only_requests_that_use_an_element_are_told,
    the_clients_that_use_an_element_are_counted_once_and_shown_it,
    a_removed_element_is_refused_with_its_replacement_and_nothing_is_written,
    an_elements_readiness_names_who_blocks_and_gates_a_pipeline,
    a_brownout_aimed_at_an_element_refuses_only_its_clients_use_of_it;
    in a browser:
    the_dashboard_lists_each_element_with_its_clients_and_verdict,
];

fn declare(settings: &mut tandem::settings::Settings) {
    let entry = |id: &str, operation: &str| tandem::settings::DeprecationSettings {
        id: id.into(),
        operation: operation.into(),
        deprecated_at: "2026-06-01T00:00:00Z".into(),
        replacement: "the cursor parameter".into(),
        instruction: "Page with the cursor each answer gives <nextCursor>.".into(),
        ..Default::default()
    };
    settings.lifecycle_mut(2).deprecations.0 = vec![
        tandem::settings::DeprecationSettings {
            parameter: Some("page".into()),
            sunset_at: Some("2027-03-01T00:00:00Z".into()),
            link: Some("https://example.com/paging".into()),
            ..entry("offset-paging", "GET /api/v2/users")
        },
        tandem::settings::DeprecationSettings {
            field: Some("/age".into()),
            deprecated_at: "2027-01-01T00:00:00Z".into(),
            ..entry("age-input", "POST /api/v2/users")
        },
    ];
}

async fn declared_elements_are_announced_in_the_document_and_the_catalogue(backend: Backend) {
    let clock = FixedClock::at("2026-12-01T00:00:00Z");
    let app = backend.spawn_at(declare, clock.clock()).await;
    let listed = app.get("/api/v2/deprecations").await;
    listed.assert_status(200);
    let paging = json!({
        "id": "offset-paging", "operation": "GET /api/v2/users",
        "element": {"kind": "parameter", "name": "page"},
        "deprecatedAt": "2026-06-01T00:00:00Z", "sunsetAt": "2027-03-01T00:00:00Z",
        "replacement": "the cursor parameter",
        "instruction": "Page with the cursor each answer gives <nextCursor>.",
        "link": "https://example.com/paging", "state": "deprecated"
    });
    let age = json!({
        "id": "age-input", "operation": "POST /api/v2/users",
        "element": {"kind": "field", "name": "/age"},
        "deprecatedAt": "2027-01-01T00:00:00Z", "sunsetAt": null,
        "replacement": "the cursor parameter",
        "instruction": "Page with the cursor each answer gives <nextCursor>.",
        "link": null, "state": "announced"
    });
    assert_eq!(listed.json(), json!({"deprecations": [paging, age]}));
    let one = app.get("/api/v2/deprecations/offset-paging").await;
    one.assert_status(200);
    assert_eq!(one.json(), paging);
    let unknown = app.get("/api/v2/deprecations/nothing-such").await;
    unknown.assert_status(404);
    assert_eq!(
        unknown.json()["type"].as_str().map(|t| t.ends_with("/problems/not-found")),
        Some(true),
        "{}",
        unknown.text
    );
    // Another version declares none: its catalogue is empty, and its ids are not v2's.
    assert_eq!(app.get("/api/v1/deprecations").await.json(), json!({"deprecations": []}));
    app.get("/api/v1/deprecations/offset-paging").await.assert_status(404);

    // After the sunset the element is removed; before its deprecation it is announced.
    clock.set("2027-03-01T00:00:00Z");
    assert_eq!(app.get("/api/v2/deprecations/offset-paging").await.json()["state"], "removed");
    assert_eq!(app.get("/api/v2/deprecations/age-input").await.json()["state"], "deprecated");

    // The page the Link header will point to: one section per element, text escaped.
    let page = app.get("/docs/v2/deprecations").await;
    page.assert_status(200);
    assert!(page.header("content-type").is_some_and(|c| c.starts_with("text/html")), "{page:?}");
    assert!(page.text.contains("<section id=\"offset-paging\">"), "{}", page.text);
    assert!(page.text.contains("&lt;nextCursor&gt;") && !page.text.contains("<nextCursor>"), "{}", page.text);
    // v1's release notes (the page its Link points to) list what its successor deprecates.
    let notes = app.get("/docs/v1/deprecation").await.text;
    let line = "<li>2026-06-01T00:00:00Z: version 2 deprecates parameter <code>page</code> of \
                <code>GET /api/v2/users</code> (removed at 2027-03-01T00:00:00Z); use instead: the cursor \
                parameter. <a href=\"/docs/v2/deprecations#offset-paging\">offset-paging</a></li>";
    assert!(notes.contains(line), "{notes}");
    assert!(notes.contains("#age-input\">age-input</a></li></ul>"), "{notes}");

    // The document marks exactly the declared elements.
    let document: Value = app.get("/api/v2/openapi.json").await.json();
    let parameters = document["paths"]["/users"]["get"]["parameters"].as_array().unwrap();
    let marked: Vec<&str> =
        parameters.iter().filter(|p| p["deprecated"] == true).map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(marked, ["page"]);
    let page_parameter = parameters.iter().find(|p| p["name"] == "page").unwrap();
    assert_eq!(
        page_parameter["x-deprecation"],
        json!({"id": "offset-paging", "deprecatedAt": "2026-06-01T00:00:00Z", "sunsetAt": "2027-03-01T00:00:00Z"})
    );
    assert!(document["paths"]["/users"]["get"].get("deprecated").is_none(), "the operation itself is not");
    let age_property = &document["components"]["schemas"]["UserInput"]["properties"]["age"];
    assert_eq!(age_property["deprecated"], true);
    assert_eq!(age_property["x-deprecation"]["id"], "age-input");
    // v1's document, which declares nothing, is the committed one.
    let v1 = app.get("/api/v1/openapi.json").await.text;
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/versions/v1/openapi.json")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&v1).unwrap(), serde_json::from_str::<Value>(&committed).unwrap());
}

fn declare_used(settings: &mut tandem::settings::Settings) {
    declare(settings);
    let entry = |id: &str, operation: &str| tandem::settings::DeprecationSettings {
        id: id.into(),
        operation: operation.into(),
        deprecated_at: "2026-06-01T00:00:00Z".into(),
        replacement: "r".into(),
        instruction: "i".into(),
        ..Default::default()
    };
    settings.lifecycle_mut(2).deprecations.0.push(tandem::settings::DeprecationSettings {
        field: Some("/age".into()),
        ..entry("age-patch", "PATCH /api/v2/users/{id}")
    });
    // v1, deprecated itself, with an element whose sunset comes first.
    settings.lifecycle_mut(1).deprecated_at = Some("2026-09-01T00:00:00Z".into());
    settings.lifecycle_mut(1).sunset_at = Some("2027-06-01T00:00:00Z".into());
    settings.lifecycle_mut(1).deprecations.0 = vec![tandem::settings::DeprecationSettings {
        parameter: Some("page".into()),
        sunset_at: Some("2027-04-01T00:00:00Z".into()),
        ..entry("v1-paging", "GET /api/v1/users")
    }];
}

const PAGING_LINK: &str = "</docs/v2/deprecations#offset-paging>; rel=\"deprecation\"; type=\"text/html\"";

fn told(reply: &crate::harness::Reply) -> [Option<&str>; 3] {
    [reply.header("deprecation"), reply.header("sunset"), reply.header("link")]
}

async fn only_requests_that_use_an_element_are_told(backend: Backend) {
    let clock = FixedClock::at("2027-02-01T00:00:00Z");
    let app = backend.spawn_at(declare_used, clock.clock()).await;
    let id = app.create_user("Ada", "ada@example.com").await;
    let uuid = app.get(&format!("/api/v2/users/{id}")).await.json()["id"].as_str().unwrap().to_string();

    // A deprecated parameter, present with or without a value, is told; its absence is not.
    // (`page` without a value is refused, as before; its answer still tells.)
    for (query, status) in [("page=0", 200), ("page", 400), ("size=5&page=1", 200)] {
        let reply = app.get(&format!("/api/v2/users?{query}")).await;
        reply.assert_status(status);
        assert_eq!(
            told(&reply),
            [Some("@1780272000"), Some("Mon, 01 Mar 2027 00:00:00 GMT"), Some(PAGING_LINK)],
            "{query}"
        );
    }
    for path in ["/api/v2/users?size=5", "/api/v2/users?pages=1", "/api/v2/users"] {
        let reply = app.get(path).await;
        reply.assert_status(200);
        assert_eq!(told(&reply), [None, None, None], "{path}");
    }
    // A deprecated body field, `null` included, by merge patch and by JSON Patch.
    let patch = |content_type: &'static str, body: &'static str| {
        let app = &app;
        let uuid = uuid.clone();
        async move {
            let etag = app.get(&format!("/api/v2/users/{uuid}")).await.header("etag").unwrap().to_string();
            send(
                app.request(Method::PATCH, &format!("/api/v2/users/{uuid}"))
                    .header("content-type", content_type)
                    .header("if-match", etag)
                    .body(body),
            )
            .await
        }
    };
    let age_link = Some("</docs/v2/deprecations#age-patch>; rel=\"deprecation\"; type=\"text/html\"");
    for (content_type, body) in [
        ("application/merge-patch+json", r#"{"age": 41}"#),
        ("application/merge-patch+json", r#"{"age": null}"#),
        ("application/json-patch+json", r#"[{"op": "replace", "path": "/age", "value": 42}]"#),
    ] {
        let reply = patch(content_type, body).await;
        assert!(reply.status == 200 || reply.status == 400, "{body}: {}", reply.text);
        assert_eq!(told(&reply), [Some("@1780272000"), None, age_link], "{body}");
    }
    for (content_type, body) in [
        ("application/merge-patch+json", r#"{"name": "Ada L."}"#),
        ("application/json-patch+json", r#"[{"op": "replace", "path": "/name", "value": "Ada"}]"#),
    ] {
        let reply = patch(content_type, body).await;
        reply.assert_status(200);
        assert_eq!(told(&reply), [None, None, None], "{body}");
    }
    // The handler read the body as it came: the field was written.
    let after = patch("application/merge-patch+json", r#"{"age": 43}"#).await;
    after.assert_status(200);
    assert_eq!(after.json()["age"], 43);

    // Merged with a deprecated version's: the earliest instants, every link.
    let reply = app.get("/api/v1/users?page=0").await;
    reply.assert_status(200);
    assert_eq!(
        told(&reply),
        [
            Some("@1780272000"),
            Some("Thu, 01 Apr 2027 00:00:00 GMT"),
            Some(
                "</docs/v1/deprecation>; rel=\"deprecation\"; type=\"text/html\", </docs/v1/deprecations#v1-paging>; rel=\"deprecation\"; type=\"text/html\", </api/v2/users>; rel=\"successor-version\""
            )
        ]
    );
    let plain = app.get("/api/v1/users").await;
    assert_eq!(
        told(&plain),
        [
            Some("@1788220800"),
            Some("Tue, 01 Jun 2027 00:00:00 GMT"),
            Some(
                "</docs/v1/deprecation>; rel=\"deprecation\"; type=\"text/html\", </api/v2/users>; rel=\"successor-version\""
            )
        ]
    );
    // Before an element's deprecation nothing is told for it; from its sunset on it is refused.
    clock.set("2026-05-01T00:00:00Z");
    assert_eq!(told(&app.get("/api/v2/users?page=0").await), [None, None, None]);
    clock.set("2027-03-01T00:00:00Z");
    let removed = app.get("/api/v2/users?page=0").await;
    removed.assert_status(400);
    assert_eq!(
        told(&removed),
        [Some("@1780272000"), Some("Mon, 01 Mar 2027 00:00:00 GMT"), Some(PAGING_LINK)],
        "its removal is told as its deprecation was"
    );
}

fn client(subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "tenant": "acme", "roles": []}))
}

async fn as_client(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> crate::harness::Reply {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    send(request).await
}

async fn mine(app: &TestApp, token: &str, path: &str) -> Value {
    let reply = as_client(app, token, Method::GET, path, None).await;
    reply.assert_status(200);
    reply.json()
}

async fn the_clients_that_use_an_element_are_counted_once_and_shown_it(backend: Backend) {
    let clock = FixedClock::at("2027-02-01T12:00:00Z");
    let a = backend.spawn_at(declare_used, clock.clock()).await;
    let mut settings = test_settings(&a.database_url);
    declare_used(&mut settings);
    let b = TestApp::start_with_clock(settings, clock.clock()).await;
    let (bot, web) = (client("ci-bot"), client("web"));
    // ci-bot pages by offset on both instances; web never does; a dry run is not a use.
    for app in [&a, &a, &b] {
        as_client(app, &bot, Method::GET, "/api/v2/users?page=0", None).await.assert_status(200);
    }
    as_client(&a, &web, Method::GET, "/api/v2/users", None).await.assert_status(200);
    // ci-bot still calls v1 too: everyone's migration lists it, with its uses of elements.
    as_client(&a, &bot, Method::GET, "/api/v1/users", None).await.assert_status(200);
    let dry = a
        .client
        .post(a.url("/api/v2/users"))
        .bearer_auth(&web)
        .header("x-api-dry-run", "true")
        .json(&json!({"name": "Dry", "email": "dry@example.com", "age": 30}));
    let dry = send(dry).await;
    dry.assert_status(201);
    assert!(dry.header("deprecation").is_some(), "a dry run is told all the same: {dry:?}");

    let paging = json!({
        "id": "offset-paging", "version": 2, "operation": "GET /api/v2/users",
        "element": {"kind": "parameter", "name": "page"}, "requests": 3,
        "firstUsed": "2027-02-01T12:00:00Z", "lastUsed": "2027-02-01T12:00:00Z",
        "sunsetAt": "2027-03-01T00:00:00Z", "daysLeft": 27,
        "replacement": "the cursor parameter",
        "instruction": "Page with the cursor each answer gives <nextCursor>."
    });
    // Each instance adds its own counts not yet written; once both wrote them, each answers
    // the sum, never doubled.
    for written in [false, true] {
        if written {
            a.counts_written().await;
            b.counts_written().await;
        }
        for (app, own) in [(&a, 2), (&b, 1)] {
            let requests = if written { 3 } else { own };
            let record = mine(app, &bot, "/api/migration").await;
            let mut expected = paging.clone();
            expected["requests"] = json!(requests);
            assert_eq!(record["deprecations"], json!([expected]), "written: {written}");
            assert_eq!(mine(app, &web, "/api/migration").await["deprecations"], json!([]), "written: {written}");
            let all = app.get("/admin/deprecations").await;
            all.assert_status(200);
            let listed = all.json()["deprecations"].clone();
            let of = |id: &str| listed.as_array().unwrap().iter().find(|d| d["id"] == id).cloned().unwrap();
            let used = of("offset-paging");
            assert_eq!(
                (used["clients"].clone(), used["requests"].clone(), used["lastUsed"].clone()),
                (json!(1), json!(requests), json!("2027-02-01T12:00:00Z")),
                "written: {written}"
            );
            assert_eq!((used["version"].clone(), used["state"].clone()), (json!(2), json!("deprecated")));
            // The CSV of v1's clients: ci-bot's row ends with its uses of elements, this
            // instance's own until both are written (b has not seen ci-bot on v1 until then).
            let csv = app.get("/admin/migration?version=1&format=csv").await.text;
            let row = csv.lines().find(|l| l.contains(",ci-bot,"));
            match (app.url("/") == a.url("/"), written) {
                (false, false) => assert_eq!(row, None, "{csv}"),
                _ => assert!(
                    row.is_some_and(|r| r.ends_with(&format!(",/api/v2/users,offset-paging:{requests}"))),
                    "written: {written}: {csv}"
                ),
            }
            let unused = of("age-input");
            assert_eq!(
                (unused["clients"].clone(), unused["requests"].clone(), unused["lastUsed"].clone()),
                (json!(0), json!(0), Value::Null),
                "a dry run is not a use; written: {written}"
            );
        }
    }
    // The guide lists it, and its sunset comes before v1's: the next step names it.
    let guide = mine(&a, &bot, "/api/migration/guide").await;
    assert_eq!(guide["deprecations"], json!([paging]));
    assert_eq!(
        guide["nextStep"],
        "Stop using the parameter `page` of GET /api/v2/users before 2027-03-01T00:00:00Z: the cursor parameter"
    );
    let markdown = a.client.get(a.url("/api/migration/guide")).bearer_auth(&bot).header("accept", "text/markdown");
    let markdown = send(markdown).await.text;
    assert!(markdown.contains("## Deprecated elements you use\n\n- **the parameter `page` of GET /api/v2/users** (`offset-paging`): 3 requests, the last at 2027-02-01T12:00:00Z; removed at 2027-03-01T00:00:00Z (27 days left). Instead: the cursor parameter Page with the cursor each answer gives <nextCursor>."), "{markdown}");
    let html =
        send(a.client.get(a.url("/api/migration/guide")).bearer_auth(&bot).header("accept", "text/html")).await.text;
    assert!(
        html.contains("<h2>Deprecated elements you use</h2>") && html.contains("<li id=\"offset-paging\">"),
        "{html}"
    );
    assert!(html.contains("&lt;nextCursor&gt;") && !html.contains("<nextCursor>"), "{html}");
    // web's guide has none, and its next step is the version's.
    let other = mine(&a, &web, "/api/migration/guide").await;
    assert_eq!(other["deprecations"], json!([]));
    assert_eq!(other["nextStep"], "Nothing yet: this client has not called v1.");

    // Counted per instance in the metrics: uses only.
    let ma = send(a.client.get(a.url("/metrics"))).await.text;
    let mb = send(b.client.get(b.url("/metrics"))).await.text;
    assert!(ma.contains("tandem_deprecated_use_total{version=\"2\",deprecation=\"offset-paging\"} 2\n"), "{ma}");
    assert!(mb.contains("tandem_deprecated_use_total{version=\"2\",deprecation=\"offset-paging\"} 1\n"), "{mb}");
    assert!(!ma.contains("deprecation=\"age-input\""), "{ma}");

    // Ninety days on, the use is out of the client's window; out of the operator's after thirty.
    clock.set("2027-03-15T12:00:00Z");
    let later = a.get("/admin/deprecations").await.json();
    let used = later["deprecations"].as_array().unwrap().iter().find(|d| d["id"] == "offset-paging").unwrap().clone();
    assert_eq!((used["clients"].clone(), used["requests"].clone()), (json!(0), json!(0)));
    assert_eq!(used["lastUsed"], "2027-02-01T12:00:00Z");
    assert_eq!(mine(&a, &bot, "/api/migration").await["deprecations"][0]["requests"], 3);
    clock.set("2027-05-05T12:00:00Z");
    assert_eq!(mine(&a, &bot, "/api/migration").await["deprecations"], json!([]));
}

fn declare_removed(settings: &mut tandem::settings::Settings) {
    declare_used(settings);
    let removed = |id: &str, operation: &str| tandem::settings::DeprecationSettings {
        id: id.into(),
        operation: operation.into(),
        deprecated_at: "2026-06-01T00:00:00Z".into(),
        sunset_at: Some("2027-03-01T00:00:00Z".into()),
        replacement: format!("the replacement of {id}"),
        instruction: "i".into(),
        ..Default::default()
    };
    let declared = &mut settings.lifecycle_mut(2).deprecations.0;
    declared.retain(|d| d.id != "age-patch");
    declared.push(tandem::settings::DeprecationSettings {
        field: Some("/age".into()),
        ..removed("age-patch", "PATCH /api/v2/users/{id}")
    });
    declared.push(removed("no-deletes", "DELETE /api/v2/users/{id}"));
}

async fn a_removed_element_is_refused_with_its_replacement_and_nothing_is_written(backend: Backend) {
    let clock = FixedClock::at("2027-02-01T12:00:00Z");
    let app = backend.spawn_at(declare_removed, clock.clock()).await;
    let bot = client("ci-bot");
    let user = app.create_user_v2("Ada", "ada@example.com", 40).await;
    let path = format!("/api/v2/users/{}", user["id"].as_str().unwrap());
    let etag = app.get(&path).await.header("etag").unwrap().to_string();
    let patch = |rehearse: bool| {
        // The user is the admin's tenant's.
        let mut request = app
            .request(Method::PATCH, &path)
            .header("content-type", "application/merge-patch+json")
            .header("if-match", etag.clone())
            .body(r#"{"age": 41, "name": "Ada L."}"#);
        if rehearse {
            request = request.header("x-api-sunset-rehearsal", "true");
        }
        send(request)
    };
    let delete = |rehearse: bool| {
        // Deleting takes the admin role.
        let mut request = app.request(Method::DELETE, &path);
        if rehearse {
            request = request.header("x-api-sunset-rehearsal", "true");
        }
        send(request)
    };
    let paging = |rehearse: bool| {
        let mut request = app.client.get(app.url("/api/v2/users?page=0")).bearer_auth(&bot);
        if rehearse {
            request = request.header("x-api-sunset-rehearsal", "true");
        }
        send(request)
    };
    let problem = |reply: &crate::harness::Reply, status: u16, slug: &str, errors: Value, replacement: &str| {
        reply.assert_status(status);
        let body = reply.json();
        assert_eq!(body["type"].as_str().map(|t| t.ends_with(&format!("/problems/{slug}"))), Some(true), "{body}");
        assert!(body["detail"].as_str().unwrap().ends_with(&format!("instead: {replacement}")), "{body}");
        let codes: Vec<Value> = body["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!({"pointer": e["pointer"], "parameter": e["parameter"], "code": e["code"]}))
            .collect();
        assert_eq!(Value::Array(codes), errors, "{body}");
    };
    let age_removed = json!([{"pointer": "/age", "parameter": null, "code": "removed"}]);
    let page_removed = json!([{"pointer": null, "parameter": "page", "code": "removed"}]);
    // Rehearsed before the sunset: the answer it will get, and nothing written.
    let rehearsed = patch(true).await;
    problem(&rehearsed, 400, "element-removed", age_removed.clone(), "the replacement of age-patch");
    assert_eq!(
        rehearsed.header("link"),
        Some("</docs/v2/deprecations#age-patch>; rel=\"deprecation\"; type=\"text/html\"")
    );
    problem(&delete(true).await, 410, "operation-removed", json!([]), "the replacement of no-deletes");
    problem(&paging(true).await, 400, "element-removed", page_removed.clone(), "the cursor parameter");
    assert_eq!(app.get(&path).await.json()["age"], 40, "a rehearsal writes nothing");
    // Without the header, served as before.
    paging(false).await.assert_status(200);

    // From the sunset on, refused for real; the user is neither changed nor deleted.
    clock.set("2027-03-01T00:00:00Z");
    let refused = patch(false).await;
    problem(&refused, 400, "element-removed", age_removed, "the replacement of age-patch");
    assert_eq!(refused.header("deprecation"), Some("@1780272000"));
    assert_eq!(refused.header("sunset"), Some("Mon, 01 Mar 2027 00:00:00 GMT"));
    let gone = delete(false).await;
    problem(&gone, 410, "operation-removed", json!([]), "the replacement of no-deletes");
    assert_eq!(
        gone.header("link"),
        Some("</docs/v2/deprecations#no-deletes>; rel=\"deprecation\"; type=\"text/html\"")
    );
    problem(&paging(false).await, 400, "element-removed", page_removed, "the cursor parameter");
    let stored = app.get(&path).await;
    stored.assert_status(200);
    assert_eq!((stored.json()["age"].clone(), stored.json()["name"].clone()), (json!(40), json!("Ada")));
    // A request that uses no removed element is served as before.
    let rename = app
        .request(Method::PATCH, &path)
        .header("content-type", "application/merge-patch+json")
        .header("if-match", stored.header("etag").unwrap())
        .body(r#"{"name": "Ada L."}"#);
    send(rename).await.assert_status(200);
    as_client(&app, &bot, Method::GET, "/api/v2/users?size=5", None).await.assert_status(200);
    // The problem types have their pages.
    for slug in ["element-removed", "operation-removed"] {
        app.get(&format!("/problems/{slug}")).await.assert_status(200);
    }

    // v1 answers in its own error shape.
    clock.set("2027-04-01T00:00:00Z");
    let v1 = send(app.client.get(app.url("/api/v1/users?page=0")).bearer_auth(&bot)).await;
    v1.assert_status(400);
    let body = v1.json();
    assert_eq!((body["status"].clone(), body["errors"][0]["parameter"].clone()), (json!(400), json!("page")), "{body}");
    assert_eq!(body["errors"][0]["code"], "removed", "{body}");

    // Refusals and rehearsals are never uses: the client's record counts the one request served.
    app.counts_written().await;
    let listed = mine(&app, &bot, "/api/migration").await["deprecations"].clone();
    let ids: Vec<(&str, u64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["id"].as_str().unwrap(), d["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(ids, [("offset-paging", 1)]);
}

/// Two elements of v2 with a sunset far ahead, as `TANDEM_V2_DEPRECATIONS` spells them.
const FAR_SUNSET: &str = r#"[
  {"id": "offset-paging", "operation": "GET /api/v2/users", "parameter": "page",
   "deprecatedAt": "2026-01-01T00:00:00Z", "sunsetAt": "2099-01-01T00:00:00Z",
   "replacement": "the cursor parameter", "instruction": "i"},
  {"id": "age-input", "operation": "POST /api/v2/users", "field": "/age",
   "deprecatedAt": "2026-01-01T00:00:00Z", "sunsetAt": "2099-01-01T00:00:00Z",
   "replacement": "r", "instruction": "i"}
]"#;

async fn an_elements_readiness_names_who_blocks_and_gates_a_pipeline(backend: Backend) {
    // On the real clock, as the command reads it.
    let app = backend
        .spawn_with(|s| {
            let entries: Vec<tandem::settings::DeprecationSettings> = serde_json::from_str(FAR_SUNSET).unwrap();
            s.lifecycle_mut(2).deprecations.0 = entries;
        })
        .await;
    let (bot, web) = (client("ci-bot"), client("web"));
    for token in [&bot, &bot, &web] {
        as_client(&app, token, Method::GET, "/api/v2/users?page=0", None).await.assert_status(200);
    }
    as_client(&app, &client("quiet"), Method::GET, "/api/v2/users", None).await.assert_status(200);

    // web's owners accept the element's sunset; a wrong date, an unknown id or both targets are refused.
    let ack = |token: &String, body: Value| {
        let token = token.clone();
        let app = &app;
        async move { as_client(app, &token, Method::PUT, "/api/migration/acknowledgement", Some(body)).await }
    };
    let accepted = ack(&web, json!({"deprecation": "offset-paging", "sunsetAt": "2099-01-01T00:00:00Z"})).await;
    accepted.assert_status(200);
    assert_eq!(
        (
            accepted.json()["deprecation"].clone(),
            accepted.json()["sunsetAt"].clone(),
            accepted.json()["subject"].clone()
        ),
        (json!("offset-paging"), json!("2099-01-01T00:00:00Z"), json!("web"))
    );
    let moved = ack(&bot, json!({"deprecation": "offset-paging", "sunsetAt": "2098-01-01T00:00:00Z"})).await;
    moved.assert_status(409);
    assert_eq!(moved.json()["sunsetAt"], "2099-01-01T00:00:00Z");
    let unknown = ack(&bot, json!({"deprecation": "nothing-such", "sunsetAt": "2099-01-01T00:00:00Z"})).await;
    assert_eq!(unknown.error_codes(), vec![("/deprecation".to_string(), "one_of".to_string())], "{}", unknown.text);
    let both =
        ack(&bot, json!({"version": 1, "deprecation": "offset-paging", "sunsetAt": "2099-01-01T00:00:00Z"})).await;
    assert_eq!(both.error_codes(), vec![("/version".to_string(), "unknown_field".to_string())], "{}", both.text);

    let readiness = app.get("/admin/deprecations/offset-paging/readiness?window=7").await;
    readiness.assert_status(200);
    let answer = readiness.json();
    let today = chrono::Utc::now().date_naive();
    assert_eq!(
        (answer["deprecation"].clone(), answer["sunsetAt"].clone(), answer["window"].clone(), answer["ready"].clone()),
        (json!("offset-paging"), json!("2099-01-01T00:00:00Z"), json!(7), json!(false))
    );
    let blocking: Vec<(String, u64, bool)> = answer["blocking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (b["subject"].as_str().unwrap().to_string(), b["requests"].as_u64().unwrap(), b["acknowledged"] == true)
        })
        .collect();
    assert_eq!(blocking, [("ci-bot".to_string(), 2, false), ("web".to_string(), 1, true)]);
    assert_eq!(answer["clients"], json!({"seen": 2, "blocking": 2, "acknowledged": 1}));
    let days = answer["requestsPerDay"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    assert_eq!(days[6], json!({"day": today.to_string(), "requests": 3}));
    assert_eq!(
        app.get("/admin/deprecations/offset-paging/readiness?limit=1").await.json()["blocking"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.get("/admin/deprecations/nothing-such/readiness").await.assert_status(404);
    let bad = app.get("/admin/deprecations/offset-paging/readiness?window=0").await;
    assert_eq!(bad.error_codes(), vec![("window".to_string(), "invalid".to_string())], "{}", bad.text);
    let unused = app.get("/admin/deprecations/age-input/readiness").await.json();
    assert_eq!((unused["ready"].clone(), unused["clients"]["seen"].clone()), (json!(true), json!(0)));

    // The gate, from the database alone, with the declarations in the environment.
    app.counts_written().await;
    let dir = tempfile::tempdir().unwrap();
    let check = |args: &[&str]| {
        let mut all = vec!["sunset-check"];
        all.extend_from_slice(args);
        let env = [
            ("TANDEM_DATABASE_URL", Some(app.database_url.as_str())),
            ("TANDEM_JWT_SECRET", Some(tokens::SECRET)),
            ("TANDEM_V2_DEPRECATIONS", Some(FAR_SUNSET)),
        ];
        let output = binary::run(dir.path(), &all, &env);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        (output.status.code(), text(output.stdout), text(output.stderr))
    };
    let (code, stdout, stderr) = check(&["--deprecation", "offset-paging"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("offset-paging is NOT ready to remove: 2 client(s) used it in the last 7 days.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 of them acknowledged the sunset date.") && stdout.contains("  acme/ci-bot: 2 requests"),
        "{stdout}"
    );
    let (code, stdout, _) = check(&["--deprecation", "offset-paging", "--format", "json"]);
    assert_eq!(code, Some(1));
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((json["clients"]["blocking"].clone(), json["blocking"][0]["requests"].clone()), (json!(2), json!(2)));
    let (code, stdout, _) = check(&["--deprecation", "age-input"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.starts_with(
            "age-input is ready to remove: no client used it in the last 7 days.\nSunset: 2099-01-01T00:00:00Z ("
        ),
        "{stdout}"
    );
    let (code, _, stderr) = check(&["--deprecation", "nothing-such"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot tell: no version declares such a deprecation"), "{stderr}");
}

async fn the_dashboard_lists_each_element_with_its_clients_and_verdict(backend: Backend) {
    let app = backend
        .spawn_with(|s| {
            let entries: Vec<tandem::settings::DeprecationSettings> = serde_json::from_str(FAR_SUNSET).unwrap();
            s.lifecycle_mut(2).deprecations.0 = entries;
        })
        .await;
    for token in [client("ci-bot"), client("ci-bot"), client("web")] {
        as_client(&app, &token, Method::GET, "/api/v2/users?page=0", None).await.assert_status(200);
    }
    let mut browser = crate::harness::browser::Browser::launch().await;
    browser.log_in_to_dashboard(&app.url("/admin/dashboard"), &app.admin).await;
    // The elements have their own tab, once a version deprecates one.
    browser.wait_for("!document.getElementById('tab-elements').hidden", std::time::Duration::from_secs(10)).await;
    browser.eval("document.getElementById('tab-elements').click(); true").await;
    browser.wait_for("!document.getElementById('elements').hidden", std::time::Duration::from_secs(10)).await;
    assert_eq!(browser.eval("location.hash").await, "#tab=elements");
    let rows = browser
        .eval("[...document.querySelectorAll('#deprecations tbody tr')].map(r => [...r.cells].map(c => c.textContent))")
        .await;
    // Last used: relative, with its UTC instant on hover.
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let last_used = rows[0][6].as_str().unwrap_or_default().to_string();
    assert!(last_used == "just now" || last_used.ends_with(" s ago"), "{rows}");
    let hover = browser.eval("document.querySelector('#deprecations tbody tr time').title").await;
    assert!(hover.as_str().unwrap().starts_with(&today) && hover.as_str().unwrap().ends_with(" UTC"), "{hover}");
    assert_eq!(
        rows,
        json!([
            [
                "offset-paging (parameter page)",
                "GET /api/v2/users",
                "deprecated",
                "2099-01-01",
                "2",
                "3",
                last_used,
                "2 clients still use it"
            ],
            [
                "age-input (field /age)",
                "POST /api/v2/users",
                "deprecated",
                "2099-01-01",
                "0",
                "0",
                "never",
                "ready to remove"
            ]
        ])
    );
}

async fn a_brownout_aimed_at_an_element_refuses_only_its_clients_use_of_it(backend: Backend) {
    let clock = FixedClock::at("2027-02-01T12:00:00Z");
    let app = backend.spawn_at(declare_used, clock.clock()).await;
    let (bot, other) =
        (client("ci-bot"), tokens::signed(&json!({"sub": "bot", "exp": now() + 600, "tenant": "globex", "roles": []})));
    // Bad brownouts store nothing.
    for (body, codes) in [
        (
            json!({"version": 2, "deprecation": "offset-paging", "start": "2027-02-01T11:00:00Z", "end": "2027-02-01T13:00:00Z"}),
            vec![("/version", "unknown_field")],
        ),
        (
            json!({"deprecation": "nothing-such", "start": "2027-02-01T11:00:00Z", "end": "2027-02-01T13:00:00Z"}),
            vec![("/deprecation", "one_of")],
        ),
    ] {
        let refused = app.post_json("/admin/brownouts", &body).await;
        let expected: Vec<(String, String)> = codes.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect();
        assert_eq!(refused.error_codes(), expected, "{}", refused.text);
    }
    assert_eq!(app.get("/admin/brownouts").await.json()["brownouts"], json!([]));

    let body = json!({"deprecation": "offset-paging", "start": "2027-02-01T11:00:00Z", "end": "2027-02-01T13:00:00Z",
                      "tenant": "acme"});
    let created = app.post_json("/admin/brownouts", &body).await;
    created.assert_status(201);
    assert_eq!(
        (created.json()["version"].clone(), created.json()["deprecation"].clone()),
        (json!(2), json!("offset-paging"))
    );
    // Every instance reads it within 2 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let refused = loop {
        let reply = as_client(&app, &bot, Method::GET, "/api/v2/users?page=0", None).await;
        if reply.status == 400 || std::time::Instant::now() > deadline {
            break reply;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    refused.assert_status(400);
    assert_eq!(refused.json()["errors"][0]["code"], "removed", "{}", refused.text);
    assert_eq!(refused.header("retry-after"), Some("3600"));
    assert_eq!(refused.header("link"), Some(PAGING_LINK));
    // Its client's other requests, and another tenant's use of it, are served.
    as_client(&app, &bot, Method::GET, "/api/v2/users?size=5", None).await.assert_status(200);
    as_client(&app, &other, Method::GET, "/api/v2/users?page=0", None).await.assert_status(200);
    // It is no version's brownout: v2 itself answers as before.
    as_client(&app, &bot, Method::GET, "/api/v2/users", None).await.assert_status(200);
    // Over, it refuses nothing.
    clock.set("2027-02-01T13:00:00Z");
    as_client(&app, &bot, Method::GET, "/api/v2/users?page=0", None).await.assert_status(200);
}
