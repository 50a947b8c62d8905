//! Keyset cursors. A cursor carries the last record's sort values and id, the offset it reached,
//! and a fingerprint of the query (sort and filters) that produced it: replayed with another
//! query it is refused, and it costs the same at any depth.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    core::{
        fields::Rule,
        listing::{SortField, SortKey, Window},
    },
    encoding::base64url,
};

/// One sort value of a record, as a cursor carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Int(i64),
    Text(String),
    Time(DateTime<Utc>),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Int,
    Text,
    Time,
}

impl Key {
    fn to_json(&self) -> Value {
        match self {
            Key::Int(i) => Value::from(*i),
            Key::Text(t) => Value::from(t.as_str()),
            Key::Time(t) => Value::from(t.to_rfc3339_opts(SecondsFormat::Micros, true)),
            Key::Null => Value::Null,
        }
    }

    fn from_json(value: &Value, kind: KeyKind, nullable: bool) -> Option<Key> {
        match (value, kind) {
            (Value::Null, _) if nullable => Some(Key::Null),
            (Value::Number(n), KeyKind::Int) => n.as_i64().map(Key::Int),
            (Value::String(s), KeyKind::Text) if !s.contains('\0') => Some(Key::Text(s.clone())),
            (Value::String(s), KeyKind::Time) => {
                DateTime::parse_from_rfc3339(s).ok().map(|t| Key::Time(t.with_timezone(&Utc)))
            }
            _ => None,
        }
    }
}

/// An opaque cursor, as the client sees it: base64url of this JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CursorBody {
    /// Fingerprint of the query the cursor belongs to.
    q: String,
    /// Offset of the next record.
    o: u64,
    /// Sort values (and id) of the last record returned.
    v: Vec<Value>,
}

/// A stable fingerprint of a query's sort and filters (FNV-1a; it binds, it does not protect).
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf29ce484222325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x100000001b3);
        }
    }
    format!("{hash:016x}")
}

pub fn encode_cursor(query: &str, offset: u64, last: &[Key]) -> String {
    let v = last.iter().map(Key::to_json).collect();
    let body = serde_json::to_vec(&CursorBody { q: query.to_string(), o: offset, v }).expect("cursor serializes");
    base64url::encode(&body)
}

/// Reads a cursor for `query` and its full `order`, or says why it can't be used.
pub fn decode_cursor<F: SortField>(raw: &str, query: &str, size: u32, order: &[SortKey<F>]) -> Result<Window, Rule> {
    let invalid = || Rule::Invalid;
    let bytes = base64url::decode(raw).ok_or_else(invalid)?;
    let body: CursorBody = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if body.q != query {
        return Err(Rule::OtherQuery);
    }
    // The offset only labels the slice (`number`, `pageable.offset`); keep it sane.
    if body.v.len() != order.len() || body.o > u64::from(u32::MAX) * 1000 {
        return Err(invalid());
    }
    let last = body
        .v
        .iter()
        .zip(order)
        .map(|(value, key)| Key::from_json(value, key.field.kind(), key.field.nullable()))
        .collect::<Option<Vec<Key>>>()
        .ok_or_else(invalid)?;
    Ok(Window::After { last, offset: body.o, size })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::listing::{Direction, full_order, test_field::F};

    #[test]
    fn cursors_round_trip_and_stay_bound_to_their_query() {
        let order = full_order(&[SortKey { field: F::Name, direction: Direction::Desc }]);
        let query = fingerprint(&["name,desc", "keyword=ada"]);
        let last = vec![Key::Text("Ada".into()), Key::Int(7)];
        let cursor = encode_cursor(&query, 40, &last);
        assert_eq!(decode_cursor(&cursor, &query, 20, &order).unwrap(), Window::After { last, offset: 40, size: 20 });
        let other = fingerprint(&["name,asc", "keyword=ada"]);
        assert_eq!(decode_cursor(&cursor, &other, 20, &order).unwrap_err(), Rule::OtherQuery);
        assert_eq!(decode_cursor("!!", &query, 20, &order).unwrap_err(), Rule::Invalid);
        assert_eq!(decode_cursor(&cursor, &query, 20, &order[1..]).unwrap_err(), Rule::Invalid);
        // Values of the wrong kind (a forged cursor) are refused, not passed to the store.
        let forged = encode_cursor(&query, 0, &[Key::Int(1), Key::Text("x".into())]);
        assert_eq!(decode_cursor(&forged, &query, 20, &order).unwrap_err(), Rule::Invalid);
    }
}
