//! Steering the migration, for both backends at once: tenants' pinned default versions,
//! targeted brownouts and the audit trail of every change.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::super::rows::{
    Bound, NamedRow, RowStore, Statement, Value, count, insert, maybe_version, must_text, must_time, must_version,
    read, text, time, version,
};
use crate::core::storage::{AuditEntry, Brownout, Pin, StoreResult};

const PIN_COLUMNS: &str = "tenant, version, previous, changed_at, changed_by";
const BROWNOUT_COLUMNS: &str =
    "id, version, starts_at, ends_at, tenant, subject, created_at, created_by, ended_at, deprecation";
const AUDIT_COLUMNS: &str = "at, actor, action, target, before, after";

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
        deprecation: r.text("deprecation")?,
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

pub(super) async fn pins<S: RowStore>(store: &S) -> StoreResult<Vec<Pin>> {
    let statement = Statement::plain(format!("SELECT {PIN_COLUMNS} FROM tenant_versions ORDER BY tenant"));
    read(store, statement, pin_from).await
}

pub(super) async fn save_pin<S: RowStore>(store: &S, pin: &Pin, audit: &AuditEntry) -> StoreResult<()> {
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
    store.write_all(&[upsert, audit_insert(audit)], Bound::Call).await.map(drop)
}

pub(super) async fn brownouts<S: RowStore>(store: &S) -> StoreResult<Vec<Brownout>> {
    let statement =
        Statement::plain(format!("SELECT {BROWNOUT_COLUMNS} FROM brownouts ORDER BY created_at DESC, starts_at DESC"));
    read(store, statement, brownout_from).await
}

/// Those not ended before `now`, through their index: a request consults these alone.
pub(super) async fn brownouts_in_force<S: RowStore>(store: &S, now: DateTime<Utc>) -> StoreResult<Vec<Brownout>> {
    let statement = Statement::new(
        format!("SELECT {BROWNOUT_COLUMNS} FROM brownouts WHERE ended_at IS NULL AND ends_at > $1 ORDER BY starts_at"),
        [time(now)],
    );
    read(store, statement, brownout_from).await
}

pub(super) async fn add_brownout<S: RowStore>(store: &S, brownout: &Brownout, audit: &AuditEntry) -> StoreResult<()> {
    let columns = "id, version, starts_at, ends_at, tenant, subject, created_at, created_by, deprecation";
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
            Value::Text(brownout.deprecation.as_deref()),
        ],
    );
    store.write_all(&[add, audit_insert(audit)], Bound::Call).await.map(drop)
}

pub(super) async fn end_brownout<S: RowStore>(
    store: &S,
    id: Uuid,
    at: DateTime<Utc>,
    audit: &AuditEntry,
) -> StoreResult<bool> {
    // Brownouts are never deleted: one found here is still there when the write runs.
    let found = Statement::new("SELECT id FROM brownouts WHERE id = $1", [Value::Id(id)]);
    if read(store, found, |r| r.id("id")).await?.is_empty() {
        return Ok(false);
    }
    let end = Statement::new(
        "UPDATE brownouts SET ended_at = coalesce(ended_at, $2) WHERE id = $1",
        [Value::Id(id), time(at)],
    );
    store.write_all(&[end, audit_insert(audit)], Bound::Call).await?;
    Ok(true)
}

pub(super) async fn record_audit<S: RowStore>(store: &S, audit: &AuditEntry) -> StoreResult<()> {
    store.write_all(&[audit_insert(audit)], Bound::Call).await.map(drop)
}

pub(super) async fn audit<S: RowStore>(store: &S, limit: u32) -> StoreResult<Vec<AuditEntry>> {
    let statement = Statement::new(
        format!("SELECT {AUDIT_COLUMNS} FROM audit ORDER BY id DESC LIMIT $1"),
        [count(u64::from(limit))],
    );
    read(store, statement, audit_from).await
}
