//! Every sqlx statement under its own span (the book's operators/traces.md): call sites pass
//! `traced(executor)` where they passed the executor, and the statement's template becomes a child
//! span of the request. With export off the wrapper hands the call straight to the executor.

use std::{
    fmt,
    pin::Pin,
    task::{Context, Poll},
};

use futures_util::{FutureExt as _, Stream, StreamExt as _, future::BoxFuture, stream::BoxStream};
use sqlx::{Database, Describe, Either, Error, Execute, Executor};

use crate::telemetry::traces::{self, ChildSpan, Db};

/// An executor whose statements are traced.
pub struct Traced<E>(E);

/// Wraps `executor` (a pool, a connection or a transaction) so its statements are traced.
pub fn traced<E>(executor: E) -> Traced<E> {
    Traced(executor)
}

impl<E: fmt::Debug> fmt::Debug for Traced<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Which system a database's spans name.
pub trait System {
    const SYSTEM: Db;
}

impl System for sqlx::Postgres {
    const SYSTEM: Db = Db::Postgres;
}

impl System for sqlx::Sqlite {
    const SYSTEM: Db = Db::Sqlite;
}

impl<'c, E> Executor<'c> for Traced<E>
where
    E: Executor<'c>,
    E::Database: System,
{
    type Database = E::Database;

    fn fetch_many<'e, 'q: 'e, Q>(
        self,
        query: Q,
    ) -> BoxStream<
        'e,
        Result<Either<<Self::Database as Database>::QueryResult, <Self::Database as Database>::Row>, Error>,
    >
    where
        'c: 'e,
        Q: 'q + Execute<'q, Self::Database>,
    {
        // Started before the statement is sent, in the request's context.
        let span = traces::statement_span(<E::Database as System>::SYSTEM, query.sql());
        let rows = self.0.fetch_many(query);
        match span {
            None => rows,
            Some(span) => Box::pin(Spanned { rows, span: Some(span) }),
        }
    }

    fn fetch_optional<'e, 'q: 'e, Q>(
        self,
        query: Q,
    ) -> BoxFuture<'e, Result<Option<<Self::Database as Database>::Row>, Error>>
    where
        'c: 'e,
        Q: 'q + Execute<'q, Self::Database>,
    {
        let span = traces::statement_span(<E::Database as System>::SYSTEM, query.sql());
        let call = self.0.fetch_optional(query);
        match span {
            None => call,
            Some(span) => span.around(call).boxed(),
        }
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [<Self::Database as Database>::TypeInfo],
    ) -> BoxFuture<'e, Result<<Self::Database as Database>::Statement<'q>, Error>>
    where
        'c: 'e,
    {
        self.0.prepare_with(sql, parameters)
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Self::Database>, Error>>
    where
        'c: 'e,
    {
        self.0.describe(sql)
    }
}

/// A statement's rows, with the span that ends when they do (or when they are dropped).
struct Spanned<'e, T> {
    rows: BoxStream<'e, Result<T, Error>>,
    span: Option<ChildSpan>,
}

impl<T> Stream for Spanned<'_, T> {
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.rows.poll_next_unpin(cx);
        match &next {
            Poll::Ready(Some(Err(_))) => {
                if let Some(span) = self.span.take() {
                    span.failed();
                }
            }
            Poll::Ready(None) => self.span = None,
            _ => {}
        }
        next
    }
}
