//! The one writer of agents' reports on a server: reports arriving together are merged and
//! written with one write per owner and agent, so concurrent reports never conflict and a
//! batch of an agent's reports costs a few writes, not one per item. What it wrote goes to
//! the server's report book at once, not back through the store's watch.

use super::NimbusError;
use super::report_book::ReportBook;
use super::reports::{AgentReport, ReportState, forget_unheld, record};
use reactor_store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Requests merged into one round of writes at most.
const MERGED_REQUESTS: usize = 256;

/// Reports, the agent whose every held item they are (a complete request), and who waits.
type Request = (
    Vec<AgentReport>,
    Option<String>,
    oneshot::Sender<Result<usize, NimbusError>>,
);

/// A handle to the writer task; it stops when the last handle is dropped.
#[derive(Clone)]
pub struct Reporter {
    requests: mpsc::Sender<Request>,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter").finish_non_exhaustive()
    }
}

impl Reporter {
    /// Starts the writer (needs a tokio runtime); what it writes is handed to `book`.
    pub fn start(store: Arc<dyn Store>, book: ReportBook) -> Self {
        let (requests, receiver) = mpsc::channel(1024);
        tokio::spawn(write_reports(store, book, receiver));
        Self { requests }
    }

    /// Records `reports` durably; answers how many were on items that still exist.
    pub async fn record(&self, reports: Vec<AgentReport>) -> Result<usize, NimbusError> {
        self.request(reports, None).await
    }

    /// Records `reports`, `agent`'s on every item it holds: its reports on any other item
    /// are dropped. An agent sends these when it connects, so that a report lost with a
    /// crash (a `removed` never sent) or one recorded while its item was being withdrawn
    /// does not count for good.
    pub async fn record_all(
        &self,
        agent: &str,
        reports: Vec<AgentReport>,
    ) -> Result<usize, NimbusError> {
        self.request(reports, Some(agent.to_owned())).await
    }

    async fn request(
        &self,
        reports: Vec<AgentReport>,
        complete: Option<String>,
    ) -> Result<usize, NimbusError> {
        let (done, answer) = oneshot::channel();
        let closed = || NimbusError::Store(reactor_store::StoreError::Closed);
        self.requests
            .send((reports, complete, done))
            .await
            .map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }
}

async fn write_reports(
    store: Arc<dyn Store>,
    book: ReportBook,
    mut receiver: mpsc::Receiver<Request>,
) {
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        while batch.len() < MERGED_REQUESTS {
            match receiver.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        // Later reports of the same agent on the same item win.
        let mut merged: BTreeMap<(String, String), AgentReport> = BTreeMap::new();
        for (reports, _, _) in &batch {
            for report in reports {
                merged.insert((report.key.clone(), report.agent.clone()), report.clone());
            }
        }
        // Each transaction's sheets reach the book as soon as they are durable, mostly
        // before the store's watch brings them back (which then costs the book nothing).
        let absorb = |name: String, revision, sheet| book.absorb(&name, revision, sheet);
        let recorded = match record(store.as_ref(), merged.into_values().collect(), &absorb).await {
            Ok(keys) => settle(store.as_ref(), &book, &batch, &keys, &absorb)
                .await
                .map(|()| keys),
            Err(e) => Err(e),
        };
        for (reports, _, done) in batch {
            let answer = recorded
                .as_ref()
                .map_err(Clone::clone)
                .map(|keys| reports.iter().filter(|r| keys.contains(&r.key)).count());
            let _ = done.send(answer);
        }
    }
}

