//! The one writer of agents' reports on a server: reports arriving together are merged and
//! written with one write per owner and agent, so concurrent reports never conflict and a
//! batch of an agent's reports costs a few writes, not one per item. What it wrote goes to
//! the server's report book at once, not back through the store's watch.

use super::NimbusError;
use super::report_book::ReportBook;
use super::reports::{AgentReport, record};
use crate::store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// Requests merged into one round of writes at most.
const MERGED_REQUESTS: usize = 256;

type Request = (
    Vec<AgentReport>,
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
        let (done, answer) = oneshot::channel();
        let closed = || NimbusError::Store(crate::store::StoreError::Closed);
        self.requests
            .send((reports, done))
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
        for (reports, _) in &batch {
            for report in reports {
                merged.insert((report.key.clone(), report.agent.clone()), report.clone());
            }
        }
        // Each transaction's sheets reach the book as soon as they are durable, mostly
        // before the store's watch brings them back (which then costs the book nothing).
        let absorb = |name: String, revision, sheet| book.absorb(&name, revision, sheet);
        let recorded = record(store.as_ref(), merged.into_values().collect(), &absorb).await;
        for (reports, done) in batch {
            let answer = recorded
                .as_ref()
                .map_err(Clone::clone)
                .map(|keys| reports.iter().filter(|r| keys.contains(&r.key)).count());
            let _ = done.send(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nimbus::{ItemTarget, Owner, ReportState, publish, sheets_of};
    use crate::store::{EmbeddedStore, EmbeddedStoreOptions};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_agents_reporting_on_one_item_at_once_all_land() {
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
        publish(store.as_ref(), &owner, "k", serde_json::json!(1), everyone)
            .await
            .expect("publish");
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
}
