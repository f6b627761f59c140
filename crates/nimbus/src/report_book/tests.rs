//! The report book on the embedded store: what reaches the sink, once, from the reporter's
//! hand-over and from the store's watch.

use super::*;
use crate::reports::{ReportState, SheetEntry};
use crate::{ItemTarget, Owner, Reporter, publish, unpublish_all};
use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
use std::time::Duration;

/// Records what the book offers.
#[derive(Default)]
struct Offers(Mutex<Vec<(String, ObjectKey, AgentReport)>>);

impl ReportSink for Offers {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport) {
        self.0.lock().push((component.to_owned(), owner, report));
    }
}

impl Offers {
    fn states(&self) -> Vec<(String, String, ReportState)> {
        let offers = self.0.lock();
        offers
            .iter()
            .map(|(_, _, r)| (r.key.clone(), r.agent.clone(), r.state))
            .collect()
    }
}

fn report(key: &str, agent: &str, state: ReportState) -> AgentReport {
    AgentReport::new(key, agent, state, 1)
}

struct World {
    _dir: tempfile::TempDir,
    store: Arc<dyn Store>,
}

async fn world(keys: &[&str]) -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    let owner = Owner {
        kind: "Policy".into(),
        name: "p".into(),
        component: "policy-rust".into(),
    };
    for key in keys {
        let everyone = ItemTarget::Labels(BTreeMap::new());
        publish(store.as_ref(), &owner, key, serde_json::json!(1), everyone)
            .await
            .expect("publish");
    }
    World { _dir: dir, store }
}

