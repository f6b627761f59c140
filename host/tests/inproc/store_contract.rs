//! What every store backend must do, as test bodies over `Arc<dyn Store>`: store_embedded.rs
//! and store_etcd.rs run them on their backend (the backend matrix). Revisions are compared
//! relative to the store's revision at the start, because etcd's history does not start at 0.

#![allow(dead_code)]

use futures::StreamExt;
use reactor_host::object::{ApplyRequest, Revision, Selector};
use reactor_host::store::{
    ApplyOutcome, EventType, Store, StoreError, WatchEvent, WatchStream, Write,
};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

pub fn request(kind: &str, name: &str, spec: serde_json::Value) -> ApplyRequest {
    ApplyRequest {
        kind: kind.into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec,
        expected_revision: None,
        owner: None,
    }
}

/// The next non-bookmark event, failing the test if none comes within ten seconds.
pub async fn next_change(stream: &mut WatchStream) -> WatchEvent {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("an event within 10s")
            .expect("the stream is open")
            .expect("no watch error");
        if event.event_type != EventType::Bookmark {
            return event;
        }
    }
}

/// Asserts no change arrives for a short while (to catch duplicates); bookmarks are fine.
pub async fn assert_quiet(stream: &mut WatchStream) {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(300);
    while let Ok(item) = tokio::time::timeout_at(deadline, stream.next()).await {
        let event = item.expect("the stream is open").expect("no watch error");
        assert_eq!(
            event.event_type,
            EventType::Bookmark,
            "unexpected event {event:?}"
        );
    }
}

/// Many writers increment one counter at once, each by a compare-and-swap on the revision it
/// read, retrying on a conflict: no increment is lost or applied twice, and a watch sees the
/// counter go up by one at each change. (The embedded store plans a group while the one
/// before it commits: a group planned on the state before that commit would let two writers
/// swap from the same revision, and lose one.)
pub async fn compare_and_swap_increments_lose_nothing(
    store: Arc<dyn Store>,
    writers: usize,
    per_writer: usize,
) {
    let created = store
        .apply(vec![request("Counter", "c", json!({}))])
        .await
        .expect("counter created");
    let mut watch = store
        .watch(Some("Counter"), created[0].object.meta.revision)
        .await
        .expect("watch");
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut conflicts = 0;
            for _ in 0..per_writer {
                loop {
                    let current = store
                        .get("Counter", "c")
                        .await
                        .expect("get")
                        .expect("the counter exists");
                    let n = current.status["n"].as_u64().unwrap_or(0);
                    let write = Write::SetStatus {
                        kind: "Counter".into(),
                        name: "c".into(),
                        status: json!({"n": n + 1}),
                        expected: Some(current.meta.revision),
                    };
                    match store.commit(vec![write]).await {
                        Ok(_) => break,
                        Err(e) if e.is_conflict() => conflicts += 1,
                        Err(e) => panic!("increment failed: {e}"),
                    }
                }
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for task in tasks {
        conflicts += task.await.expect("writer finished");
    }
    let total = (writers * per_writer) as u64;
    let counter = store
        .get("Counter", "c")
        .await
        .expect("get")
        .expect("the counter exists");
    assert_eq!(
        counter.status["n"],
        json!(total),
        "every increment once ({conflicts} conflicts retried)"
    );
    let mut last = created[0].object.meta.revision;
    for expected in 1..=total {
        let event = next_change(&mut watch).await;
        assert!(event.revision > last, "revisions increase");
        last = event.revision;
        let object = event.object.expect("an update carries its object");
        assert_eq!(object.status["n"], json!(expected), "one up at each change");
    }
}

/// Many writers at once: every acknowledged write has its own revision, increasing per writer,
/// and all are listed. Returns the revisions for a backend's durability check.
pub async fn concurrent_writers_get_unique_increasing_revisions(
    store: Arc<dyn Store>,
    writers: usize,
    per_writer: usize,
) -> HashSet<Revision> {
    let base = store.revision().await.expect("revision");
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..per_writer {
                let applied = store
                    .apply(vec![request("Item", &format!("w{w}-{i}"), json!({"i": i}))])
                    .await
                    .expect("apply acknowledged");
                revisions.push(applied[0].object.meta.revision);
            }
            revisions
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        let revisions = task.await.expect("writer finished");
        assert!(
            revisions.windows(2).all(|w| w[0] < w[1]),
            "one writer's revisions increase: {revisions:?}"
        );
        all.extend(revisions);
    }
    let unique: HashSet<_> = all.iter().copied().collect();
    assert_eq!(
        unique.len(),
        writers * per_writer,
        "every revision is unique"
    );
    assert!(unique.iter().all(|r| *r > base), "revisions are new");
    assert_eq!(
        store.revision().await.expect("revision"),
        base + (writers * per_writer) as u64,
        "one revision per write, none skipped"
    );
    let listing = store
        .list("Item", &Selector::default())
        .await
        .expect("list");
    let listed: HashSet<_> = listing.items.iter().map(|o| o.meta.revision).collect();
    assert_eq!(listed, unique, "every acknowledged write is listed");
    unique
}

