//! A version is its difference: a v0 defined here, in the test alone, as one change over v1 (its
//! user calls `name` `fullName`). The service dispatches it by all four sources, documents it,
//! serves its catalogue of changes, counts what its clients' requests met and links v0 to v1,
//! with no file outside this one touched.

use reqwest::Method;
use serde_json::{Map, Value, json};
use tandem::{
    changes::{Change, ChangeKind, NewerAnswer, OlderRequest, Operation, Serving, Touches},
    registry::Version,
    wire::error::ApiError,
};

use crate::harness::{
    Backend, TestApp,
    app::{FixedClock, test_settings},
    send,
    tokens::{self, now},
};

crate::scenarios![an_older_version_declared_as_its_changes_is_served_in_full];

const USER_ROUTES: &[Operation] = &[
    Operation::get("/users"),
    Operation::post("/users"),
    Operation::get("/users/{id}"),
    Operation::put("/users/{id}"),
    Operation::patch("/users/{id}"),
];

const V0_CHANGES: &[Change] = &[Change {
    id: "user-name-renamed",
    kind: ChangeKind::FieldRenamed,
    title: "user name",
    description: "A user's fullName is called name.",
    instruction: "Send and read name where you used fullName.",
    touches: Touches::Only(USER_ROUTES),
    before: "`fullName`",
    after: "`name`",
    serving: Serving {
        request: Some(full_name_is_name),
        response: Some(name_is_full_name),
        document: Some(full_name_in_the_document),
        ..Serving::NONE
    },
}];

fn rename(object: &mut Map<String, Value>, from: &str, to: &str) -> bool {
    let Some(value) = object.remove(from) else { return false };
    object.insert(to.into(), value);
    true
}

fn full_name_is_name(request: &mut OlderRequest) -> Result<bool, ApiError> {
    let renamed =
        request.body_mut().and_then(Value::as_object_mut).is_some_and(|body| rename(body, "fullName", "name"));
    if renamed {
        request.met_by_field("/fullName");
    }
    Ok(renamed)
}

fn name_is_full_name(answer: &mut NewerAnswer) {
    match answer.body.as_deref_mut() {
        Some(Value::Array(users)) => users.iter_mut().filter_map(Value::as_object_mut).for_each(|u| {
            rename(u, "name", "fullName");
        }),
        Some(Value::Object(user)) => {
            rename(user, "name", "fullName");
        }
        _ => {}
    }
}

fn full_name_in_the_document(document: &mut Value) {
    for schema in ["User", "UserInput", "UserMergePatch"] {
        let schema = &mut document["components"]["schemas"][schema];
        if let Some(properties) = schema["properties"].as_object_mut() {
            rename(properties, "name", "fullName");
        }
        if let Some(required) = schema["required"].as_array_mut() {
            required.iter_mut().filter(|r| *r == "name").for_each(|r| *r = json!("fullName"));
        }
    }
}

fn versions() -> Vec<Version> {
    let v2 = tandem::v2::version();
    let v1 = tandem::v1::over(&v2);
    let v0 = Version::older(0, V0_CHANGES, &v1).unwrap();
    vec![v0, v1, v2]
}

/// A client of the default tenant, which the test's other requests (with the admin token) read.
fn token(subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 600, "roles": []}))
}

