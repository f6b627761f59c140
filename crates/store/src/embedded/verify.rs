//! `store verify`: checks a whole store file — redb's page checksums, every record's checksum,
//! and that the label index and the log's kinds agree with the records — and says what is wrong.

use super::check::{Area, Finding, check_all};
use crate::StoreError;
use std::path::Path;

/// What was checked, and what is wrong (nothing, if the file is sound).
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub objects: usize,
    pub log_entries: usize,
    pub findings: Vec<Finding>,
}

/// Checks the store file at `path`, which no server may have open. The checks run on a
/// private copy beside it (redb repairs what its integrity check finds), so the file itself is
/// left as it was. An error means the file could not be checked at all (missing, in use, not
/// a redb file).
pub fn verify(path: &Path) -> Result<Report, StoreError> {
    let failed =
        |reason: String| StoreError::Backend(format!("cannot check {}: {reason}", path.display()));
    if !path.is_file() {
        return Err(failed("there is no store file".into()));
    }
    if let Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) =
        reactor_core::private::quietly(|| redb::ReadOnlyDatabase::open(path))
    {
        return Err(failed(
            "it is already open in a server: stop it first".into(),
        ));
    }
    let copy = path.with_extension(format!("redb.verify-{}", std::process::id()));
    let report = std::fs::copy(path, &copy)
        .map_err(|e| failed(format!("cannot copy it to {}: {e}", copy.display())))
        .and_then(|_| verify_copy(&copy));
    let _ = std::fs::remove_file(&copy);
    report.map_err(|reason| match reason {
        StoreError::Backend(reason) => failed(reason),
        other => other,
    })
}

fn verify_copy(copy: &Path) -> Result<Report, StoreError> {
    let mut db = match reactor_core::private::quietly(|| redb::Database::create(copy)) {
        Ok(Ok(db)) => db,
        Ok(Err(e)) => return Err(StoreError::Backend(e.to_string())),
        Err(panic) => {
            return Err(StoreError::Backend(format!(
                "the file is damaged ({panic})"
            )));
        }
    };
    let mut report = Report::default();
    let file = |problem: String| Finding::new(Area::File, "the file", problem);
    // Records first: redb's check repairs what it finds, and would hide the damage.
    if let Err(panic) = reactor_core::private::quietly(|| check_records(&db, &mut report)) {
        report
            .findings
            .push(file(format!("reading the records failed: {panic}")));
    }
    match reactor_core::private::quietly(|| db.check_integrity()) {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => report.findings.push(file(
            "redb's page checksums failed (redb would roll the file back to its last sound commit)"
                .into(),
        )),
        Ok(Err(e)) => report
            .findings
            .push(file(format!("redb's integrity check failed: {e}"))),
        Err(panic) => report
            .findings
            .push(file(format!("redb's integrity check failed: {panic}"))),
    }
    Ok(report)
}

fn check_records(db: &redb::Database, report: &mut Report) {
    match check_all(db) {
        Ok((findings, (objects, log_entries))) => {
            report.findings.extend(findings);
            report.objects = objects as usize;
            report.log_entries = log_entries as usize;
        }
        Err(e) => report
            .findings
            .push(Finding::new(Area::File, "the file", e.to_string())),
    }
}
