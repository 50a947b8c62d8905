//! The OpenAPI document of the routes outside the versions: health, metrics, the version list,
//! problem pages, the change catalogues, a client's migration record and the operators' routes.
//! Served at `/api/operations/openapi.json` and written to `versions/operations/openapi.json`.
//!
//! Each operation is declared once, in the router's table (`crate::app`): its path, who may call
//! it, its handler and its description, one of the functions here. The document is built from
//! that table, so a routed operation without a description cannot be written.

use poem::http::Method;
use poem_openapi::types::Type;
use serde_json::{Value, json};

use super::MaintenanceState;
use crate::{
    deprecations::usage::Answer as DeprecationsInUse,
    http::fixed::Access,
    public::answers::{Ready, Versions},
    registry::Registry,
    wire::described::schema_of,
    workbench::{
        answers::{
            AuditEntries, BrownoutAnswer, BrownoutList, GuideAnswer, MigrationPage, OwnRecord, PinAnswer, PinList,
            UsageAnswer, named_for,
        },
        readiness::{Answer as VersionVerdict, element::Answer as ElementVerdict},
    },
};

/// Where the document is served.
pub const PATH: &str = "/api/operations/openapi.json";

pub(super) fn string() -> Value {
    json!({"type": "string"})
}

pub(super) fn time() -> Value {
    json!({"type": "string", "format": "date-time"})
}

pub(super) fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

pub(super) fn tenant_parameter() -> Value {
    json!({"name": "tenant", "in": "path", "required": true,
           "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}})
}

fn version_query(description: &str) -> Value {
    json!({"name": "version", "in": "query", "required": false, "description": description,
           "schema": {"type": "integer", "minimum": 1, "maximum": 65535}})
}

/// The schema of `T`, an answer of a migration tool, its last requests named after the
/// context's versions.
fn schema_for_versions<T: Type>(c: &Context) -> Value {
    named_for(schema_of::<T>(), c.version, c.successor)
}

/// The guide's three forms.
fn guide_answer() -> Value {
    json!({"description": "The guide", "content": {
        "application/json": {"schema": schema_of::<GuideAnswer>()},
        "text/markdown": {"schema": string()},
        "text/html": {"schema": string()}}})
}

pub(super) fn json_body(schema: Value) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema}}})
}

pub(super) fn answer(description: &str, schema: Option<Value>) -> Value {
    match schema {
        Some(schema) => json!({"description": description, "content": {"application/json": {"schema": schema}}}),
        None => json!({"description": description}),
    }
}

/// What the descriptions need to know: the version operators ask about, and its successor.
pub struct Context {
    pub version: u16,
    pub successor: u16,
}

/// What an operation takes and answers, as the operations document shows it.
pub type Describe = fn(&Context) -> Value;

fn any() -> Value {
    json!({"type": "object"})
}

/// The answer of `T`, as JSON.
fn answer_of<T: Type>(description: &str) -> Value {
    answer(description, Some(schema_of::<T>()))
}

pub(super) fn validation() -> Value {
    answer("Bad input: every bad field, parameter or header listed", None)
}

/// `GET /health/live`.
pub fn get_health_live(_: &Context) -> Value {
    json!({"summary": "200 while the process serves.", "tags": ["operations"],
    "responses": {"200": answer("Live", Some(any()))}})
}

/// `GET /health/ready`.
pub fn get_health_ready(_: &Context) -> Value {
    json!({"summary": "200 when the database (and Redis, when configured) answer; 503 naming what failed, or while draining.",
    "tags": ["operations"], "responses": {"200": answer_of::<Ready>("Ready"), "503": answer_of::<Ready>("Not ready; see Retry-After")}})
}

/// `GET /problems/:slug`.
pub fn get_problems_slug(_: &Context) -> Value {
    json!({"summary": "A short HTML page explaining a problem type.", "tags": ["operations"],
    "parameters": [{"name": "slug", "in": "path", "required": true, "schema": string()}],
    "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": string()}}}, "404": answer("No such problem type", None)}})
}