async fn an_older_version_declared_as_its_changes_is_served_in_full(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let mut settings = test_settings(&backend.fresh_database().await);
    settings.lifecycle_mut(0).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    settings.lifecycle_mut(0).sunset_at = Some("2027-01-01T00:00:00Z".into());
    let app = TestApp::start_with_versions(settings, clock.clock(), versions()).await;
    let client = token("legacy-app");

    // A create through v0: its body is v0's, its answer too, and both reach the one core.
    let created = send(
        app.client
            .post(app.url("/api/v0/users"))
            .bearer_auth(&client)
            .header("idempotency-key", "v0-create-1")
            .json(&json!({"fullName": "Ada Lovelace", "email": "ada@example.com"})),
    )
    .await;
    created.assert_status(201);
    let id = created.json()["id"].as_i64().unwrap();
    assert_eq!(created.json(), json!({"id": id, "fullName": "Ada Lovelace"}));
    assert_eq!(created.header("location"), Some(format!("/api/v0/users/{id}").as_str()));
    assert_eq!(created.header("api-version"), Some("0"));
    let in_v2 = send(app.client.get(app.url(&format!("/api/v2/users/{id}"))).bearer_auth(&client)).await.json();
    assert_eq!((in_v2["name"].as_str(), in_v2["age"].clone()), (Some("Ada Lovelace"), Value::Null));
    let uuid = in_v2["id"].as_str().unwrap().to_string();

    // Dispatch by each of the four sources.
    let expected = json!({"id": id, "fullName": "Ada Lovelace"});
    let by_uri = send(app.client.get(app.url(&format!("/api/v0/users/{id}"))).bearer_auth(&client)).await;
    assert_eq!((by_uri.status, by_uri.json()), (200, expected.clone()));
    let by_header = send(app.request(Method::GET, &format!("/users/{id}")).header("x-api-version", "0")).await;
    assert_eq!((by_header.status, by_header.json()), (200, expected.clone()));
    let vendor = "application/vnd.tandem.users.v0+json";
    let by_media_type = send(app.request(Method::GET, &format!("/users/{id}")).header("accept", vendor)).await;
    assert_eq!((by_media_type.status, by_media_type.json()), (200, expected.clone()));
    assert_eq!(by_media_type.header("content-type"), Some(vendor));
    let by_query = app.get(&format!("/users/{id}?version=0")).await;
    assert_eq!((by_query.status, by_query.json()), (200, expected.clone()));
    let list = app.get("/api/v0/users").await;
    assert_eq!((list.status, list.json()), (200, json!([expected])));
    assert_eq!(list.header("x-total-count"), Some("1"), "v1's list, seen through v0");
    // A patch in v0's words, and v1's own rules (here: an unknown field is ignored) still hold.
    let patched = app
        .patch(&format!("/api/v0/users/{id}"), "application/merge-patch+json", &json!({"fullName": "Ada L.", "x": 1}))
        .await;
    assert_eq!((patched.status, patched.json()), (200, json!({"id": id, "fullName": "Ada L."})));
    // Errors are v1's shape, which v0 did not change.
    let missing = app.get("/api/v0/users/999999").await;
    missing.assert_status(404);
    assert!(missing.json()["timestamp"].is_string(), "{}", missing.text);

    // Its document, derived from v1's by its one change, and its docs page.
    let document: Value = send(app.client.get(app.url("/api/v0/openapi.json"))).await.json();
    assert_eq!(document["info"]["version"], "0");
    assert_eq!(document["servers"], json!([{"url": "/api/v0"}]));
    let user = &document["components"]["schemas"]["User"]["properties"];
    assert!(user["fullName"].is_object() && user["name"].is_null(), "{user}");
    assert!(document["paths"]["/upload"]["post"].is_object(), "v1's operations, at v1's paths");
    assert!(document["paths"]["/users"]["get"]["deprecated"] == json!(true), "v0 is deprecated");
    let docs = send(app.client.get(app.url("/docs/v0/"))).await;
    assert!(docs.status == 200 && docs.text.contains("\"fullName\""), "the Swagger UI page of v0's document");

    // Its catalogue of changes, served by the version it changes into.
    let catalogue = send(app.client.get(app.url("/api/v1/changes"))).await;
    catalogue.assert_status(200);
    assert_eq!(
        catalogue.json(),
        json!([{"id": "user-name-renamed", "title": "user name", "description": "A user's fullName is called name.",
                "instruction": "Send and read name where you used fullName.",
                "routes": ["GET /users", "POST /users", "GET /users/{id}", "PUT /users/{id}", "PATCH /users/{id}"],
                "kind": "field-renamed"}])
    );

    // Successor links from v0 into v1: the same user there.
    let read = send(app.client.get(app.url(&format!("/api/v0/users/{id}"))).bearer_auth(&client)).await;
    let link = read.header("link").unwrap().to_string();
    assert!(link.ends_with(&format!("</api/v1/users/{uuid}>; rel=\"successor-version\"")), "{link}");
    assert_eq!(read.header("deprecation"), Some("@1767225600"));

    // Exposures per client: the create renamed a field; the reads only met answers.
    let record = send(app.client.get(app.url("/api/migration?version=0")).bearer_auth(&client)).await;
    record.assert_status(200);
    let record = record.json();
    assert_eq!(record["version"], 0);
    let routes = record["routes"].as_array().unwrap();
    let post = routes.iter().find(|r| r["method"] == "POST" && r["route"] == "/users").unwrap();
    assert_eq!(post["changes"], json!(["user-name-renamed"]));
    assert_eq!(post["successor"], "/api/v1/users");
    assert_eq!(post["exposures"][0]["change"], "user-name-renamed");
    assert_eq!(post["exposures"][0]["requests"], 1);
    let get = routes.iter().find(|r| r["method"] == "GET" && r["route"] == "/users/{id}").unwrap();
    assert_eq!(get["requests"], 2);
    assert_eq!(get["exposures"], json!([]), "a read sends nothing v1 would read differently");

    // Its client's migration guide names the change, what met it, and what to do, from the
    // change's declaration alone.
    let guide = send(app.client.get(app.url("/api/migration/guide")).bearer_auth(&client)).await;
    guide.assert_status(200);
    let guide = guide.json();
    assert_eq!((guide["from"].clone(), guide["to"].clone()), (json!(0), json!(1)), "the oldest with a successor");
    let post = guide["routes"].as_array().unwrap().iter().find(|r| r["method"] == "POST").unwrap().clone();
    assert_eq!(
        post,
        json!({"method": "POST", "route": "/users", "requests": 1,
               "successor": {"method": "POST", "path": "/api/v1/users"},
               "mustChange": [{"change": "user-name-renamed", "title": "user name",
                               "instruction": "Send and read name where you used fullName.", "requests": 1,
                               "details": [{"detail": "/fullName", "requests": 1, "lastSeen": "2026-06-15T12:00:00Z"}]}],
               "mustRead": []})
    );
}