pub async fn multi_document_apply_is_all_or_nothing(store: Arc<dyn Store>) {
    let first = store
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    let at = first[0].object.meta.revision;
    assert_eq!(store.revision().await.expect("rev"), at);
    let mut stale = request("A", "x", json!(2));
    stale.expected_revision = Some(at + 10);
    let err = store
        .apply(vec![request("A", "new", json!(1)), stale])
        .await
        .expect_err("the stale document fails the whole apply");
    assert!(
        matches!(err, StoreError::Document { index: 2, .. }),
        "{err}"
    );
    assert!(matches!(err.root(), StoreError::Conflict { .. }), "{err}");
    assert_eq!(
        store.get("A", "new").await.expect("get"),
        None,
        "nothing of the failed apply stored"
    );
    assert_eq!(
        store.get("A", "x").await.expect("get").expect("x").spec,
        json!(1)
    );
    assert_eq!(
        store.revision().await.expect("rev"),
        at,
        "no revision consumed"
    );

    let again = store
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    assert_eq!(again[0].outcome, ApplyOutcome::Unchanged);
    assert_eq!(again[0].object.meta.revision, at);

    let twice = store
        .apply(vec![
            request("A", "y", json!(1)),
            request("A", "y", json!(2)),
        ])
        .await
        .expect_err("one object twice in one apply");
    assert!(
        matches!(twice, StoreError::Document { index: 2, .. }),
        "{twice}"
    );

    let mut fresh = request("A", "x", json!(3));
    fresh.expected_revision = Some(at);
    let updated = store
        .apply(vec![fresh])
        .await
        .expect("a fresh revision applies");
    assert_eq!(updated[0].outcome, ApplyOutcome::Updated);
    assert!(updated[0].object.meta.revision > at);
    assert_eq!(updated[0].object.meta.generation, 2);
}

/// Annotations are stored with the object, read back by get, list and watch, and replaced by
/// an apply as labels are (an apply that changes only them is an update, at the same
/// generation).
pub async fn annotations_are_kept_and_replaced_by_an_apply(store: Arc<dyn Store>) {
    let base = store.revision().await.expect("revision");
    let mut watch = store.watch(Some("Note"), base).await.expect("watch");
    let mut annotated = request("Note", "a", json!({"n": 1}));
    annotated.annotations = [
        (
            "example.com/note".to_owned(),
            "any text: {\"x\": 1}".to_owned(),
        ),
        (
            "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
            "{}".to_owned(),
        ),
    ]
    .into();
    let created = store.apply(vec![annotated.clone()]).await.expect("apply");
    assert_eq!(created[0].object.annotations, annotated.annotations);
    let got = store.get("Note", "a").await.expect("get").expect("there");
    assert_eq!(got.annotations, annotated.annotations);
    let listed = store
        .list("Note", &Selector::default())
        .await
        .expect("list");
    assert_eq!(listed.items[0].annotations, annotated.annotations);
    let event = next_change(&mut watch).await;
    let seen = event.object.expect("an object");
    assert_eq!(seen.annotations, annotated.annotations);

    let mut changed = annotated.clone();
    changed.annotations = [("example.com/note".to_owned(), "other".to_owned())].into();
    let updated = store.apply(vec![changed.clone()]).await.expect("apply");
    assert_eq!(updated[0].outcome, ApplyOutcome::Updated);
    assert_eq!(updated[0].object.annotations, changed.annotations);
    assert_eq!(
        updated[0].object.meta.generation, 1,
        "the spec did not change"
    );
    let again = store.apply(vec![changed.clone()]).await.expect("apply");
    assert_eq!(again[0].outcome, ApplyOutcome::Unchanged);
    let mut bad = changed;
    bad.annotations = [("not a key".to_owned(), "v".to_owned())].into();
    let refused = store.apply(vec![bad]).await.expect_err("a bad key");
    assert!(
        matches!(refused.root(), StoreError::Invalid(m) if m.contains("annotation key")),
        "{refused}"
    );
}