/// `OPTIONS /api`.
pub fn options_api(_: &Context) -> Value {
    json!({"summary": "The versions, their lifecycle dates and their OpenAPI links.", "tags": ["operations"],
    "responses": {"200": answer_of::<Versions>("Versions")}})
}

/// `GET /metrics`.
pub fn get_metrics(_: &Context) -> Value {
    json!({"summary": "Prometheus text.", "tags": ["operations"],
    "responses": {"200": {"description": "Metrics", "content": {"text/plain": {"schema": string()}}}}})
}

/// `GET /admin/usage`.
pub fn get_admin_usage(_: &Context) -> Value {
    json!({"summary": "Requests per client and route of a version since a day, summed over every instance: a page of clients by tenant and subject, and the totals of all.",
    "tags": ["admin"], "parameters": [version_query(DESCRIBED),
        {"name": "since", "in": "query", "required": false, "description": "Whole UTC days from this instant's day (default: 30 days ago).", "schema": time()},
        limit_query(), cursor_query()],
    "responses": {"200": answer_of::<UsageAnswer>("Usage"), "400": validation()}})
}

/// `GET /admin/deprecations`.
pub fn get_admin_deprecations(_: &Context) -> Value {
    json!({"summary": "Every element deprecated inside a version, with the distinct clients and the requests that used it within 30 days, and its last use.",
    "tags": ["admin"],
    "responses": {"200": answer_of::<DeprecationsInUse>("Deprecations in use")}})
}

/// `GET /admin/deprecations/:id/readiness`.
pub fn get_admin_deprecations_id_readiness(_: &Context) -> Value {
    readiness(
        "Whether an element deprecated inside its version can be removed without breaking a client that used it within the window.",
        json!({"name": "id", "in": "path", "required": true, "schema": string()}),
        schema_of::<ElementVerdict>(),
        "No such deprecation",
    )
}

/// A readiness question's operation (the book's operators/sunset.md): of what `parameter` names,
/// answered by `verdict`.
fn readiness(summary: &str, parameter: Value, verdict: Value, not_found: &str) -> Value {
    json!({"summary": summary,
    "tags": ["migration"],
    "parameters": [parameter,
        {"name": "window", "in": "query", "required": false, "description": "Days, today included (default 7).",
         "schema": {"type": "integer", "minimum": 1, "maximum": 90}},
        {"name": "limit", "in": "query", "required": false,
         "description": "Blocking clients listed, the busiest first (default 100); clients counts them all.",
         "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
    "responses": {"200": answer("The verdict", Some(verdict)),
        "400": validation(), "404": answer(not_found, None)}})
}

/// The version the migration tools describe when none is named.
const DESCRIBED: &str = "Default: the oldest version with an announced deprecation that a newer one follows.";

/// `limit` of a page of clients.
fn limit_query() -> Value {
    json!({"name": "limit", "in": "query", "required": false, "description": "Clients in the page (default 100).",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000}})
}

/// `cursor` of a page of clients: the `nextCursor` of the page before, with the same query.
pub(super) fn cursor_query() -> Value {
    json!({"name": "cursor", "in": "query", "required": false,
           "description": "The nextCursor of the previous page, asked with the same parameters.", "schema": string()})
}

/// `GET /admin/maintenance`.
pub fn get_admin_maintenance(_: &Context) -> Value {
    json!({"summary": "Maintenance mode as every instance applies it.", "tags": ["admin"],
    "responses": {"200": answer_of::<MaintenanceState>("Maintenance")}})
}

/// `PUT /admin/maintenance`.
pub fn put_admin_maintenance(_: &Context) -> Value {
    json!({"summary": "Turns maintenance mode on or off for every instance (audited).", "tags": ["admin"],
    "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["enabled"],
        "properties": {"enabled": {"type": "boolean"}, "retryAfterSeconds": {"type": "integer", "minimum": 0}}})),
    "responses": {"200": answer_of::<MaintenanceState>("Maintenance"), "400": validation()}})
}

/// `GET /admin/dashboard`.
pub fn get_admin_dashboard(_: &Context) -> Value {
    json!({"summary": "The operators' page: the sunset's verdict, the totals, the busiest clients, and each client's migration in pages; it asks for an admin token.",
    "tags": ["admin"], "security": [],
    "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": string()}}}}})
}

