//! The embedded store as a user of the `Store` trait sees it: revisions, durability across a
//! reopen, all-or-nothing applies, finalizers, compaction, and watches that lose nothing.

use futures::StreamExt;
use reactor_host::object::{ApplyRequest, Selector};
use reactor_host::store::{
    ApplyOutcome, EmbeddedStore, EmbeddedStoreOptions, EventType, Store, StoreError, WatchEvent,
    WatchStream,
};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

fn request(kind: &str, name: &str, spec: serde_json::Value) -> ApplyRequest {
    ApplyRequest {
        kind: kind.into(),
        name: name.into(),
        labels: Default::default(),
        spec,
        expected_revision: None,
    }
}

fn open(dir: &std::path::Path) -> EmbeddedStore {
    EmbeddedStore::open(dir, EmbeddedStoreOptions::default()).expect("store opens")
}

/// The next non-bookmark event, failing the test if none comes within ten seconds.
async fn next_change(stream: &mut WatchStream) -> WatchEvent {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_get_unique_increasing_revisions_that_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(open(dir.path()));
    let writers = 32;
    let per_writer = 25;
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
    assert_eq!(
        store.revision().await.expect("revision"),
        (writers * per_writer) as u64
    );

    let store = Arc::into_inner(store).expect("sole owner");
    store.close();
    let reopened = open(dir.path());
    let listing = reopened
        .list("Item", &Selector::default())
        .await
        .expect("list");
    assert_eq!(
        listing.items.len(),
        writers * per_writer,
        "every acknowledged write is there"
    );
    let reread: HashSet<_> = listing.items.iter().map(|o| o.meta.revision).collect();
    assert_eq!(reread, unique);
    let next = reopened
        .apply(vec![request("Item", "after-reopen", json!(1))])
        .await
        .expect("apply");
    assert_eq!(
        next[0].object.meta.revision,
        (writers * per_writer + 1) as u64,
        "revisions continue, never reused"
    );
}

#[tokio::test]
async fn multi_document_apply_is_all_or_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let first = store
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    let mut stale = request("A", "x", json!(2));
    stale.expected_revision = Some(first[0].object.meta.revision + 10);
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
        1,
        "no revision consumed"
    );

    let again = store
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    assert_eq!(again[0].outcome, ApplyOutcome::Unchanged);
    assert_eq!(again[0].object.meta.revision, 1);
}

#[tokio::test]
async fn finalizers_keep_a_deleted_object_until_released() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
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
    assert_eq!(
        store
            .set_finalizers("A", "x", vec![], None)
            .await
            .expect("release"),
        None
    );
    assert_eq!(store.get("A", "x").await.expect("get"), None);
}

#[tokio::test]
async fn a_compacted_revision_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = EmbeddedStoreOptions {
        log_retention: 50,
        ..EmbeddedStoreOptions::default()
    };
    let store = EmbeddedStore::open(dir.path(), options).expect("open");
    for i in 0..200 {
        store
            .apply(vec![request("B", &format!("o{i}"), json!(i))])
            .await
            .expect("apply");
    }
    let err = match store.watch(None, 1).await {
        Ok(_) => panic!("watch from a compacted revision must fail"),
        Err(e) => e,
    };
    assert!(
        matches!(err, StoreError::Compacted { requested: 1, .. }),
        "{err}"
    );
    let mut recent = store
        .watch(Some("B"), 190)
        .await
        .expect("recent revisions are kept");
    assert_eq!(next_change(&mut recent).await.revision, 191);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_falls_behind_the_live_feed_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let mut slow = store.watch(None, 0).await.expect("watch from 0");
    // More single-write batches than the live feed buffers (1024), none read meanwhile.
    let total = 1500u64;
    for i in 0..total {
        store
            .apply(vec![request("A", &format!("o{i}"), json!(i))])
            .await
            .expect("apply");
    }
    for expected in 1..=total {
        assert_eq!(
            next_change(&mut slow).await.revision,
            expected,
            "in order, no gap, no duplicate"
        );
    }
    store
        .apply(vec![request("A", "late", json!(1))])
        .await
        .expect("apply");
    assert_eq!(
        next_change(&mut slow).await.revision,
        total + 1,
        "and it follows live again"
    );
}

#[tokio::test]
async fn list_by_selector_returns_only_matching_objects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let labelled = |name: &str, app: &str| ApplyRequest {
        labels: [("app".to_owned(), app.to_owned())].into(),
        ..request("Item", name, json!({"n": name}))
    };
    store
        .apply(vec![
            labelled("a", "web"),
            labelled("b", "db"),
            labelled("c", "web"),
            request("Item", "d", json!(null)),
            ApplyRequest {
                kind: "Other".into(),
                ..labelled("e", "web")
            },
        ])
        .await
        .expect("apply");
    let web: Selector = "app=web".parse().expect("selector");
    let names = |items: Vec<reactor_host::object::Object>| {
        items.into_iter().map(|o| o.name).collect::<Vec<_>>()
    };
    let listing = store.list("Item", &web).await.expect("list");
    assert_eq!(names(listing.items), ["a", "c"]);
    let listing = store
        .list("Item", &"!app".parse().expect("selector"))
        .await
        .expect("list");
    assert_eq!(names(listing.items), ["d"]);
    let listing = store
        .list("Item", &Selector::default())
        .await
        .expect("list");
    assert_eq!(listing.items.len(), 4);
}
