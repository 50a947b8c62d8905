//! v2's rules applied to a v1 request, without running it: which of v2's changes
//! (`versions/v2/changes.json`) the request met. A change a client only gains from (search,
//! slices, ETags) is never met; one that would refuse or reshape what it sends or reads is.

use poem::http::Method;
use serde_json::Value;

use super::POLICY;
use crate::{
    core::{
        fields::{Location, Rule},
        user::USER_FIELDS,
    },
    dispatch::Observed,
};

/// v1's user operations whose answers carry a user (or a list of them).
fn shows_users(seen: &Observed) -> bool {
    let user_route = seen.route == "/users" || seen.route == "/users/{id}";
    user_route && *seen.method != Method::DELETE && (200..300).contains(&seen.status)
}

fn has_parameter(query: Option<&str>, name: &str) -> bool {
    query.unwrap_or("").split('&').any(|pair| pair.split('=').next() == Some(name))
}

/// What v2's body rules say of a v1 create, replace or merge patch.
fn body_rules(seen: &Observed, met: &mut Vec<&'static str>) {
    let Some(body) = seen.body.and_then(|b| serde_json::from_slice::<Value>(b).ok()) else { return };
    match (seen.method, seen.route) {
        (&Method::POST, "/users") | (&Method::PUT, "/users/{id}") => {
            let errors = POLICY.read_user(&body).err().unwrap_or_default();
            if errors.iter().any(|e| matches!(e.rule, Rule::UnknownField | Rule::ReadOnly)) {
                met.push("strict-bodies");
            }
            let age = |e: &&crate::core::fields::FieldError| e.location == Location::Body("/age".into());
            if errors.iter().filter(age).any(|e| e.rule == Rule::Required) {
                met.push("age-required");
            }
        }
        // A merge patch names fields to change: v2 refuses any it does not know.
        (&Method::PATCH, "/users/{id}") => {
            let unknown =
                body.as_object().is_some_and(|fields| fields.keys().any(|k| !USER_FIELDS.contains(&k.as_str())));
            if unknown {
                met.push("strict-bodies");
            }
        }
        _ => {}
    }
}

pub fn check(seen: &Observed) -> Vec<&'static str> {
    let mut met = Vec::new();
    if shows_users(seen) {
        met.extend(["user-id-uuid", "user-fields-added"]);
        if seen.route == "/users" && *seen.method == Method::GET {
            met.push("users-list-envelope");
        }
    }
    match (seen.method, seen.route) {
        (&Method::GET, "/customers") if has_parameter(seen.query, "sortBy") => met.push("sort-parameter"),
        (&Method::GET, "/customers/branch") => met.push("branch-filter-in-query"),
        (&Method::POST, "/upload") | (&Method::GET, "/imports/{id}") => met.push("imports-path"),
        _ => {}
    }
    body_rules(seen, &mut met);
    if seen.status >= 400 {
        met.push("problem-details");
    }
    met
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen<'a>(
        method: &'a Method,
        route: &'a str,
        query: Option<&'a str>,
        body: Option<&'a str>,
        status: u16,
    ) -> Vec<&'static str> {
        check(&Observed { method, route, query, body: body.map(str::as_bytes), status })
    }

    #[test]
    fn what_v2_would_refuse_or_reshape_is_met() {
        let (get, post, patch) = (Method::GET, Method::POST, Method::PATCH);
        assert_eq!(seen(&get, "/users", None, None, 200), ["user-id-uuid", "user-fields-added", "users-list-envelope"]);
        let lenient = r#"{"name": "Ada", "email": "ada@example.com", "role": "admin"}"#;
        assert_eq!(
            seen(&post, "/users", None, Some(lenient), 201),
            ["user-id-uuid", "user-fields-added", "strict-bodies", "age-required"]
        );
        let strict = r#"{"name": "Ada", "email": "ada@example.com", "age": 36}"#;
        assert_eq!(seen(&post, "/users", None, Some(strict), 201), ["user-id-uuid", "user-fields-added"]);
        assert_eq!(seen(&patch, "/users/{id}", None, Some(r#"{"nick": "a"}"#), 200).last(), Some(&"strict-bodies"));
        assert_eq!(seen(&get, "/customers", Some("page=0&sortBy=name"), None, 200), ["sort-parameter"]);
        assert!(seen(&get, "/customers", Some("page=0"), None, 200).is_empty());
        assert_eq!(seen(&get, "/customers/branch", Some("branchCode=1"), None, 200), ["branch-filter-in-query"]);
        assert_eq!(seen(&get, "/users/{id}", None, None, 404), ["problem-details"]);
    }
}
