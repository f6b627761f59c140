//! The checks of a store's records, shared by `store verify`, the start check and the scrub:
//! every record's checksum, the label index against the objects, the log's order, the counts.

pub use super::finding::{Area, Finding};
use super::finding::{damaged_object, object_kind, problem_of, unframed_problem};
use super::labels::{LABELS, entry};
use super::record;
use super::tables::{
    COUNTERS, LOG, LOG_KINDS, LogEntry, OBJECTS, OLDEST, REVISION, log_entry, storage,
};
use crate::StoreError;
use reactor_core::object::ObjectKey;
use redb::{ReadTransaction, ReadableTableMetadata};
use std::ops::Bound;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Objects,
    Index,
    Log,
    Done,
}

/// One pass over every record of a store, done in steps of a bounded number of records, each
/// in the read transaction it is given: [`Pass::step`] until [`Pass::done`].
#[derive(Debug, Clone)]
pub struct Pass {
    stage: Stage,
    /// The revision counter when the pass began: the counts are compared only if no change
    /// was committed while the pass went on.
    revision_at_start: u64,
    objects: u64,
    /// The labels the objects carry: as many entries as the index should hold.
    labels: u64,
    index: u64,
    log: u64,
    newest: u64,
    last_key: Option<String>,
    last_revision: Option<u64>,
    /// A table was left unfinished (it could not be read): its count says nothing.
    incomplete: bool,
}

impl Pass {
    /// A pass starting now, in the state `txn` sees.
    pub fn start(txn: &ReadTransaction) -> Result<Self, StoreError> {
        Ok(Self {
            stage: Stage::Objects,
            revision_at_start: counter(txn, REVISION)?,
            objects: 0,
            labels: 0,
            index: 0,
            log: 0,
            newest: 0,
            last_key: None,
            last_revision: None,
            incomplete: false,
        })
    }

    pub fn done(&self) -> bool {
        self.stage == Stage::Done
    }

