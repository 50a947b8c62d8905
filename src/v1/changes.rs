//! What changes from v1 to v2, each change declared once: its catalogue entry, its CHANGELOG row,
//! and the migrations that serve a v1 request through v2's handlers.

use poem::http::header;
use serde_json::{Map, Value};

use super::wire::USER_FIELDS_V1;
use crate::{
    changes::{Change, ChangeKind, NewerAnswer, OlderRequest, Operation, Serving, Touches},
    core::{
        customer::{BranchCode, CustomerSort},
        fields::{FieldError, Location, Rule},
        listing::SortField,
        user::USER_FIELDS,
    },
    wire::{
        error::{ApiError, render::BodyStyle},
        links::offset_links,
    },
};

const USER_ANSWERS: &[Operation] = &[
    Operation::get("/users"),
    Operation::post("/users"),
    Operation::get("/users/{id}"),
    Operation::put("/users/{id}"),
    Operation::patch("/users/{id}"),
];

pub const CHANGES: &[Change] = &[
    Change {
        id: "user-id-uuid",
        kind: ChangeKind::FieldTypeChanged,
        title: "user id",
        description: "A user's id is a UUID string instead of an integer. A path may still name a user by its v1 \
                      integer id, as a migration aid; every response shows the UUID.",
        instruction: "Read a user's id as a UUID string and keep that instead of the integer (a path still takes the integer, for now).",
        touches: Touches::Only(USER_ANSWERS),
        before: "integer",
        after: "UUID string (a path may still use the integer)",
        serving: Serving { response: Some(integer_ids), ..Serving::NONE },
    },
    Change {
        id: "user-fields-added",
        kind: ChangeKind::ShapeChanged,
        title: "user fields",
        description: "A user is shown with email, age, createdAt, updatedAt and version besides id and name.",
        instruction: "Nothing to send differently: read users with the new fields email, age, createdAt, updatedAt and version, or ignore them.",
        touches: Touches::Only(USER_ANSWERS),
        before: "`id`, `name`",
        after: "adds `email`, `age`, `createdAt`, `updatedAt`, `version`",
        serving: Serving { response: Some(v1_user_fields), ..Serving::NONE },
    },
    Change {
        id: "users-list-envelope",
        kind: ChangeKind::ShapeChanged,
        title: "GET /users",
        description: "The users list is a page envelope (content, pageable, totalElements, ...) instead of a JSON \
                      array with X-Total-Count and Link headers.",
        instruction: "Read the users from content, and the totals from totalElements and totalPages, instead of a JSON array with the X-Total-Count and Link headers.",
        touches: Touches::Only(&[Operation::get("/users")]),
        before: "JSON array; `X-Total-Count` and `Link` headers",
        after: "page envelope (`content`, `pageable`, `totalElements`, …)",
        serving: Serving { response: Some(array_with_links), ..Serving::NONE },
    },
    Change {
        id: "sort-parameter",
        kind: ChangeKind::ParameterChanged,
        title: "sorting",
        description: "Lists sort with sort=<field>,<asc|desc>, repeatable and applied in order, instead of \
                      sortBy=<field>; a sortBy parameter is not read.",
        instruction: "Send sort=<field>,asc instead of sortBy=<field>.",
        touches: Touches::Only(&[Operation::get("/customers")]),
        before: "none for users (customers: `sortBy=<field>` ascending)",
        after: "`sort=<field>,<asc\\|desc>`, repeatable, applied in order",
        serving: Serving { request: Some(sort_by), ..Serving::NONE },
    },
    Change {
        id: "branch-filter-in-query",
        kind: ChangeKind::ParameterChanged,
        title: "customers by branch",
        description: "The customers of a branch are GET /api/v2/customers?branchCode=...; the path \
                      /api/customers/branch/ does not exist in v2.",
        instruction: "Call GET /api/v2/customers?branchCode=<code> instead of /api/customers/branch/?branchCode=<code>.",
        touches: Touches::Only(&[Operation::get("/customers/branch")]),
        before: "`/api/customers/branch/?branchCode=…`",
        after: "`/api/v2/customers?branchCode=…`",
        serving: Serving {
            moves: &[("/customers/branch", "/customers")],
            request: Some(branch_in_query),
            ..Serving::NONE
        },
    },
    Change {
        id: "keyword-search",
        kind: ChangeKind::BehaviourChanged,
        title: "search",
        description: "Lists take keyword=... (case-insensitive, users on name and e-mail, customers on name, e-mail \
                      and customer number). v1 has no search.",
        instruction: "Nothing to change: filter a list with keyword=<text> where you searched it yourself.",
        touches: Touches::Only(&[Operation::get("/users"), Operation::get("/customers")]),
        before: "none",
        after: "`keyword=…` (case-insensitive, name and e-mail)",
        serving: Serving::NONE,
    },
    Change {
        id: "strict-bodies",
        kind: ChangeKind::BehaviourChanged,
        title: "unknown body fields",
        description: "A body with a field v2 does not know is refused with 400 (unknown_field, or read_only for \
                      internal fields such as id and role); v1 ignores them.",
        instruction: "Send only the fields v2 knows (name, email, age): drop every other field, such as id or role, from your request bodies.",
        touches: Touches::Only(&[
            Operation::post("/users"),
            Operation::put("/users/{id}"),
            Operation::patch("/users/{id}"),
        ]),
        before: "ignored",
        after: "400 (strict)",
        serving: Serving { request: Some(ignore_unknown_fields), ..Serving::NONE },
    },
    Change {
        id: "age-required",
        kind: ChangeKind::FieldAddedRequired,
        title: "age on create",
        description: "age is required when a user is created or replaced, and a patch cannot clear it; v1 lets \
                      it be absent.",
        instruction: "Send age when you create or replace a user, and never set it to null in a patch.",
        touches: Touches::Only(&[
            Operation::post("/users"),
            Operation::put("/users/{id}"),
            Operation::patch("/users/{id}"),
        ]),
        before: "optional",
        after: "required",
        serving: Serving { request: Some(age_optional), ..Serving::NONE },
    },
    Change {
        id: "problem-details",
        kind: ChangeKind::ShapeChanged,
        title: "error body",
        description: "Errors are RFC 9457 application/problem+json (type, title, status, detail, instance, \
                      correlationId, errors) instead of v1's {timestamp, status, error, message, path, correlationId, \
                      errors}.",
        instruction: "Read errors as application/problem+json (type, title, status, detail, instance, errors) instead of timestamp, error, message and path.",
        touches: Touches::Every,
        before: "the legacy shape above",
        after: "RFC 9457 `application/problem+json`",
        serving: Serving { errors: Some(BodyStyle::Legacy), ..Serving::NONE },
    },
    Change {
        id: "optimistic-concurrency",
        kind: ChangeKind::BehaviourChanged,
        title: "optimistic concurrency",
        description: "User responses carry an ETag; If-Match on PUT, PATCH and DELETE answers 412 when the user \
                      changed since, and If-None-Match on GET answers 304.",
        instruction: "v2 honours If-Match and If-None-Match, which v1 ignored: send the ETag you last read, and on 412 read the user again before retrying.",
        touches: Touches::Only(&[
            Operation::post("/users"),
            Operation::get("/users/{id}"),
            Operation::put("/users/{id}"),
            Operation::patch("/users/{id}"),
            Operation::delete("/users/{id}"),
        ]),
        before: "none",
        after: "`ETag`; `If-Match` mismatch 412; `If-None-Match` 304",
        serving: Serving { request: Some(no_preconditions), response: Some(no_etag), ..Serving::NONE },
    },
    Change {
        id: "keyset-slices",
        kind: ChangeKind::BehaviourChanged,
        title: "deep lists",
        description: "Lists also answer count=false slices without totals, with a nextCursor to pass back as \
                      cursor= for the next slice at the same cost at any depth.",
        instruction: "Nothing to change: for deep lists, pass count=false and follow nextCursor with cursor=.",
        touches: Touches::Only(&[
            Operation::get("/users"),
            Operation::get("/customers"),
            Operation::get("/customers/branch"),
        ]),
        before: "offset pages",
        after: "also `count=false` slices with `cursor=` keyset paging",
        serving: Serving::NONE,
    },
    Change {
        id: "imports-path",
        kind: ChangeKind::BehaviourChanged,
        title: "customer import",
        description: "Customers are imported with POST /api/v2/customers/imports and the report read at \
                      /api/v2/customers/imports/<id>, instead of POST /upload and /imports/<id>.",
        instruction: "Upload to POST /api/v2/customers/imports and read reports at /api/v2/customers/imports/<id>.",
        touches: Touches::Only(&[Operation::post("/upload"), Operation::get("/imports/{id}")]),
        before: "`POST /upload`, report at `/imports/<id>`",
        after: "`POST /api/v2/customers/imports`, report at `/api/v2/customers/imports/<id>`",
        serving: Serving {
            moves: &[("/upload", "/customers/imports"), ("/imports/{id}", "/customers/imports/{id}")],
            request: Some(always),
            ..Serving::NONE
        },
    },
];

