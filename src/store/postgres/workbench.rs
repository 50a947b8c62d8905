//! PostgreSQL: the migration workbench's activity, pins, brownouts and audit trail.

use crate::store::traced::traced;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::{Connection, PgConnection, Row, postgres::PgRow};
use uuid::Uuid;

use super::{PgStore, classify};
use crate::{
    core::storage::{
        Activity, AuditEntry, Brownout, DetailActivity, ExposureActivity, MAX_DETAILS, Pin, RouteActivity, StoreResult,
        VersionActivity, WorkbenchStore,
    },
    store::{timed, with_import_budget},
};

fn version(raw: Option<i32>) -> Option<u16> {
    raw.and_then(|v| u16::try_from(v).ok())
}

async fn insert_audit(c: &mut PgConnection, audit: &AuditEntry) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO audit (at, actor, action, target, before, after) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(audit.at)
        .bind(&audit.actor)
        .bind(&audit.action)
        .bind(&audit.target)
        .bind(&audit.before)
        .bind(&audit.after)
        .execute(traced(c))
        .await
        .map(|_| ())
}

fn brownout_from(r: &PgRow) -> Result<Brownout, sqlx::Error> {
    Ok(Brownout {
        id: r.try_get(0)?,
        version: version(r.try_get(1)?).unwrap_or_default(),
        start: r.try_get(2)?,
        end: r.try_get(3)?,
        tenant: r.try_get(4)?,
        subject: r.try_get(5)?,
        created_at: r.try_get(6)?,
        created_by: r.try_get(7)?,
        ended_at: r.try_get(8)?,
    })
}

/// Adds to a detail's count, or adds the detail while its client, operation and change hold
/// fewer than `MAX_DETAILS` (two instances adding at once may each add the last one).
static DETAIL_UPSERT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO client_exposure_details (version, tenant, subject, method, route, change, detail, requests, \
         last_seen) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 \
         WHERE EXISTS (SELECT 1 FROM client_exposure_details WHERE version = $1 AND tenant = $2 AND subject = $3 \
         AND method = $4 AND route = $5 AND change = $6 AND detail = $7) \
         OR (SELECT count(*) FROM client_exposure_details WHERE version = $1 AND tenant = $2 AND subject = $3 \
         AND method = $4 AND route = $5 AND change = $6) < {MAX_DETAILS} \
         ON CONFLICT (version, tenant, subject, method, route, change, detail) DO UPDATE SET \
         requests = client_exposure_details.requests + EXCLUDED.requests, \
         last_seen = GREATEST(client_exposure_details.last_seen, EXCLUDED.last_seen)"
    )
});

fn detail_from(r: &PgRow) -> Result<DetailActivity, sqlx::Error> {
    Ok(DetailActivity {
        version: version(r.try_get("version")?).unwrap_or_default(),
        tenant: r.try_get("tenant")?,
        subject: r.try_get("subject")?,
        method: r.try_get("method")?,
        route: r.try_get("route")?,
        change: r.try_get("change")?,
        detail: r.try_get("detail")?,
        requests: r.try_get::<i64, _>("requests")? as u64,
        last_seen: r.try_get("last_seen")?,
    })
}

/// A row of `client_routes` or `client_dry_runs`.
fn route_from(r: &PgRow) -> Result<RouteActivity, sqlx::Error> {
    Ok(RouteActivity {
        version: version(r.try_get("version")?).unwrap_or_default(),
        tenant: r.try_get("tenant")?,
        subject: r.try_get("subject")?,
        method: r.try_get("method")?,
        route: r.try_get("route")?,
        requests: r.try_get::<i64, _>("requests")? as u64,
        first_seen: r.try_get("first_seen")?,
        last_seen: r.try_get("last_seen")?,
    })
}

/// The rows `activity` read, table by table.
struct ActivityRows {
    versions: Vec<PgRow>,
    routes: Vec<PgRow>,
    dry_runs: Vec<PgRow>,
    exposures: Vec<PgRow>,
    details: Vec<PgRow>,
}

