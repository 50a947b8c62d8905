//! The OpenAPI document of the routes outside the versions: health, metrics, the version list,
//! problem pages, the change catalogues, a client's migration record and the operators' routes.
//! Served at `/api/operations/openapi.json` and written to `versions/operations/openapi.json`.
//!
//! Routes and methods come from the router's own table ([`FixedRoutes`]); this file adds what
//! each operation takes and answers. An operation of the table without an entry here, or an
//! entry without its operation, fails to build the document (a test builds it).

use serde_json::{Value, json};

use crate::{
    dispatch::Dispatch,
    http::fixed::{Access, FixedRoutes},
};

/// Where the document is served.
pub const PATH: &str = "/api/operations/openapi.json";

fn string() -> Value {
    json!({"type": "string"})
}

fn time() -> Value {
    json!({"type": "string", "format": "date-time"})
}

fn nullable(mut schema: Value) -> Value {
    schema["nullable"] = json!(true);
    schema
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn tenant_parameter() -> Value {
    json!({"name": "tenant", "in": "path", "required": true,
           "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}})
}

fn version_query(description: &str) -> Value {
    json!({"name": "version", "in": "query", "required": false, "description": description,
           "schema": {"type": "integer", "minimum": 1, "maximum": 65535}})
}

fn pin() -> Value {
    object(
        json!({"tenant": string(), "version": {"type": "integer"}, "previous": nullable(json!({"type": "integer"})),
               "changedAt": nullable(time()), "changedBy": nullable(string())}),
        &["tenant", "version", "previous", "changedAt", "changedBy"],
    )
}

fn brownout() -> Value {
    object(
        json!({"id": {"type": "string", "format": "uuid"}, "version": {"type": "integer"}, "start": time(),
               "end": time(), "tenant": nullable(string()), "subject": nullable(string()), "createdAt": time(),
               "createdBy": string(), "endedAt": nullable(time())}),
        &["id", "version", "start", "end", "tenant", "subject", "createdAt", "createdBy", "endedAt"],
    )
}

/// A client's record for the version that retires first, and the one after it.
fn record(version: u16, successor: u16) -> Value {
    let route = object(
        json!({"method": string(), "route": string(), "requests": {"type": "integer"}, "firstSeen": time(),
               "lastSeen": time(), "successor": nullable(string()),
               "changes": {"type": "array", "items": string()},
               "exposures": {"type": "array", "items": object(
                   json!({"change": string(), "requests": {"type": "integer"}, "lastSeen": time()}),
                   &["change", "requests", "lastSeen"])}}),
        &["method", "route", "requests", "firstSeen", "lastSeen", "successor", "changes", "exposures"],
    );
    let (old, new) = (format!("lastV{version}Request"), format!("lastV{successor}Request"));
    let mut properties = json!({
        "tenant": string(), "subject": string(), "version": {"type": "integer"},
        "status": {"type": "string", "enum": ["done", "ready", "in-progress", "not-started", "unknown"]},
        "deprecatedAt": nullable(time()), "sunsetAt": nullable(time()), "daysLeft": nullable(json!({"type": "integer"})),
        "lastRehearsal": nullable(time()), "brownoutRefusals": {"type": "integer"},
        "routes": {"type": "array", "items": route},
    });
    properties[&old] = nullable(time());
    properties[&new] = nullable(time());
    let required = [
        "tenant",
        "subject",
        "version",
        "status",
        "deprecatedAt",
        "sunsetAt",
        "daysLeft",
        &old,
        &new,
        "lastRehearsal",
        "brownoutRefusals",
        "routes",
    ];
    object(properties, &required)
}

fn json_body(schema: Value) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema}}})
}

fn answer(description: &str, schema: Option<Value>) -> Value {
    match schema {
        Some(schema) => json!({"description": description, "content": {"application/json": {"schema": schema}}}),
        None => json!({"description": description}),
    }
}

