//! The migration workbench's port ([`WorkbenchStore`]) for both backends at once: its SQL and
//! its row mappings are written here, once; each backend binds the values and reads the rows
//! ([`RowStore`]). Where SQLite and PostgreSQL differ (the later of two nullable times), the
//! [`Dialect`] says how.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    query::Dialect,
    rows::{
        Bound, NamedRow, RowStore, Statement, Value, count, insert, maybe_version, must_text, must_time, must_version,
        read, text, time, version,
    },
};
use crate::core::storage::{
    Activity, AuditEntry, Brownout, ClientRoute, DetailActivity, ExposureActivity, MAX_DETAILS, Pin, RouteActivity,
    StoreResult, VersionActivity, WorkbenchStore,
};

/// Every client's rows, or one client's (`$1` tenant, `$2` subject).
const FOR_CLIENT: &str = "WHERE (CAST($1 AS TEXT) IS NULL OR (tenant = $1 AND subject = $2))";

const VERSION_COLUMNS: &str =
    "version, tenant, subject, requests, last_request, rehearsals, last_rehearsal, refusals, first_request";
/// The columns every per-operation table begins with, in the order [`on`] binds them.
macro_rules! on_columns {
    () => {
        "version, tenant, subject, method, route"
    };
}
const ROUTE_COLUMNS: &str = concat!(on_columns!(), ", requests, first_seen, last_seen");
const EXPOSURE_COLUMNS: &str = concat!(on_columns!(), ", change, requests, last_seen");
const DETAIL_COLUMNS: &str = concat!(on_columns!(), ", change, detail, requests, last_seen");
const PIN_COLUMNS: &str = "tenant, version, previous, changed_at, changed_by";
const BROWNOUT_COLUMNS: &str = "id, version, starts_at, ends_at, tenant, subject, created_at, created_by, ended_at";
const AUDIT_COLUMNS: &str = "at, actor, action, target, before, after";

/// Counts add, first times move back and last times forward.
fn version_upsert(d: Dialect) -> String {
    let t = "client_versions";
    format!(
        "{} ON CONFLICT (version, tenant, subject) DO UPDATE SET requests = {t}.requests + excluded.requests, \
         first_request = {}, last_request = {}, rehearsals = {t}.rehearsals + excluded.rehearsals, \
         last_rehearsal = {}, refusals = {t}.refusals + excluded.refusals",
        insert(t, VERSION_COLUMNS),
        d.earlier(&format!("{t}.first_request"), "excluded.first_request"),
        d.later(&format!("{t}.last_request"), "excluded.last_request"),
        d.later(&format!("{t}.last_rehearsal"), "excluded.last_rehearsal"),
    )
}

/// Requests and dry runs per operation have the same shape, in tables of their own.
fn route_upsert(d: Dialect, t: &str) -> String {
    format!(
        concat!(
            "{} ON CONFLICT (",
            on_columns!(),
            ") DO UPDATE SET requests = {t}.requests + excluded.requests, first_seen = {}, last_seen = {}"
        ),
        insert(t, ROUTE_COLUMNS),
        d.earlier(&format!("{t}.first_seen"), "excluded.first_seen"),
        d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
        t = t,
    )
}

fn exposure_upsert(d: Dialect) -> String {
    let t = "client_exposures";
    format!(
        concat!(
            "{} ON CONFLICT (",
            on_columns!(),
            ", change) DO UPDATE SET requests = {t}.requests + excluded.requests, last_seen = {}"
        ),
        insert(t, EXPOSURE_COLUMNS),
        d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
        t = t,
    )
}

/// Adds to a detail's count, or adds the detail while its client, operation and change hold
/// fewer than `MAX_DETAILS` (two instances adding at once may each add the last one).
fn detail_upsert(d: Dialect) -> String {
    let t = "client_exposure_details";
    let same = "version = $1 AND tenant = $2 AND subject = $3 AND method = $4 AND route = $5 AND change = $6";
    format!(
        concat!(
            "INSERT INTO {t} ({columns}) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 ",
            "WHERE EXISTS (SELECT 1 FROM {t} WHERE {same} AND detail = $7) ",
            "OR (SELECT count(*) FROM {t} WHERE {same}) < {max} ON CONFLICT (",
            on_columns!(),
            ", change, detail) DO UPDATE SET requests = {t}.requests + excluded.requests, last_seen = {}"
        ),
        d.later(&format!("{t}.last_seen"), "excluded.last_seen"),
        t = t,
        columns = DETAIL_COLUMNS,
        same = same,
        max = MAX_DETAILS,
    )
}

fn audit_insert(audit: &AuditEntry) -> Statement<'_> {
    Statement::new(
        insert("audit", AUDIT_COLUMNS),
        [
            time(audit.at),
            text(&audit.actor),
            text(&audit.action),
            text(&audit.target),
            Value::Text(audit.before.as_deref()),
            Value::Text(audit.after.as_deref()),
        ],
    )
}