pub async fn finalizers_keep_a_deleted_object_until_released(store: Arc<dyn Store>) {
    store
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    store
        .set_finalizers("A", "x", vec!["policy".into()], None)
        .await
        .expect("finalizer");
    let held = store
        .delete("A", "x", None)
        .await
        .expect("delete")
        .expect("held");
    assert!(held.meta.deleting);
    assert!(store.get("A", "x").await.expect("get").is_some());
    let status = store
        .set_status("A", "x", json!({"phase": "cleaning"}), None)
        .await
        .expect("status");
    assert_eq!(
        status.meta.generation, 1,
        "status does not move the generation"
    );
    let stale = store
        .set_status("A", "x", json!({"phase": "late"}), Some(held.meta.revision))
        .await
        .expect_err("a stale status write is refused");
    assert!(matches!(stale, StoreError::Conflict { .. }), "{stale}");
    assert_eq!(
        store
            .set_finalizers("A", "x", vec![], None)
            .await
            .expect("release"),
        None
    );
    assert_eq!(store.get("A", "x").await.expect("get"), None);
    let missing = store
        .delete("A", "x", None)
        .await
        .expect_err("deleting what is gone");
    assert!(matches!(missing, StoreError::NotFound { .. }), "{missing}");
}

/// Creates, updates, a multi-document apply and a delete, watched from before them: each
/// change exactly once, in order, with the revisions the writes answered; a watch of one kind
/// sees only that kind; a watch from the revision before a multi-document apply sees all of it.
pub async fn a_watch_sees_every_change_once_in_order(store: Arc<dyn Store>) {
    let base = store.revision().await.expect("revision");
    let mut all = store.watch(None, base).await.expect("watch all");
    let mut policies = store.watch(Some("Policy"), base).await.expect("watch kind");
    let a = store
        .apply(vec![request("Policy", "a", json!(1))])
        .await
        .expect("apply");
    let batch = store
        .apply(vec![
            request("Policy", "b", json!(1)),
            request("Gateway", "g", json!(1)),
            request("Policy", "c", json!(1)),
        ])
        .await
        .expect("apply three");
    let update = store
        .apply(vec![request("Policy", "a", json!(2))])
        .await
        .expect("update");
    let deleted = store.delete("Policy", "b", None).await.expect("delete");
    assert_eq!(deleted, None);
    let after_delete = store.revision().await.expect("revision");

    let expected: Vec<(EventType, &str, Revision)> = vec![
        (EventType::Created, "a", a[0].object.meta.revision),
        (EventType::Created, "b", batch[0].object.meta.revision),
        (EventType::Created, "g", batch[1].object.meta.revision),
        (EventType::Created, "c", batch[2].object.meta.revision),
        (EventType::Updated, "a", update[0].object.meta.revision),
        (EventType::Deleted, "b", after_delete),
    ];
    for (event_type, name, revision) in &expected {
        let event = next_change(&mut all).await;
        let object = event.object.expect("an object");
        assert_eq!(
            (event.event_type, object.name.as_str(), event.revision),
            (*event_type, *name, *revision)
        );
        assert_eq!(
            object.meta.revision, *revision,
            "the object carries its revision"
        );
    }
    assert_quiet(&mut all).await;
    for (event_type, name, revision) in expected.iter().filter(|e| e.1 != "g") {
        let event = next_change(&mut policies).await;
        assert_eq!(event.kind(), Some("Policy"));
        assert_eq!(
            (
                event.event_type,
                event.object.expect("object").name.as_str(),
                event.revision
            ),
            (*event_type, *name, *revision)
        );
    }
    assert_quiet(&mut policies).await;

    let mut replay = store
        .watch(Some("Policy"), batch[0].object.meta.revision - 1)
        .await
        .expect("watch from before the batch");
    let mut seen = Vec::new();
    for _ in 0..4 {
        let event = next_change(&mut replay).await;
        seen.push(event.object.expect("object").name.clone());
    }
    assert_eq!(
        seen,
        vec!["b", "c", "a", "b"],
        "the whole batch, then what followed"
    );
}