/// `GET /admin/dashboard/:module`.
pub fn get_admin_dashboard_module(_: &Context) -> Value {
    json!({"summary": "One of the dashboard's JavaScript modules (app.js, format.js, chart.js).",
    "tags": ["admin"], "security": [],
    "parameters": [{"name": "module", "in": "path", "required": true, "schema": {"type": "string", "enum": ["app.js", "format.js", "chart.js"]}}],
    "responses": {"200": {"description": "The module", "content": {"text/javascript": {"schema": string()}}},
        "404": answer("No such module", None)}})
}

/// `GET /api/migration`.
pub fn get_api_migration(c: &Context) -> Value {
    json!({"summary": "The caller's own migration record (any valid token).", "tags": ["migration"],
    "parameters": [version_query(DESCRIBED)],
    "responses": {"200": answer("The record", Some(schema_for_versions::<OwnRecord>(c))), "400": validation()}})
}

/// `GET /admin/versions/:version/readiness`.
pub fn get_admin_versions_version_readiness(_: &Context) -> Value {
    let version =
        json!({"name": "version", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}});
    readiness(
        "Whether the version can be turned off without breaking a client that called it within the window.",
        version,
        schema_of::<VersionVerdict>(),
        "No such version",
    )
}

/// `GET /.well-known/api-catalog`.
pub fn get_api_catalog(_: &Context) -> Value {
    json!({"summary": "The API catalog (RFC 9727): each version's base URL, OpenAPI document, docs and retirement, as an RFC 9264 linkset.",
    "tags": ["operations"],
    "responses": {"200": {"description": "The linkset", "content": {"application/linkset+json": {"schema": object(
        json!({"linkset": {"type": "array", "items": {"type": "object", "required": ["anchor"],
            "properties": {"anchor": string()}, "additionalProperties": {"type": "array", "items": object(
                json!({"href": string(), "type": string(), "title": string()}), &["href"])}}}}), &["linkset"])}}}}})
}

/// `HEAD /.well-known/api-catalog`.
pub fn head_api_catalog(_: &Context) -> Value {
    json!({"summary": "Where the API catalog is: `Link: </.well-known/api-catalog>; rel=\"api-catalog\"`.",
    "tags": ["operations"],
    "responses": {"200": {"description": "No body; the Link header", "headers": {"Link": {"schema": string()}}}}})
}

/// `GET /api/migration/guide`.
pub fn get_api_migration_guide(_: &Context) -> Value {
    json!({"summary": "The caller's own migration guide, from its own traffic: JSON, markdown or HTML by Accept.",
    "tags": ["migration"],
    "parameters": [version_query("The retiring version; default: the oldest that has a successor.")],
    "responses": {"200": guide_answer(), "400": validation(), "406": answer("Neither JSON, markdown nor HTML accepted", None)}})
}

/// `GET /admin/migration/guide`.
pub fn get_admin_migration_guide(_: &Context) -> Value {
    json!({"summary": "Any client's migration guide: JSON, markdown or HTML by Accept.",
    "tags": ["migration"],
    "parameters": [version_query("The retiring version; default: the oldest that has a successor."),
        {"name": "tenant", "in": "query", "required": true, "schema": {"type": "string"}},
        {"name": "subject", "in": "query", "required": true, "schema": {"type": "string"}}],
    "responses": {"200": guide_answer(), "400": validation(), "404": answer("A client never seen on the version", None),
        "406": answer("Neither JSON, markdown nor HTML accepted", None)}})
}