/// What each operation takes and answers, by route (as the router writes it) and method.
fn operations(version: u16, successor: u16) -> Vec<(&'static str, &'static str, Value)> {
    let any = json!({"type": "object"});
    let validation = answer("Bad input: every bad field, parameter or header listed", None);
    vec![
        (
            "/health/live",
            "get",
            json!({"summary": "200 while the process serves.", "tags": ["operations"],
            "responses": {"200": answer("Live", Some(any.clone()))}}),
        ),
        (
            "/health/ready",
            "get",
            json!({"summary": "200 when the database (and Redis, when configured) answer; 503 naming what failed, or while draining.",
            "tags": ["operations"], "responses": {"200": answer("Ready", Some(any.clone())), "503": answer("Not ready; see Retry-After", Some(any.clone()))}}),
        ),
        (
            "/problems/:slug",
            "get",
            json!({"summary": "A short HTML page explaining a problem type.", "tags": ["operations"],
            "parameters": [{"name": "slug", "in": "path", "required": true, "schema": string()}],
            "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": string()}}}, "404": answer("No such problem type", None)}}),
        ),
        (
            "/api",
            "options",
            json!({"summary": "The versions, their lifecycle dates and their OpenAPI links.", "tags": ["operations"],
            "responses": {"200": answer("Versions", Some(any.clone()))}}),
        ),
        (
            "/metrics",
            "get",
            json!({"summary": "Prometheus text.", "tags": ["operations"],
            "responses": {"200": {"description": "Metrics", "content": {"text/plain": {"schema": string()}}}}}),
        ),
        (
            "/admin/usage",
            "get",
            json!({"summary": "Requests per client and route of a deprecated version, summed over every instance.",
            "tags": ["admin"], "parameters": [version_query("Default: the oldest version with an announced deprecation."),
                {"name": "since", "in": "query", "required": false, "schema": time()}],
            "responses": {"200": answer("Usage", Some(any.clone())), "400": validation.clone()}}),
        ),
        (
            "/admin/maintenance",
            "get",
            json!({"summary": "Maintenance mode as every instance applies it.", "tags": ["admin"],
            "responses": {"200": answer("Maintenance", Some(any.clone()))}}),
        ),
        (
            "/admin/maintenance",
            "put",
            json!({"summary": "Turns maintenance mode on or off for every instance (audited).", "tags": ["admin"],
            "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["enabled"],
                "properties": {"enabled": {"type": "boolean"}, "retryAfterSeconds": {"type": "integer", "minimum": 0}}})),
            "responses": {"200": answer("Maintenance", Some(any.clone())), "400": validation.clone()}}),
        ),
        (
            "/admin/dashboard",
            "get",
            json!({"summary": "The operators' page: usage and each client's migration; it asks for an admin token.",
            "tags": ["admin"], "security": [],
            "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": string()}}}}}),
        ),
        (
            "/api/migration",
            "get",
            json!({"summary": "The caller's own migration record (any valid token).", "tags": ["migration"],
            "parameters": [version_query("The retiring version; default: the oldest with an announced deprecation.")],
            "responses": {"200": answer("The record", Some(record(version, successor))), "400": validation.clone()}}),
        ),
        (
            "/admin/migration",
            "get",
            json!({"summary": "Every client seen on the version, at risk first, with a summary by status; CSV with Accept: text/csv or format=csv.",
            "tags": ["migration"], "parameters": [version_query("The retiring version."),
                {"name": "format", "in": "query", "required": false, "schema": {"type": "string", "enum": ["json", "csv"]}}],
            "responses": {"200": {"description": "Records", "content": {
                "application/json": {"schema": object(json!({"version": {"type": "integer"}, "successor": {"type": "integer"},
                    "summary": object(json!({"clients": {"type": "integer"}, "byStatus": {"type": "object", "additionalProperties": {"type": "integer"}}}), &["clients", "byStatus"]),
                    "records": {"type": "array", "items": record(version, successor)}}), &["version", "successor", "summary", "records"])},
                "text/csv": {"schema": string()}}}, "400": validation.clone()}}),
        ),
        (
            "/admin/tenants",
            "get",
            json!({"summary": "Every tenant pinned to a default version.", "tags": ["migration"],
            "responses": {"200": answer("Pins", Some(object(json!({"defaultVersion": {"type": "integer"}, "tenants": {"type": "array", "items": pin()}}), &["defaultVersion", "tenants"])))}}),
        ),
        (
            "/admin/tenants/:tenant/default-version",
            "get",
            json!({"summary": "A tenant's default version.", "tags": ["migration"],
            "parameters": [tenant_parameter()], "responses": {"200": answer("The pin", Some(pin())), "400": validation.clone()}}),
        ),
        (
            "/admin/tenants/:tenant/default-version",
            "put",
            json!({"summary": "Pins a tenant's unversioned requests to a version, on every instance within 2 s (audited).",
            "tags": ["migration"], "parameters": [tenant_parameter()],
            "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["version"], "properties": {"version": {"type": "integer"}}})),
            "responses": {"200": answer("The pin", Some(pin())), "400": validation.clone()}}),
        ),
        (
            "/admin/tenants/:tenant/default-version",
            "delete",
            json!({"summary": "Returns a tenant to TANDEM_DEFAULT_VERSION (audited).", "tags": ["migration"],
            "parameters": [tenant_parameter()], "responses": {"200": answer("The pin", Some(pin())), "400": validation.clone()}}),
        ),
        (
            "/admin/brownouts",
            "get",
            json!({"summary": "The brownouts operators set (newest first) and those of the settings.", "tags": ["migration"],
            "responses": {"200": answer("Brownouts", Some(object(json!({"brownouts": {"type": "array", "items": brownout()},
                "configured": {"type": "array", "items": object(json!({"version": {"type": "integer"}, "start": time(), "end": time()}), &["version", "start", "end"])}}),
                &["brownouts", "configured"])))}}),
        ),
        (
            "/admin/brownouts",
            "post",
            json!({"summary": "A brownout for everyone, a tenant, or one subject of a tenant, on every instance within 2 s (audited).",
            "tags": ["migration"],
            "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["version", "start", "end"],
                "properties": {"version": {"type": "integer"}, "start": time(), "end": time(),
                    "tenant": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}, "subject": {"type": "string", "minLength": 1, "maxLength": 255}}})),
            "responses": {"201": {"description": "Created", "headers": {"Location": {"schema": string()}},
                "content": {"application/json": {"schema": brownout()}}}, "400": validation.clone()}}),
        ),
        (
            "/admin/brownouts/:id",
            "delete",
            json!({"summary": "Ends a brownout now (audited).", "tags": ["migration"],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
            "responses": {"200": answer("The brownout, ended", Some(brownout())), "400": validation.clone(), "404": answer("No such brownout", None)}}),
        ),
        (
            "/admin/audit",
            "get",
            json!({"summary": "Every change made through /admin/…, newest first.", "tags": ["admin"],
            "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
            "responses": {"200": answer("Entries", Some(object(json!({"entries": {"type": "array", "items": object(
                json!({"at": time(), "actor": string(), "action": string(), "target": string(), "before": nullable(any.clone()), "after": nullable(any.clone())}),
                &["at", "actor", "action", "target", "before", "after"])}}), &["entries"]))), "400": validation}}),
        ),
    ]
}

