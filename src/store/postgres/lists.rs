//! List pages and their exact totals: pipelined when the page reads one short index range
//! (page 0, a cursor slice), on a held connection otherwise.

use crate::store::traced::traced;
use sqlx::{Row as _, postgres::PgRow};

use super::{PgStore, bind_all, read_total};
use crate::{
    core::storage::{StoreError, StoreResult},
    store::query::{Dialect, ListSql},
};

/// How one row of a list becomes an item, from either driver's row.
pub struct Decode<T> {
    pub pooled: fn(PgRow) -> Result<T, sqlx::Error>,
    pub pipelined: fn(tokio_postgres::Row) -> Result<T, sqlx::Error>,
}

impl PgStore {
    /// The page's items and, when `count`, its exact total; `known` is a total already read.
    pub(super) async fn list_page<T>(
        &self,
        list: &ListSql<'_>,
        count: bool,
        known: Option<u64>,
        decode: Decode<T>,
    ) -> StoreResult<(Vec<T>, Option<u64>)> {
        let (sql, params) = list.page_knowing(Dialect::Postgres, known);
        if let (Some(reads), true) = (&self.reads, list.is_index_range()) {
            let rows = reads.list(&sql, &params).await?;
            let total = match (count, &list.counter, rows.first(), known) {
                (false, ..) => None,
                (true, Some(_), Some(row), _) => Some(row.try_get::<_, i64>("total").map_err(undecodable)? as u64),
                (true, _, _, Some(known)) => Some(known),
                (true, ..) => {
                    let (sql, params) = list.total(Dialect::Postgres);
                    let rows = reads.list(&sql, &params).await?;
                    // No counter row yet: nothing was ever written for that tenant or branch.
                    let total = rows.first().map(|r| r.try_get::<_, i64>(0)).transpose().map_err(undecodable)?;
                    Some(total.unwrap_or(0) as u64)
                }
            };
            let items = rows.into_iter().map(decode.pipelined).collect::<Result<_, _>>().map_err(super::classify)?;
            return Ok((items, total));
        }
        // The total comes with the rows from a counter; otherwise it is read after them, on
        // the same connection: taking a second one while holding the first could leave every
        // request of a busy pool holding one and waiting for another.
        let (rows, total) = self
            .with_conn(async |c| {
                let rows = bind_all(sqlx::query(&sql), &params).fetch_all(traced(&mut *c)).await?;
                let total = match (count, &list.counter, rows.first(), known) {
                    (false, ..) => None,
                    (true, Some(_), Some(row), _) => Some(row.try_get::<i64, _>("total")? as u64),
                    (true, _, _, Some(known)) => Some(known),
                    (true, ..) => Some(read_total(c, list).await?),
                };
                Ok((rows, total))
            })
            .await?;
        let items = rows.into_iter().map(decode.pooled).collect::<Result<_, _>>().map_err(super::classify)?;
        Ok((items, total))
    }
}

fn undecodable(err: tokio_postgres::Error) -> StoreError {
    StoreError::Other(anyhow::Error::new(err).context("list row"))
}