/// Drops what the agents of `batch` no longer hold, after their reports were recorded
/// (`recorded`: the keys of items that still exist): a `removed` on an item already gone is
/// not recorded (the item named its owner), yet the book may still hold a report on it, one
/// recorded while the item was being withdrawn; and a complete request's agent holds nothing
/// it left out.
async fn settle(
    store: &dyn Store,
    book: &ReportBook,
    batch: &[Request],
    recorded: &BTreeSet<String>,
    absorb: &(dyn Fn(String, reactor_core::object::Revision, super::Sheet) + Sync),
) -> Result<(), NimbusError> {
    let mut gone: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (reports, _, _) in batch {
        let stale = reports.iter().filter(|r| {
            r.state == ReportState::Removed
                && !recorded.contains(&r.key)
                && book.holds(&r.agent, &r.key)
        });
        for report in stale {
            gone.entry(&report.agent).or_default().insert(&report.key);
        }
    }
    for (agent, keys) in gone {
        forget_unheld(store, agent, &|key| keys.contains(key), absorb).await?;
    }
    for (reports, complete, _) in batch {
        let Some(agent) = complete else {
            continue;
        };
        let held: BTreeSet<&str> = (reports.iter())
            .filter(|r| r.state != ReportState::Removed)
            .map(|r| r.key.as_str())
            .collect();
        forget_unheld(store, agent, &|key| !held.contains(key), absorb).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ITEM_KIND, ItemTarget, Owner, publish, sheets_of};
    use reactor_core::object::Selector;
    use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};

    /// A store in which Policy/p published `keys` to every agent.
    async fn published(keys: &[&str]) -> (tempfile::TempDir, Arc<dyn Store>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store: Arc<dyn Store> = Arc::new(
            EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"),
        );
        let owner = Owner {
            kind: "Policy".into(),
            name: "p".into(),
            component: "c".into(),
        };
        let everyone = ItemTarget::Labels(BTreeMap::new());
        for key in keys {
            publish(
                store.as_ref(),
                &owner,
                key,
                serde_json::json!(1),
                everyone.clone(),
            )
            .await
            .expect("publish");
        }
        (dir, store)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_agents_reporting_on_one_item_at_once_all_land() {
        let (_dir, store) = published(&["k"]).await;
        let reporter = Reporter::start(store.clone(), ReportBook::start(store.clone()));
        let sends = (0..64).map(|i| {
            let reporter = reporter.clone();
            tokio::spawn(async move {
                let report = AgentReport {
                    key: "k".into(),
                    agent: format!("a{i}"),
                    state: ReportState::Applied,
                    message: None,
                    revision: 1,
                };
                let gone = AgentReport {
                    key: "gone".into(),
                    ..report.clone()
                };
                reporter.record(vec![report, gone]).await
            })
        });
        for send in sends.collect::<Vec<_>>() {
            assert_eq!(send.await.expect("task").expect("recorded"), 1);
        }
        let sheets = sheets_of(store.as_ref(), "Policy", "p")
            .await
            .expect("sheets");
        assert_eq!(sheets.len(), 64);
        assert!(sheets.values().all(|s| s.items.len() == 1));
    }

    fn report(key: &str, state: ReportState) -> AgentReport {
        AgentReport {
            key: key.into(),
            agent: "a1".into(),
            state,
            message: None,
            revision: 1,
        }
    }

    /// The keys of a1's reports on Policy/p, as the store has them.
    async fn held(store: &dyn Store) -> Vec<String> {
        let sheets = sheets_of(store, "Policy", "p").await.expect("sheets");
        (sheets.get("a1")).map_or_else(Vec::new, |s| s.items.keys().cloned().collect())
    }

    #[tokio::test]
    async fn a_removed_on_an_item_already_gone_and_a_complete_report_drop_what_the_agent_lets_go() {
        let (_dir, store) = published(&["p/a", "p/b", "p/c"]).await;
        let book = ReportBook::start(store.clone());
        let reporter = Reporter::start(store.clone(), book.clone());
        let applied = ["p/a", "p/b", "p/c"].map(|key| report(key, ReportState::Applied));
        assert_eq!(reporter.record(applied.to_vec()).await.expect("record"), 3);
        assert_eq!(held(store.as_ref()).await, ["p/a", "p/b", "p/c"]);

        // p/a's item goes while its report stays behind (a report recorded while the item
        // was being withdrawn): the agent's `removed`, on an item gone, drops it all the same.
        let item = store
            .list(ITEM_KIND, &Selector::default())
            .await
            .expect("items")
            .items
            .into_iter()
            .find(|o| o.spec["key"] == "p/a")
            .expect("p/a's item");
        store
            .delete(ITEM_KIND, &item.name, None)
            .await
            .expect("delete");
        let removed = report("p/a", ReportState::Removed);
        assert_eq!(reporter.record(vec![removed]).await.expect("record"), 0);
        assert_eq!(held(store.as_ref()).await, ["p/b", "p/c"]);

        // The agent reconnects holding only p/c: its report on p/b goes.
        let all = vec![report("p/c", ReportState::Applied)];
        assert_eq!(reporter.record_all("a1", all).await.expect("record"), 1);
        assert_eq!(held(store.as_ref()).await, ["p/c"]);
        // Holding nothing, it holds nothing.
        reporter.record_all("a1", Vec::new()).await.expect("record");
        assert!(held(store.as_ref()).await.is_empty());
        assert!(!book.holds("a1", "p/c"));
    }
}