/// The values of `ClientRoute`'s columns, which every per-operation table begins with.
fn on(at: &ClientRoute) -> [Value<'_>; 5] {
    [version(at.version), text(&at.tenant), text(&at.subject), text(&at.method), text(&at.route)]
}

fn activity_writes(d: Dialect, batch: &Activity) -> Vec<Statement<'_>> {
    let mut writes = Vec::new();
    let versions = version_upsert(d);
    for row in &batch.versions {
        writes.push(Statement::new(
            versions.clone(),
            [
                version(row.version),
                text(&row.tenant),
                text(&row.subject),
                count(row.requests),
                Value::Time(row.last_request),
                count(row.rehearsals),
                Value::Time(row.last_rehearsal),
                count(row.refusals),
                Value::Time(row.first_request),
            ],
        ));
    }
    for (table, rows) in [("client_routes", &batch.routes), ("client_dry_runs", &batch.dry_runs)] {
        let upsert = route_upsert(d, table);
        for row in rows {
            writes.push(Statement::new(
                upsert.clone(),
                [&on(&row.on)[..], &[count(row.requests), time(row.first_seen), time(row.last_seen)]].concat(),
            ));
        }
    }
    let exposures = exposure_upsert(d);
    for row in &batch.exposures {
        writes.push(Statement::new(
            exposures.clone(),
            [&on(&row.on)[..], &[text(&row.change), count(row.requests), time(row.last_seen)]].concat(),
        ));
    }
    let details = detail_upsert(d);
    for row in &batch.details {
        writes.push(Statement::new(
            details.clone(),
            [&on(&row.on)[..], &[text(&row.change), text(&row.detail), count(row.requests), time(row.last_seen)]]
                .concat(),
        ));
    }
    writes
}

fn version_from(r: &impl NamedRow) -> Result<VersionActivity, sqlx::Error> {
    Ok(VersionActivity {
        version: must_version(r, "version")?,
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        requests: r.count("requests")?,
        first_request: r.time("first_request")?,
        last_request: r.time("last_request")?,
        rehearsals: r.count("rehearsals")?,
        last_rehearsal: r.time("last_rehearsal")?,
        refusals: r.count("refusals")?,
    })
}

/// The columns every per-operation row begins with.
fn on_from(r: &impl NamedRow) -> Result<ClientRoute, sqlx::Error> {
    Ok(ClientRoute {
        version: must_version(r, "version")?,
        tenant: must_text(r, "tenant")?,
        subject: must_text(r, "subject")?,
        method: must_text(r, "method")?,
        route: must_text(r, "route")?,
    })
}

