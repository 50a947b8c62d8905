//! Pages of clients (the book's operators/scale.md): `limit` (1 to 1000, default 100) and an opaque
//! `cursor` that carries the last client of a page and the query that made it, so it continues that
//! order at any depth and is refused with another query.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    core::{
        cursor::fingerprint,
        fields::{FieldError, Rule},
        storage::{Client, Order, Place},
    },
    encoding::base64url,
};

pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 1000;

/// `limit`, or the error that says why not.
pub fn limit(raw: Option<&str>) -> Result<usize, FieldError> {
    let error = |rule| FieldError::parameter("limit", rule);
    match raw.map(str::parse::<i64>) {
        None => Ok(DEFAULT_LIMIT),
        Some(Err(_)) => Err(error(Rule::ExpectedInteger)),
        Some(Ok(n)) if n < 1 => Err(error(Rule::Min { min: 1 })),
        Some(Ok(n)) if n > MAX_LIMIT as i64 => Err(error(Rule::Max { max: MAX_LIMIT as i64 })),
        Some(Ok(n)) => Ok(n as usize),
    }
}

#[derive(Serialize, Deserialize)]
struct Body {
    /// The query's fingerprint.
    q: String,
    /// The place of the last client: risk and requests, for the at-risk order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<u64>,
    /// Its key in another order (the query's fingerprint names which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k: Option<[i64; 2]>,
    t: String,
    s: String,
}

/// The query a cursor belongs to, from the parameters that shape the order and the filter.
pub fn query_of(parts: &[&str]) -> String {
    fingerprint(parts)
}

fn encode(body: &Body) -> String {
    base64url::encode(&serde_json::to_vec(body).expect("a cursor serializes"))
}

fn decode(raw: &str, query: &str) -> Result<Body, FieldError> {
    let invalid = || FieldError::parameter("cursor", Rule::Invalid);
    let body: Body = base64url::decode(raw).and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(invalid)?;
    if body.q != query {
        return Err(FieldError::parameter("cursor", Rule::OtherQuery));
    }
    Ok(body)
}

/// A cursor after `place` in `order`.
pub fn place_cursor(place: &Place, order: Order, query: &str) -> String {
    let Place { key, client } = place;
    let (t, s) = (client.tenant.to_string(), client.subject.to_string());
    let body = match order {
        // As cursors have been since the at-risk order was the only one.
        Order::AtRisk => Body { q: query.into(), r: Some(key[0] as u8), n: Some(key[1].unsigned_abs()), k: None, t, s },
        _ => Body { q: query.into(), r: None, n: None, k: Some(*key), t, s },
    };
    encode(&body)
}

/// The place a cursor of `order` carries.
pub fn read_place(raw: &str, order: Order, query: &str) -> Result<Place, FieldError> {
    let body = decode(raw, query)?;
    let client = Client::new(body.t, body.s);
    match (order, body.r, body.n, body.k) {
        (Order::AtRisk, Some(risk), Some(requests), None) if risk <= 3 && requests <= i64::MAX as u64 => {
            Ok(Place { key: [i64::from(risk), -(requests as i64)], client })
        }
        (Order::Requests | Order::LastSeen, None, None, Some(key)) => Ok(Place { key, client }),
        _ => Err(FieldError::parameter("cursor", Rule::Invalid)),
    }
}

pub fn client_cursor(client: &Client, query: &str) -> String {
    encode(&Body {
        q: query.into(),
        r: None,
        n: None,
        k: None,
        t: client.tenant.to_string(),
        s: client.subject.to_string(),
    })
}

pub fn read_client(raw: &str, query: &str) -> Result<Client, FieldError> {
    let body = decode(raw, query)?;
    Ok(Client::new(body.t, body.s))
}

/// A cursor after a notice, in the newest-first order: when it was written, and its id.
pub fn notice_cursor(created_at: DateTime<Utc>, id: Uuid, query: &str) -> String {
    let t = created_at.to_rfc3339_opts(SecondsFormat::Micros, true);
    encode(&Body { q: query.into(), r: None, n: None, k: None, t, s: id.to_string() })
}

pub fn read_notice(raw: &str, query: &str) -> Result<(DateTime<Utc>, Uuid), FieldError> {
    let body = decode(raw, query)?;
    let at = DateTime::parse_from_rfc3339(&body.t).map(|t| t.with_timezone(&Utc));
    match (at, body.s.parse::<Uuid>()) {
        (Ok(at), Ok(id)) => Ok((at, id)),
        _ => Err(FieldError::parameter("cursor", Rule::Invalid)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_and_stay_bound_to_their_query() {
        let place = Place { key: [2, -41], client: Client::new("acme", "a/b") };
        let query = query_of(&["1", "status=ready"]);
        let at_risk = |place: &Place, query: &str| place_cursor(place, Order::AtRisk, query);
        assert_eq!(read_place(&at_risk(&place, &query), Order::AtRisk, &query).unwrap(), place);
        let other = query_of(&["1", "status=done"]);
        assert_eq!(read_place(&at_risk(&place, &query), Order::AtRisk, &other).unwrap_err().rule, Rule::OtherQuery);
        assert_eq!(read_place("!!", Order::AtRisk, &query).unwrap_err().rule, Rule::Invalid);
        // A usage cursor is no place in an order.
        let usage = client_cursor(&place.client, &query);
        assert_eq!(read_place(&usage, Order::AtRisk, &query).unwrap_err().rule, Rule::Invalid);
        assert_eq!(read_place(&usage, Order::LastSeen, &query).unwrap_err().rule, Rule::Invalid);
        // Another order's key reads back in that order, and in no other.
        let seen = Place { key: [-1_796_281_200, 0], client: Client::new("acme", "a/b") };
        let cursor = place_cursor(&seen, Order::LastSeen, &query);
        assert_eq!(read_place(&cursor, Order::LastSeen, &query).unwrap(), seen);
        assert_eq!(read_place(&cursor, Order::AtRisk, &query).unwrap_err().rule, Rule::Invalid);
        assert_eq!(read_client(&client_cursor(&place.client, &query), &query).unwrap(), place.client);
    }
}
