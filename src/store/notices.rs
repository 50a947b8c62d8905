//! Notices to clients ([`NoticeStore`]) for both backends at once: endpoints, the outbox, its
//! attempts, and accepted sunsets. Where the backends differ (PostgreSQL leases notices with
//! `FOR UPDATE SKIP LOCKED`, so instances never take the same one), the [`Dialect`] says how.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    query::Dialect,
    rows::{
        Bound, NamedRow, ROWS, RowStore, Statement, Value, count, insert, must_text, must_time, read, text, time,
        version,
    },
};
use crate::core::endpoint_url::EndpointUrl;
use crate::core::storage::{
    Client, Endpoint, Format, Leased, Mark, NewNotice, Notice, NoticeFilter, NoticeStatus, NoticeStore, Outcome,
    StoreResult, Writes,
};

const ENDPOINT_COLUMNS: &str = "tenant, subject, url, format, secret, created_at, disabled_at, confirmed_at";
const NOTICE_COLUMNS: &str = "id, type, tenant, subject, created_at, status, attempts, last_attempt_at, last_status";

fn endpoint_from(r: &impl NamedRow) -> Result<Endpoint, sqlx::Error> {
    let format = must_text(r, "format")?;
    Ok(Endpoint {
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        url: EndpointUrl::stored(&must_text(r, "url")?).map_err(|e| sqlx::Error::Decode(e.into()))?,
        format: Format::named(&format).ok_or_else(|| sqlx::Error::Decode(format!("no format {format}").into()))?,
        secret: must_text(r, "secret")?,
        created_at: must_time(r, "created_at")?,
        disabled_at: r.time("disabled_at")?,
        confirmed_at: r.time("confirmed_at")?,
    })
}

fn notice_from(r: &impl NamedRow) -> Result<Notice, sqlx::Error> {
    let status = must_text(r, "status")?;
    Ok(Notice {
        id: r.id("id")?,
        kind: must_text(r, "type")?,
        client: Client { tenant: must_text(r, "tenant")?.into(), subject: must_text(r, "subject")?.into() },
        created_at: must_time(r, "created_at")?,
        status: NoticeStatus::named(&status)
            .ok_or_else(|| sqlx::Error::Decode(format!("no status {status}").into()))?,
        attempts: r.integer("attempts")?.unwrap_or_default() as u32,
        last_attempt_at: r.time("last_attempt_at")?,
        last_status: r.integer("last_status")?.and_then(|s| u16::try_from(s).ok()),
    })
}

/// An `INTEGER` count of attempts, or a status.
fn small(n: Option<u16>) -> Value<'static> {
    Value::Integer(n.map(i32::from))
}

/// The notices due at `$1` no instance holds, up to `$3`, leased until `$2`.
fn lease(d: Dialect) -> String {
    let skip = match d {
        Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        Dialect::Sqlite => "",
    };
    format!(
        "UPDATE notices SET leased_until = $2 WHERE id IN (SELECT id FROM notices WHERE status = 'pending' \
         AND next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until < $1) ORDER BY next_attempt_at \
         LIMIT $3{skip}) RETURNING id, type, body, attempts, endpoint_tenant, endpoint_subject, endpoint_created_at"
    )
}

#[async_trait]
impl<S: RowStore> NoticeStore for S {
    async fn set_endpoint(&self, e: &Endpoint) -> StoreResult<()> {
        let upsert = Statement::new(
            format!(
                "{} ON CONFLICT (tenant, subject) DO UPDATE SET url = $3, format = $4, secret = $5, created_at = $6, \
                 disabled_at = NULL, confirmed_at = $7",
                insert("notice_endpoints", "tenant, subject, url, format, secret, created_at, confirmed_at")
            ),
            [
                text(&e.tenant),
                text(&e.subject),
                text(e.url.as_str()),
                text(e.format.name()),
                text(&e.secret),
                time(e.created_at),
                Value::Time(e.confirmed_at),
            ],
        );
        self.write_all(&[upsert], Bound::Call).await.map(drop)
    }