    /// The table the pass is in, as a finding names it.
    pub fn table(&self) -> &'static str {
        match self.stage {
            Stage::Objects => "the objects table",
            Stage::Index => "the label index",
            Stage::Log | Stage::Done => "the log",
        }
    }

    /// Leaves the rest of the current table unchecked (it cannot be read), for the next one.
    pub fn skip_table(&mut self) {
        self.incomplete = true;
        self.last_key = None;
        self.stage = match self.stage {
            Stage::Objects => Stage::Index,
            Stage::Index => Stage::Log,
            Stage::Log | Stage::Done => Stage::Done,
        };
    }

    /// The object records and log entries the pass has checked.
    pub fn counted(&self) -> (u64, u64) {
        (self.objects, self.log)
    }

    /// Checks up to `budget` more records in `txn`, adding what is wrong to `findings`;
    /// answers how many it checked. An error means the records could not be read at all.
    pub fn step(
        &mut self,
        txn: &ReadTransaction,
        budget: usize,
        findings: &mut Vec<Finding>,
    ) -> Result<usize, StoreError> {
        let mut checked = 0;
        while checked < budget && !self.done() {
            let left = budget - checked;
            let (n, finished) = match self.stage {
                Stage::Objects => self.objects_step(txn, left, findings)?,
                Stage::Index => self.index_step(txn, left, findings)?,
                Stage::Log => self.log_step(txn, left, findings)?,
                Stage::Done => (0, true),
            };
            checked += n;
            if finished {
                self.next_stage(txn, findings)?;
            }
        }
        Ok(checked)
    }

    fn next_stage(
        &mut self,
        txn: &ReadTransaction,
        findings: &mut Vec<Finding>,
    ) -> Result<(), StoreError> {
        self.last_key = None;
        self.stage = match self.stage {
            Stage::Objects => Stage::Index,
            Stage::Index => Stage::Log,
            Stage::Log | Stage::Done => {
                self.finish(txn, findings)?;
                Stage::Done
            }
        };
        Ok(())
    }

    /// After the last record: the counts and the revision counter.
    fn finish(&self, txn: &ReadTransaction, findings: &mut Vec<Finding>) -> Result<(), StoreError> {
        let revision = counter(txn, REVISION)?;
        let newest = self.newest.max(self.last_revision.unwrap_or(0));
        if revision < newest {
            findings.push(Finding::new(
                Area::File,
                "the revision counter",
                format!("is {revision}, behind the newest record's revision {newest}"),
            ));
        }
        if self.incomplete || revision != self.revision_at_start {
            return Ok(());
        }
        let tables = [
            (
                Area::Objects,
                "the objects table",
                txn.open_table(OBJECTS).map_err(storage)?.len(),
                self.objects,
            ),
            (
                Area::Index,
                "the label index",
                txn.open_table(LABELS).map_err(storage)?.len(),
                self.index,
            ),
            (
                Area::Log,
                "the log",
                txn.open_table(LOG).map_err(storage)?.len(),
                self.log,
            ),
        ];
        for (area, name, len, seen) in tables {
            let len = len.map_err(storage)?;
            if area == Area::Index && seen == len && len != self.labels {
                findings.push(Finding::new(
                    area,
                    name,
                    format!(
                        "holds {len} entries for the {} labels the objects carry",
                        self.labels
                    ),
                ));
            }
            if len != seen {
                findings.push(Finding::new(
                    area,
                    name,
                    format!(
                        "holds {len} records but {seen} can be reached: the others are hidden by damage"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn after_last_key(&self) -> (Bound<&str>, Bound<&str>) {
        match &self.last_key {
            Some(key) => (Bound::Excluded(key.as_str()), Bound::Unbounded),
            None => (Bound::Unbounded, Bound::Unbounded),
        }
    }

    fn objects_step(
        &mut self,
        txn: &ReadTransaction,
        budget: usize,
        findings: &mut Vec<Finding>,
    ) -> Result<(usize, bool), StoreError> {
        let table = txn.open_table(OBJECTS).map_err(storage)?;
        let index = txn.open_table(LABELS).map_err(storage)?;
        let mut checked = 0;
        for found in table
            .range::<&str>(self.after_last_key())
            .map_err(storage)?
        {
            if checked == budget {
                return Ok((checked, false));
            }
            checked += 1;
            self.objects += 1;
            let (key, value) = found.map_err(storage)?;
            let (key, value) = (key.value(), value.value());
            if self.last_key.as_deref().is_some_and(|last| key <= last) {
                findings.push(Finding::new(
                    Area::Objects,
                    key,
                    format!(
                        "is stored out of order (after {:?}): the table's structure is damaged",
                        self.last_key.as_deref().unwrap_or_default()
                    ),
                ));
            }
            self.last_key = Some(key.to_owned());
            match skim_object(key, value) {
                Ok(object) => {
                    self.newest = self.newest.max(object.meta.revision);
                    self.labels += object.labels.len() as u64;
                    index_has_labels(&index, &object, findings)?;
                }
                Err(e) => findings.push(damaged_object(key, value, &e)),
            }
        }
        Ok((checked, true))
    }

    fn index_step(
        &mut self,
        txn: &ReadTransaction,
        budget: usize,
        findings: &mut Vec<Finding>,
    ) -> Result<(usize, bool), StoreError> {
        let index = txn.open_table(LABELS).map_err(storage)?;
        let mut checked = 0;
        for found in index
            .range::<&str>(self.after_last_key())
            .map_err(storage)?
        {
            if checked == budget {
                return Ok((checked, false));
            }
            checked += 1;
            self.index += 1;
            let (key, _) = found.map_err(storage)?;
            let key = key.value();
            self.last_key = Some(key.to_owned());
            // Every entry another than those the objects' labels make is found by the
            // counts (see `finish`): here, only its shape.
            let parts: Vec<&str> = key.split('\0').collect();
            let well_formed = matches!(parts[..], [kind, label, name]
                if object_kind(&format!("{kind}/{name}")).is_some() && label.contains('='));
            if !well_formed {
                findings.push(Finding::new(
                    Area::Index,
                    "the label index",
                    format!("has a malformed entry {:?}", key.replace('\0', " ")),
                ));
            }
        }
        Ok((checked, true))
    }

    fn log_step(
        &mut self,
        txn: &ReadTransaction,
        budget: usize,
        findings: &mut Vec<Finding>,
    ) -> Result<(usize, bool), StoreError> {
        let log = txn.open_table(LOG).map_err(storage)?;
        let kinds = txn.open_table(LOG_KINDS).map_err(storage)?;
        let objects = txn.open_table(OBJECTS).map_err(storage)?;
        let oldest = counter(txn, OLDEST)?;
        let from = match self.last_revision {
            Some(last) => Bound::Excluded(last),
            None => Bound::Unbounded,
        };
        let mut checked = 0;
        for found in log.range((from, Bound::Unbounded)).map_err(storage)? {
            if checked == budget {
                return Ok((checked, false));
            }
            checked += 1;
            self.log += 1;
            let (revision, value) = found.map_err(storage)?;
            let (revision, value) = (revision.value(), value.value());
            let name = format!("log entry {revision}");
            // The log holds every revision after the oldest watchable one, without a gap;
            // an older one is gone only if compaction passed this pass since its last step.
            let expected = self.last_revision.map_or(oldest, |last| last.max(oldest)) + 1;
            if revision > expected {
                findings.push(Finding::new(
                    Area::Log,
                    "the log",
                    format!(
                        "misses the entries {expected} to {}: they are hidden by damage",
                        revision - 1
                    ),
                ));
            }
            self.last_revision = Some(revision);
            if record::unframed(value) {
                findings.push(Finding::new(Area::Log, name, unframed_problem()));
                continue;
            }
            let skimmed = match log_entry(revision, value) {
                Ok(LogEntry::Whole(body)) => skim_event(revision, body),
                Ok(LogEntry::Latest { key, .. }) => refers(&objects, revision, key),
                Err(e) => Err(e),
            };
            match skimmed {
                Ok(event) => {
                    let logged = kinds.get(revision).map_err(storage)?;
                    let logged = logged.as_ref().map(|k| k.value());
                    let kind = event.object.as_ref().map(|o| o.kind);
                    if event.revision != revision {
                        findings.push(Finding::new(
                            Area::Log,
                            name,
                            format!("holds revision {}", event.revision),
                        ));
                    } else if logged.is_some() && logged != kind {
                        findings.push(Finding::new(
                            Area::Log,
                            name,
                            format!(
                                "is indexed as kind {:?} but is of kind {:?}",
                                logged.unwrap_or_default(),
                                kind.unwrap_or_default()
                            ),
                        ));
                    }
                }
                Err(e) => findings.push(Finding::new(Area::Log, name, problem_of(&e))),
            }
        }
        Ok((checked, true))
    }
}

/// Adds a finding for each label of `object` missing from the label index.
fn index_has_labels(
    index: &redb::ReadOnlyTable<&'static str, ()>,
    object: &Skimmed,
    findings: &mut Vec<Finding>,
) -> Result<(), StoreError> {
    for (label, value) in &object.labels {
        let wanted = entry(object.kind, label, value, object.name);
        if index.get(wanted.as_str()).map_err(storage)?.is_none() {
            findings.push(
                Finding::new(
                    Area::Index,
                    "the label index",
                    format!("misses {}", wanted.replace('\0', " ")),
                )
                .of_kind(object.kind),
            );
        }
    }
    Ok(())
}

/// What the checks read of an object record: its kind, name, labels and revision, the rest
/// of its JSON skipped unbuilt (a check reads every record; it need not build them).
#[derive(serde::Deserialize)]
struct Skimmed<'a> {
    kind: &'a str,
    name: &'a str,
    #[serde(default, borrow)]
    labels: std::collections::BTreeMap<std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>>,
    #[serde(default)]
    meta: SkimmedMeta,
}

#[derive(serde::Deserialize, Default)]
struct SkimmedMeta {
    #[serde(default)]
    revision: u64,
}

/// The object record stored under `key`, its checksum checked and its JSON read as far as a
/// check needs; its kind and name must be those of the key.
fn skim_object<'a>(key: &str, record: &'a [u8]) -> Result<Skimmed<'a>, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        record: key.to_owned(),
        reason,
    };
    let body = super::tables::object_body(key, record)?;
    let object: Skimmed = serde_json::from_slice(body).map_err(|e| corrupt(e.to_string()))?;
    if ObjectKey::new(object.kind, object.name).as_str() != key {
        return Err(corrupt(format!("it holds {}/{}", object.kind, object.name)));
    }
    Ok(object)
}

/// What the checks read of a log entry.
#[derive(serde::Deserialize)]
struct SkimmedEvent<'a> {
    revision: u64,
    #[serde(borrow)]
    object: Option<SkimmedKind<'a>>,
}

