//! The one writer of agents' reports on a server: reports arriving together are merged and
//! written with one write per owner and agent, so concurrent reports never conflict and a
//! batch of an agent's reports costs a few writes, not one per item. What it wrote goes to
//! the server's report book at once, not back through the store's watch. The reports in
//! flight are bounded in bytes: a request takes its share of the budget before it is read,
//! and gives it back when the round that wrote it is done.

use super::NimbusError;
use super::report_book::ReportBook;
use super::reports::{AgentReport, ReportState, forget_unheld, record};
use reactor_store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// Requests merged into one round of writes at most.
const MERGED_REQUESTS: usize = 256;

/// The default budget of the reports in flight, in bytes of their requests' bodies
/// (`serve --reports-in-flight-bytes`): about 30 requests of 10k reports each.
pub const DEFAULT_BYTES_IN_FLIGHT: usize = 32 << 20;

/// About the bytes of a report's JSON besides its key, agent and message (field names,
/// state, revision), for a report that came without a body to measure.
const REPORT_JSON_BYTES: usize = 64;

/// Reports, the agent whose every held item they are (a complete request), who waits, and
/// the share of the budget the request holds until its round is done.
struct Request {
    reports: Vec<AgentReport>,
    complete: Option<String>,
    done: oneshot::Sender<Result<usize, NimbusError>>,
    held: Reservation,
}

/// A handle to the writer task; it stops when the last handle is dropped.
#[derive(Clone)]
pub struct Reporter {
    requests: mpsc::Sender<Request>,
    budget: Arc<Semaphore>,
    /// The whole budget, in bytes (permits).
    bytes: u32,
    /// The bytes of the reservations taken and not given back (the semaphore's free permits
    /// also lack those handed, in part, to the request waiting first).
    held: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter")
            .field("bytes", &self.bytes)
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

/// A share of the reporter's budget, in bytes: taken by a request before its body is read,
/// given back when the round that wrote its reports is done (or when it is dropped unused).
#[derive(Debug)]
pub struct Reservation {
    permit: OwnedSemaphorePermit,
    held: Arc<AtomicUsize>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes(), Ordering::Relaxed);
    }
}

impl Reservation {
    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        self.permit.num_permits()
    }

    /// Gives back what it holds over `bytes` (a body that turned out smaller than reserved).
    pub fn shrink_to(&mut self, bytes: usize) {
        let excess = self.bytes().saturating_sub(bytes.max(1));
        if let Some(given_back) = self.permit.split(excess).filter(|_| excess > 0) {
            self.held
                .fetch_sub(given_back.num_permits(), Ordering::Relaxed);
        }
    }
}

impl Reporter {
    /// Starts the writer (needs a tokio runtime) with the default budget; what it writes is
    /// handed to `book`.
    pub fn start(store: Arc<dyn Store>, book: ReportBook) -> Self {
        Self::with_budget(store, book, DEFAULT_BYTES_IN_FLIGHT)
    }

    /// Starts the writer with a budget of `bytes` of reports in flight (at least 1, at most
    /// 4 GiB).
    pub fn with_budget(store: Arc<dyn Store>, book: ReportBook, bytes: usize) -> Self {
        let bytes = u32::try_from(bytes).unwrap_or(u32::MAX).max(1);
        let (requests, receiver) = mpsc::channel(1024);
        tokio::spawn(write_reports(store, book, receiver));
        Self {
            requests,
            budget: Arc::new(Semaphore::new(bytes as usize)),
            bytes,
            held: Arc::default(),
        }
    }

    /// The whole budget, in bytes.
    pub fn budget(&self) -> usize {
        self.bytes as usize
    }

