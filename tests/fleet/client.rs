//! What the scenarios send: tokens, requests, and reading `/metrics`.

use reqwest::{Client, Method, RequestBuilder};
use serde_json::{Value, json};

use crate::tokens::{self, now};

pub const TENANT: &str = "fleet";

/// A client's token in the fleet's tenant.
pub fn client_token(subject: &str) -> String {
    tokens::signed(&json!({"sub": subject, "exp": now() + 3600, "tenant": TENANT, "roles": []}))
}

pub fn admin_token() -> String {
    tokens::signed(&json!({"sub": "operator", "exp": now() + 3600, "roles": ["admin"]}))
}

pub fn request(client: &Client, method: Method, url: String, token: &str) -> RequestBuilder {
    client.request(method, url).bearer_auth(token).header("X-Tenant-ID", TENANT)
}

/// A v2 user body with this e-mail.
pub fn user(email: &str) -> Value {
    json!({"name": "Fleet User", "email": email, "age": 30})
}

/// The status of a request, or the transport error's text (a refused connection, a reset).
pub async fn status(request: RequestBuilder) -> Result<(u16, reqwest::header::HeaderMap, String), String> {
    let response = request.send().await.map_err(|e| format!("{e:?}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.text().await.map_err(|e| format!("{e:?}"))?;
    Ok((status, headers, body))
}

/// One sample's value from an instance's `/metrics` (0 when absent).
pub async fn metric(client: &Client, base: &str, name: &str) -> f64 {
    let Ok(response) = client.get(format!("{base}/metrics")).bearer_auth(admin_token()).send().await else {
        return f64::NAN;
    };
    let text = response.text().await.unwrap_or_default();
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok()).unwrap_or(0.0)
}