#[derive(serde::Deserialize)]
struct SkimmedKind<'a> {
    kind: &'a str,
}

/// The whole log entry `body` of `revision`, its JSON read as far as a check needs.
fn skim_event(revision: u64, body: &[u8]) -> Result<SkimmedEvent<'_>, StoreError> {
    serde_json::from_slice(body).map_err(|e| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason: e.to_string(),
    })
}

/// The log entry of `revision` that refers to the object under `key`, as a check reads it:
/// the object must be stored there at `revision`.
fn refers<'a>(
    objects: &redb::ReadOnlyTable<&'static str, &'static [u8]>,
    revision: u64,
    key: &'a str,
) -> Result<SkimmedEvent<'a>, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        record: format!("log entry {revision}"),
        reason,
    };
    let stored = (objects.get(key).map_err(storage)?)
        .ok_or_else(|| corrupt(format!("refers to {key}, which is not stored")))?;
    let object = skim_object(key, stored.value())?;
    if object.meta.revision != revision {
        return Err(corrupt(format!(
            "refers to {key}, which is stored at revision {}",
            object.meta.revision
        )));
    }
    let kind = key.split_once('/').map_or(key, |(kind, _)| kind);
    Ok(SkimmedEvent {
        revision,
        object: Some(SkimmedKind { kind }),
    })
}

