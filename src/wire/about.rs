//! An answer together with the record it is about. The boundary reads the record from the
//! response to link the same record in the successor version (`rel="successor-version"`), so
//! a handler states what it touched in what it returns, not in a side channel.

use poem::{IntoResponse, Response};
use poem_openapi::{
    ApiResponse,
    registry::{MetaResponses, Registry},
};
use uuid::Uuid;

/// The record a response is about, as the boundary finds it on the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record(pub Uuid);

/// The integer ids of the records an answer shows, which a newer version may no longer show:
/// returned beside the answer, for the older versions that still do.
#[derive(Debug, Clone, Default)]
pub struct IntegerIds(pub Vec<(Uuid, i64)>);

impl IntegerIds {
    pub fn of(&self, uuid: &str) -> Option<i64> {
        let uuid = Uuid::parse_str(uuid).ok()?;
        self.0.iter().find(|(u, _)| *u == uuid).map(|(_, id)| *id)
    }
}

/// On a response a keyed creation answered from an earlier try's record: the layer above says
/// `Idempotent-Replayed`.
#[derive(Debug, Clone, Copy)]
pub struct Replayed;

/// `answer`, about `record`, showing the records `ids` names. Documented exactly as `answer` is.
pub struct About<R> {
    pub answer: R,
    pub record: Option<Uuid>,
    pub ids: IntegerIds,
    /// The answer is an earlier try's record, found again.
    pub replayed: bool,
}

impl<R> About<R> {
    pub fn new(answer: R, record: Uuid) -> Self {
        Self { answer, record: Some(record), ids: IntegerIds::default(), replayed: false }
    }

    /// An answer that shows records with these (UUID, integer id) pairs.
    pub fn showing(answer: R, ids: Vec<(Uuid, i64)>) -> Self {
        Self { answer, record: None, ids: IntegerIds(ids), replayed: false }
    }

    /// Whether the answer is an earlier try's record, found again.
    pub fn replayed(mut self, replayed: bool) -> Self {
        self.replayed = replayed;
        self
    }

    /// The answer is about the one record it shows.
    pub fn about_shown(mut self) -> Self {
        self.record = self.ids.0.first().map(|(uuid, _)| *uuid);
        self
    }
}

impl<R: ApiResponse> ApiResponse for About<R> {
    fn meta() -> MetaResponses {
        R::meta()
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

impl<R: IntoResponse> IntoResponse for About<R> {
    fn into_response(self) -> Response {
        let mut response = self.answer.into_response();
        if let Some(record) = self.record {
            response.extensions_mut().insert(Record(record));
        }
        if !self.ids.0.is_empty() {
            response.extensions_mut().insert(self.ids);
        }
        if self.replayed {
            response.extensions_mut().insert(Replayed);
        }
        response
    }
}

/// The record a response says it is about.
pub fn record_of(response: &Response) -> Option<Uuid> {
    response.extensions().get::<Record>().map(|r| r.0)
}