/// `GET /admin/clients/:tenant/:subject/guide`.
pub fn get_admin_clients_tenant_subject_guide(_: &Context) -> Value {
    let path = |name: &str| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}});
    json!({"summary": "One client's migration guide as an admin opens it (its title names tenant and subject): JSON, markdown or HTML by format or Accept.",
    "tags": ["migration"],
    "parameters": [path("tenant"), path("subject"),
        version_query("The retiring version; default: the oldest that has a successor."),
        {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": ["json", "markdown", "html"]}}],
    "responses": {"200": guide_answer(), "400": validation(), "404": answer("A client never seen on the version", None),
        "406": answer("Neither JSON, markdown nor HTML accepted", None)}})
}

/// `GET /admin/migration`.
pub fn get_admin_migration(c: &Context) -> Value {
    let statuses = json!({"type": "string", "enum": ["not-started", "in-progress", "ready", "done", "unknown"]});
    json!({"summary": "A page of the version's clients, at risk first (met a change, never rehearsed, most requests), with the count of every client the filter admits by status; every client and route as CSV (streamed) with Accept: text/csv or format=csv.",
    "tags": ["migration"], "parameters": [version_query("The retiring version."),
        {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": ["json", "csv"]}},
        limit_query(), cursor_query(),
        {"name": "page", "in": "query", "required": false, "description": "A numbered page (1-based) instead of a cursor.", "schema": {"type": "integer", "minimum": 1}},
        {"name": "status", "in": "query", "required": false, "schema": statuses},
        {"name": "tenant", "in": "query", "required": false, "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}},
        {"name": "q", "in": "query", "required": false, "description": "Part of the tenant or the subject (case counts).", "schema": {"type": "string", "maxLength": 255}},
        {"name": "changes", "in": "query", "required": false, "description": "met: clients whose requests met a change of the successor; none: the others.", "schema": {"type": "string", "enum": ["met", "none"]}},
        {"name": "sort", "in": "query", "required": false, "description": "The order of the pages: at-risk (the default), requests (most first) or last-seen (most recent first), each then by tenant and subject.", "schema": {"type": "string", "enum": ["at-risk", "requests", "last-seen"], "default": "at-risk"}}],
    "responses": {"200": {"description": "Records", "content": {
        "application/json": {"schema": schema_for_versions::<MigrationPage>(c)},
        "text/csv": {"schema": string()}}}, "400": validation()}})
}

/// `GET /admin/tenants`.
pub fn get_admin_tenants(_: &Context) -> Value {
    json!({"summary": "Every tenant pinned to a default version.", "tags": ["migration"],
    "responses": {"200": answer_of::<PinList>("Pins")}})
}

/// `GET /admin/tenants/:tenant/default-version`.
pub fn get_admin_tenants_tenant_default_version(_: &Context) -> Value {
    json!({"summary": "A tenant's default version.", "tags": ["migration"],
    "parameters": [tenant_parameter()], "responses": {"200": answer_of::<PinAnswer>("The pin"), "400": validation()}})
}

/// `PUT /admin/tenants/:tenant/default-version`.
pub fn put_admin_tenants_tenant_default_version(_: &Context) -> Value {
    json!({"summary": "Pins a tenant's unversioned requests to a version, on every instance within 2 s (audited).",
    "tags": ["migration"], "parameters": [tenant_parameter()],
    "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["version"], "properties": {"version": {"type": "integer"}}})),
    "responses": {"200": answer_of::<PinAnswer>("The pin"), "400": validation()}})
}

/// `DELETE /admin/tenants/:tenant/default-version`.
pub fn delete_admin_tenants_tenant_default_version(_: &Context) -> Value {
    json!({"summary": "Returns a tenant to TANDEM_DEFAULT_VERSION (audited).", "tags": ["migration"],
    "parameters": [tenant_parameter()], "responses": {"200": answer_of::<PinAnswer>("The pin"), "400": validation()}})
}

/// `GET /admin/brownouts`.
pub fn get_admin_brownouts(_: &Context) -> Value {
    json!({"summary": "The brownouts operators set (newest first) and those of the settings.", "tags": ["migration"],
    "responses": {"200": answer_of::<BrownoutList>("Brownouts")}})
}

/// `POST /admin/brownouts`.
pub fn post_admin_brownouts(_: &Context) -> Value {
    json!({"summary": "A brownout of a version, or of one element deprecated inside a version, for everyone, a tenant, or one subject of a tenant, on every instance within 2 s (audited).",
    "tags": ["migration"],
    "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["start", "end"],
        "description": "Exactly one of version and deprecation.",
        "properties": {"version": {"type": "integer"}, "deprecation": string(), "start": time(), "end": time(),
            "tenant": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}, "subject": {"type": "string", "minLength": 1, "maxLength": 255}}})),
    "responses": {"201": {"description": "Created", "headers": {"Location": {"schema": string()}},
        "content": {"application/json": {"schema": schema_of::<BrownoutAnswer>()}}}, "400": validation()}})
}

