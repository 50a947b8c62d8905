//! Property tests of every parser of untrusted input (issue 19): each answers for any input,
//! never panics, and agrees with a small reference model. Bounded for CI (256 cases each).

use chrono::{DateTime, Utc};
use poem::{Request, http::HeaderValue};
use proptest::prelude::*;
use secrecy::SecretString;
use serde_json::{Map, Value, json};
use tandem::{
    auth::{dev_secret::KeySource, jwt::Verifier, tenant},
    core::{
        cursor::{Key, decode_cursor, encode_cursor},
        fields::Rule,
        import::{CsvReader, ImportPlan, parse_csv},
        listing::{Direction, SortKey, Window, full_order},
        patch::{self, Patch},
        user::{PROTECTED_FIELDS, USER_FIELDS, UserSort},
        users::BodyPolicy,
    },
    dispatch::{Dispatch, Resolution, sources},
    http::idempotency::is_valid_key,
    settings::{TokenSettings, VersionSettings},
    telemetry::traces::TraceHandle,
    wire::context::{RequestInfo, is_valid_correlation_id},
};

fn config() -> ProptestConfig {
    ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() }
}

/// Pieces of a CSV file, with the bytes a reader must get right across a cut: quotes, line
/// endings, BOMs, NUL, a cut-off UTF-8 sequence, and whole header and data rows.
fn csv_part() -> impl Strategy<Value = Vec<u8>> {
    let parts: [&[u8]; 20] = [
        b",",
        b"\"",
        b"\n",
        b"\r",
        b"\r\n",
        b"a",
        b"1",
        b"12",
        b" ",
        b"\0",
        b"\xEF\xBB\xBF",
        b"\xff",
        "é".as_bytes(),
        b"\xc3",
        b"customerNumber,name,email,phone,branchCode",
        b",createdDate",
        b"7,Ada,ada@example.com,555-0100,3",
        b"8,Bo,bo@example.com,555-0101,4,2026-01-01T00:00:00Z",
        b"customerNumber",
        b"x@y.ch",
    ];
    prop::sample::select(parts.to_vec()).prop_map(<[u8]>::to_vec)
}

/// A create or replace body as a client might send it: the user's fields, internal ones and
/// unknown ones, each absent or with a value of any kind (valid, invalid, mistyped, `null`);
/// now and then not an object at all.
fn user_body() -> impl Strategy<Value = Value> {
    let names: Vec<&str> = [&USER_FIELDS[..], &PROTECTED_FIELDS[..], &["role", "Name", ""]].concat();
    let value = prop_oneof![
        Just(Value::Null),
        Just(json!("Ada")),
        Just(json!("ada@example.com")),
        Just(json!("not an address")),
        Just(json!("  ")),
        Just(json!("A\u{0}da")),
        Just(json!(36)),
        Just(json!(12)),
        Just(json!(u64::MAX)),
        Just(json!(true)),
        Just(json!([1])),
    ];
    let object = proptest::collection::vec((proptest::sample::select(names), value), 0..8)
        .prop_map(|fields| Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    prop_oneof![8 => object, 1 => Just(json!([])), 1 => Just(json!("x"))]
}

/// A JSON document as text, with member names from a small set (so that an object often names
/// one twice), some written with escapes, and strings that look like members.
fn json_text() -> impl Strategy<Value = String> {
    let name = prop_oneof![Just("a"), Just("b"), Just("a/b"), Just("~"), Just("\\u0061"), Just("\\\"")];
    let leaf = prop_oneof![
        Just("1".to_string()),
        Just("null".to_string()),
        Just(r#""\"a\": 1, \"a\": 2""#.to_string()),
        Just("true".to_string()),
    ];
    leaf.prop_recursive(4, 40, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(|items| format!("[{}]", items.join(", "))),
            proptest::collection::vec((name.clone(), inner), 0..5).prop_map(|members| {
                let members: Vec<String> = members.into_iter().map(|(n, v)| format!("\"{n}\": {v}")).collect();
                format!("{{{}}}", members.join(", "))
            }),
        ]
    })
}

/// JSON as a parser that keeps every member of an object, duplicates too, in order.
enum Kept {
    Leaf,
    Array(Vec<Kept>),
    Object(Vec<(String, Kept)>),
}