/// A change every request of its routes meets: the path itself is v1's.
fn always(_: &mut OlderRequest) -> Result<bool, ApiError> {
    Ok(true)
}

/// v1's lists are sorted by id unless they say otherwise, and their envelope says so.
fn by_id(request: &mut OlderRequest) {
    request.add_parameter("sort", format!("{},asc", CustomerSort::ID.name()));
}

/// `sortBy=<field>` (ascending) is v2's `sort=<field>,asc`; a field v1 does not know is refused
/// as v1 always has.
fn sort_by(request: &mut OlderRequest) -> Result<bool, ApiError> {
    let Some(value) = request.parameter("sortBy") else {
        by_id(request);
        return Ok(false);
    };
    request.remove_parameter("sortBy");
    let Some(field) = CustomerSort::parse(value.trim()) else {
        // The value is not one the API defines: the name alone.
        request.met_by("sortBy");
        let rule = Rule::OneOf(CustomerSort::allowed());
        return Err(ApiError::validation(vec![FieldError::parameter("sortBy", rule)]));
    };
    request.met_by(format!("sortBy={}", field.name()));
    request.add_parameter("sort", format!("{},asc", field.name()));
    Ok(true)
}

/// `/customers/branch/?branchCode=` is v2's list with a `branchCode` filter, which v1 requires.
fn branch_in_query(request: &mut OlderRequest) -> Result<bool, ApiError> {
    let code = request.parameter("branchCode").unwrap_or_default();
    // The code is the client's own: the parameter's name alone.
    request.met_by("branchCode");
    BranchCode::parse(&code).map_err(|rule| ApiError::validation(vec![FieldError::parameter("branchCode", rule)]))?;
    by_id(request);
    Ok(true)
}