/// A row of `client_routes` or `client_dry_runs`.
fn route_from(r: &impl NamedRow) -> Result<RouteActivity, sqlx::Error> {
    Ok(RouteActivity {
        on: on_from(r)?,
        requests: r.count("requests")?,
        first_seen: must_time(r, "first_seen")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

fn exposure_from(r: &impl NamedRow) -> Result<ExposureActivity, sqlx::Error> {
    Ok(ExposureActivity {
        on: on_from(r)?,
        change: must_text(r, "change")?,
        requests: r.count("requests")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

fn detail_from(r: &impl NamedRow) -> Result<DetailActivity, sqlx::Error> {
    Ok(DetailActivity {
        on: on_from(r)?,
        change: must_text(r, "change")?,
        detail: must_text(r, "detail")?,
        requests: r.count("requests")?,
        last_seen: must_time(r, "last_seen")?,
    })
}

fn pin_from(r: &impl NamedRow) -> Result<Pin, sqlx::Error> {
    Ok(Pin {
        tenant: must_text(r, "tenant")?,
        version: r.version("version")?,
        previous: r.version("previous")?,
        changed_at: must_time(r, "changed_at")?,
        changed_by: must_text(r, "changed_by")?,
    })
}

fn brownout_from(r: &impl NamedRow) -> Result<Brownout, sqlx::Error> {
    Ok(Brownout {
        id: r.id("id")?,
        version: must_version(r, "version")?,
        start: must_time(r, "starts_at")?,
        end: must_time(r, "ends_at")?,
        tenant: r.text("tenant")?,
        subject: r.text("subject")?,
        created_at: must_time(r, "created_at")?,
        created_by: must_text(r, "created_by")?,
        ended_at: r.time("ended_at")?,
    })
}

fn audit_from(r: &impl NamedRow) -> Result<AuditEntry, sqlx::Error> {
    Ok(AuditEntry {
        at: must_time(r, "at")?,
        actor: must_text(r, "actor")?,
        action: must_text(r, "action")?,
        target: must_text(r, "target")?,
        before: r.text("before")?,
        after: r.text("after")?,
    })
}

#[async_trait]
impl<S: RowStore> WorkbenchStore for S {
    async fn add_activity(&self, batch: &Activity) -> StoreResult<()> {
        self.write_all(&activity_writes(S::DIALECT, batch), Bound::Batch).await.map(drop)
    }

    async fn activity(&self, client: Option<(&str, &str)>) -> StoreResult<Activity> {
        let (tenant, subject) = client.unzip();
        let of_client = |columns: &str, table: &str, order: &str| {
            Statement::new(
                format!("SELECT {columns} FROM {table} {FOR_CLIENT} ORDER BY {order}"),
                [Value::Text(tenant), Value::Text(subject)],
            )
        };
        let per_route = "tenant, subject, version, route, method";
        Ok(Activity {
            versions: read(
                self,
                of_client(VERSION_COLUMNS, "client_versions", "tenant, subject, version"),
                version_from,
            )
            .await?,
            routes: read(self, of_client(ROUTE_COLUMNS, "client_routes", per_route), route_from).await?,
            dry_runs: read(self, of_client(ROUTE_COLUMNS, "client_dry_runs", per_route), route_from).await?,
            exposures: read(
                self,
                of_client(EXPOSURE_COLUMNS, "client_exposures", "tenant, subject, version, route, method, change"),
                exposure_from,
            )
            .await?,
            details: read(
                self,
                of_client(DETAIL_COLUMNS, "client_exposure_details", "tenant, subject, requests DESC, detail"),
                detail_from,
            )
            .await?,
        })
    }

    async fn clients_before(&self, version: u16, before: DateTime<Utc>) -> StoreResult<Vec<(String, String)>> {
        let statement = Statement::new(
            "SELECT tenant, subject FROM client_versions WHERE version = $1 AND requests > 0 \
             AND (first_request < $2 OR (first_request IS NULL AND last_request < $2))",
            [self::version(version), time(before)],
        );
        read(self, statement, |r| Ok((must_text(r, "tenant")?, must_text(r, "subject")?))).await
    }

    async fn pins(&self) -> StoreResult<Vec<Pin>> {
        let statement = Statement::plain(format!("SELECT {PIN_COLUMNS} FROM tenant_versions ORDER BY tenant"));
        read(self, statement, pin_from).await
    }

    async fn save_pin(&self, pin: &Pin, audit: &AuditEntry) -> StoreResult<()> {
        let upsert = Statement::new(
            format!(
                "{} ON CONFLICT (tenant) DO UPDATE SET version = $2, previous = $3, changed_at = $4, changed_by = $5",
                insert("tenant_versions", PIN_COLUMNS)
            ),
            [
                text(&pin.tenant),
                maybe_version(pin.version),
                maybe_version(pin.previous),
                time(pin.changed_at),
                text(&pin.changed_by),
            ],
        );
        self.write_all(&[upsert, audit_insert(audit)], Bound::Call).await.map(drop)
    }

    async fn brownouts(&self) -> StoreResult<Vec<Brownout>> {
        let statement = Statement::plain(format!(
            "SELECT {BROWNOUT_COLUMNS} FROM brownouts ORDER BY created_at DESC, starts_at DESC"
        ));
        read(self, statement, brownout_from).await
    }

    async fn add_brownout(&self, brownout: &Brownout, audit: &AuditEntry) -> StoreResult<()> {
        let columns = "id, version, starts_at, ends_at, tenant, subject, created_at, created_by";
        let add = Statement::new(
            insert("brownouts", columns),
            [
                Value::Id(brownout.id),
                version(brownout.version),
                time(brownout.start),
                time(brownout.end),
                Value::Text(brownout.tenant.as_deref()),
                Value::Text(brownout.subject.as_deref()),
                time(brownout.created_at),
                text(&brownout.created_by),
            ],
        );
        self.write_all(&[add, audit_insert(audit)], Bound::Call).await.map(drop)
    }

    async fn end_brownout(&self, id: Uuid, at: DateTime<Utc>, audit: &AuditEntry) -> StoreResult<bool> {
        // Brownouts are never deleted: one found here is still there when the write runs.
        let found = Statement::new("SELECT id FROM brownouts WHERE id = $1", [Value::Id(id)]);
        if read(self, found, |r| r.id("id")).await?.is_empty() {
            return Ok(false);
        }
        let end = Statement::new(
            "UPDATE brownouts SET ended_at = coalesce(ended_at, $2) WHERE id = $1",
            [Value::Id(id), time(at)],
        );
        self.write_all(&[end, audit_insert(audit)], Bound::Call).await?;
        Ok(true)
    }

    async fn record_audit(&self, audit: &AuditEntry) -> StoreResult<()> {
        self.write_all(&[audit_insert(audit)], Bound::Call).await.map(drop)
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<AuditEntry>> {
        let statement = Statement::new(
            format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY id DESC LIMIT $1"),
            [count(u64::from(limit))],
        );
        read(self, statement, audit_from).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_upsert_keeps_the_later_of_two_nullable_times_on_each_backend() {
        assert!(
            version_upsert(Dialect::Postgres)
                .contains("last_request = GREATEST(client_versions.last_request, excluded.last_request)")
        );
        assert!(version_upsert(Dialect::Sqlite).contains(
            "first_request = min(coalesce(client_versions.first_request, excluded.first_request), \
             coalesce(excluded.first_request, client_versions.first_request))"
        ));
    }
}