    async fn mark_endpoint(
        &self,
        mark: Mark,
        tenant: &str,
        subject: &str,
        set_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let column = match mark {
            Mark::Confirmed => "confirmed_at",
            Mark::Disabled => "disabled_at",
        };
        let update = Statement::new(
            format!(
                "UPDATE notice_endpoints SET {column} = COALESCE({column}, $4) \
                 WHERE tenant = $1 AND subject = $2 AND created_at = $3"
            ),
            [text(tenant), text(subject), time(set_at), time(at)],
        );
        Ok(self.write_all(&[update], Bound::Call).await?.iter().sum::<u64>() > 0)
    }

    async fn endpoint(&self, tenant: &str, subject: &str) -> StoreResult<Option<Endpoint>> {
        let statement = Statement::new(
            format!("SELECT {ENDPOINT_COLUMNS} FROM notice_endpoints WHERE tenant = $1 AND subject = $2"),
            [text(tenant), text(subject)],
        );
        Ok(read(self, statement, endpoint_from).await?.into_iter().next())
    }

    async fn delete_endpoint(&self, tenant: &str, subject: &str) -> StoreResult<bool> {
        let delete = Statement::new(
            "DELETE FROM notice_endpoints WHERE tenant = $1 AND subject = $2",
            [text(tenant), text(subject)],
        );
        Ok(self.write_all(&[delete], Bound::Call).await?.iter().sum::<u64>() > 0)
    }

    async fn endpoints_after(&self, after: Option<&Client>, limit: u32) -> StoreResult<Vec<Endpoint>> {
        let (tenant, subject) = after.map_or(("", ""), |c| (&*c.tenant, &*c.subject));
        // No owner sorts before ("", ""): a tenant is never empty.
        let statement = Statement::new(
            format!(
                "SELECT {ENDPOINT_COLUMNS} FROM notice_endpoints WHERE disabled_at IS NULL \
                 AND confirmed_at IS NOT NULL AND (tenant, subject) > ($1, $2) ORDER BY tenant, subject LIMIT $3"
            ),
            [text(tenant), text(subject), count(u64::from(limit))],
        );
        read(self, statement, endpoint_from).await
    }