fn counter(txn: &ReadTransaction, name: &str) -> Result<u64, StoreError> {
    let counters = txn.open_table(COUNTERS).map_err(storage)?;
    let value = counters
        .get(name)
        .map_err(storage)?
        .map_or(0, |v| v.value());
    Ok(value)
}

/// Checks every record of `db` in one read transaction: the findings, and the object records
/// and log entries checked.
pub fn check_all(db: &redb::Database) -> Result<(Vec<Finding>, (u64, u64)), StoreError> {
    use redb::ReadableDatabase;
    let txn = db.begin_read().map_err(storage)?;
    let mut pass = Pass::start(&txn)?;
    let mut findings = Vec::new();
    while !pass.done() {
        pass.step(&txn, usize::MAX, &mut findings)?;
    }
    Ok((findings, pass.counted()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::tables::{encode_object, lookup};
    use reactor_core::object::Object;
    use redb::ReadableDatabase;

    /// A store file in memory holding sound records of `sound` and, under each key of
    /// `moved`, the record of another key (what a bit flipped in a stored key leaves).
    fn store(sound: &[&str], moved: &[(&str, &str)]) -> redb::Database {
        let db = redb::Builder::new()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .expect("db");
        let object = |name: &str| -> Object {
            serde_json::from_value(
                serde_json::json!({"kind": "A", "name": name, "meta": {"revision": 1}}),
            )
            .expect("object")
        };
        let txn = db.begin_write().expect("write");
        {
            let mut objects = txn.open_table(OBJECTS).expect("objects");
            for name in sound {
                let record = encode_object(&object(name)).expect("encode");
                objects
                    .insert(format!("A/{name}").as_str(), record.as_slice())
                    .expect("insert");
            }
            for (stored, real) in moved {
                let record = encode_object(&object(real)).expect("encode");
                objects
                    .insert(format!("A/{stored}").as_str(), record.as_slice())
                    .expect("insert");
            }
            txn.open_table(LABELS).expect("labels");
            txn.open_table(LOG).expect("log");
            txn.open_table(LOG_KINDS).expect("log kinds");
            let mut counters = txn.open_table(COUNTERS).expect("counters");
            counters.insert(REVISION, 1).expect("revision");
        }
        txn.commit().expect("commit");
        db
    }

    fn get(db: &redb::Database, name: &str) -> Result<Option<Object>, StoreError> {
        let txn = db.begin_read().expect("read");
        let table = txn.open_table(OBJECTS).expect("objects");
        lookup(&table, &format!("A/{name}"))
    }

    #[test]
    fn a_lookup_beside_a_damaged_key_is_an_error_and_absence_elsewhere_is_trusted() {
        // `A/b`'s key lost a bit: it is stored as `A/bx`, out of a lookup's reach.
        let db = store(&["a", "c", "x", "y"], &[("bx", "b")]);
        let error = get(&db, "b").expect_err("not answered absent");
        assert!(
            error
                .to_string()
                .starts_with("corrupt record A/b: a lookup does not find it"),
            "{error}"
        );
        assert!(error.to_string().contains("its key is damaged"), "{error}");
        assert_eq!(get(&db, "a").expect("sound").expect("present").name, "a");
        assert!(get(&db, "w").expect("sound neighbours").is_none());
        assert!(get(&db, "zzz").expect("past the end").is_none());
    }

    #[test]
    fn a_pass_names_a_record_whose_key_is_damaged_by_its_real_key() {
        let sound = store(&["a", "c"], &[]);
        let (findings, (objects, log)) = check_all(&sound).expect("checked");
        assert_eq!((findings, objects, log), (Vec::new(), 2, 0));

        let db = store(&["a", "c"], &[("bx", "b")]);
        let (findings, _) = check_all(&db).expect("checked");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].area, Area::Objects);
        assert_eq!(
            findings[0].to_string(),
            "A/b: its key is damaged (stored as \"A/bx\"): a lookup does not find it"
        );
        // In steps of one record, in as many transactions, the pass finds the same.
        let mut pass = Pass::start(&db.begin_read().expect("read")).expect("pass");
        let mut stepped = Vec::new();
        while !pass.done() {
            let txn = db.begin_read().expect("read");
            assert!(pass.step(&txn, 1, &mut stepped).expect("step") <= 1);
        }
        assert_eq!(stepped, findings);
    }

    #[test]
    fn a_log_entry_referring_to_an_object_stored_at_another_revision_is_a_finding() {
        use crate::EventType;
        use crate::embedded::tables::reference_record;
        // `A/a` is stored at revision 1; its change at revision 1 refers to it, and so (wrongly)
        // does revision 2, and revision 3 to an object not stored.
        let db = store(&["a"], &[]);
        let txn = db.begin_write().expect("write");
        {
            let mut log = txn.open_table(LOG).expect("log");
            let mut kinds = txn.open_table(LOG_KINDS).expect("log kinds");
            for (revision, key) in [(1, "A/a"), (2, "A/a"), (3, "A/gone")] {
                let record = reference_record(EventType::Created, revision, key);
                log.insert(revision, record.as_slice()).expect("log");
                kinds.insert(revision, "A").expect("kind");
            }
            let mut counters = txn.open_table(COUNTERS).expect("counters");
            counters.insert(REVISION, 3).expect("revision");
        }
        txn.commit().expect("commit");
        let (findings, (_, log)) = check_all(&db).expect("checked");
        let shown: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        assert_eq!(log, 3);
        assert_eq!(
            shown,
            [
                "log entry 2: refers to A/a, which is stored at revision 1",
                "log entry 3: refers to A/gone, which is not stored",
            ]
        );
    }
}