/// A watcher that reads nothing while many changes are made still gets them all.
pub async fn a_slow_watcher_loses_nothing(store: Arc<dyn Store>, total: u64) {
    let base = store.revision().await.expect("revision");
    let mut slow = store.watch(None, base).await.expect("watch");
    let mut revisions = Vec::new();
    for i in 0..total {
        let applied = store
            .apply(vec![request("A", &format!("o{i}"), json!(i))])
            .await
            .expect("apply");
        revisions.push(applied[0].object.meta.revision);
    }
    for expected in &revisions {
        assert_eq!(
            next_change(&mut slow).await.revision,
            *expected,
            "in order, no gap, no duplicate"
        );
    }
    let late = store
        .apply(vec![request("A", "late", json!(1))])
        .await
        .expect("apply");
    assert_eq!(
        next_change(&mut slow).await.revision,
        late[0].object.meta.revision,
        "and it follows live again"
    );
}

/// A list read in chunks shows the store as it was at its first page: writes committed
/// between its pages (an object of a later page updated, one deleted, one created after them
/// all) are not in it. Every page holds at most the chunk asked for, the objects come in name
/// order, a label selector holds across pages, and only the last page says no more remain.
pub async fn a_list_in_chunks_shows_the_store_at_its_first_page(store: Arc<dyn Store>) {
    let kind = "Chunked";
    let requests = (0..25)
        .map(|i| {
            let mut r = request(kind, &format!("o-{i:02}"), json!({"v": 1}));
            r.labels
                .insert("half".into(), ["even", "odd"][i % 2].into());
            r
        })
        .collect();
    store.apply(requests).await.expect("apply");

    let mut pages = store.clone().list_chunks(kind, &Selector::default(), 10);
    let first = pages
        .next()
        .await
        .expect("a first page")
        .expect("first page");
    assert_eq!(first.items.len(), 10);
    assert!(first.more, "15 objects remain after the first page");
    let at = first.revision;

    let mut changed = request(kind, "o-15", json!({"v": 2}));
    changed.labels.insert("half".into(), "odd".into());
    store.apply(vec![changed]).await.expect("update o-15");
    store.delete(kind, "o-20", None).await.expect("delete o-20");
    store
        .apply(vec![request(kind, "o-30", json!({"v": 1}))])
        .await
        .expect("create o-30");

    let mut listed = first.items;
    while let Some(page) = pages.next().await {
        let page = page.expect("a later page");
        assert_eq!(
            page.revision, at,
            "every page is read at the first one's revision"
        );
        assert!(
            page.items.len() <= 10,
            "{} objects in a page of 10",
            page.items.len()
        );
        let more = page.more;
        listed.extend(page.items);
        if !more {
            break;
        }
    }
    assert!(
        pages.next().await.is_none(),
        "nothing follows the last page"
    );
    let names: Vec<_> = listed.iter().map(|o| o.name.clone()).collect();
    let expected: Vec<_> = (0..25).map(|i| format!("o-{i:02}")).collect();
    assert_eq!(
        names, expected,
        "the objects at the first page's revision, in name order"
    );
    let fifteen = listed.iter().find(|o| o.name == "o-15").expect("o-15");
    assert_eq!(
        fifteen.spec,
        json!({"v": 1}),
        "o-15 as it was at the first page"
    );

    // A selector across pages; and a list that fits one page is one page.
    let odd: Selector = "half=odd".parse().expect("selector");
    let mut pages = store.clone().list_chunks(kind, &odd, 4);
    let mut names = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.expect("page");
        assert!(page.items.len() <= 4);
        names.extend(page.items.into_iter().map(|o| o.name));
    }
    let expected: Vec<_> = (1..25).step_by(2).map(|i| format!("o-{i:02}")).collect();
    assert_eq!(names, expected);
    let mut pages = store
        .clone()
        .list_chunks("Nothing", &Selector::default(), 4);
    let only = pages.next().await.expect("one page").expect("page");
    assert!(only.items.is_empty() && !only.more);
    assert!(pages.next().await.is_none());
}

/// The default of `list_chunks` (one whole list handed out in pages, for a backend that does
/// not read pages at an earlier revision) keeps the same contract, on the testkit's MemStore.
#[tokio::test]
async fn the_default_list_in_chunks_keeps_the_contract() {
    a_list_in_chunks_shows_the_store_at_its_first_page(Arc::new(
        reactor_testkit::MemStore::default(),
    ))
    .await;
}