    async fn endpoints_for(&self, clients: &[Client]) -> StoreResult<Vec<Endpoint>> {
        let keys = clients
            .iter()
            .flat_map(|c| [vec![text(&c.tenant), text(&c.subject)], vec![text(&c.tenant), text("")]])
            .collect();
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT DISTINCT {} FROM notice_endpoints AS e \
                 JOIN k USING (tenant, subject) WHERE e.confirmed_at IS NOT NULL",
                ENDPOINT_COLUMNS.split(", ").map(|c| format!("e.{c}")).collect::<Vec<_>>().join(", ")
            ),
            [],
            keys,
        );
        read(self, statement, endpoint_from).await
    }

    async fn existing_events(&self, events: &[String]) -> StoreResult<Vec<String>> {
        let keys = events.iter().map(|e| vec![text(e)]).collect();
        let statement = Statement::rows(
            format!("WITH k (event) AS ({ROWS}) SELECT n.event FROM notices AS n JOIN k ON n.event = k.event"),
            [],
            keys,
        );
        read(self, statement, |r| must_text(r, "event")).await
    }

    async fn add_notices(&self, notices: &[NewNotice]) -> StoreResult<u64> {
        let rows = notices
            .iter()
            .map(|n| {
                vec![
                    Value::Id(n.id),
                    text(&n.event),
                    text(n.kind),
                    version(n.version),
                    text(&n.client.tenant),
                    text(&n.client.subject),
                    text(&n.endpoint.0),
                    text(&n.endpoint.1),
                    time(n.endpoint.2),
                    text(&n.body),
                    time(n.created_at),
                    time(n.created_at),
                ]
            })
            .collect();
        let columns = "id, event, type, version, tenant, subject, endpoint_tenant, endpoint_subject, \
                       endpoint_created_at, body, created_at, next_attempt_at";
        let add = Statement::rows(
            format!(
                "WITH u ({columns}) AS ({ROWS}) INSERT INTO notices ({columns}, status, attempts) \
                 SELECT {columns}, 'pending', 0 FROM u WHERE true ORDER BY event ON CONFLICT (event) DO NOTHING"
            ),
            [],
            rows,
        );
        Ok(self.write_all(&[add], Bound::Batch).await?.iter().sum())
    }

    async fn lease_due(&self, now: DateTime<Utc>, until: DateTime<Utc>, limit: u32) -> StoreResult<Vec<Leased>> {
        let take = Statement::new(lease(S::DIALECT), [time(now), time(until), count(u64::from(limit))]);
        let rows = self.write_one(&take, Writes::Kept).await?;
        let taken = rows
            .iter()
            .map(|r| {
                Ok((
                    r.id("id")?,
                    must_text(r, "type")?,
                    must_text(r, "body")?,
                    r.integer("attempts")?.unwrap_or_default() as u32,
                    (must_text(r, "endpoint_tenant")?, must_text(r, "endpoint_subject")?),
                    must_time(r, "endpoint_created_at")?,
                ))
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(super::errors::from_sqlx)?;
        let mut leased = Vec::with_capacity(taken.len());
        for (id, kind, body, attempts, (tenant, subject), created_at) in taken {
            // The endpoint as it is now: the one the notice was written for, still enabled.
            let endpoint = self
                .endpoint(&tenant, &subject)
                .await?
                .filter(|e| e.created_at == created_at && e.disabled_at.is_none());
            leased.push(Leased { id, kind, body, attempts, endpoint });
        }
        Ok(leased)
    }

    async fn record_attempt(&self, id: Uuid, at: DateTime<Utc>, outcome: Outcome) -> StoreResult<()> {
        let set = |status: &'static str, last: Option<u16>, next: Option<DateTime<Utc>>| {
            Statement::new(
                "UPDATE notices SET status = $2, attempts = attempts + 1, last_attempt_at = $3, last_status = $4, \
                 next_attempt_at = $5, leased_until = NULL WHERE id = $1",
                [Value::Id(id), text(status), time(at), small(last), Value::Time(next)],
            )
        };
        let statements = match outcome {
            Outcome::Delivered { status } => vec![set("delivered", Some(status), None)],
            Outcome::Retry { status, next } => vec![set("pending", status, Some(next))],
            Outcome::Failed { status } => vec![set("failed", status, None)],
            Outcome::Gone { status } => vec![
                set("failed", Some(status), None),
                Statement::new(
                    "UPDATE notice_endpoints SET disabled_at = $2 WHERE (tenant, subject) IN \
                     (SELECT endpoint_tenant, endpoint_subject FROM notices WHERE id = $1)",
                    [Value::Id(id), time(at)],
                ),
            ],
        };
        self.write_all(&statements, Bound::Call).await.map(drop)
    }

    async fn notices(
        &self,
        filter: &NoticeFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: u32,
    ) -> StoreResult<Vec<Notice>> {
        let mut sql = format!("SELECT {NOTICE_COLUMNS} FROM notices WHERE true");
        let mut values = Vec::new();
        let next = |values: &mut Vec<Value<'_>>| values.len() + 1;
        if let Some(tenant) = &filter.tenant {
            sql += &format!(" AND tenant = ${}", next(&mut values));
            values.push(text(tenant));
        }
        if let Some(subject) = &filter.subject {
            sql += &format!(" AND subject = ${}", next(&mut values));
            values.push(text(subject));
        }
        if let Some(status) = filter.status {
            sql += &format!(" AND status = ${}", next(&mut values));
            values.push(text(status.name()));
        }
        if let Some((created_at, id)) = after {
            let n = next(&mut values);
            sql += &format!(" AND (created_at, id) < (${n}, ${})", n + 1);
            values.extend([time(created_at), Value::Id(id)]);
        }
        sql += &format!(" ORDER BY created_at DESC, id DESC LIMIT ${}", next(&mut values));
        values.push(count(u64::from(limit)));
        read(self, Statement::new(sql, values), notice_from).await
    }

    async fn last_notices(&self, clients: &[Client]) -> StoreResult<Vec<Notice>> {
        let keys = clients.iter().map(|c| vec![text(&c.tenant), text(&c.subject)]).collect();
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT {} FROM k JOIN notices AS n ON n.id = \
                 (SELECT x.id FROM notices AS x WHERE x.tenant = k.tenant AND x.subject = k.subject \
                  ORDER BY x.created_at DESC, x.id DESC LIMIT 1)",
                NOTICE_COLUMNS.split(", ").map(|c| format!("n.{c}")).collect::<Vec<_>>().join(", ")
            ),
            [],
            keys,
        );
        read(self, statement, notice_from).await
    }

    async fn acknowledge(
        &self,
        of: u16,
        client: &Client,
        sunset_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.write_all(&[accept(Accepted::Version, version(of), client, sunset_at, at)], Bound::Call).await.map(drop)
    }

    async fn acknowledged(&self, of: u16, sunset_at: DateTime<Utc>, clients: &[Client]) -> StoreResult<Vec<Client>> {
        let keys = clients.iter().map(|c| vec![text(&c.tenant), text(&c.subject)]).collect();
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT tenant, subject FROM sunset_acknowledgements \
                 JOIN k USING (tenant, subject) WHERE version = $1 AND sunset_at = $2"
            ),
            [version(of), time(sunset_at)],
            keys,
        );
        read(self, statement, client_of).await
    }

    async fn acknowledgements(&self, of: u16, sunset_at: DateTime<Utc>) -> StoreResult<Vec<Client>> {
        read(self, accepted_by(Accepted::Version, version(of), sunset_at), client_of).await
    }

    async fn acknowledge_element(
        &self,
        deprecation: &str,
        client: &Client,
        sunset_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let upsert = accept(Accepted::Element, text(deprecation), client, sunset_at, at);
        self.write_all(&[upsert], Bound::Call).await.map(drop)
    }

    async fn element_acknowledgements(&self, deprecation: &str, sunset_at: DateTime<Utc>) -> StoreResult<Vec<Client>> {
        read(self, accepted_by(Accepted::Element, text(deprecation), sunset_at), client_of).await
    }
}

