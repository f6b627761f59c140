//! Agents' reports on items, kept apart from the items (so that reports never wake the
//! agents' feeds): one `NimbusReport` object per owner and agent, a sheet of that agent's
//! reports on the owner's items.

use super::items::{OWNER_KIND, OWNER_NAME, hashed_name, object_name};
use super::kinds::{ITEM_KIND, REPORT_KIND};
use super::{Item, NimbusError};
use crate::object::{ApplyRequest, Object, Revision, from_map};
use crate::store::{Store, StoreError, retry_on_conflict};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

const AGENT_LABEL: &str = "nimbus.agent";

/// Sheets written concurrently by one round of [`record`].
const SHEETS_AT_ONCE: usize = 8;

/// Where an item is on one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportState {
    /// Received, not applied yet (e.g. its dependencies are missing).
    Pending,
    Applied,
    /// Failed to apply; the agent retries.
    Failed,
    /// Removed from the agent after it was withdrawn.
    Removed,
}

/// One agent's report on one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct AgentReport {
    pub key: String,
    pub agent: String,
    pub state: ReportState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The version of the item's value the report is about: the item's generation, which
    /// grows with every change of the value.
    pub revision: u64,
}

from_map!(
    AgentReport,
    "a report (key, agent, state, message, revision)"
);

#[cfg(test)]
impl AgentReport {
    /// A report without a message.
    pub(crate) fn new(key: &str, agent: &str, state: ReportState, revision: u64) -> Self {
        AgentReport {
            key: key.into(),
            agent: agent.into(),
            state,
            message: None,
            revision,
        }
    }
}

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
    pub fn from_object(object: &Object) -> Option<Sheet> {
        Self::from_value(object.spec.clone())
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

/// What one round of [`record`] wrote.
#[derive(Debug, Default)]
pub struct Recorded {
    /// The keys of the reports recorded.
    pub keys: BTreeSet<String>,
    /// Each sheet that changed: its store name, the revision written, and the sheet.
    pub sheets: Vec<(String, Revision, Sheet)>,
}

/// Records reports durably: one write per owner and agent. Reports on items that are gone
/// are dropped (the item was withdrawn meanwhile); `removed` drops the entry.
pub async fn record(store: &dyn Store, reports: Vec<AgentReport>) -> Result<Recorded, NimbusError> {
    let keys: BTreeSet<String> = reports.iter().map(|r| r.key.clone()).collect();
    let owners = owners_of(store, keys).await?;
    let mut sheets: BTreeMap<(String, String, String), (String, Vec<AgentReport>)> =
        BTreeMap::new();
    for report in reports {
        let Some(owner) = owners.get(&report.key) else {
            continue;
        };
        sheets
            .entry((
                owner.owner.kind.clone(),
                owner.owner.name.clone(),
                report.agent.clone(),
            ))
            .or_insert_with(|| (owner.owner.component.clone(), Vec::new()))
            .1
            .push(report);
    }
    let writes = sheets
        .into_iter()
        .map(|((kind, name, agent), (component, reports))| async move {
            let sheet = Sheet {
                owner_kind: kind,
                owner_name: name,
                component,
                agent,
                items: BTreeMap::new(),
            };
            let written = write_sheet(store, sheet, &reports).await?;
            Ok::<_, NimbusError>((reports.into_iter().map(|r| r.key), written))
        });
    let mut recorded = Recorded::default();
    // Several sheets at once, so the store can commit them together; not many, as each
    // holds a few copies of its sheet meanwhile and an owner's sheet can be large.
    let mut results = futures::stream::iter(writes).buffer_unordered(SHEETS_AT_ONCE);
    while let Some(result) = results.next().await {
        let (keys, written) = result?;
        recorded.keys.extend(keys);
        recorded.sheets.extend(written);
    }
    Ok(recorded)
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
async fn write_sheet(
    store: &dyn Store,
    fresh: Sheet,
    reports: &[AgentReport],
) -> Result<Option<(String, Revision, Sheet)>, NimbusError> {
    let name = sheet_name(&fresh.owner_kind, &fresh.owner_name, &fresh.agent);
    let (name, fresh) = (&name, &fresh);
    let written = retry_on_conflict(
        || {
            format!(
                "the reports of {} on {}/{}",
                fresh.agent, fresh.owner_kind, fresh.owner_name
            )
        },
        || async move {
            let current = store.get(REPORT_KIND, name).await?;
            let expected = current.as_ref().map(|c| c.meta.revision);
            let mut sheet = current
                .and_then(|object| Sheet::from_value(object.spec))
                .unwrap_or_else(|| fresh.clone());
            let mut changed = expected.is_none();
            for report in reports {
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
            if !changed {
                return Ok(None);
            }
            let labels = BTreeMap::from([
                (OWNER_KIND.to_owned(), sheet.owner_kind.clone()),
                (OWNER_NAME.to_owned(), sheet.owner_name.clone()),
                (AGENT_LABEL.to_owned(), sheet.agent.clone()),
            ]);
            let request = ApplyRequest {
                kind: REPORT_KIND.to_owned(),
                name: name.clone(),
                labels,
                spec: serde_json::to_value(&sheet)
                    .map_err(|e| StoreError::Invalid(e.to_string()))?,
                expected_revision: expected,
                owner: None,
            };
            let applied = store.apply(vec![request]).await?;
            let revision = applied.first().map_or(0, |a| a.object.meta.revision);
            Ok(Some((name.clone(), revision, sheet)))
        },
    )
    .await?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nimbus::{ItemTarget, Owner, publish};
    use crate::store::{EmbeddedStore, EmbeddedStoreOptions};
    use serde_json::json;

    fn report(key: &str, agent: &str, state: ReportState, revision: u64) -> AgentReport {
        AgentReport::new(key, agent, state, revision)
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
        let recorded = record(
            &store,
            vec![
                report("p/a/x", "n1", ReportState::Applied, 1),
                report("p/a/y", "n1", ReportState::Failed, 1),
                report("p/b/x", "n1", ReportState::Applied, 1),
                report("p/a/x", "n2", ReportState::Applied, 1),
                report("gone", "n1", ReportState::Applied, 1),
            ],
        )
        .await
        .expect("record");
        assert_eq!(recorded.keys.len(), 3, "{recorded:?}");
        let sheets = sheets_of(&store, "Policy", "a").await.expect("sheets");
        assert_eq!(sheets.keys().collect::<Vec<_>>(), vec!["n1", "n2"]);
        assert_eq!(sheets["n1"].items.len(), 2);
        assert_eq!(sheets["n1"].component, "policy-rust");
        assert_eq!(
            sheets["n1"].report("p/a/y").map(|r| r.state),
            Some(ReportState::Failed)
        );
        record(&store, vec![report("p/a/y", "n1", ReportState::Removed, 1)])
            .await
            .expect("record");
        let sheets = sheets_of(&store, "Policy", "a").await.expect("sheets");
        assert_eq!(sheets["n1"].items.keys().collect::<Vec<_>>(), vec!["p/a/x"]);
        crate::nimbus::unpublish_all(&store, "Policy", "a")
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
