//! Agents' reports on items, kept apart from the items (so that reports never wake the
//! agents' feeds): one `NimbusReport` object per owner and agent, a sheet of that agent's
//! reports on the owner's items.

use super::items::{OWNER_KIND, OWNER_NAME, hashed_name, object_name};
use super::kinds::{ITEM_KIND, REPORT_KIND};
use super::{Item, NimbusError};
use futures::{Stream, StreamExt};
use reactor_core::object::{ApplyRequest, Object, Revision, Selector};
pub use reactor_core::report::{AgentReport, ReportState};
use reactor_store::{Store, StoreError, retry_on_conflict};
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};

const AGENT_LABEL: &str = "nimbus.agent";

/// Sheets written in one store transaction at most, and about their bytes: within etcd's
/// default limits (128 operations, 1.5 MiB per request), and small enough that the
/// transactions in flight together stay under what the embedded store hands its watches
/// live (1 MiB per commit; a larger one they read back from its log).
const SHEETS_PER_WRITE: usize = 64;
const BYTES_PER_WRITE: usize = 192 << 10;
/// Transactions of sheets in flight at once in one round of [`record`]: not many, as each
/// holds copies of its sheets meanwhile and an owner's sheet can be large.
const WRITES_AT_ONCE: usize = 4;
/// Sheets read at once while a round of [`record`] is planned.
const READS_AT_ONCE: usize = 64;

/// A report inside a sheet (the key and agent are implied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SheetEntry {
    pub state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub revision: u64,
}

/// One agent's reports on the items of one owner: the spec of a `NimbusReport`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sheet {
    pub owner_kind: String,
    pub owner_name: String,
    /// The component that published the owner's items, whose `on-agent-status` hears them.
    pub component: String,
    pub agent: String,
    #[serde(default)]
    pub items: BTreeMap<String, SheetEntry>,
}

impl Sheet {
    /// Decoded from the object's spec in place (no copy of the spec first).
    pub fn from_object(object: &Object) -> Option<Sheet> {
        Sheet::deserialize(&object.spec).ok()
    }

    pub fn from_value(spec: serde_json::Value) -> Option<Sheet> {
        serde_json::from_value(spec).ok()
    }

    pub fn report(&self, key: &str) -> Option<AgentReport> {
        Some(self.items.get(key)?.report(key, &self.agent))
    }
}

impl SheetEntry {
    /// The report this entry holds for `agent` on the item `key`.
    pub fn report(&self, key: &str, agent: &str) -> AgentReport {
        AgentReport {
            key: key.to_owned(),
            agent: agent.to_owned(),
            state: self.state,
            message: self.message.clone(),
            revision: self.revision,
        }
    }
}

/// The store name of the sheet of `agent` on `owner_kind/owner_name`.
fn sheet_name(owner_kind: &str, owner_name: &str, agent: &str) -> String {
    hashed_name("report", &format!("{owner_kind}/{owner_name}/{agent}"))
}

/// Every agent's sheet on `owner_kind/owner_name`, by agent.
pub async fn sheets_of(
    store: &dyn Store,
    owner_kind: &str,
    owner_name: &str,
) -> Result<BTreeMap<String, Sheet>, NimbusError> {
    let listing = store
        .list(REPORT_KIND, &super::owner_selector(owner_kind, owner_name))
        .await?;
    Ok(by_agent(&listing.items))
}

/// Sheets by agent, from sheet objects of one owner.
fn by_agent(objects: &[Object]) -> BTreeMap<String, Sheet> {
    objects
        .iter()
        .filter_map(Sheet::from_object)
        .map(|sheet| (sheet.agent.clone(), sheet))
        .collect()
}