/// v1 ignores fields it does not know; met when v2 would refuse one.
fn ignore_unknown_fields(request: &mut OlderRequest) -> Result<bool, ApiError> {
    request.policy.strict = false;
    let refused: Vec<String> = if request.operation.starts_with("PATCH") {
        // A merge patch names fields to change: v2 refuses any it does not know.
        let fields = request.body().and_then(Value::as_object).into_iter().flat_map(|fields| fields.keys());
        fields.filter(|k| !USER_FIELDS.contains(&k.as_str())).map(|k| format!("/{k}")).collect()
    } else {
        let errors = request.strictest_presence_errors().iter();
        let unknown = errors.filter(|e| matches!(e.rule, Rule::UnknownField | Rule::ReadOnly));
        unknown
            .filter_map(|e| match &e.location {
                Location::Body(pointer) => Some(pointer.to_string()),
                _ => None,
            })
            .collect()
    };
    for pointer in &refused {
        request.met_by_field(pointer);
    }
    Ok(!refused.is_empty())
}

/// v1 lets `age` be absent; met when v2 would refuse its absence.
fn age_optional(request: &mut OlderRequest) -> Result<bool, ApiError> {
    request.policy.age_required = false;
    let (met, detail) = if request.operation.starts_with("PATCH") {
        (request.body().and_then(|body| body.get("age")).is_some_and(Value::is_null), "/age null")
    } else {
        let age = Location::Body("/age".into());
        (
            request.strictest_presence_errors().iter().any(|e| e.location == age && e.rule == Rule::Required),
            "/age missing",
        )
    };
    if met {
        request.met_by(detail);
    }
    Ok(met)
}