async fn settle() {
    // Long enough for the store's watch to bring back what was written.
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_report_reaches_the_sink_once_though_the_watch_brings_it_back_too() {
    let w = world(&["k1", "k2"]).await;
    let book = ReportBook::start(w.store.clone());
    let offers = Arc::new(Offers::default());
    let sink: Arc<dyn ReportSink> = offers.clone();
    book.set_sink(Arc::downgrade(&sink));
    book.synced().await;
    let reporter = Reporter::start(w.store.clone(), book.clone());
    let recorded = reporter
        .record(vec![report("k1", "a", ReportState::Applied)])
        .await
        .expect("record");
    assert_eq!(recorded, 1);
    // Handed over before the answer: no wait for the store's watch.
    assert_eq!(
        offers.states(),
        vec![("k1".into(), "a".into(), ReportState::Applied)]
    );
    settle().await;
    assert_eq!(offers.0.lock().len(), 1, "the watch's copy is old news");
    let (component, reports) = book
        .reports_of(&ObjectKey::new("Policy", "p"))
        .expect("reports");
    assert_eq!(component, "policy-rust");
    assert_eq!(reports.len(), 1);

    // The same report again changes nothing; another state of it is news.
    reporter
        .record(vec![report("k1", "a", ReportState::Applied)])
        .await
        .expect("record");
    reporter
        .record(vec![report("k1", "a", ReportState::Failed)])
        .await
        .expect("record");
    settle().await;
    assert_eq!(
        offers.states(),
        vec![
            ("k1".into(), "a".into(), ReportState::Applied),
            ("k1".into(), "a".into(), ReportState::Failed),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_written_by_another_server_arrive_through_the_store() {
    let w = world(&["k1", "k2"]).await;
    let book = ReportBook::start(w.store.clone());
    let offers = Arc::new(Offers::default());
    let sink: Arc<dyn ReportSink> = offers.clone();
    book.set_sink(Arc::downgrade(&sink));
    // Another replica's writer: its own book, the same store.
    let elsewhere = Reporter::start(w.store.clone(), ReportBook::start(w.store.clone()));
    elsewhere
        .record(vec![
            report("k1", "a", ReportState::Applied),
            report("k2", "a", ReportState::Pending),
        ])
        .await
        .expect("record");
    settle().await;
    let mut states = offers.states();
    states.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        states,
        vec![
            ("k1".into(), "a".into(), ReportState::Applied),
            ("k2".into(), "a".into(), ReportState::Pending),
        ]
    );
    // An entry gone from the sheet is offered as removed.
    elsewhere
        .record(vec![report("k2", "a", ReportState::Removed)])
        .await
        .expect("record");
    settle().await;
    assert_eq!(
        offers.states().last(),
        Some(&("k2".into(), "a".into(), ReportState::Removed))
    );
    let mut held = Vec::new();
    book.for_each(|agent, key, entry| held.push((agent.to_owned(), key.to_owned(), entry.state)));
    assert_eq!(held, vec![("a".into(), "k1".into(), ReportState::Applied)]);
    // The owner's items withdrawn: its sheets go, and nobody is told.
    let before = offers.0.lock().len();
    unpublish_all(w.store.as_ref(), "Policy", "p")
        .await
        .expect("unpublish");
    settle().await;
    assert!(book.reports_of(&ObjectKey::new("Policy", "p")).is_none());
    assert_eq!(offers.0.lock().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_set_later_is_handed_every_report_held() {
    let w = world(&["k1"]).await;
    let reporter = Reporter::start(w.store.clone(), ReportBook::start(w.store.clone()));
    reporter
        .record(vec![
            report("k1", "a", ReportState::Applied),
            report("k1", "b", ReportState::Failed),
        ])
        .await
        .expect("record");
    // A restarted server: a fresh book lists the sheets recorded before.
    let book = ReportBook::start(w.store.clone());
    book.synced().await;
    let offers = Arc::new(Offers::default());
    let sink: Arc<dyn ReportSink> = offers.clone();
    book.set_sink(Arc::downgrade(&sink));
    let mut states = offers.states();
    states.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        states,
        vec![
            ("k1".into(), "a".into(), ReportState::Applied),
            ("k1".into(), "b".into(), ReportState::Failed),
        ]
    );
}

#[tokio::test]
async fn a_sheet_handed_over_is_ignored_once_the_watch_is_past_it() {
    let w = world(&[]).await;
    let book = ReportBook::start(w.store.clone());
    book.synced().await;
    let sheet = |state| Sheet {
        owner_kind: "Policy".into(),
        owner_name: "p".into(),
        component: "c".into(),
        agent: "a".into(),
        items: BTreeMap::from([(
            "k".to_owned(),
            SheetEntry {
                state,
                message: None,
                revision: 1,
            },
        )]),
    };
    let watched = book.shared.book.lock().watched;
    book.absorb("s", watched + 2, sheet(ReportState::Failed));
    // An older write of the same sheet arriving late changes nothing.
    book.absorb("s", watched + 1, sheet(ReportState::Applied));
    let owner = ObjectKey::new("Policy", "p");
    let held = book.sheets_of(&owner);
    assert_eq!(held["a"].items["k"].state, ReportState::Failed);
    // Nor does a hand-over the store's watch has already gone past.
    book.shared.book.lock().watched = watched + 10;
    book.absorb(
        "t",
        watched + 5,
        Sheet {
            agent: "b".into(),
            ..sheet(ReportState::Applied)
        },
    );
    assert!(!book.sheets_of(&owner).contains_key("b"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_under_a_prefix_are_every_agents_or_one_agents() {
    let w = world(&["policy/p/a", "policy/p/b", "policy/q/a"]).await;
    let book = ReportBook::start(w.store.clone());
    book.synced().await;
    let reporter = Reporter::start(w.store.clone(), book.clone());
    let mut reports = Vec::new();
    for agent in ["edge-1", "edge-2"] {
        for key in ["policy/p/a", "policy/p/b", "policy/q/a"] {
            reports.push(report(key, agent, ReportState::Applied));
        }
    }
    reporter.record(reports).await.expect("record");
    let p = ObjectKey::new("Policy", "p");
    let seen = |agent: Option<&str>, prefix: &str| -> Vec<(String, String)> {
        let mut seen: Vec<_> = book
            .reports_under(&p, agent, prefix)
            .into_iter()
            .map(|r| (r.agent, r.key))
            .collect();
        seen.sort();
        seen
    };
    let pair = |agent: &str, key: &str| (agent.to_owned(), key.to_owned());
    assert_eq!(
        seen(Some("edge-2"), "policy/p/"),
        vec![pair("edge-2", "policy/p/a"), pair("edge-2", "policy/p/b")]
    );
    assert_eq!(
        seen(None, "policy/p/a"),
        vec![pair("edge-1", "policy/p/a"), pair("edge-2", "policy/p/a")]
    );
    assert_eq!(
        seen(Some("edge-1"), "policy/q/"),
        vec![pair("edge-1", "policy/q/a")]
    );
    assert_eq!(seen(Some("edge-3"), ""), vec![]);
    assert_eq!(seen(None, "").len(), 6);
}
