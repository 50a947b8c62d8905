//! Versions as plugins: a third version defined here, in the test, and nowhere else. The service
//! routes, documents, deprecates and counts it, and links the deprecated v2 to it, with no file
//! outside this one touched.

use poem_openapi::{ApiResponse, Object, OpenApi, OpenApiService};
use serde_json::{Value, json};
use tandem::{
    core::users::Users,
    registry::Version,
    routing::params::RouteParam,
    wire::{
        error::{docs::ProblemDoc, failure::Failure, render::BodyStyle},
        json::Json,
        params::user_id,
        security::BearerAuth,
    },
};

use crate::harness::{Backend, TestApp, app::FixedClock, app::test_settings, send};

crate::scenarios![a_third_version_defined_in_a_test_is_served_and_succeeds_v2];

/// v2's user with `name` renamed to `fullName`: the breaking change that makes it v3.
#[derive(Object, serde::Serialize)]
#[oai(rename = "User", rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
struct UserV3 {
    id: uuid::Uuid,
    full_name: String,
    email: String,
}

#[derive(ApiResponse)]
enum OneUser {
    #[oai(status = 200)]
    Ok(Json<UserV3>),
}

#[derive(Default)]
struct UsersV3;

#[OpenApi]
impl UsersV3 {
    /// Read one user.
    #[oai(path = "/users/:id", method = "get", operation_id = "getUser")]
    async fn get(
        &self,
        auth: BearerAuth,
        users: Users,
        id: RouteParam<String>,
    ) -> Result<OneUser, Failure<ProblemDoc>> {
        let user = users.get(&auth.0.tenant, user_id(&id)?).await?;
        Ok(OneUser::Ok(Json(UserV3 { id: user.uuid, full_name: user.name, email: user.email })))
    }
}

fn service() -> OpenApiService<UsersV3, ()> {
    OpenApiService::new(UsersV3, "Tandem API", "3").server("/api/v3")
}

fn v3() -> Version {
    Version {
        legacy_paths: &[("/users", "/users")],
        resources: &["users"],
        changelog: "# Tandem API v3\n\n`name` is now `fullName`.\n",
        ..Version::new(3, BodyStyle::Problem, service)
    }
}