/// Records reports durably: one write per owner and agent, many of them committed together.
/// Reports on items that are gone are dropped (the item was withdrawn meanwhile); `removed`
/// drops the entry. Each sheet that changed goes to `written` (its store name, the revision
/// written, the sheet) as soon as its transaction is durable; answers the keys of the reports
/// recorded. The reports may be borrowed (`&AgentReport`): a round copies none of them.
pub async fn record<R: Borrow<AgentReport> + Clone + Send + Sync>(
    store: &dyn Store,
    reports: Vec<R>,
    written: &(dyn Fn(String, Revision, Sheet) + Sync),
) -> Result<BTreeSet<String>, NimbusError> {
    let keys: BTreeSet<String> = reports.iter().map(|r| r.borrow().key.clone()).collect();
    let owners = owners_of(store, keys).await?;
    let mut sheets: BTreeMap<(String, String, String), (String, Vec<R>)> = BTreeMap::new();
    for report in reports {
        let Some(owner) = owners.get(&report.borrow().key) else {
            continue;
        };
        sheets
            .entry((
                owner.owner.kind.clone(),
                owner.owner.name.clone(),
                report.borrow().agent.clone(),
            ))
            .or_insert_with(|| (owner.owner.component.clone(), Vec::new()))
            .1
            .push(report);
    }
    let recorded: BTreeSet<String> = (sheets.values())
        .flat_map(|(_, reports)| reports.iter().map(|r| r.borrow().key.clone()))
        .collect();
    let plans = sheets
        .into_iter()
        .map(|((kind, name, agent), (component, reports))| {
            let fresh = Sheet {
                owner_kind: kind,
                owner_name: name,
                component,
                agent,
                items: BTreeMap::new(),
            };
            async move { plan_sheet(store, fresh, reports).await }
        });
    let planned = futures::stream::iter(plans).buffer_unordered(READS_AT_ONCE);
    // Each transaction waits for the store's flush: many sheets share one, and a few
    // transactions at once share the next. The streams are lazy, so a round holds at most
    // those transactions and the sheets being read, however many sheets it touches.
    let writes = in_transactions(planned)
        .map(|transaction| async move { write_sheets(store, transaction?).await })
        .buffer_unordered(WRITES_AT_ONCE);
    let mut writes = std::pin::pin!(writes);
    while let Some(sheets) = writes.next().await {
        for (name, revision, sheet) in sheets? {
            written(name, revision, sheet);
        }
    }
    Ok(recorded)
}

/// One sheet with an agent's new reports merged in, to be written over the revision it was
/// read at (`None`: a new sheet).
#[derive(Debug)]
struct PlannedSheet<R = AgentReport> {
    name: String,
    expected: Option<Revision>,
    sheet: Sheet,
    /// The reports merged, to merge again if the sheet changed meanwhile.
    reports: Vec<R>,
}

impl<R> PlannedSheet<R> {
    /// About the bytes of its JSON.
    fn size(&self) -> usize {
        let entry = |(key, e): (&String, &SheetEntry)| {
            key.len() + e.message.as_ref().map_or(0, String::len) + 48
        };
        self.sheet.items.iter().map(entry).sum::<usize>() + 256
    }

    fn request(&self) -> Result<ApplyRequest, StoreError> {
        let labels = BTreeMap::from([
            (OWNER_KIND.to_owned(), self.sheet.owner_kind.clone()),
            (OWNER_NAME.to_owned(), self.sheet.owner_name.clone()),
            (AGENT_LABEL.to_owned(), self.sheet.agent.clone()),
        ]);
        Ok(ApplyRequest {
            kind: REPORT_KIND.to_owned(),
            name: self.name.clone(),
            labels,
            annotations: Default::default(),
            spec: serde_json::to_value(&self.sheet)
                .map_err(|e| StoreError::Invalid(e.to_string()))?,
            expected_revision: self.expected,
            owner: None,
        })
    }

    /// A new sheet of the same owner and agent, without entries.
    fn fresh(&self) -> Sheet {
        Sheet {
            owner_kind: self.sheet.owner_kind.clone(),
            owner_name: self.sheet.owner_name.clone(),
            component: self.sheet.component.clone(),
            agent: self.sheet.agent.clone(),
            items: BTreeMap::new(),
        }
    }
}

