//! An older version's request as its changes see it on the way to the newer version.

use poem::http::HeaderMap;
use serde_json::Value;

use crate::core::{fields::FieldError, users::BodyPolicy};

/// What a request migration may read and alter.
pub struct OlderRequest<'a> {
    /// `POST /users`: the older version's method and route template.
    pub operation: &'a str,
    /// The query as `name=value` pairs, still percent-encoded, in the client's order; only the
    /// parameters the older operation declares.
    pub query: Vec<(String, String)>,
    pub headers: &'a mut HeaderMap,
    /// The JSON body, when the request has one that parses. Read through [`OlderRequest::body`]
    /// and rewritten only through [`OlderRequest::body_mut`], which forgets `strictest`.
    pub(super) body: Option<Value>,
    /// Whether a migration rewrote `body`.
    pub(super) body_changed: bool,
    /// The newer version's body policy, which a change may relax.
    pub policy: &'a mut BodyPolicy,
    /// What the strictest user rules refuse in which fields `body` names, once a change asked.
    strictest: Option<Vec<FieldError>>,
    /// What in the request met the change whose migration runs now ([`OlderRequest::met_by`]).
    details: Vec<String>,
}

impl<'a> OlderRequest<'a> {
    pub fn new(
        operation: &'a str,
        query: Vec<(String, String)>,
        headers: &'a mut HeaderMap,
        body: Option<Value>,
        policy: &'a mut BodyPolicy,
    ) -> Self {
        Self { operation, query, headers, body, body_changed: false, policy, strictest: None, details: Vec::new() }
    }

    /// Notes what in the request met the change: a parameter (`sortBy=name`, with its value only
    /// when the API defines the values), a body field's pointer (`/role`), a missing field (`/age
    /// missing`), a header's name. Never a value the client chose freely: the migration workbench
    /// keeps these per client (the book's clients/guide.md).
    pub fn met_by(&mut self, detail: impl Into<String>) {
        self.details.push(detail.into());
    }

    /// A body field's pointer as a detail: the field's name when it reads as one, else a
    /// placeholder (a client may send any key; the workbench keeps none it cannot vouch for).
    pub fn met_by_field(&mut self, pointer: &str) {
        let name = pointer.strip_prefix('/').unwrap_or(pointer);
        let plain = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        self.met_by(if plain { format!("/{name}") } else { "/(unnamed field)".to_string() });
    }

    /// The details noted since the last call.
    pub fn take_details(&mut self) -> Vec<String> {
        std::mem::take(&mut self.details)
    }

    /// The JSON body, when the request has one that parses.
    pub fn body(&self) -> Option<&Value> {
        self.body.as_ref()
    }

    /// The JSON body, to rewrite: the newer version then reads the rewritten one.
    pub fn body_mut(&mut self) -> Option<&mut Value> {
        self.body_changed |= self.body.is_some();
        self.strictest = None;
        self.body.as_mut()
    }

    /// What the newer version's strictest rules refuse in which fields the body names, read as
    /// a user (nothing without a body): read once, however many changes ask.
    pub fn strictest_presence_errors(&mut self) -> &[FieldError] {
        let body = self.body.as_ref();
        self.strictest
            .get_or_insert_with(|| body.map(|body| BodyPolicy::STRICTEST.presence_errors(body)).unwrap_or_default())
    }

    /// The first value of a query parameter, percent-decoded.
    pub fn parameter(&self, name: &str) -> Option<String> {
        let (_, raw) = self.query.iter().find(|(key, _)| key == name)?;
        Some(
            form_urlencoded::parse(format!("v={raw}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default(),
        )
    }

    /// Removes a parameter, answering whether it was there.
    pub fn remove_parameter(&mut self, name: &str) -> bool {
        let before = self.query.len();
        self.query.retain(|(key, _)| key != name);
        self.query.len() != before
    }

    /// Adds a parameter whose value needs no encoding.
    pub fn add_parameter(&mut self, name: &str, value: String) {
        self.query.push((name.to_string(), value));
    }

    /// Removes a header, answering whether it was there.
    pub fn remove_header(&mut self, name: &str) -> bool {
        self.headers.remove(name).is_some()
    }
}

/// `a=1&b=2` → pairs, keeping only `declared` names.
pub fn declared_pairs(query: Option<&str>, declared: &[String]) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            declared.iter().any(|d| d == key).then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

/// Pairs → `a=1&b=2`, or `None` when empty.
pub fn encode(pairs: &[(String, String)]) -> Option<String> {
    (!pairs.is_empty()).then(|| pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_declared_parameters_pass_and_come_back_as_sent() {
        let declared = vec!["page".to_string(), "sortBy".to_string()];
        let pairs = declared_pairs(Some("page=1&keyword=x&sortBy=na%6De&flag"), &declared);
        assert_eq!(encode(&pairs).as_deref(), Some("page=1&sortBy=na%6De"));
        let (mut headers, mut policy) = (HeaderMap::new(), BodyPolicy { strict: true, age_required: true });
        let request = OlderRequest::new("GET /x", pairs, &mut headers, None, &mut policy);
        assert_eq!(request.parameter("sortBy").as_deref(), Some("name"));
        assert_eq!(encode(&[]), None);
    }

    #[test]
    fn the_strictest_reading_is_kept_until_a_change_rewrites_the_body() {
        use serde_json::json;

        use crate::core::fields::{Location, Rule};
        let (mut headers, mut policy) = (HeaderMap::new(), BodyPolicy::STRICTEST);
        let body = json!({"name": "Ada", "email": "ada@example.com", "role": "admin"});
        let mut request = OlderRequest::new("POST /users", Vec::new(), &mut headers, Some(body), &mut policy);
        let rules_of =
            |errors: &[FieldError]| errors.iter().map(|e| (e.location.clone(), e.rule.clone())).collect::<Vec<_>>();
        let first = rules_of(request.strictest_presence_errors());
        assert_eq!(
            first,
            [(Location::Body("/age".into()), Rule::Required), (Location::Body("/role".into()), Rule::ReadOnly)]
        );
        let body = request.body_mut().unwrap();
        body["age"] = json!(36);
        body.as_object_mut().unwrap().remove("role");
        assert_eq!(request.strictest_presence_errors(), &[] as &[FieldError], "read again after the rewrite");
        let (mut headers, mut policy) = (HeaderMap::new(), BodyPolicy::STRICTEST);
        assert!(
            OlderRequest::new("GET /x", Vec::new(), &mut headers, None, &mut policy)
                .strictest_presence_errors()
                .is_empty()
        );
    }
}
