//! An import as it happens: the file arrives in pieces, its rows are checked as they complete
//! and written in batches inside one transaction, and only the outcome is kept in memory (the
//! counts and the first errors), so memory does not grow with the file.
//!
//! Rows are written whatever the mode: `reject` may only be known once the file has arrived
//! (the `options` part may follow it), and a rejected import rolls back like any other failure.
//! (A store may stage the rows and write them at commit: see the storage port.)

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{CheckedRow, CsvReader, ImportReport, ImportStatus, MAX_LISTED_ERRORS, OnError, RowError};
use crate::core::{
    CoreError,
    customer::NewCustomer,
    customers::Rejection,
    error::Conflict,
    fields::Rule,
    storage::{ImportWriter, StoreError},
};

/// Rows checked together against the store: one round trip each for duplicates and writes.
pub const BATCH: usize = 2000;

pub struct ImportSession {
    id: Uuid,
    created_at: DateTime<Utc>,
    reader: CsvReader,
    writer: Box<dyn ImportWriter>,
    /// Rows read, not yet checked against the store.
    pending: Vec<CheckedRow>,
    created: u64,
    invalid_rows: u64,
    /// The first [`MAX_LISTED_ERRORS`], by line.
    errors: Vec<RowError>,
}

impl ImportSession {
    pub fn new(id: Uuid, created_at: DateTime<Utc>, writer: Box<dyn ImportWriter>) -> Self {
        Self {
            id,
            created_at,
            reader: CsvReader::new(created_at),
            writer,
            pending: Vec::with_capacity(BATCH),
            created: 0,
            invalid_rows: 0,
            errors: Vec::new(),
        }
    }

    /// The next piece of the file.
    pub async fn feed(&mut self, piece: &[u8]) -> Result<(), CoreError> {
        self.reader.feed(piece, &mut self.pending);
        if self.reader.failed() {
            // The import will fail as a whole: its rows need no more work.
            self.pending.clear();
        } else if self.pending.len() >= BATCH {
            self.write_pending().await?;
        }
        Ok(())
    }

    /// The file has arrived: writes what is left, then commits unless the file or (under
    /// `reject`) a row is invalid. Nothing is committed on any error.
    pub async fn finish(mut self, on_error: OnError) -> Result<ImportReport, CoreError> {
        let received = self.reader.finish(&mut self.pending).map_err(CoreError::UnreadableFile)?;
        self.write_pending().await?;
        if on_error == OnError::Reject && self.invalid_rows > 0 {
            return Err(CoreError::ImportRejected(Rejection {
                received,
                invalid_rows: self.invalid_rows,
                errors: self.errors,
            }));
        }
        let report = ImportReport {
            id: self.id,
            status: if self.invalid_rows == 0 { ImportStatus::Completed } else { ImportStatus::CompletedWithSkips },
            received,
            created: self.created,
            skipped: self.invalid_rows,
            errors: self.errors,
            created_at: self.created_at,
        };
        self.writer.commit(&report).await.map_err(|err| match err {
            // A store that writes at commit (SQLite) may find a number or the key taken since.
            StoreError::Conflict(_) => CoreError::Conflict(Conflict::ConcurrentUpdate),
            other => other.into(),
        })?;
        Ok(report)
    }

    /// Finds duplicates among the pending rows and earlier ones, writes the valid rows, and
    /// records the outcome of each.
    async fn write_pending(&mut self) -> Result<(), CoreError> {
        let mut rows = std::mem::take(&mut self.pending);
        if rows.is_empty() {
            return Ok(());
        }
        self.mark_duplicates(&mut rows).await?;
        let (at, customers): (Vec<usize>, Vec<NewCustomer>) =
            rows.iter_mut().enumerate().filter_map(|(i, row)| Some((i, row.customer.take()?))).unzip();
        let written = self.writer.write(&customers).await?;
        for (i, written) in at.into_iter().zip(written) {
            match written {
                true => self.created += 1,
                false => {
                    let line = rows[i].line;
                    rows[i].errors.push(RowError { line, column: "customerNumber".into(), rule: Rule::AlreadyExists });
                }
            }
        }
        for row in rows.into_iter().filter(|row| !row.errors.is_empty()) {
            self.invalid_rows += 1;
            let room = MAX_LISTED_ERRORS.saturating_sub(self.errors.len());
            self.errors.extend(row.errors.into_iter().take(room));
        }
        self.pending = Vec::with_capacity(BATCH);
        Ok(())
    }

    /// A row whose customer number an earlier row of the file has is a duplicate of the first
    /// such row, even when that row was invalid otherwise.
    async fn mark_duplicates(&mut self, rows: &mut [CheckedRow]) -> Result<(), CoreError> {
        // Each number's first line: in this batch, then from earlier batches.
        let mut first: HashMap<&str, u64> = HashMap::new();
        let mut numbers = Vec::new();
        for row in rows.iter() {
            if let Some(number) = &row.number {
                first.entry(number.as_str()).or_insert_with(|| {
                    numbers.push((number.as_str(), row.line));
                    row.line
                });
            }
        }
        if !numbers.is_empty() {
            let earlier = self.writer.earlier_lines(&numbers).await?;
            for (&(number, _), line) in numbers.iter().zip(earlier) {
                if let Some(line) = line {
                    first.insert(number, line);
                }
            }
        }
        let duplicate_of: Vec<Option<u64>> = rows
            .iter()
            .map(|row| row.number.as_ref().map(|n| first[n.as_str()]).filter(|line| *line != row.line))
            .collect();
        for (row, first) in rows.iter_mut().zip(duplicate_of) {
            if let Some(line) = first {
                row.errors.push(RowError {
                    line: row.line,
                    column: "customerNumber".into(),
                    rule: Rule::DuplicateOf { line },
                });
                row.customer = None;
            }
        }
        Ok(())
    }
}
