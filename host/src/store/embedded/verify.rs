//! `store verify`: checks a whole store file — redb's page checksums, every record's checksum,
//! and that the label index and the log's kinds agree with the records — and says what is wrong.

use super::labels::{LABELS, entry};
use super::record;
use super::tables::{
    COUNTERS, LOG, LOG_KINDS, OBJECTS, REVISION, backend, decode_event, decode_object,
};
use crate::store::StoreError;
use redb::{ReadableDatabase, ReadableTable};
use std::collections::BTreeSet;
use std::path::Path;

/// One thing wrong in a store file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The record or structure it concerns: `Policy/a`, `log entry 12`, `the file`.
    pub record: String,
    pub problem: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.record, self.problem)
    }
}

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
        crate::private::quietly(|| redb::ReadOnlyDatabase::open(path))
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
    let mut db = match crate::private::quietly(|| redb::Database::create(copy)) {
        Ok(Ok(db)) => db,
        Ok(Err(e)) => return Err(StoreError::Backend(e.to_string())),
        Err(panic) => {
            return Err(StoreError::Backend(format!(
                "the file is damaged ({panic})"
            )));
        }
    };
    let mut report = Report::default();
    let file = |problem: String| Finding {
        record: "the file".into(),
        problem,
    };
    // Records first: redb's check repairs what it finds, and would hide the damage.
    if let Err(panic) = crate::private::quietly(|| check_records(&db, &mut report)) {
        report
            .findings
            .push(file(format!("reading the records failed: {panic}")));
    }
    match crate::private::quietly(|| db.check_integrity()) {
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
    if let Err(e) = try_check_records(db, report) {
        report.findings.push(Finding {
            record: "the file".into(),
            problem: e.to_string(),
        });
    }
}

fn try_check_records(db: &redb::Database, report: &mut Report) -> Result<(), StoreError> {
    let txn = db.begin_read().map_err(backend)?;
    let mut found = |record: String, problem: String| {
        report.findings.push(Finding { record, problem });
    };
    let mut expected_labels = BTreeSet::new();
    let mut newest = 0;
    let mut objects = 0;
    let table = txn.open_table(OBJECTS).map_err(backend)?;
    for entry_found in table.iter().map_err(backend)? {
        let (key, value) = entry_found.map_err(backend)?;
        let (key, value) = (key.value(), value.value());
        objects += 1;
        if record::unframed(value) {
            found(key.to_owned(), unframed_problem());
            continue;
        }
        match decode_object(key, value) {
            Ok(object) => {
                newest = newest.max(object.meta.revision);
                for (label, label_value) in &object.labels {
                    expected_labels.insert(entry(&object.kind, label, label_value, &object.name));
                }
            }
            Err(e) => found(key.to_owned(), problem_of(e)),
        }
    }
    let index = txn.open_table(LABELS).map_err(backend)?;
    let mut indexed = BTreeSet::new();
    for entry_found in index.iter().map_err(backend)? {
        let (key, _) = entry_found.map_err(backend)?;
        indexed.insert(key.value().to_owned());
    }
    for missing in expected_labels.difference(&indexed) {
        found(
            "the label index".into(),
            format!("misses {}", missing.replace('\0', " ")),
        );
    }
    for stray in indexed.difference(&expected_labels) {
        found(
            "the label index".into(),
            format!(
                "names {}, which no object carries",
                stray.replace('\0', " ")
            ),
        );
    }
    let log = txn.open_table(LOG).map_err(backend)?;
    let kinds = txn.open_table(LOG_KINDS).map_err(backend)?;
    let mut log_entries = 0;
    let mut last_logged = 0;
    for entry_found in log.iter().map_err(backend)? {
        let (revision, value) = entry_found.map_err(backend)?;
        let (revision, value) = (revision.value(), value.value());
        log_entries += 1;
        last_logged = revision;
        let name = format!("log entry {revision}");
        if record::unframed(value) {
            found(name, unframed_problem());
            continue;
        }
        match decode_event(revision, value) {
            Ok(event) => {
                let logged = kinds.get(revision).map_err(backend)?;
                let logged = logged.as_ref().map(|k| k.value());
                if event.revision != revision {
                    found(name, format!("holds revision {}", event.revision));
                } else if logged.is_some() && logged != event.kind() {
                    found(
                        name,
                        format!(
                            "is indexed as kind {:?} but is of kind {:?}",
                            logged.unwrap_or_default(),
                            event.kind().unwrap_or_default()
                        ),
                    );
                }
            }
            Err(e) => found(name, problem_of(e)),
        }
    }
    let counters = txn.open_table(COUNTERS).map_err(backend)?;
    let revision = counters
        .get(REVISION)
        .map_err(backend)?
        .map_or(0, |v| v.value());
    if revision < newest.max(last_logged) {
        found(
            "the revision counter".into(),
            format!(
                "is {revision}, behind the newest record's revision {}",
                newest.max(last_logged)
            ),
        );
    }
    report.objects = objects;
    report.log_entries = log_entries;
    Ok(())
}

fn unframed_problem() -> String {
    "has no checksum (written before records had one; serve adds them when it opens the store)"
        .into()
}

/// The problem of a record error, without the record's name (the finding carries it).
fn problem_of(error: StoreError) -> String {
    match error {
        StoreError::Corrupt { reason, .. } => reason,
        other => other.to_string(),
    }
}