/// v1 has no preconditions: it never reads `If-Match` or `If-None-Match`.
fn no_preconditions(request: &mut OlderRequest) -> Result<bool, ApiError> {
    let mut met = false;
    for (name, header) in [("if-match", "If-Match"), ("if-none-match", "If-None-Match")] {
        if request.remove_header(name) {
            request.met_by(header);
            met = true;
        }
    }
    Ok(met)
}

fn no_etag(answer: &mut NewerAnswer) {
    answer.headers.remove(header::ETAG);
}

/// Every user an answer shows: the body itself, or each element of a list or a page's content.
fn users(body: &mut Value) -> Vec<&mut Map<String, Value>> {
    if body.get("content").is_some() {
        return users(&mut body["content"]);
    }
    match body {
        Value::Array(items) => items.iter_mut().filter_map(Value::as_object_mut).collect(),
        Value::Object(user) => vec![user],
        _ => Vec::new(),
    }
}

/// Each user's id (and a `Location`'s) as v1's integer.
fn integer_ids(answer: &mut NewerAnswer) {
    let ids = answer.ids;
    if let Some(body) = answer.body.as_deref_mut() {
        for user in users(body) {
            if let Some(id) = user.get("id").and_then(Value::as_str).and_then(|uuid| ids.of(uuid)) {
                user.insert("id".into(), Value::from(id));
            }
        }
    }
    let location = answer.headers.get(header::LOCATION).and_then(|l| l.to_str().ok()).map(str::to_string);
    if let Some((collection, last)) = location.as_deref().and_then(|l| l.rsplit_once('/'))
        && let Some(id) = ids.of(last)
        && let Ok(value) = [collection, "/", itoa::Buffer::new().format(id)].concat().parse()
    {
        answer.headers.insert(header::LOCATION, value);
    }
}

/// A user as v1 shows it: `id` and `name`, nothing else.
fn v1_user_fields(answer: &mut NewerAnswer) {
    if let Some(body) = answer.body.as_deref_mut() {
        for user in users(body) {
            user.retain(|name, _| USER_FIELDS_V1.contains(&name.as_str()));
        }
    }
}

/// The page envelope as v1's list: the array of users, with `X-Total-Count` and `Link`.
fn array_with_links(answer: &mut NewerAnswer) {
    let Some(body) = answer.body.as_deref_mut() else { return };
    let number = |name: &str| body.get(name).and_then(Value::as_u64).unwrap_or_default();
    let (page, size, pages, total) = (number("number"), number("size"), number("totalPages"), number("totalElements"));
    let links = offset_links(answer.path, answer.query, page, size, Some(pages));
    *body = body.get_mut("content").map(Value::take).unwrap_or_else(|| Value::Array(Vec::new()));
    if let Ok(value) = links.parse() {
        answer.headers.insert(header::LINK, value);
    }
    answer.headers.insert("x-total-count", total.into());
}

#[cfg(test)]
mod tests {
    use poem::http::{HeaderMap, StatusCode};
    use serde_json::json;
    use uuid::Uuid;

    use super::*;
    use crate::{changes::request::declared_pairs, changes::response::IntegerIds, core::users::BodyPolicy};

