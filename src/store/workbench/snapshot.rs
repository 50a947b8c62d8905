//! The workbench's questions, each read through an index: one client's rows, a page in the
//! at-risk order, aggregates the database computes. Asked inside one read-only transaction
//! ([`RowSnapshot`]), so answers put together from several reads agree with each other.

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::super::{
    query::Dialect,
    rows::{Each, NamedRow, ROWS, RowSnapshot, Statement, Value, count, read_in, text, time, version},
};
use super::rows::{
    DETAIL_COLUMNS, EXPOSURE_COLUMNS, ROUTE_COLUMNS, SUMMARY_COLUMNS, USAGE_COLUMNS, client_from, client_key,
    detail_from, exposure_from, route_from, summary_from, usage_from, windowed_from,
};
use crate::core::storage::{
    Activity, ChangesMet, Client, ClientFilter, ClientRows, ClientSummary, ElementTotals, ElementUse, Order, Place,
    QUIET_FOR_DONE, Status, StatusCounts, StoreResult, UsageRow, Window, Windowed, WorkbenchSnapshot,
};

pub(super) struct Snapshot<R> {
    pub reads: R,
    pub dialect: Dialect,
}

/// A client's status, as [`Status::of`] decides it, with `$n` the instant from which a client
/// that stopped calling the retiring version is done.
pub(super) fn status_sql(n: usize) -> String {
    format!(
        "CASE WHEN last_successor IS NOT NULL AND (last_request IS NULL OR last_request <= ${n}) THEN 'done' \
         WHEN last_successor IS NOT NULL AND last_rehearsal IS NOT NULL THEN 'ready' \
         WHEN last_successor IS NOT NULL THEN 'in-progress' \
         WHEN last_request IS NOT NULL THEN 'not-started' ELSE 'unknown' END"
    )
}

/// `AND …` for a filter, its values numbered from `$first` (the tenant's, when it has one,
/// is `$first`: the CSV's walk names it again in its other parts).
pub(super) fn filter_sql<'f>(
    d: Dialect,
    filter: &'f ClientFilter,
    first: usize,
    now: DateTime<Utc>,
) -> (String, Vec<Value<'f>>) {
    let (mut sql, mut values) = (String::new(), Vec::new());
    if let Some(tenant) = &filter.tenant {
        sql += &format!(" AND tenant = ${}", first + values.len());
        values.push(text(tenant));
    }
    if let Some(search) = &filter.search {
        // Case counts, as in `ClientFilter::admits` (and as `strpos` and `instr` compare).
        let n = first + values.len();
        let contains = match d {
            Dialect::Postgres => "strpos",
            Dialect::Sqlite => "instr",
        };
        sql += &format!(" AND ({contains}(tenant, ${n}) > 0 OR {contains}(subject, ${n}) > 0)");
        values.push(text(search));
    }
    match filter.changes {
        Some(ChangesMet::Met) => sql += " AND risk < 2",
        Some(ChangesMet::None) => sql += " AND risk >= 2",
        None => {}
    }
    if let Some(status) = filter.status {
        let quiet = first + values.len();
        sql += &format!(" AND {} = ${}", status_sql(quiet), quiet + 1);
        values.push(time(now - QUIET_FOR_DONE));
        values.push(text(status.name()));
    }
    (sql, values)
}

/// The clients named, as a table `k (tenant, subject)`.
fn keyed<'c>(clients: &'c [Client]) -> Vec<Vec<Value<'c>>> {
    clients.iter().map(client_key).collect()
}

/// Requests answered within the window, per client: from each client's windows on PostgreSQL
/// (one row a client, see `client_usage`), summed from its days on SQLite. `$1` the version,
/// `$2` the window's first day, `$3` today; `clients` joins the named clients (`k`) only.
fn windowed_sql(d: Dialect, clients: bool) -> String {
    let (with, join) = match clients {
        true => (format!("WITH k (tenant, subject) AS ({ROWS}) "), " JOIN k USING (tenant, subject)"),
        false => (String::new(), ""),
    };
    match d {
        Dialect::Postgres => format!(
            "{with}SELECT * FROM (SELECT tenant, subject, last_at, \
             coalesce(recent[last_day - $2 + 1], 0) \
             - CASE WHEN last_day > $3 THEN coalesce(recent[last_day - $3], 0) ELSE 0 END AS requests \
             FROM client_usage{join} WHERE version = $1 AND last_day >= $2) AS w WHERE requests > 0"
        ),
        Dialect::Sqlite => format!(
            "{with}SELECT tenant, subject, sum(requests) AS requests, max(last_seen) AS last_at \
             FROM usage_daily{join} WHERE version = $1 AND day >= $2 AND day <= $3 GROUP BY tenant, subject"
        ),
    }
}

