use super::*;
use crate::{
    AgentReport, Fanout, ITEM_KIND, Item, ItemTarget, Owner, ReportSink, ReportState, Reporter,
    list_agents, owner_selector, propagation, publish, register, sheets_of,
};
use parking_lot::Mutex;
use reactor_core::object::{ApplyRequest, ObjectKey};
use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
use serde_json::json;
use std::collections::BTreeMap;

/// What the book offered the owners' reactors.
#[derive(Default)]
struct Heard(Mutex<Vec<(String, ObjectKey, AgentReport)>>);

impl ReportSink for Heard {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport) {
        self.0.lock().push((component.to_owned(), owner, report));
    }
}

/// A store holding Policy/p, which published `p/x` and `p/y` to every agent, and the
/// registered agents `ids`.
async fn store_with(ids: &[&str]) -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    let policy = ApplyRequest {
        kind: "Policy".into(),
        name: "p".into(),
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        spec: json!({}),
        expected_revision: None,
        owner: None,
    };
    store.apply(vec![policy]).await.expect("apply");
    let owner = Owner {
        kind: "Policy".into(),
        name: "p".into(),
        component: "policy".into(),
    };
    for key in ["p/x", "p/y"] {
        let everyone = ItemTarget::Labels(BTreeMap::new());
        publish(store.as_ref(), &owner, key, json!(1), everyone)
            .await
            .expect("publish");
    }
    for id in ids {
        register(store.as_ref(), id, BTreeMap::new())
            .await
            .expect("register");
    }
    (dir, store)
}

fn applied(agent: &str) -> Vec<AgentReport> {
    ["p/x", "p/y"]
        .map(|key| AgentReport::new(key, agent, ReportState::Applied, 1))
        .to_vec()
}

/// Policy/p's propagation as the host rolls it up: its items and agents from the store, the
/// reports from the book.
async fn rolled_up(store: &dyn Store, book: &ReportBook) -> crate::Propagation {
    let owner = store.get("Policy", "p").await.expect("get").expect("p");
    let items: Vec<_> = (store.list(ITEM_KIND, &owner_selector("Policy", "p")).await)
        .expect("items")
        .items
        .into_iter()
        .filter_map(|o| Item::from_object(&o).map(|i| (Arc::new(o), i)))
        .collect();
    let agents: Vec<_> = (store.list(AGENT_KIND, &Selector::default()).await)
        .expect("agents")
        .items
        .into_iter()
        .map(Arc::new)
        .collect();
    let sheets = book.sheets_of(&ObjectKey::new("Policy", "p"));
    propagation(&owner, &items, &sheets, &agents)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_agents_reports_are_withdrawn_heard_as_removed_and_no_longer_counted() {
    // gone applied both items, live too, and silent never reported (pending).
    let (_dir, store) = store_with(&["gone", "live", "silent"]).await;
    let book = ReportBook::start(store.clone());
    let heard = Arc::new(Heard::default());
    let sink: Arc<dyn ReportSink> = heard.clone();
    book.set_sink(Arc::downgrade(&sink));
    let reporter = Reporter::start(store.clone(), book.clone());
    let mut reports = applied("gone");
    reports.extend(applied("live"));
    reporter.record(reports).await.expect("record");
    let before = rolled_up(store.as_ref(), &book).await;
    assert_eq!((before.updated, before.pending), (2, 1), "{before:?}");
    assert_eq!(before.pending_agents, vec!["silent"]);
    heard.0.lock().clear();

    remove(store.as_ref(), &book, "gone").await.expect("remove");
    remove(store.as_ref(), &book, "silent")
        .await
        .expect("remove");

    // The reactor that published the items heard gone's reports as `removed`, and nothing
    // of the others.
    let mut heard: Vec<_> = (heard.0.lock().iter())
        .map(|(component, owner, r)| {
            (
                component.clone(),
                owner.to_string(),
                r.agent.clone(),
                r.key.clone(),
                r.state,
            )
        })
        .collect();
    heard.sort_by(|a, b| a.3.cmp(&b.3));
    let removed = |key: &str| {
        let owner = ObjectKey::new("Policy", "p").to_string();
        (
            "policy".to_owned(),
            owner,
            "gone".to_owned(),
            key.to_owned(),
            ReportState::Removed,
        )
    };
    assert_eq!(heard, vec![removed("p/x"), removed("p/y")]);
    // Only live counts, as updated; nobody is pending.
    let after = rolled_up(store.as_ref(), &book).await;
    assert_eq!(
        (after.updated, after.pending, after.failed),
        (1, 0, 0),
        "{after:?}"
    );
    assert!(after.pending_agents.is_empty(), "{after:?}");
    // gone's sheet is deleted, live's kept; the agents listed are live alone.
    let sheets = sheets_of(store.as_ref(), "Policy", "p")
        .await
        .expect("sheets");
    assert_eq!(sheets.keys().collect::<Vec<_>>(), vec!["live"]);
    let fanout = Fanout::start(store.clone(), Default::default());
    let listed = list_agents(store.as_ref(), &fanout, &book)
        .await
        .expect("list");
    let ids: Vec<_> = listed.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, vec!["live"]);

    // Removing it again: not registered.
    let again = remove(store.as_ref(), &book, "gone").await;
    assert!(
        matches!(again, Err(NimbusError::Store(StoreError::NotFound { .. }))),
        "{again:?}"
    );
}