/// What a sunset acknowledgement is of: a version's, or an element's (the book's
/// operators/elements.md): each has its table, keyed by it and the client.
#[derive(Clone, Copy)]
enum Accepted {
    Version,
    Element,
}

impl Accepted {
    /// Its table and its key's first column.
    fn table(self) -> (&'static str, &'static str) {
        match self {
            Accepted::Version => ("sunset_acknowledgements", "version"),
            Accepted::Element => ("element_acknowledgements", "deprecation"),
        }
    }
}

/// Records that `client`'s owners accept `sunset_at` for `of` (a later one replaces it).
fn accept<'a>(
    what: Accepted,
    of: Value<'a>,
    client: &'a Client,
    sunset_at: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Statement<'a> {
    let (table, key) = what.table();
    Statement::new(
        format!(
            "{} ON CONFLICT ({key}, tenant, subject) DO UPDATE SET sunset_at = $4, acknowledged_at = $5",
            insert(table, &format!("{key}, tenant, subject, sunset_at, acknowledged_at"))
        ),
        [of, text(&client.tenant), text(&client.subject), time(sunset_at), time(at)],
    )
}

/// Every client that accepted `sunset_at` for `of`.
fn accepted_by(what: Accepted, of: Value<'_>, sunset_at: DateTime<Utc>) -> Statement<'_> {
    let (table, key) = what.table();
    Statement::new(
        format!("SELECT tenant, subject FROM {table} WHERE {key} = $1 AND sunset_at = $2 ORDER BY tenant, subject"),
        [of, time(sunset_at)],
    )
}

fn client_of(r: &impl NamedRow) -> Result<Client, sqlx::Error> {
    Ok(Client { tenant: must_text(r, "tenant")?.into(), subject: must_text(r, "subject")?.into() })
}