/// Clients with usage on or after `$2`: one row each on PostgreSQL, distinct days on SQLite.
fn usage_clients_sql(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "SELECT tenant, subject FROM client_usage WHERE version = $1 AND last_day >= $2",
        Dialect::Sqlite => "SELECT DISTINCT tenant, subject FROM usage_daily WHERE version = $1 AND day >= $2",
    }
}

fn day(d: NaiveDate) -> Value<'static> {
    Value::Day(d)
}

#[async_trait]
impl<R: RowSnapshot> WorkbenchSnapshot for Snapshot<R> {
    async fn written(&mut self, batches: &[Uuid]) -> StoreResult<Vec<Uuid>> {
        let rows = batches.iter().map(|id| vec![Value::Id(*id)]).collect();
        let statement = Statement::rows(
            format!("WITH u (id) AS ({ROWS}) SELECT f.id FROM flushed_batches AS f JOIN u ON u.id = f.id"),
            [],
            rows,
        );
        read_in(&mut self.reads, statement, |r| r.id("id")).await
    }

    async fn summaries(&mut self, of: u16, clients: &[Client]) -> StoreResult<Vec<ClientSummary>> {
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT {SUMMARY_COLUMNS} FROM client_versions \
                 JOIN k USING (tenant, subject) WHERE version = $1"
            ),
            [version(of)],
            keyed(clients),
        );
        read_in(&mut self.reads, statement, summary_from).await
    }

    async fn in_order(
        &mut self,
        of: u16,
        filter: &ClientFilter,
        order: Order,
        after: Option<&Place>,
        skip: u64,
        limit: usize,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<ClientSummary>> {
        // Each order is an index's: (version, key…, tenant, subject).
        let key: &[&str] = match order {
            Order::AtRisk => &["risk", "order_requests"],
            Order::Requests => &["order_requests"],
            Order::LastSeen => &["order_last"],
        };
        let columns = [key, &["tenant", "subject"]].concat().join(", ");
        let order_by = format!(" ORDER BY {columns}");
        let (filtered, mut values) = filter_sql(self.dialect, filter, 2, now);
        values.insert(0, version(of));
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM client_versions WHERE version = $1");
        if skip > 0 {
            // The rows skipped are read from the order's index alone, not fetched one by one.
            let (n, m) = (values.len() + 1, values.len() + 2);
            sql += &format!(
                " AND (tenant, subject) IN (SELECT tenant, subject FROM client_versions WHERE version = $1{filtered}\
                 {order_by} LIMIT ${n} OFFSET ${m}){order_by}"
            );
            values.extend([count(limit as u64), count(skip)]);
            return read_in(&mut self.reads, Statement::new(sql, values), summary_from).await;
        }
        sql += &filtered;
        if let Some(place) = after {
            let first = values.len() + 1;
            let marks: Vec<String> = (first..first + key.len() + 2).map(|n| format!("${n}")).collect();
            sql += &format!(" AND ({columns}) > ({})", marks.join(", "));
            // `risk` is an INTEGER column; the others are BIGINT on PostgreSQL.
            values.extend(place.key[..key.len()].iter().zip(key).map(|(k, column)| match *column {
                "risk" => Value::Integer(Some(*k as i32)),
                _ => Value::BigInt(Some(*k)),
            }));
            values.extend([text(&place.client.tenant), text(&place.client.subject)]);
        }
        sql += &format!("{order_by} LIMIT ${}", values.len() + 1);
        values.push(count(limit as u64));
        read_in(&mut self.reads, Statement::new(sql, values), summary_from).await
    }

    async fn status_counts(&mut self, of: u16, filter: &ClientFilter, now: DateTime<Utc>) -> StoreResult<StatusCounts> {
        let (filtered, mut values) = filter_sql(self.dialect, filter, 3, now);
        values.splice(0..0, [version(of), time(now - QUIET_FOR_DONE)]);
        let sql = format!(
            "SELECT {} AS status, count(*) AS clients FROM client_versions WHERE version = $1{filtered} \
             GROUP BY 1",
            status_sql(2)
        );
        let rows =
            read_in(&mut self.reads, Statement::new(sql, values), |r| Ok((must(r, "status")?, r.count("clients")?)))
                .await?;
        let mut counts = StatusCounts::default();
        for (status, n) in rows {
            if let Some(status) = Status::named(&status) {
                counts.add(status, n as i64);
            }
        }
        Ok(counts)
    }

    async fn operations(&mut self, of: u16, versions: &[u16], clients: &[Client]) -> StoreResult<Activity> {
        let on = |columns: &str, table: &str| {
            Statement::rows(
                format!(
                    "WITH k (tenant, subject) AS ({ROWS}) SELECT {columns} FROM {table} \
                     JOIN k USING (tenant, subject) WHERE version = $1"
                ),
                [version(of)],
                keyed(clients),
            )
        };
        let every: Vec<Vec<Value<'_>>> = versions
            .iter()
            .flat_map(|v| clients.iter().map(move |c| [&[version(*v)][..], &client_key(c)].concat()))
            .collect();
        let dry_runs = Statement::rows(
            format!(
                "WITH k (version, tenant, subject) AS ({ROWS}) SELECT {ROUTE_COLUMNS} FROM client_dry_runs \
                 JOIN k USING (version, tenant, subject)"
            ),
            [],
            every,
        );
        let reads = &mut self.reads;
        Ok(Activity {
            versions: Vec::new(),
            routes: read_in(reads, on(ROUTE_COLUMNS, "client_routes"), route_from).await?,
            dry_runs: read_in(reads, dry_runs, route_from).await?,
            exposures: read_in(reads, on(EXPOSURE_COLUMNS, "client_exposures"), exposure_from).await?,
            details: read_in(reads, on(DETAIL_COLUMNS, "client_exposure_details"), detail_from).await?,
        })
    }

    async fn changes_met(&mut self, of: u16, clients: &[Client]) -> StoreResult<Vec<(Client, String)>> {
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT DISTINCT tenant, subject, change \
                 FROM client_exposures JOIN k USING (tenant, subject) WHERE version = $1"
            ),
            [version(of)],
            keyed(clients),
        );
        read_in(&mut self.reads, statement, |r| Ok((client_from(r)?, must(r, "change")?))).await
    }

    async fn busiest(&mut self, of: u16, window: Window, limit: usize) -> StoreResult<Vec<Windowed>> {
        let sql = format!("{} ORDER BY requests DESC, tenant, subject LIMIT $4", windowed_sql(self.dialect, false));
        let statement = Statement::new(sql, [version(of), day(window.first), day(window.today), count(limit as u64)]);
        read_in(&mut self.reads, statement, windowed_from).await
    }

    async fn answered_clients(&mut self, of: u16, window: Window) -> StoreResult<u64> {
        let sql = format!("SELECT count(*) AS clients FROM ({}) AS w", windowed_sql(self.dialect, false));
        let statement = Statement::new(sql, [version(of), day(window.first), day(window.today)]);
        Ok(read_in(&mut self.reads, statement, |r| r.count("clients")).await?.into_iter().next().unwrap_or(0))
    }

    async fn windowed(&mut self, of: u16, window: Window, clients: &[Client]) -> StoreResult<Vec<Windowed>> {
        let statement = Statement::rows(
            windowed_sql(self.dialect, true),
            [version(of), day(window.first), day(window.today)],
            keyed(clients),
        );
        read_in(&mut self.reads, statement, windowed_from).await
    }

    async fn day_totals(&mut self, of: u16, first: NaiveDate, last: NaiveDate) -> StoreResult<Vec<(NaiveDate, u64)>> {
        let statement = Statement::new(
            "SELECT day, requests FROM usage_days WHERE version = $1 AND day >= $2 AND day <= $3 ORDER BY day",
            [version(of), day(first), day(last)],
        );
        read_in(&mut self.reads, statement, |r| Ok((r.day("day")?, r.count("requests")?))).await
    }

    async fn usage_clients(
        &mut self,
        of: u16,
        since: NaiveDate,
        after: Option<&Client>,
        limit: usize,
    ) -> StoreResult<Vec<Client>> {
        let mut values = vec![version(of), day(since)];
        let mut sql = usage_clients_sql(self.dialect).to_string();
        if let Some(after) = after {
            sql += " AND (tenant, subject) > ($3, $4)";
            values.extend([text(&after.tenant), text(&after.subject)]);
        }
        sql += &format!(" ORDER BY tenant, subject LIMIT ${}", values.len() + 1);
        values.push(count(limit as u64));
        read_in(&mut self.reads, Statement::new(sql, values), client_from).await
    }

    async fn usage_of(&mut self, of: u16, since: NaiveDate, clients: &[Client]) -> StoreResult<Vec<UsageRow>> {
        let statement = Statement::rows(
            format!(
                "WITH k (tenant, subject) AS ({ROWS}) SELECT {USAGE_COLUMNS} FROM usage_daily \
                 JOIN k USING (tenant, subject) WHERE version = $1 AND day >= $2"
            ),
            [version(of), day(since)],
            keyed(clients),
        );
        read_in(&mut self.reads, statement, usage_from).await
    }

    async fn usage_client_count(&mut self, of: u16, since: NaiveDate) -> StoreResult<u64> {
        let sql = format!("SELECT count(*) AS clients FROM ({}) AS c", usage_clients_sql(self.dialect));
        let statement = Statement::new(sql, [version(of), day(since)]);
        Ok(read_in(&mut self.reads, statement, |r| r.count("clients")).await?.into_iter().next().unwrap_or(0))
    }

    async fn usage_clients_among(&mut self, of: u16, since: NaiveDate, clients: &[Client]) -> StoreResult<Vec<Client>> {
        let sql = format!(
            "WITH k (tenant, subject) AS ({ROWS}) SELECT tenant, subject FROM ({}) AS c JOIN k USING (tenant, subject)",
            usage_clients_sql(self.dialect)
        );
        let statement = Statement::rows(sql, [version(of), day(since)], keyed(clients));
        read_in(&mut self.reads, statement, client_from).await
    }

    async fn element_uses(&mut self, clients: &[Client], since: NaiveDate) -> StoreResult<Vec<ElementUse>> {
        read_in(&mut self.reads, super::elements::uses_of(clients, since), super::elements::use_from).await
    }

    async fn every_client(
        &mut self,
        of: u16,
        versions: &[u16],
        filter: &ClientFilter,
        now: DateTime<Utc>,
        each: &mut (dyn FnMut(ClientRows) -> Each + Send),
    ) -> StoreResult<()> {
        super::walk::every_client(&mut self.reads, self.dialect, (of, versions), filter, now, each).await
    }

    async fn element_totals(
        &mut self,
        deprecation: &str,
        since: DateTime<Utc>,
        first_day: NaiveDate,
    ) -> StoreResult<ElementTotals> {
        let statement = super::elements::totals(deprecation, since, first_day);
        let totals = read_in(&mut self.reads, statement, super::elements::totals_from).await?;
        Ok(totals.into_iter().next().unwrap_or_default())
    }

    async fn element_clients_among(
        &mut self,
        deprecation: &str,
        since: DateTime<Utc>,
        clients: &[Client],
    ) -> StoreResult<Vec<Client>> {
        read_in(&mut self.reads, super::elements::clients_among(deprecation, since, clients), client_from).await
    }

    async fn element_tenant_clients(
        &mut self,
        deprecation: &str,
        tenant: &str,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<Client>> {
        let statement = super::elements::tenant_clients(deprecation, tenant, since, after, limit);
        read_in(&mut self.reads, statement, client_from).await
    }

    async fn element_busiest(&mut self, deprecation: &str, window: Window, limit: usize) -> StoreResult<Vec<Windowed>> {
        read_in(
            &mut self.reads,
            super::elements::busiest(self.dialect, deprecation, window.first, limit),
            windowed_from,
        )
        .await
    }

    async fn element_window_clients(&mut self, deprecation: &str, window: Window) -> StoreResult<u64> {
        let statement = super::elements::window_clients(self.dialect, deprecation, window.first);
        Ok(read_in(&mut self.reads, statement, |r| r.count("clients")).await?.into_iter().next().unwrap_or(0))
    }

    async fn element_windowed(
        &mut self,
        deprecation: &str,
        window: Window,
        clients: &[Client],
    ) -> StoreResult<Vec<Windowed>> {
        read_in(
            &mut self.reads,
            super::elements::windowed(self.dialect, deprecation, window.first, clients),
            windowed_from,
        )
        .await
    }

    async fn element_day_totals(&mut self, deprecation: &str, window: Window) -> StoreResult<Vec<(NaiveDate, u64)>> {
        let statement = super::elements::day_totals(deprecation, window.first, window.today);
        read_in(&mut self.reads, statement, |r| Ok((r.day("day")?, r.count("requests")?))).await
    }

    async fn tenant_clients(
        &mut self,
        of: u16,
        tenant: &str,
        since: DateTime<Utc>,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<ClientSummary>> {
        // Through the primary key (version, tenant, subject): a page costs its rows.
        let statement = Statement::new(
            format!(
                "SELECT {SUMMARY_COLUMNS} FROM client_versions WHERE version = $1 AND tenant = $2 \
                 AND last_request >= $3 AND subject > $4 ORDER BY subject LIMIT $5"
            ),
            [version(of), text(tenant), time(since), text(after.unwrap_or("")), count(limit as u64)],
        );
        read_in(&mut self.reads, statement, summary_from).await
    }

    async fn finish(self: Box<Self>) -> StoreResult<()> {
        self.reads.finish().await
    }
}

fn must(r: &impl NamedRow, column: &str) -> Result<String, sqlx::Error> {
    super::super::rows::must_text(r, column)
}