/// The sheets of `planned` (`None`: a sheet that did not change) gathered into transactions
/// of at most [`SHEETS_PER_WRITE`] sheets and about [`BYTES_PER_WRITE`] bytes (a sheet larger
/// than that goes alone), each as soon as it is full. An error ends the stream.
fn in_transactions<R>(
    planned: impl Stream<Item = Result<Option<PlannedSheet<R>>, StoreError>> + Unpin,
) -> impl Stream<Item = Result<Vec<PlannedSheet<R>>, StoreError>> {
    let start = (planned, None::<PlannedSheet<R>>, false);
    futures::stream::unfold(start, |(mut planned, carried, ended)| async move {
        if ended {
            return None;
        }
        let mut bytes = carried.as_ref().map_or(0, PlannedSheet::size);
        let mut transaction: Vec<PlannedSheet<R>> = carried.into_iter().collect();
        loop {
            let sheet = match planned.next().await {
                None if transaction.is_empty() => return None,
                None => return Some((Ok(transaction), (planned, None, true))),
                Some(Err(e)) => return Some((Err(e), (planned, None, true))),
                Some(Ok(None)) => continue,
                Some(Ok(Some(sheet))) => sheet,
            };
            let size = sheet.size();
            let full = transaction.len() >= SHEETS_PER_WRITE || bytes + size > BYTES_PER_WRITE;
            if full && !transaction.is_empty() {
                return Some((Ok(transaction), (planned, Some(sheet), false)));
            }
            bytes += size;
            transaction.push(sheet);
        }
    })
}

/// Writes `sheets` in one transaction, each over the revision it was read at; if one of
/// them changed meanwhile (another replica wrote it), or the store refuses the transaction
/// as too large, each is written on its own instead.
async fn write_sheets<R: Borrow<AgentReport> + Clone + Send + Sync>(
    store: &dyn Store,
    sheets: Vec<PlannedSheet<R>>,
) -> Result<Vec<(String, Revision, Sheet)>, NimbusError> {
    let requests = sheets
        .iter()
        .map(PlannedSheet::request)
        .collect::<Result<Vec<_>, _>>()?;
    match store.apply(requests).await {
        Ok(applied) => {
            let revisions: BTreeMap<&str, Revision> = (applied.iter())
                .map(|a| (a.object.name.as_str(), a.object.meta.revision))
                .collect();
            Ok(sheets
                .into_iter()
                .map(|p| {
                    let revision = revisions.get(p.name.as_str()).copied().unwrap_or(0);
                    (p.name, revision, p.sheet)
                })
                .collect())
        }
        Err(e) if e.is_conflict() || matches!(e, StoreError::TxnTooLarge(_)) => {
            let mut written = Vec::new();
            for planned in sheets {
                written.extend(write_sheet(store, planned.fresh(), &planned.reports).await?);
            }
            Ok(written)
        }
        Err(e) => Err(e.into()),
    }
}

/// Drops every agent's report on the withdrawn item `key` of `owner_kind/owner_name`: an
/// agent that was away when it was withdrawn cannot report its removal any more (the item is
/// gone), and a report left behind would keep counting it.
pub async fn forget_reports(
    store: &dyn Store,
    owner_kind: &str,
    owner_name: &str,
    key: &str,
) -> Result<(), NimbusError> {
    let sheets = sheets_of(store, owner_kind, owner_name).await?;
    for sheet in sheets.into_values() {
        let Some(entry) = sheet.items.get(key) else {
            continue;
        };
        let removed = AgentReport {
            key: key.to_owned(),
            agent: sheet.agent.clone(),
            state: ReportState::Removed,
            message: None,
            revision: entry.revision,
        };
        write_sheet(store, sheet, &[removed]).await?;
    }
    Ok(())
}

/// Drops `agent`'s reports on the items `unheld` names, whichever owner's sheet holds them
/// (read from the store, so also those another replica wrote); each sheet that changes is
/// written over the revision it was read at and handed to `written`.
pub async fn forget_unheld(
    store: &dyn Store,
    agent: &str,
    unheld: &(dyn Fn(&str) -> bool + Sync),
    written: &(dyn Fn(String, Revision, Sheet) + Sync),
) -> Result<(), NimbusError> {
    let selector = Selector::from_labels(&BTreeMap::from([(
        AGENT_LABEL.to_owned(),
        agent.to_owned(),
    )]));
    let listing = store.list(REPORT_KIND, &selector).await?;
    for sheet in listing.items.iter().filter_map(Sheet::from_object) {
        if sheet.agent != agent {
            continue;
        }
        let removed: Vec<AgentReport> = (sheet.items.iter())
            .filter(|(key, _)| unheld(key))
            .map(|(key, entry)| AgentReport {
                key: key.clone(),
                agent: agent.to_owned(),
                state: ReportState::Removed,
                message: None,
                revision: entry.revision,
            })
            .collect();
        if removed.is_empty() {
            continue;
        }
        if let Some((name, revision, sheet)) = write_sheet(store, sheet, &removed).await? {
            written(name, revision, sheet);
        }
    }
    Ok(())
}