/// `DELETE /admin/brownouts/:id`.
pub fn delete_admin_brownouts_id(_: &Context) -> Value {
    json!({"summary": "Ends a brownout now (audited).", "tags": ["migration"],
    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
    "responses": {"200": answer_of::<BrownoutAnswer>("The brownout, ended"), "400": validation(), "404": answer("No such brownout", None)}})
}

/// `GET /admin/audit`.
pub fn get_admin_audit(_: &Context) -> Value {
    json!({"summary": "Every change made through /admin/…, newest first.", "tags": ["admin"],
    "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
    "responses": {"200": answer_of::<AuditEntries>("Entries"), "400": validation()}})
}

/// One operation outside the versions as the router's table declares it.
pub struct Operation {
    /// As the table writes it: `/problems/:slug`.
    pub path: String,
    pub access: Access,
    pub method: Method,
    /// `None`: described elsewhere (a version's catalogue, deprecation page or this document).
    pub describe: Option<Describe>,
}

/// The document for the declared operations.
pub fn document(operations: &[Operation], registry: &Registry) -> anyhow::Result<String> {
    let version = registry.lineup().described().unwrap_or(registry.default_version());
    let context = Context { version, successor: registry.successor_version(version).unwrap_or(version) };
    let mut paths = serde_json::Map::new();
    for route in operations {
        let Some(describe) = route.describe else { continue };
        let mut operation = describe(&context);
        if route.access != Access::Public && operation.get("security").is_none() {
            operation["security"] = json!([{"BearerAuth": []}]);
            operation["responses"]["401"] = json!({"description": "Missing, malformed, expired or badly signed token"});
        }
        if route.access == Access::Admin {
            operation["responses"]["403"] = json!({"description": "Not an admin token, or one bound to a tenant"});
        }
        let path = route
            .path
            .split('/')
            .map(|s| s.strip_prefix(':').map_or(s.to_string(), |p| format!("{{{p}}}")))
            .collect::<Vec<_>>()
            .join("/");
        paths.entry(path).or_insert_with(|| json!({}))[route.method.as_str().to_ascii_lowercase()] = operation;
    }
    let document = json!({
        "openapi": "3.0.0",
        "info": {"title": "Tandem operations", "version": "1",
                 "description": "The routes outside the API versions: health, metrics, the version list, problem pages, each client's migration record, and the operators' routes under /admin (an admin token not bound to a tenant)."},
        "tags": [{"name": "operations"}, {"name": "admin"}, {"name": "migration"}, {"name": "notices"}],
        "paths": paths,
        "components": {"securitySchemes": {"BearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}},
    });
    Ok(serde_json::to_string_pretty(&document)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_is_described_by_its_own_declaration() {
        let registry = Registry::new(&crate::versions::all(), &crate::settings::VersionSettings::default()).unwrap();
        let operations = [
            Operation {
                path: "/admin/brownouts/:id".into(),
                access: Access::Admin,
                method: Method::DELETE,
                describe: Some(delete_admin_brownouts_id),
            },
            Operation {
                path: "/docs/v1/deprecation".into(),
                access: Access::Public,
                method: Method::GET,
                describe: None,
            },
        ];
        let document: Value = serde_json::from_str(&document(&operations, &registry).unwrap()).unwrap();
        let paths = document["paths"].as_object().unwrap();
        assert_eq!(paths.keys().collect::<Vec<_>>(), ["/admin/brownouts/{id}"]);
        let operation = &paths["/admin/brownouts/{id}"]["delete"];
        assert_eq!(operation["security"], json!([{"BearerAuth": []}]));
        assert!(operation["responses"]["403"].is_object() && operation["responses"]["404"].is_object());
    }
}