impl<'de> serde::Deserialize<'de> for Kept {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Kept;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Kept, E> {
                Ok(Kept::Leaf)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Kept, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Kept::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Kept, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Kept>()? {
                    members.push(member);
                }
                Ok(Kept::Object(members))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The reference: the first member, in document order, whose name its object already holds.
fn kept_duplicate(value: &Kept, path: &str) -> Option<String> {
    let segment = |name: &str| name.replace('~', "~0").replace('/', "~1");
    match value {
        Kept::Leaf => None,
        Kept::Array(items) => {
            items.iter().enumerate().find_map(|(i, item)| kept_duplicate(item, &format!("{path}/{i}")))
        }
        Kept::Object(members) => members.iter().enumerate().find_map(|(i, (name, item))| {
            let here = format!("{path}/{}", segment(name));
            if members[..i].iter().any(|(earlier, _)| earlier == name) {
                return Some(here);
            }
            kept_duplicate(item, &here)
        }),
    }
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap()
}

proptest! {
    #![proptest_config(config())]

    /// Which fields a body names decides the same presence errors (unknown, internal,
    /// required) as reading it whole: the changes between versions that decide by them see
    /// what the newer version would refuse.
    #[test]
    fn presence_errors_are_the_full_reads(body in user_body(), strict in any::<bool>(), age_required in any::<bool>()) {
        let policy = BodyPolicy { strict, age_required };
        let read = policy.read_user(&body).err().unwrap_or_default();
        let presence: Vec<_> =
            read.into_iter().filter(|e| matches!(e.rule, Rule::UnknownField | Rule::ReadOnly | Rule::Required)).collect();
        prop_assert_eq!(policy.presence_errors(&body), presence);
    }

    /// Any string as a cursor: an answer (usually a refusal), never a panic.
    #[test]
    fn duplicate_names_are_found_as_a_parser_that_keeps_them_finds_them(json in json_text()) {
        let kept: Kept = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(tandem::wire::duplicates::first_duplicate(json.as_bytes()), kept_duplicate(&kept, ""), "{}", json);
    }

    #[test]
    fn any_cursor_is_answered(raw in ".{0,300}") {
        let order = full_order(&[SortKey { field: UserSort::Name, direction: Direction::Desc }]);
        let _ = decode_cursor(&raw, "query", 20, &order);
    }

    /// A cursor the service made reads back as exactly the position it names.
    #[test]
    fn cursors_round_trip(name in "[^\u{0}]{0,40}", id in any::<i64>(), offset in 0u64..1_000_000_000) {
        let order = full_order(&[SortKey { field: UserSort::Name, direction: Direction::Desc }]);
        let last = vec![Key::Text(name), Key::Int(id)];
        let cursor = encode_cursor("q", offset, &last);
        prop_assert_eq!(decode_cursor(&cursor, "q", 7, &order), Ok(Window::After { last, offset, size: 7 }));
        prop_assert!(decode_cursor(&cursor, "another query", 7, &order).is_err());
    }

    /// Any bytes as a CSV upload: a plan or a file error, never a panic.
    #[test]
    fn any_upload_is_answered(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_csv(&bytes, now());
    }

    /// A file read in pieces, however it is cut (as an upload arrives), gives the same rows,
    /// lines and verdict as the file read whole.
    #[test]
    fn any_cut_reads_like_the_whole_file(
        parts in proptest::collection::vec(csv_part(), 0..40),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let bytes = parts.concat();
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.sort();
        let mut reader = CsvReader::new(now());
        let mut rows = Vec::new();
        let mut from = 0;
        for to in at.into_iter().chain([bytes.len()]) {
            reader.feed(&bytes[from..to], &mut rows);
            from = to;
        }
        let pieces = reader.finish(&mut rows).map(|received| ImportPlan { received, rows });
        prop_assert_eq!(pieces, parse_csv(&bytes, now()));
    }

    /// Valid rows come back as they were written, in order, without errors.
    #[test]
    fn valid_rows_round_trip(rows in proptest::collection::vec(
        ("[0-9]{1,20}", "[A-Za-z][A-Za-z ]{0,30}[A-Za-z]", "[a-z]{1,10}", "[0-9]{3,12}", "[0-9]{1,10}"), 1..20)
    ) {
        let mut csv = String::from("customerNumber,name,email,phone,branchCode\n");
        let mut seen = std::collections::HashSet::new();
        let rows: Vec<_> = rows.into_iter().filter(|r| seen.insert(r.0.clone())).collect();
        for (number, name, user, phone, branch) in &rows {
            csv.push_str(&format!("{number},{name},{user}@example.com,{phone},{branch}\n"));
        }
        let plan = parse_csv(csv.as_bytes(), now()).expect("a readable file");
        prop_assert_eq!(plan.rows.len(), rows.len());
        for (checked, (number, name, user, phone, branch)) in plan.rows.iter().zip(&rows) {
            prop_assert!(checked.errors.is_empty(), "{:?}", checked.errors);
            prop_assert!(checked.line >= 2);
            let row = checked.customer.as_ref().expect("a valid row");
            prop_assert_eq!(row.customer_number.as_str(), number.as_str());
            prop_assert_eq!(row.name.as_str(), name.as_str());
            prop_assert_eq!(row.email.as_str(), format!("{user}@example.com"));
            prop_assert_eq!(row.phone.as_str(), phone.as_str());
            prop_assert_eq!(row.branch_code.as_str(), branch.as_str());
        }
    }

    /// A merge patch of writable fields equals the reference: null removes, a value replaces,
    /// absent leaves alone (RFC 7396, one level deep as the user record is).
    #[test]
    fn merge_patches_match_the_reference(
        name in proptest::option::of(proptest::option::of("[a-z]{0,8}")),
        email in proptest::option::of(proptest::option::of("[a-z]{1,8}@x.io")),
        age in proptest::option::of(proptest::option::of(0i64..200)),
    ) {
        let document = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
        let mut changes = Map::new();
        let mut expected = document.as_object().unwrap().clone();
        for (field, value) in [
            ("name", name.map(|v| v.map(Value::from))),
            ("email", email.map(|v| v.map(Value::from))),
            ("age", age.map(|v| v.map(Value::from))),
        ] {
            match value {
                None => {}
                Some(None) => { changes.insert(field.into(), Value::Null); expected.remove(field); }
                Some(Some(v)) => { changes.insert(field.into(), v.clone()); expected.insert(field.into(), v); }
            }
        }
        let patched = patch::apply(&document, &Patch::Merge(Value::Object(changes)), &USER_FIELDS, &PROTECTED_FIELDS, true);
        prop_assert_eq!(patched.ok(), Some(Value::Object(expected)));
    }

    /// A JSON Patch of `replace` and `remove` operations on writable fields equals the same
    /// operations applied by hand; any other JSON is refused, never a panic.
    #[test]
    fn json_patches_match_the_reference(ops in proptest::collection::vec((0usize..3, any::<bool>(), 0i64..100), 0..6)) {
        let document = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
        let mut expected = document.clone();
        let mut operations = Vec::new();
        for (field, remove, value) in ops {
            let field = USER_FIELDS[field];
            let present = expected.get(field).is_some();
            if remove && present {
                operations.push(json!({"op": "remove", "path": format!("/{field}")}));
                expected.as_object_mut().unwrap().remove(field);
            } else if present {
                operations.push(json!({"op": "replace", "path": format!("/{field}"), "value": value}));
                expected[field] = json!(value);
            }
        }
        let patched = patch::apply(&document, &Patch::Json(Value::Array(operations)), &USER_FIELDS, &PROTECTED_FIELDS, true);
        prop_assert_eq!(patched.ok(), Some(expected));
    }

    #[test]
    fn any_json_patch_is_answered(raw in "\\PC{0,200}") {
        let document = json!({"name": "Ada", "email": "ada@example.com", "age": 36});
        if let Ok(value) = serde_json::from_str::<Value>(&raw) {
            let _ = patch::apply(&document, &Patch::Json(value.clone()), &USER_FIELDS, &PROTECTED_FIELDS, true);
            let _ = patch::apply(&document, &Patch::Merge(value), &USER_FIELDS, &PROTECTED_FIELDS, false);
        }
    }

    /// Idempotency-Key: 1 to 255 printable ASCII characters, exactly.
    #[test]
    fn idempotency_keys_match_the_contract(key in "\\PC{0,300}") {
        let reference = (1..=255).contains(&key.len()) && key.bytes().all(|b| (0x20..=0x7e).contains(&b));
        prop_assert_eq!(is_valid_key(&key), reference);
    }

    /// X-Tenant-ID: 1 to 63 of a-z, 0-9, -; a token bound to a tenant acts only there.
    #[test]
    fn tenants_match_the_contract(header in proptest::option::of("[a-z0-9A-Z_-]{0,70}"), claim in proptest::option::of("[a-z0-9-]{1,10}")) {
        let valid = |t: &str| (1..=63).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if let Some(h) = &header { prop_assert_eq!(tenant::is_valid(h), valid(h)); }
        let resolved = tenant::resolve(header.as_deref(), claim.as_deref()).map(|t| t.to_string());
        match (&header, &claim) {
            (Some(h), _) if !valid(h) => prop_assert!(resolved.is_err()),
            (Some(h), Some(c)) if h != c => prop_assert!(resolved.is_err()),
            (Some(h), _) => prop_assert_eq!(resolved.ok(), Some(h.clone())),
            (None, Some(c)) => prop_assert_eq!(resolved.ok(), Some(c.clone())),
            (None, None) => prop_assert_eq!(resolved.ok(), Some("default".to_string())),
        }
    }

    /// X-Correlation-ID: 1 to 128 of A-Za-z0-9._-, exactly.
    #[test]
    fn correlation_ids_match_the_contract(raw in "\\PC{0,140}") {
        let reference = (1..=128).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        prop_assert_eq!(is_valid_correlation_id(&raw), reference);
    }

    /// Any bytes as a token: refused, never a panic.
    #[test]
    fn any_token_is_refused(raw in "\\PC{0,600}", dots in 0usize..4) {
        let settings = TokenSettings { jwt_secret: Some(SecretString::from("p".repeat(40))), ..TokenSettings::default() };
        let verifier = Verifier::new(&KeySource::Secret(SecretString::from("p".repeat(40))), &settings).unwrap();
        let token = (0..dots).fold(raw, |t, _| format!("{t}.{}", "eyJhIjoxfQ"));
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        prop_assert!(runtime.block_on(verifier.verify(&token, 1_800_000_000)).is_err());
    }

    /// Version sources in any combination: the one they agree on, the default when none names
    /// one, 400 when two differ, and per source 404/400/406/400 for a version not served.
    #[test]
    fn version_resolution_matches_the_contract(
        uri in proptest::option::of(0u16..4), header in proptest::option::of(0u16..4),
        media in proptest::option::of(0u16..4), query in proptest::option::of(0u16..4),
    ) {
        let dispatch = Dispatch::new(&tandem::versions::all(), &VersionSettings::default()).unwrap();
        let path = match uri { Some(v) => format!("/api/v{v}/users"), None => "/users".into() };
        let path = match query { Some(v) => format!("{path}?version={v}"), None => path };
        let mut builder = Request::builder().uri(path.parse().unwrap());
        if let Some(v) = header { builder = builder.header("x-api-version", HeaderValue::from(v)); }
        if let Some(v) = media { builder = builder.header("accept", format!("application/vnd.tandem.users.v{v}+json")); }
        let req = builder.finish();
        let trace = TraceHandle::unrecorded(tandem::telemetry::trace_context::new_trace_id());
        let info = RequestInfo::new(&req, trace, chrono::Utc::now());
        let named: Vec<(u16, u16)> = [(uri, 404), (header, 400), (media, 406), (query, 400)]
            .into_iter().filter_map(|(v, status)| v.map(|v| (v, status))).collect();
        let expected: Result<u16, u16> = match named.iter().find(|(v, _)| !(1..=2).contains(v)) {
            Some((_, status)) => Err(*status),
            None if named.windows(2).any(|w| w[0].0 != w[1].0) => Err(400),
            None => Ok(named.first().map_or(1, |(v, _)| *v)),
        };
        let resolved = match dispatch.resolve(&req, &info) {
            Ok(Resolution::Api(target)) => Ok(target.version),
            Ok(_) => Err(0),
            Err(err) => Err(err.status().as_u16()),
        };
        // An unsupported one that comes before a disagreement is reported first; the model
        // takes the same order (URI, header, media type, query).
        let first_bad = named.iter().position(|(v, _)| !(1..=2).contains(v));
        let first_clash = named.windows(2).position(|w| w[0].0 != w[1].0).map(|i| i + 1);
        let expected = match (first_bad, first_clash) {
            (Some(bad), Some(clash)) if clash < bad => Err(400),
            _ => expected,
        };
        prop_assert_eq!(resolved, expected, "{} {:?} {:?}", path, header, media);
    }

    /// Any path, header value and query: the version sources answer, never panic.
    #[test]
    fn version_sources_are_total(path in "\\PC{0,80}", header in "[ -~]{0,20}", query in "\\PC{0,80}") {
        let _ = sources::from_uri(&path);
        let _ = sources::from_query(Some(&query));
        let mut headers = poem::http::HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(&header) {
            headers.insert("x-api-version", value.clone());
            headers.insert("accept", value);
        }
        let _ = sources::from_header(&headers);
        let _ = sources::from_accept(&headers, "tandem");
        let _ = sources::tenant_hint(&headers);
    }
}