/// Withdraws every report of `agent` (an agent removed): each of its sheets is emptied first,
/// handed to `written` (so the owners' reactors hear each report as `removed`), then deleted
/// unless it changed meanwhile (the agent reported again: it is back).
pub async fn withdraw_agent(
    store: &dyn Store,
    agent: &str,
    written: &(dyn Fn(String, Revision, Sheet) + Sync),
) -> Result<(), NimbusError> {
    forget_unheld(store, agent, &|_| true, written).await?;
    let selector = Selector::from_labels(&BTreeMap::from([(
        AGENT_LABEL.to_owned(),
        agent.to_owned(),
    )]));
    let listing = store.list(REPORT_KIND, &selector).await?;
    for object in listing.items {
        let empty =
            Sheet::from_object(&object).is_some_and(|s| s.agent == agent && s.items.is_empty());
        if !empty {
            continue;
        }
        match store
            .delete(REPORT_KIND, &object.name, Some(object.meta.revision))
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_conflict() || matches!(e.root(), StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The items behind `keys` that still exist.
async fn owners_of(
    store: &dyn Store,
    keys: BTreeSet<String>,
) -> Result<BTreeMap<String, Item>, NimbusError> {
    let reads = keys.into_iter().map(|key| async move {
        let found = store.get(ITEM_KIND, &object_name(&key)).await?;
        Ok::<_, StoreError>(found.as_ref().and_then(Item::from_object).map(|i| (key, i)))
    });
    let mut owners = BTreeMap::new();
    let mut results = futures::stream::iter(reads).buffer_unordered(64);
    while let Some(result) = results.next().await {
        owners.extend(result?);
    }
    Ok(owners)
}

/// Read-modify-write of one sheet with compare-and-swap; answers the sheet as written
/// (`None` when nothing changed).
async fn write_sheet<R: Borrow<AgentReport> + Clone + Send + Sync>(
    store: &dyn Store,
    fresh: Sheet,
    reports: &[R],
) -> Result<Option<(String, Revision, Sheet)>, NimbusError> {
    let what = || {
        format!(
            "the reports of {} on {}/{}",
            fresh.agent, fresh.owner_kind, fresh.owner_name
        )
    };
    let (fresh, reports) = (&fresh, reports);
    let written = retry_on_conflict(what, || async move {
        let Some(planned) = plan_sheet(store, fresh.clone(), reports.to_vec()).await? else {
            return Ok(None);
        };
        let applied = store.apply(vec![planned.request()?]).await?;
        let revision = applied.first().map_or(0, |a| a.object.meta.revision);
        Ok(Some((planned.name, revision, planned.sheet)))
    })
    .await?;
    Ok(written)
}

/// `reports` merged into the stored sheet of their owner and agent (`fresh` if there is
/// none); `None` when that changes nothing.
async fn plan_sheet<R: Borrow<AgentReport>>(
    store: &dyn Store,
    fresh: Sheet,
    reports: Vec<R>,
) -> Result<Option<PlannedSheet<R>>, StoreError> {
    let name = sheet_name(&fresh.owner_kind, &fresh.owner_name, &fresh.agent);
    let current = store.get(REPORT_KIND, &name).await?;
    let expected = current.as_ref().map(|c| c.meta.revision);
    let mut sheet = current
        .and_then(|object| Sheet::from_value(object.spec))
        .unwrap_or(fresh);
    let mut changed = expected.is_none();
    for report in reports.iter().map(Borrow::borrow) {
        if report.state == ReportState::Removed {
            changed |= sheet.items.remove(&report.key).is_some();
            continue;
        }
        let entry = SheetEntry {
            state: report.state,
            message: report.message.clone(),
            revision: report.revision,
        };
        if sheet.items.get(&report.key) != Some(&entry) {
            sheet.items.insert(report.key.clone(), entry);
            changed = true;
        }
    }
    Ok(changed.then_some(PlannedSheet {
        name,
        expected,
        sheet,
        reports,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ItemTarget, Owner, publish};
    use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
    use serde_json::json;

    fn report(key: &str, agent: &str, state: ReportState, revision: u64) -> AgentReport {
        AgentReport::new(key, agent, state, revision)
    }

    /// Where `record` hands the sheets it wrote, when a test does not look.
    fn ignore(_: String, _: Revision, _: Sheet) {}

    fn planned(agent: &str, entries: usize, key_len: usize) -> PlannedSheet {
        let items = (0..entries)
            .map(|i| {
                let key = format!("{i:0key_len$}");
                let entry = SheetEntry {
                    state: ReportState::Applied,
                    message: None,
                    revision: 1,
                };
                (key, entry)
            })
            .collect();
        PlannedSheet {
            name: sheet_name("Policy", "p", agent),
            expected: None,
            sheet: Sheet {
                owner_kind: "Policy".into(),
                owner_name: "p".into(),
                component: "c".into(),
                agent: agent.into(),
                items,
            },
            reports: Vec::new(),
        }
    }

    /// The transactions `sheets` go in, by their sheets.
    fn split(sheets: Vec<PlannedSheet>) -> Vec<Vec<PlannedSheet>> {
        let planned = futures::stream::iter(sheets.into_iter().map(|s| Ok(Some(s))));
        let transactions = in_transactions(planned).collect::<Vec<_>>();
        let transactions = futures::executor::block_on(transactions);
        transactions
            .into_iter()
            .map(|t| t.expect("no error"))
            .collect()
    }

    #[test]
    fn sheets_go_in_transactions_bounded_by_count_and_bytes() {
        let small: Vec<_> = (0..150).map(|i| planned(&format!("a{i}"), 1, 8)).collect();
        let sizes: Vec<usize> = split(small).iter().map(Vec::len).collect();
        assert_eq!(
            sizes,
            vec![
                SHEETS_PER_WRITE,
                SHEETS_PER_WRITE,
                150 - 2 * SHEETS_PER_WRITE
            ]
        );

        // About 100 KB each, two over the bound: each goes alone, and so does a sheet over
        // the bound rather than not at all.
        let mut large: Vec<_> = (0..5)
            .map(|i| planned(&format!("b{i}"), 1000, 52))
            .collect();
        large.push(planned("huge", 5000, 52));
        large.push(planned("after", 1, 8));
        let transactions = split(large);
        let sizes: Vec<usize> = transactions.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 1, 1, 1, 1, 1, 1], "{sizes:?}");
        for transaction in transactions.iter().filter(|t| t.len() > 1) {
            let bytes: usize = transaction.iter().map(PlannedSheet::size).sum();
            assert!(bytes <= BYTES_PER_WRITE, "{bytes}");
        }

        // A sheet that did not change is left out; a failed read ends the round.
        let planned = futures::stream::iter(vec![
            Ok(Some(planned("x", 1, 8))),
            Ok(None),
            Err(StoreError::Closed),
            Ok(Some(planned("y", 1, 8))),
        ]);
        let got = futures::executor::block_on(in_transactions(planned).collect::<Vec<_>>());
        assert!(
            matches!(got.as_slice(), [Err(StoreError::Closed)]),
            "{got:?}"
        );
    }

    #[tokio::test]
    async fn a_sheet_changed_since_it_was_read_is_merged_again_and_no_report_is_lost() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        let owner = Owner {
            kind: "Policy".into(),
            name: "p".into(),
            component: "policy-rust".into(),
        };
        let everyone = ItemTarget::Labels(BTreeMap::new());
        for key in ["p/x", "p/y", "p/z"] {
            publish(&store, &owner, key, json!(1), everyone.clone())
                .await
                .expect("publish");
        }
        let fresh = |agent: &str| Sheet {
            owner_kind: "Policy".into(),
            owner_name: "p".into(),
            component: "policy-rust".into(),
            agent: agent.into(),
            items: BTreeMap::new(),
        };
        record(
            &store,
            vec![report("p/x", "n1", ReportState::Applied, 1)],
            &ignore,
        )
        .await
        .expect("record");
        // Two sheets planned for one transaction; then n1's changes under them.
        let mut plans = Vec::new();
        for (agent, key) in [("n1", "p/y"), ("n2", "p/y")] {
            let reports = vec![report(key, agent, ReportState::Applied, 1)];
            let plan = plan_sheet(&store, fresh(agent), reports)
                .await
                .expect("plan");
            plans.push(plan.expect("a change"));
        }
        record(
            &store,
            vec![report("p/z", "n1", ReportState::Failed, 1)],
            &ignore,
        )
        .await
        .expect("record");
        let written = write_sheets(&store, plans).await.expect("write");
        assert_eq!(written.len(), 2);
        let sheets = sheets_of(&store, "Policy", "p").await.expect("sheets");
        let states = |agent: &str| -> Vec<(String, ReportState)> {
            (sheets[agent].items.iter())
                .map(|(key, entry)| (key.clone(), entry.state))
                .collect()
        };
        assert_eq!(
            states("n1"),
            vec![
                ("p/x".to_owned(), ReportState::Applied),
                ("p/y".to_owned(), ReportState::Applied),
                ("p/z".to_owned(), ReportState::Failed),
            ]
        );
        assert_eq!(states("n2"), vec![("p/y".to_owned(), ReportState::Applied)]);
    }

    #[tokio::test]
    async fn reports_land_in_one_sheet_per_owner_and_agent_and_removed_drops_the_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        let owner = |name: &str| Owner {
            kind: "Policy".into(),
            name: name.into(),
            component: "policy-rust".into(),
        };
        let everyone = ItemTarget::Labels(BTreeMap::new());
        for (o, key) in [("a", "p/a/x"), ("a", "p/a/y"), ("b", "p/b/x")] {
            publish(&store, &owner(o), key, json!(1), everyone.clone())
                .await
                .expect("publish");
        }
        let written = parking_lot::Mutex::new(Vec::new());
        let recorded = record(
            &store,
            vec![
                report("p/a/x", "n1", ReportState::Applied, 1),
                report("p/a/y", "n1", ReportState::Failed, 1),
                report("p/b/x", "n1", ReportState::Applied, 1),
                report("p/a/x", "n2", ReportState::Applied, 1),
                report("gone", "n1", ReportState::Applied, 1),
            ],
            &|name, _, _| written.lock().push(name),
        )
        .await
        .expect("record");
        assert_eq!(recorded.len(), 3, "{recorded:?}");
        assert_eq!(written.lock().len(), 3, "sheets n1 and n2 of a, n1 of b");
        let sheets = sheets_of(&store, "Policy", "a").await.expect("sheets");
        assert_eq!(sheets.keys().collect::<Vec<_>>(), vec!["n1", "n2"]);
        assert_eq!(sheets["n1"].items.len(), 2);
        assert_eq!(sheets["n1"].component, "policy-rust");
        assert_eq!(
            sheets["n1"].report("p/a/y").map(|r| r.state),
            Some(ReportState::Failed)
        );
        record(
            &store,
            vec![report("p/a/y", "n1", ReportState::Removed, 1)],
            &ignore,
        )
        .await
        .expect("record");
        let sheets = sheets_of(&store, "Policy", "a").await.expect("sheets");
        assert_eq!(sheets["n1"].items.keys().collect::<Vec<_>>(), vec!["p/a/x"]);
        crate::unpublish_all(&store, "Policy", "a")
            .await
            .expect("unpublish all");
        assert!(
            sheets_of(&store, "Policy", "a")
                .await
                .expect("sheets")
                .is_empty()
        );
        assert_eq!(
            sheets_of(&store, "Policy", "b")
                .await
                .expect("sheets")
                .len(),
            1
        );
    }
}