    /// The bytes of the budget held by requests now: never more than [`Self::budget`].
    pub fn in_flight(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Waits until `bytes` of the budget are free and takes them. A request larger than the
    /// whole budget takes all of it: it waits for every other to be done and goes alone, so
    /// it makes progress and the bytes held never exceed the budget (nor that one request).
    pub async fn reserve(&self, bytes: usize) -> Result<Reservation, NimbusError> {
        let wanted = u32::try_from(bytes)
            .unwrap_or(u32::MAX)
            .clamp(1, self.bytes);
        let permit = (self.budget.clone())
            .acquire_many_owned(wanted)
            .await
            .map_err(|_| closed())?;
        self.held.fetch_add(permit.num_permits(), Ordering::Relaxed);
        Ok(Reservation {
            permit,
            held: self.held.clone(),
        })
    }

    /// Records `reports` durably; answers how many were on items that still exist. They take
    /// their share of the budget (about their JSON's bytes) first.
    pub async fn record(&self, reports: Vec<AgentReport>) -> Result<usize, NimbusError> {
        let held = self.reserve(json_bytes(&reports)).await?;
        self.record_reserved(reports, None, held).await
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
        let held = self.reserve(json_bytes(&reports)).await?;
        self.record_reserved(reports, Some(agent.to_owned()), held)
            .await
    }

    /// Records `reports` (`complete`: they are `agent`'s on every item it holds, as
    /// [`Self::record_all`]) under a share of the budget taken before they were read; the
    /// share is given back once the round that wrote them is done.
    pub async fn record_reserved(
        &self,
        reports: Vec<AgentReport>,
        complete: Option<String>,
        held: Reservation,
    ) -> Result<usize, NimbusError> {
        let (done, answer) = oneshot::channel();
        let request = Request {
            reports,
            complete,
            done,
            held,
        };
        self.requests.send(request).await.map_err(|_| closed())?;
        answer.await.map_err(|_| closed())?
    }
}

fn closed() -> NimbusError {
    NimbusError::Store(reactor_store::StoreError::Closed)
}

/// About the bytes of `reports` as JSON.
fn json_bytes(reports: &[AgentReport]) -> usize {
    let one = |r: &AgentReport| {
        r.key.len() + r.agent.len() + r.message.as_ref().map_or(0, String::len) + REPORT_JSON_BYTES
    };
    reports.iter().map(one).sum()
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
        // Later reports of the same agent on the same item win. The round borrows them from
        // the requests: a report in flight is held once.
        let mut merged: BTreeMap<(&str, &str), &AgentReport> = BTreeMap::new();
        for request in &batch {
            for report in &request.reports {
                merged.insert((&report.key, &report.agent), report);
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
        // Each request's share of the budget is given back, then it is answered.
        for request in batch {
            let Request {
                reports,
                done,
                held,
                ..
            } = request;
            drop(held);
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
    for request in batch {
        let stale = request.reports.iter().filter(|r| {
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
    for request in batch {
        let Some(agent) = &request.complete else {
            continue;
        };
        let held: BTreeSet<&str> = (request.reports.iter())
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

    /// A store whose writes wait at a gate the test opens, counting the writes begun.
    struct Gated {
        inner: Arc<dyn Store>,
        gate: Arc<tokio::sync::Semaphore>,
        writes: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Store for Gated {
        async fn get(
            &self,
            kind: &str,
            name: &str,
        ) -> Result<Option<reactor_core::object::Object>, reactor_store::StoreError> {
            self.inner.get(kind, name).await
        }
        async fn list(
            &self,
            kind: &str,
            selector: &Selector,
        ) -> Result<reactor_store::Listing, reactor_store::StoreError> {
            self.inner.list(kind, selector).await
        }
        async fn apply(
            &self,
            requests: Vec<reactor_core::object::ApplyRequest>,
        ) -> Result<Vec<reactor_store::Applied>, reactor_store::StoreError> {
            self.writes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let pass = self.gate.acquire().await.expect("gate open");
            pass.forget();
            self.inner.apply(requests).await
        }
        async fn commit(
            &self,
            writes: Vec<reactor_store::Write>,
        ) -> Result<Vec<reactor_store::Written>, reactor_store::StoreError> {
            self.inner.commit(writes).await
        }
        async fn watch(
            &self,
            kind: Option<&str>,
            from: reactor_core::object::Revision,
        ) -> Result<reactor_store::WatchStream, reactor_store::StoreError> {
            self.inner.watch(kind, from).await
        }
        async fn revision(
            &self,
        ) -> Result<reactor_core::object::Revision, reactor_store::StoreError> {
            self.inner.revision().await
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_a_tiny_budget_a_second_request_waits_unread_until_the_first_round_is_written() {
        let (_dir, inner) = published(&["p/a", "p/b"]).await;
        let gated = Arc::new(Gated {
            inner: inner.clone(),
            gate: Arc::new(tokio::sync::Semaphore::new(0)),
            writes: Default::default(),
        });
        let store: Arc<dyn Store> = gated.clone();
        let reporter = Reporter::with_budget(store, ReportBook::start(inner.clone()), 1000);
        assert_eq!(reporter.budget(), 1000);
        let within = |reporter: &Reporter| {
            let held = reporter.in_flight();
            assert!(
                held <= reporter.budget(),
                "{held} bytes held, over the budget"
            );
            held
        };

        // The first request takes 600 bytes and its round stops at the store's gate.
        let first = reporter.reserve(600).await.expect("reserve");
        assert_eq!(within(&reporter), 600);
        let first = tokio::spawn({
            let reporter = reporter.clone();
            let reports = vec![report("p/a", ReportState::Applied)];
            async move { reporter.record_reserved(reports, None, first).await }
        });
        while gated.writes.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }

        // The second wants 600 more: it waits, unread, while the first round is written.
        let reserved = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let second = tokio::spawn({
            let (reporter, reserved) = (reporter.clone(), reserved.clone());
            async move {
                let held = reporter.reserve(600).await?;
                reserved.store(true, std::sync::atomic::Ordering::SeqCst);
                let reports = vec![report("p/b", ReportState::Applied)];
                reporter.record_reserved(reports, None, held).await
            }
        });
        for _ in 0..20 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            assert!(
                !reserved.load(std::sync::atomic::Ordering::SeqCst),
                "the second request was let in while the first round was being written"
            );
            assert_eq!(within(&reporter), 600);
        }
        assert_eq!(gated.writes.load(std::sync::atomic::Ordering::SeqCst), 1);

        // The first round written, its bytes are given back and the second goes.
        gated.gate.add_permits(1000);
        assert_eq!(first.await.expect("task").expect("recorded"), 1);
        assert_eq!(second.await.expect("task").expect("recorded"), 1);
        assert!(reserved.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(within(&reporter), 0);
        assert_eq!(held(inner.as_ref()).await, ["p/a", "p/b"]);

        // A request larger than the whole budget takes all of it and goes alone.
        let huge = reporter.reserve(5000).await.expect("reserve");
        assert_eq!((huge.bytes(), within(&reporter)), (1000, 1000));
        let reports = vec![report("p/a", ReportState::Failed)];
        (reporter.record_reserved(reports, None, huge).await).expect("recorded");
        assert_eq!(within(&reporter), 0);

        // A body smaller than reserved gives back the rest before it is queued.
        let mut held = reporter.reserve(800).await.expect("reserve");
        held.shrink_to(100);
        assert_eq!(within(&reporter), 100);
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