/// Sets the last heartbeat of agent `id` to `seen` (ms since the Unix epoch).
async fn seen_at(store: &dyn Store, id: &str, seen: u64) {
    let status = json!({"lastSeenMs": seen, "ttlMs": 10_000});
    store
        .set_status(AGENT_KIND, id, status, None)
        .await
        .expect("status");
}

async fn registered(store: &dyn Store, id: &str) -> bool {
    store.get(AGENT_KIND, id).await.expect("get").is_some()
}

/// A while ago, in ms since the Unix epoch: what the clock says when the test starts.
const START_MS: u64 = 1_700_000_000_000;
const MINUTE: Duration = Duration::from_secs(60);

/// Hands what the book offers to a channel.
struct Channel(tokio::sync::mpsc::UnboundedSender<AgentReport>);

impl ReportSink for Channel {
    fn offer_report(&self, _: &str, _: ObjectKey, report: AgentReport) {
        let _ = self.0.send(report);
    }
}

#[tokio::test(start_paused = true)]
async fn agents_not_seen_for_the_configured_time_are_removed_and_the_others_kept() {
    let (_dir, store) = store_with(&["gone", "live"]).await;
    let book = ReportBook::start(store.clone());
    let reporter = Reporter::start(store.clone(), book.clone());
    reporter.record(applied("gone")).await.expect("record");
    seen_at(store.as_ref(), "gone", START_MS).await;
    seen_at(store.as_ref(), "live", START_MS + 50 * 60_000).await;
    let (sender, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let sink: Arc<dyn ReportSink> = Arc::new(Channel(sender));
    book.set_sink(Arc::downgrade(&sink));
    // The reports held are offered at once: not what this test waits for.
    while heard.try_recv().is_ok() {}
    // The clock follows tokio's, paused, which the test moves on by hand: a task that never
    // waits keeps it from moving on by itself while the store writes on its own thread.
    let spinning = tokio::spawn(async {
        loop {
            tokio::task::yield_now().await;
        }
    });
    let start = tokio::time::Instant::now();
    let (checked, mut checks) = tokio::sync::mpsc::unbounded_channel();
    // Each round of checks reads the clock once, first.
    let clock = move || {
        let _ = checked.send(start.elapsed());
        START_MS + start.elapsed().as_millis() as u64
    };
    let removing = tokio::spawn(remove_unseen_with(
        store.clone(),
        book.clone(),
        60 * MINUTE,
        clock,
    ));
    assert_eq!(checks.recv().await, Some(Duration::ZERO));
    tokio::time::advance(59 * MINUTE).await;
    assert_eq!(checks.recv().await, Some(59 * MINUTE));
    tokio::time::advance(2 * MINUTE).await;
    assert_eq!(checks.recv().await, Some(61 * MINUTE));
    // The round of minute 59 is over: it removed nothing.
    assert!(heard.try_recv().is_err(), "removed after 59 minutes");

    // The round of minute 61 removes gone: its registration, then its reports.
    let mut withdrawn = Vec::new();
    while withdrawn.len() < 2 {
        let report = heard.recv().await.expect("a report");
        assert_eq!(
            (report.agent.as_str(), report.state),
            ("gone", ReportState::Removed)
        );
        withdrawn.push(report.key);
    }
    assert!(!registered(store.as_ref(), "gone").await);
    assert!(
        registered(store.as_ref(), "live").await,
        "unseen for 11 minutes"
    );
    spinning.abort();
    removing.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_are_removed_once_unseen_for_long_enough_once_each_when_replicas_race() {
    let (_dir, store) = store_with(&["a", "b", "c"]).await;
    let book = ReportBook::start(store.clone());
    for id in ["a", "b"] {
        seen_at(store.as_ref(), id, START_MS).await;
    }
    seen_at(store.as_ref(), "c", START_MS + 30 * 60_000).await;
    // Unseen for 59 minutes: kept.
    let early = START_MS + 59 * 60_000;
    let kept = remove_unseen(store.as_ref(), &book, 60 * MINUTE, early).await;
    assert_eq!(kept.expect("remove"), Vec::<String>::new());
    let now = START_MS + 61 * 60_000;
    let (one, two) = tokio::join!(
        remove_unseen(store.as_ref(), &book, 60 * MINUTE, now),
        remove_unseen(store.as_ref(), &book, 60 * MINUTE, now),
    );
    let mut removed = one.expect("one");
    removed.extend(two.expect("two"));
    removed.sort();
    assert_eq!(removed, vec!["a", "b"]);
    assert!(registered(store.as_ref(), "c").await);
}