    /// Runs every request migration of the changes touching `operation`: the ids met, or the
    /// error, and the query and rules the request then goes on with.
    fn forward(
        operation: &str,
        query: &str,
        body: Option<Value>,
    ) -> (Result<Vec<&'static str>, ApiError>, String, BodyPolicy) {
        let (met, query, policy) = forward_with_details(operation, query, body);
        (met.map(|met| met.into_iter().map(|(id, _)| id).collect()), query, policy)
    }

    /// The changes met, each with what in the request met it.
    #[allow(clippy::type_complexity)]
    fn forward_with_details(
        operation: &str,
        query: &str,
        body: Option<Value>,
    ) -> (Result<Vec<(&'static str, Vec<String>)>, ApiError>, String, BodyPolicy) {
        let (mut headers, mut policy) = (HeaderMap::new(), BodyPolicy::STRICTEST);
        headers.insert("if-match", "\"1\"".parse().unwrap());
        let declared = ["page", "size", "sortBy", "branchCode"].map(String::from);
        let mut request =
            OlderRequest::new(operation, declared_pairs(Some(query), &declared), &mut headers, body, &mut policy);
        let mut met = Vec::new();
        let (method, template) = operation.split_once(' ').unwrap();
        for change in CHANGES.iter().filter(|c| c.touches(method, template)) {
            match change.serving.request.map(|migrate| migrate(&mut request)) {
                Some(Ok(true)) => met.push((change.id, request.take_details())),
                Some(Err(err)) => return (Err(err), String::new(), policy),
                _ => {}
            }
        }
        let query = crate::changes::request::encode(&request.query).unwrap_or_default();
        (Ok(met), query, policy)
    }

    #[test]
    fn what_v2_would_refuse_or_read_differently_is_met() {
        let lenient = json!({"name": "Ada", "email": "ada@example.com", "role": "admin"});
        let (met, _, policy) = forward("POST /users", "", Some(lenient));
        assert_eq!(met.unwrap(), ["strict-bodies", "age-required", "optimistic-concurrency"]);
        assert!(!policy.strict && !policy.age_required, "v1's policy, relaxed");
        let strict = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
        assert_eq!(forward("PUT /users/{id}", "", Some(strict)).0.unwrap(), ["optimistic-concurrency"]);
        assert_eq!(
            forward("PATCH /users/{id}", "", Some(json!({"age": null}))).0.unwrap(),
            ["age-required", "optimistic-concurrency"]
        );
        assert_eq!(
            forward("PATCH /users/{id}", "", Some(json!({"nick": "a"}))).0.unwrap(),
            ["strict-bodies", "optimistic-concurrency"]
        );
    }

    /// What met each change is named, never a value the client chose.
    #[test]
    fn each_change_met_says_what_met_it() {
        let body = json!({"name": "Ada Lovelace", "email": "ada@example.com", "role": "admin", "ada@example.com": 1});
        let (met, _, _) = forward_with_details("POST /users", "", Some(body));
        assert_eq!(
            met.unwrap(),
            [
                ("strict-bodies", vec!["/(unnamed field)".to_string(), "/role".to_string()]),
                ("age-required", vec!["/age missing".to_string()]),
                ("optimistic-concurrency", vec!["If-Match".to_string()]),
            ]
        );
        let (met, _, _) = forward_with_details("PATCH /users/{id}", "", Some(json!({"age": null, "nick": "x"})));
        let met = met.unwrap();
        assert_eq!(met[0], ("strict-bodies", vec!["/nick".to_string()]));
        assert_eq!(met[1], ("age-required", vec!["/age null".to_string()]));
        let (met, _, _) = forward_with_details("GET /customers", "sortBy=email&keyword=secret", None);
        assert_eq!(met.unwrap(), [("sort-parameter", vec!["sortBy=email".to_string()])]);
        let (met, _, _) = forward_with_details("GET /customers/branch", "branchCode=0042", None);
        assert_eq!(met.unwrap(), [("branch-filter-in-query", vec!["branchCode".to_string()])]);
        let (met, _, _) = forward_with_details("POST /upload", "", None);
        assert_eq!(met.unwrap(), [("imports-path", vec![])]);
    }

    #[test]
    fn v1_parameters_become_v2_parameters_or_v1_errors() {
        let (met, query, _) = forward("GET /customers", "page=1&sortBy=%20name&keyword=x", None);
        assert_eq!((met.unwrap(), query.as_str()), (vec!["sort-parameter"], "page=1&sort=name,asc"));
        let (met, query, _) = forward("GET /customers", "size=5", None);
        assert_eq!((met.unwrap(), query.as_str()), (vec![], "size=5&sort=id,asc"));
        let refused = forward("GET /customers", "sortBy=name,desc", None).0.unwrap_err();
        assert_eq!(refused.errors, vec![FieldError::parameter("sortBy", Rule::OneOf(CustomerSort::allowed()))]);
        let (met, query, _) = forward("GET /customers/branch", "branchCode=7", None);
        assert_eq!((met.unwrap(), query.as_str()), (vec!["branch-filter-in-query"], "branchCode=7&sort=id,asc"));
        let missing = forward("GET /customers/branch", "", None).0.unwrap_err();
        assert_eq!(missing.errors, vec![FieldError::parameter("branchCode", Rule::Required)]);
        assert_eq!(forward("POST /upload", "", None).0.unwrap(), ["imports-path"]);
    }

    #[test]
    fn v2_answers_become_v1_answers() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let ids = IntegerIds(vec![(a, 7), (b, 8)]);
        let mut headers = HeaderMap::new();
        let user =
            |id: Uuid, name: &str| json!({"id": id.to_string(), "name": name, "email": "x@example.com", "age": 1});
        let mut body = json!({"content": [user(a, "Ada"), user(b, "Bo")], "number": 1, "size": 2, "totalPages": 3,
                              "totalElements": 5});
        let mut answer = NewerAnswer {
            operation: "GET /users",
            status: StatusCode::OK,
            headers: &mut headers,
            body: Some(&mut body),
            ids: &ids,
            path: "/users",
            query: Some("page=1&size=2&version=1"),
        };
        for migrate in CHANGES.iter().filter(|c| c.touches("GET", "/users")).filter_map(|c| c.serving.response).rev() {
            migrate(&mut answer);
        }
        assert_eq!(body, json!([{"id": 7, "name": "Ada"}, {"id": 8, "name": "Bo"}]));
        assert_eq!(headers.get("x-total-count").unwrap(), "5");
        assert_eq!(
            headers.get(header::LINK).unwrap(),
            "</users?page=0&size=2&version=1>; rel=\"first\", </users?page=0&size=2&version=1>; rel=\"prev\", \
             </users?page=2&size=2&version=1>; rel=\"next\", </users?page=2&size=2&version=1>; rel=\"last\""
        );

        let mut headers = HeaderMap::new();
        headers.insert(header::ETAG, "\"3\"".parse().unwrap());
        headers.insert(header::LOCATION, format!("/api/v1/users/{a}").parse().unwrap());
        let mut body = user(a, "Ada");
        let mut answer = NewerAnswer {
            operation: "POST /users",
            status: StatusCode::CREATED,
            headers: &mut headers,
            body: Some(&mut body),
            ids: &ids,
            path: "/api/v1/users",
            query: None,
        };
        for migrate in CHANGES.iter().filter(|c| c.touches("POST", "/users")).filter_map(|c| c.serving.response).rev() {
            migrate(&mut answer);
        }
        assert_eq!(body, json!({"id": 7, "name": "Ada"}));
        assert_eq!(headers.get(header::LOCATION).unwrap(), "/api/v1/users/7");
        assert!(headers.get(header::ETAG).is_none());
    }
}