fn activity_from(rows: &ActivityRows) -> Result<Activity, sqlx::Error> {
    let ActivityRows { versions, routes, dry_runs, exposures, details } = rows;
    Ok(Activity {
        versions: versions
            .iter()
            .map(|r| {
                Ok(VersionActivity {
                    version: version(r.try_get(0)?).unwrap_or_default(),
                    tenant: r.try_get(1)?,
                    subject: r.try_get(2)?,
                    requests: r.try_get::<i64, _>(3)? as u64,
                    last_request: r.try_get(4)?,
                    first_request: r.try_get("first_request")?,
                    rehearsals: r.try_get::<i64, _>(5)? as u64,
                    last_rehearsal: r.try_get(6)?,
                    refusals: r.try_get::<i64, _>(7)? as u64,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?,
        routes: routes.iter().map(route_from).collect::<Result<_, sqlx::Error>>()?,
        dry_runs: dry_runs.iter().map(route_from).collect::<Result<_, sqlx::Error>>()?,
        details: details.iter().map(detail_from).collect::<Result<_, sqlx::Error>>()?,
        exposures: exposures
            .iter()
            .map(|r| {
                Ok(ExposureActivity {
                    version: version(r.try_get(0)?).unwrap_or_default(),
                    tenant: r.try_get(1)?,
                    subject: r.try_get(2)?,
                    method: r.try_get(3)?,
                    route: r.try_get(4)?,
                    change: r.try_get(5)?,
                    requests: r.try_get::<i64, _>(6)? as u64,
                    last_seen: r.try_get(7)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?,
    })
}

#[async_trait]
impl WorkbenchStore for PgStore {
    async fn add_activity(&self, batch: &Activity) -> StoreResult<()> {
        timed(with_import_budget(self.timeout), async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                for row in &batch.versions {
                    sqlx::query(
                        "INSERT INTO client_versions (version, tenant, subject, requests, last_request, rehearsals, \
                         last_rehearsal, refusals, first_request) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                         ON CONFLICT (version, tenant, subject) DO UPDATE SET \
                         requests = client_versions.requests + EXCLUDED.requests, \
                         first_request = LEAST(client_versions.first_request, EXCLUDED.first_request), \
                         last_request = GREATEST(client_versions.last_request, EXCLUDED.last_request), \
                         rehearsals = client_versions.rehearsals + EXCLUDED.rehearsals, \
                         last_rehearsal = GREATEST(client_versions.last_rehearsal, EXCLUDED.last_rehearsal), \
                         refusals = client_versions.refusals + EXCLUDED.refusals",
                    )
                    .bind(i32::from(row.version))
                    .bind(&row.tenant)
                    .bind(&row.subject)
                    .bind(row.requests as i64)
                    .bind(row.last_request)
                    .bind(row.rehearsals as i64)
                    .bind(row.last_rehearsal)
                    .bind(row.refusals as i64)
                    .bind(row.first_request)
                    .execute(traced(&mut *tx))
                    .await?;
                }
                // Requests and dry runs per operation have the same shape, in tables of their own.
                for (table, rows) in [("client_routes", &batch.routes), ("client_dry_runs", &batch.dry_runs)] {
                    let upsert = format!(
                        "INSERT INTO {table} (version, tenant, subject, method, route, requests, first_seen, \
                         last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                         ON CONFLICT (version, tenant, subject, method, route) DO UPDATE SET \
                         requests = {table}.requests + EXCLUDED.requests, \
                         first_seen = LEAST({table}.first_seen, EXCLUDED.first_seen), \
                         last_seen = GREATEST({table}.last_seen, EXCLUDED.last_seen)"
                    );
                    for row in rows {
                        sqlx::query(&upsert)
                            .bind(i32::from(row.version))
                            .bind(&row.tenant)
                            .bind(&row.subject)
                            .bind(&row.method)
                            .bind(&row.route)
                            .bind(row.requests as i64)
                            .bind(row.first_seen)
                            .bind(row.last_seen)
                            .execute(traced(&mut *tx))
                            .await?;
                    }
                }
                for row in &batch.exposures {
                    sqlx::query(
                        "INSERT INTO client_exposures (version, tenant, subject, method, route, change, requests, \
                         last_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                         ON CONFLICT (version, tenant, subject, method, route, change) DO UPDATE SET \
                         requests = client_exposures.requests + EXCLUDED.requests, \
                         last_seen = GREATEST(client_exposures.last_seen, EXCLUDED.last_seen)",
                    )
                    .bind(i32::from(row.version))
                    .bind(&row.tenant)
                    .bind(&row.subject)
                    .bind(&row.method)
                    .bind(&row.route)
                    .bind(&row.change)
                    .bind(row.requests as i64)
                    .bind(row.last_seen)
                    .execute(traced(&mut *tx))
                    .await?;
                }
                for row in &batch.details {
                    sqlx::query(&DETAIL_UPSERT)
                        .bind(i32::from(row.version))
                        .bind(&row.tenant)
                        .bind(&row.subject)
                        .bind(&row.method)
                        .bind(&row.route)
                        .bind(&row.change)
                        .bind(&row.detail)
                        .bind(row.requests as i64)
                        .bind(row.last_seen)
                        .execute(traced(&mut *tx))
                        .await?;
                }
                tx.commit().await
            })
            .await
        })
        .await
    }

    async fn activity(&self, client: Option<(&str, &str)>) -> StoreResult<Activity> {
        let (tenant, subject) = client.unzip();
        // `$1 IS NULL`: every client; else the one named.
        const WHERE: &str = "WHERE ($1::text IS NULL OR (tenant = $1 AND subject = $2))";
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    let versions = sqlx::query(&format!(
                        "SELECT version, tenant, subject, requests, last_request, rehearsals, last_rehearsal, \
                         refusals, first_request FROM client_versions {WHERE} ORDER BY tenant, subject, version"
                    ))
                    .bind(tenant)
                    .bind(subject)
                    .fetch_all(traced(&mut *c))
                    .await?;
                    let mut per_route = Vec::new();
                    for table in ["client_routes", "client_dry_runs"] {
                        let found = sqlx::query(&format!(
                            "SELECT version, tenant, subject, method, route, requests, first_seen, last_seen \
                             FROM {table} {WHERE} ORDER BY tenant, subject, version, route, method"
                        ))
                        .bind(tenant)
                        .bind(subject)
                        .fetch_all(traced(&mut *c))
                        .await?;
                        per_route.push(found);
                    }
                    let [routes, dry_runs] = <[Vec<PgRow>; 2]>::try_from(per_route).expect("two tables");
                    let details = sqlx::query(&format!(
                        "SELECT version, tenant, subject, method, route, change, detail, requests, last_seen \
                         FROM client_exposure_details {WHERE} ORDER BY tenant, subject, requests DESC, detail"
                    ))
                    .bind(tenant)
                    .bind(subject)
                    .fetch_all(traced(&mut *c))
                    .await?;
                    let exposures = sqlx::query(&format!(
                        "SELECT version, tenant, subject, method, route, change, requests, last_seen \
                         FROM client_exposures {WHERE} ORDER BY tenant, subject, version, route, method, change"
                    ))
                    .bind(tenant)
                    .bind(subject)
                    .fetch_all(traced(&mut *c))
                    .await?;
                    Ok(ActivityRows { versions, routes, dry_runs, exposures, details })
                })
                .await?;
            activity_from(&rows).map_err(classify)
        })
        .await
    }

    async fn clients_before(&self, version: u16, before: DateTime<Utc>) -> StoreResult<Vec<(String, String)>> {
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    sqlx::query(
                        "SELECT tenant, subject FROM client_versions WHERE version = $1 AND requests > 0 \
                         AND (first_request < $2 OR (first_request IS NULL AND last_request < $2))",
                    )
                    .bind(i32::from(version))
                    .bind(before)
                    .fetch_all(traced(c))
                    .await
                })
                .await?;
            rows.iter()
                .map(|r| Ok((r.try_get("tenant")?, r.try_get("subject")?)))
                .collect::<Result<_, _>>()
                .map_err(classify)
        })
        .await
    }

    async fn pins(&self) -> StoreResult<Vec<Pin>> {
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    sqlx::query(
                        "SELECT tenant, version, previous, changed_at, changed_by FROM tenant_versions ORDER BY tenant",
                    )
                    .fetch_all(traced(c))
                    .await
                })
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(Pin {
                        tenant: r.try_get(0)?,
                        version: version(r.try_get(1)?),
                        previous: version(r.try_get(2)?),
                        changed_at: r.try_get(3)?,
                        changed_by: r.try_get(4)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(classify)
        })
        .await
    }

    async fn save_pin(&self, pin: &Pin, audit: &AuditEntry) -> StoreResult<()> {
        timed(self.timeout, async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                sqlx::query(
                    "INSERT INTO tenant_versions (tenant, version, previous, changed_at, changed_by) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant) DO UPDATE SET version = $2, previous = $3, \
                     changed_at = $4, changed_by = $5",
                )
                .bind(&pin.tenant)
                .bind(pin.version.map(i32::from))
                .bind(pin.previous.map(i32::from))
                .bind(pin.changed_at)
                .bind(&pin.changed_by)
                .execute(traced(&mut *tx))
                .await?;
                insert_audit(&mut tx, audit).await?;
                tx.commit().await
            })
            .await
        })
        .await
    }

    async fn brownouts(&self) -> StoreResult<Vec<Brownout>> {
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    sqlx::query(
                        "SELECT id, version, starts_at, ends_at, tenant, subject, created_at, created_by, ended_at \
                         FROM brownouts ORDER BY created_at DESC, starts_at DESC",
                    )
                    .fetch_all(traced(c))
                    .await
                })
                .await?;
            rows.iter().map(brownout_from).collect::<Result<_, sqlx::Error>>().map_err(classify)
        })
        .await
    }

    async fn add_brownout(&self, brownout: &Brownout, audit: &AuditEntry) -> StoreResult<()> {
        timed(self.timeout, async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                sqlx::query(
                    "INSERT INTO brownouts (id, version, starts_at, ends_at, tenant, subject, created_at, created_by) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(brownout.id)
                .bind(i32::from(brownout.version))
                .bind(brownout.start)
                .bind(brownout.end)
                .bind(&brownout.tenant)
                .bind(&brownout.subject)
                .bind(brownout.created_at)
                .bind(&brownout.created_by)
                .execute(traced(&mut *tx))
                .await?;
                insert_audit(&mut tx, audit).await?;
                tx.commit().await
            })
            .await
        })
        .await
    }

    async fn end_brownout(&self, id: Uuid, at: DateTime<Utc>, audit: &AuditEntry) -> StoreResult<bool> {
        timed(self.timeout, async {
            self.with_conn(async |c| {
                let mut tx = c.begin().await?;
                let ended = sqlx::query("UPDATE brownouts SET ended_at = COALESCE(ended_at, $2) WHERE id = $1")
                    .bind(id)
                    .bind(at)
                    .execute(traced(&mut *tx))
                    .await?
                    .rows_affected();
                if ended == 0 {
                    return Ok(false);
                }
                insert_audit(&mut tx, audit).await?;
                tx.commit().await?;
                Ok(true)
            })
            .await
        })
        .await
    }

    async fn record_audit(&self, audit: &AuditEntry) -> StoreResult<()> {
        timed(self.timeout, async { self.with_conn(async |c| insert_audit(c, audit).await).await }).await
    }

    async fn audit(&self, limit: u32) -> StoreResult<Vec<AuditEntry>> {
        timed(self.timeout, async {
            let rows = self
                .with_conn(async |c| {
                    sqlx::query("SELECT at, actor, action, target, before, after FROM audit ORDER BY id DESC LIMIT $1")
                        .bind(i64::from(limit))
                        .fetch_all(traced(c))
                        .await
                })
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(AuditEntry {
                        at: r.try_get(0)?,
                        actor: r.try_get(1)?,
                        action: r.try_get(2)?,
                        target: r.try_get(3)?,
                        before: r.try_get(4)?,
                        after: r.try_get(5)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(classify)
        })
        .await
    }
}
