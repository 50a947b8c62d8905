//! A response read whole, for exact assertions.

use reqwest::header::HeaderMap;
use serde_json::Value;

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `errors` items as (location, code) pairs.
    pub fn error_codes(&self) -> Vec<(String, String)> {
        let body = self.json();
        body["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("no errors array: {body}"))
            .iter()
            .map(|e| {
                let location = e["pointer"].as_str().or(e["parameter"].as_str()).or(e["header"].as_str()).unwrap_or("");
                (location.to_string(), e["code"].as_str().unwrap_or("").to_string())
            })
            .collect()
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.text);
        self
    }
}

pub async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body read");
    Reply { status, headers, text }
}
