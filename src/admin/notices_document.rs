//! The operations document's entries for notices to clients (the book's clients/notices.md).

use serde_json::{Value, json};

use super::document::{Context, answer, cursor_query, json_body, string, tenant_parameter, time, validation};
use crate::{
    notices::answers::{Acknowledgement, EndpointSet, EndpointShown, NoticePage},
    wire::described::schema_of,
};

fn endpoint_request() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["url"], "properties": {
        "url": {"type": "string", "format": "uri", "description": "https; not an internal address unless TANDEM_NOTICES_ALLOW_HOSTS lists its host. For the format email: mailto: and one address."},
        "format": {"type": "string", "enum": ["standard", "slack", "email"], "default": "standard",
                   "description": "email needs TANDEM_SMTP_URL (else 400 email_not_configured)."}}})
}

fn limit_query() -> Value {
    json!({"name": "limit", "in": "query", "required": false, "description": "Notices in the page (default 100).",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000}})
}

/// `GET /api/migration/notices`.
pub fn get_api_migration_notices(_: &Context) -> Value {
    json!({"summary": "Where the caller's owners are told: its own notice endpoint, without its secret.", "tags": ["notices"],
    "responses": {"200": answer("The endpoint", Some(schema_of::<EndpointShown>())), "404": answer("No endpoint", None)}})
}

/// `PUT /api/migration/notices`.
pub fn put_api_migration_notices(_: &Context) -> Value {
    json!({"summary": "Sets the caller's notice endpoint, with a new signing secret shown only in this answer.",
    "tags": ["notices"], "requestBody": json_body(endpoint_request()),
    "responses": {"200": answer("The endpoint and its secret", Some(schema_of::<EndpointSet>())), "400": validation()}})
}

/// `DELETE /api/migration/notices`.
pub fn delete_api_migration_notices(_: &Context) -> Value {
    json!({"summary": "Removes the caller's notice endpoint.", "tags": ["notices"],
    "responses": {"204": answer("Removed", None), "404": answer("No endpoint", None)}})
}

/// `GET /api/migration/notices/deliveries`.
pub fn get_api_migration_notices_deliveries(_: &Context) -> Value {
    json!({"summary": "The notices about the caller, newest first, and how each was delivered.", "tags": ["notices"],
    "parameters": [limit_query(), cursor_query()],
    "responses": {"200": answer("Notices", Some(schema_of::<NoticePage>())), "400": validation()}})
}

/// `PUT /api/migration/acknowledgement`.
pub fn put_api_migration_acknowledgement(_: &Context) -> Value {
    json!({"summary": "Records that the caller's owners accept the current sunset date of a version, or of an element deprecated inside its version (shown in readiness).",
    "tags": ["notices"],
    "requestBody": json_body(json!({"type": "object", "additionalProperties": false, "required": ["sunsetAt"],
        "description": "Exactly one of version and deprecation.",
        "properties": {"version": {"type": "integer"}, "deprecation": string(), "sunsetAt": time()}})),
    "responses": {"200": answer("The acknowledgement", Some(schema_of::<Acknowledgement>())),
        "400": validation(), "409": answer("Not the current sunset", None)}})
}

/// `GET /admin/tenants/:tenant/notices`.
pub fn get_admin_tenants_tenant_notices(_: &Context) -> Value {
    json!({"summary": "The notice endpoint of every client of a tenant, without its secret.", "tags": ["notices"],
    "parameters": [tenant_parameter()],
    "responses": {"200": answer("The endpoint", Some(schema_of::<EndpointShown>())), "400": validation(), "404": answer("No endpoint", None)}})
}

/// `PUT /admin/tenants/:tenant/notices`.
pub fn put_admin_tenants_tenant_notices(_: &Context) -> Value {
    json!({"summary": "Sets the notice endpoint of every client of a tenant, with a new secret shown only in this answer.",
    "tags": ["notices"], "parameters": [tenant_parameter()], "requestBody": json_body(endpoint_request()),
    "responses": {"200": answer("The endpoint and its secret", Some(schema_of::<EndpointSet>())), "400": validation()}})
}

/// `DELETE /admin/tenants/:tenant/notices`.
pub fn delete_admin_tenants_tenant_notices(_: &Context) -> Value {
    json!({"summary": "Removes a tenant's notice endpoint.", "tags": ["notices"], "parameters": [tenant_parameter()],
    "responses": {"204": answer("Removed", None), "400": validation(), "404": answer("No endpoint", None)}})
}

/// `GET /admin/notices`.
pub fn get_admin_notices(_: &Context) -> Value {
    json!({"summary": "Every notice, newest first, and how each was delivered.", "tags": ["notices"],
    "parameters": [
        {"name": "tenant", "in": "query", "required": false, "schema": {"type": "string", "pattern": "^[a-z0-9-]{1,63}$"}},
        {"name": "status", "in": "query", "required": false, "schema": {"type": "string", "enum": ["pending", "delivered", "failed"]}},
        limit_query(), cursor_query()],
    "responses": {"200": answer("Notices", Some(schema_of::<NoticePage>())), "400": validation()}})
}

fn token_query() -> Value {
    json!({"name": "token", "in": "query", "required": true, "description": "The token the e-mail's link carries.",
           "schema": {"type": "string"}})
}

fn link_page(summary: &str) -> Value {
    json!({"summary": summary, "tags": ["notices"], "security": [], "parameters": [token_query()],
    "responses": {"200": {"description": "The page", "content": {"text/html": {"schema": string()}}},
                  "400": validation(), "410": answer("The link expired, or its endpoint was removed or set again", None)}})
}

fn link_action(summary: &str) -> Value {
    json!({"summary": summary, "tags": ["notices"], "security": [], "parameters": [token_query()],
    "responses": {"200": {"description": "Done: the endpoint as it is now (a page, to a browser)",
                          "content": {"application/json": {"schema": schema_of::<EndpointShown>()}, "text/html": {"schema": string()}}},
                  "400": validation(), "410": answer("The link expired, or its endpoint was removed or set again", None)}})
}

/// `GET /api/migration/notices/confirm`.
pub fn get_api_migration_notices_confirm(_: &Context) -> Value {
    link_page("The page an e-mail endpoint's confirmation link opens: one button, which POSTs here. Changes nothing.")
}

/// `POST /api/migration/notices/confirm`.
pub fn post_api_migration_notices_confirm(_: &Context) -> Value {
    link_action(
        "Confirms an e-mail endpoint's address (within 7 days of its setting); notices are sent to it from then on.",
    )
}

/// `GET /api/migration/notices/unsubscribe`.
pub fn get_api_migration_notices_unsubscribe(_: &Context) -> Value {
    link_page("The page an e-mail's unsubscribe link opens: one button, which POSTs here. Changes nothing.")
}

/// `POST /api/migration/notices/unsubscribe`.
pub fn post_api_migration_notices_unsubscribe(_: &Context) -> Value {
    link_action("Disables the e-mail endpoint (RFC 8058 one-click unsubscribe); no other authentication.")
}