/// The document for the routes in `fixed`. Errors name an operation that is routed but not
/// described here, or described but not routed.
pub fn document(fixed: &FixedRoutes, dispatch: &Dispatch) -> anyhow::Result<String> {
    let version = dispatch.retiring_version();
    let successor = dispatch.successor_version(version).unwrap_or(version);
    let mut described = operations(version, successor);
    let mut paths = serde_json::Map::new();
    for route in &fixed.0 {
        // Documents and catalogues of the versions are described by the versions' own pages.
        if route.path.ends_with("/deprecation") || route.path.ends_with("/changes") || route.path == PATH {
            continue;
        }
        for method in route.allow.split(", ") {
            let method = method.to_ascii_lowercase();
            let at = described.iter().position(|(p, m, _)| *p == route.path && *m == method);
            let (_, _, mut operation) =
                described.swap_remove(at.ok_or_else(|| anyhow::anyhow!("{method} {} is not documented", route.path))?);
            if route.access != Access::Public && operation.get("security").is_none() {
                operation["security"] = json!([{"BearerAuth": []}]);
                operation["responses"]["401"] =
                    json!({"description": "Missing, malformed, expired or badly signed token"});
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
            paths.entry(path).or_insert_with(|| json!({}))[method] = operation;
        }
    }
    if let Some((path, method, _)) = described.first() {
        anyhow::bail!("{method} {path} is documented but not routed");
    }
    let document = json!({
        "openapi": "3.0.0",
        "info": {"title": "Tandem operations", "version": "1",
                 "description": "The routes outside the API versions: health, metrics, the version list, problem pages, each client's migration record, and the operators' routes under /admin (an admin token not bound to a tenant)."},
        "tags": [{"name": "operations"}, {"name": "admin"}, {"name": "migration"}],
        "paths": paths,
        "components": {"securitySchemes": {"BearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}},
    });
    Ok(serde_json::to_string_pretty(&document)?)
}

#[cfg(test)]
mod tests {
    use poem::http::Method;

    use super::*;
    use crate::http::fixed::FixedRoute;

    #[test]
    fn every_routed_operation_is_described_and_nothing_else() {
        let dispatch = Dispatch::new(&crate::versions::all(), &crate::settings::VersionSettings::default()).unwrap();
        let live = FixedRoute::new("/health/live", Access::Public, &[Method::GET]);
        let routes = FixedRoutes(vec![live.clone()]);
        let err = document(&routes, &dispatch).unwrap_err().to_string();
        assert!(err.ends_with("is documented but not routed"), "{err}");
        let unknown = FixedRoute::new("/admin/secret", Access::Admin, &[Method::GET]);
        let err = document(&FixedRoutes(vec![live, unknown]), &dispatch).unwrap_err().to_string();
        assert_eq!(err, "get /admin/secret is not documented");
    }
}