async fn a_third_version_defined_in_a_test_is_served_and_succeeds_v2(backend: Backend) {
    let clock = FixedClock::at("2026-06-15T12:00:00Z");
    let mut settings = test_settings(&backend.fresh_database().await);
    settings.lifecycle_mut(2).deprecated_at = Some("2026-01-01T00:00:00Z".into());
    settings.lifecycle_mut(2).sunset_at = Some("2027-01-01T00:00:00Z".into());
    let versions = vec![tandem::v1::version(), tandem::v2::version(), v3()];
    let app = TestApp::start_with_versions(settings, clock.clock(), versions).await;
    let uuid = app.create_user_v2("Ada Lovelace", "ada@example.com", 36).await["id"].as_str().unwrap().to_string();
    let expected = json!({"id": uuid, "fullName": "Ada Lovelace", "email": "ada@example.com"});

    // Dispatch by each of the four sources.
    let by_uri = app.get(&format!("/api/v3/users/{uuid}")).await;
    by_uri.assert_status(200);
    assert_eq!(by_uri.json(), expected);
    assert_eq!(by_uri.header("api-version"), Some("3"));
    assert_eq!(by_uri.header("api-supported-versions"), Some("1, 2, 3"));
    let by_header =
        send(app.request(reqwest::Method::GET, &format!("/users/{uuid}")).header("x-api-version", "3")).await;
    assert_eq!((by_header.status, by_header.json()), (200, expected.clone()));
    let vendor = "application/vnd.tandem.users.v3+json";
    let by_media_type =
        send(app.request(reqwest::Method::GET, &format!("/users/{uuid}")).header("accept", vendor)).await;
    assert_eq!((by_media_type.status, by_media_type.json()), (200, expected.clone()));
    assert_eq!(by_media_type.header("content-type"), Some(vendor));
    let by_query = app.get(&format!("/users/{uuid}?version=3")).await;
    assert_eq!((by_query.status, by_query.json()), (200, expected.clone()));
    // v3 declared only users: its other v2 routes do not exist there.
    app.get("/api/v3/customers").await.assert_status(404);

    // Its document and docs UI.
    let document = send(app.client.get(app.url("/api/v3/openapi.json"))).await;
    document.assert_status(200);
    let document: Value = document.json();
    assert_eq!(document["info"]["version"], "3");
    assert!(document["paths"]["/users/{id}"]["get"].is_object(), "{document}");
    assert!(document["components"]["schemas"]["User"]["properties"]["fullName"].is_object());
    let docs = send(app.client.get(app.url("/docs/v3/"))).await;
    docs.assert_status(200);
    assert!(docs.text.contains("swagger"), "the Swagger UI page");

    // v2 is deprecated: its headers, its page, and its successor-version links into v3.
    let old = app.get(&format!("/api/v2/users/{uuid}")).await;
    old.assert_status(200);
    assert_eq!(old.header("deprecation"), Some("@1767225600"));
    assert_eq!(old.header("sunset"), Some("Fri, 01 Jan 2027 00:00:00 GMT"));
    assert_eq!(old.header("api-deprecated-versions"), Some("2"));
    assert_eq!(
        old.header("link"),
        Some(
            format!(
                "</docs/v2/deprecation>; rel=\"deprecation\"; type=\"text/html\", </api/v3/users/{uuid}>; rel=\"successor-version\""
            )
            .as_str()
        )
    );
    let list = app.get("/api/v2/users").await;
    assert!(list.header("link").unwrap().ends_with("</api/v3/users>; rel=\"successor-version\""));
    let page = send(app.client.get(app.url("/docs/v2/deprecation"))).await;
    page.assert_status(200);
    assert!(page.text.contains("Tandem API version 2 is being retired"), "{}", page.text);
    assert!(page.text.contains("<a href=\"/docs/v3/\">documentation</a>"));
    assert!(page.text.contains("2027-01-01T00:00:00Z"));
    // The newest version has no successor, so no deprecation page.
    send(app.client.get(app.url("/docs/v3/deprecation"))).await.assert_status(404);
    // Rehearsing the sunset of v2 answers its 410, linking v3.
    let rehearsal =
        send(app.request(reqwest::Method::GET, "/api/v2/users").header("x-api-sunset-rehearsal", "true")).await;
    rehearsal.assert_status(410);
    assert!(rehearsal.header("link").unwrap().ends_with("</api/v3/users>; rel=\"successor-version\""));

    // Usage is counted for v2, the deprecated version, and by default the report is about it.
    let usage = app.get("/admin/usage?since=2026-06-01T00:00:00Z").await.json();
    assert_eq!(usage["version"], 2);
    let routes: Vec<&str> =
        usage["clients"][0]["routes"].as_array().unwrap().iter().map(|r| r["route"].as_str().unwrap()).collect();
    assert_eq!(routes, ["/users", "/users/{id}"], "{usage}");
    let metrics = send(app.client.get(app.url("/metrics"))).await.text;
    assert!(metrics.contains("tandem_deprecated_requests_total{version=\"2\""), "{metrics}");
    assert!(metrics.contains("version=\"3\",route=\"/users/{id}\""), "{metrics}");

    // OPTIONS /api lists all three.
    let versions = send(app.client.request(reqwest::Method::OPTIONS, app.url("/api"))).await.json();
    let listed: Vec<(u64, &str)> = versions["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].as_u64().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [(1, "current"), (2, "deprecated"), (3, "current")]);
    assert_eq!(versions["versions"][2]["openapi"], "/api/v3/openapi.json");
}
