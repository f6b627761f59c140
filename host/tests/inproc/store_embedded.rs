//! The embedded store as a user of the `Store` trait sees it: the shared backend contract
//! (store_contract), plus durability across a reopen, compaction by log retention, and a
//! watcher falling behind the live feed.

use crate::store_contract::{self, next_change, request};
use reactor_host::object::{ApplyRequest, Selector};
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, EventType, Store, StoreError};
use serde_json::json;
use std::sync::Arc;

fn open(dir: &std::path::Path) -> EmbeddedStore {
    EmbeddedStore::open(dir, EmbeddedStoreOptions::default()).expect("store opens")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_get_unique_increasing_revisions_that_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(open(dir.path()));
    let unique =
        store_contract::concurrent_writers_get_unique_increasing_revisions(store.clone(), 32, 25)
            .await;
    assert_eq!(
        store.revision().await.expect("revision"),
        800,
        "starts at 0"
    );

    let store = Arc::into_inner(store).expect("sole owner");
    store.close();
    let reopened = open(dir.path());
    let listing = reopened
        .list("Item", &Selector::default())
        .await
        .expect("list");
    let reread: std::collections::HashSet<_> =
        listing.items.iter().map(|o| o.meta.revision).collect();
    assert_eq!(reread, unique, "every acknowledged write is there");
    let next = reopened
        .apply(vec![request("Item", "after-reopen", json!(1))])
        .await
        .expect("apply");
    assert_eq!(
        next[0].object.meta.revision, 801,
        "revisions continue, never reused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_and_swap_increments_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::compare_and_swap_increments_lose_nothing(Arc::new(open(dir.path())), 16, 25)
        .await;
}

/// `reactor-host test` runs on redb's in-memory backend: the same contract holds there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_memory_backend_keeps_the_contract() {
    let memory = || -> Arc<dyn Store> {
        Arc::new(EmbeddedStore::in_memory(EmbeddedStoreOptions::default()).expect("in memory"))
    };
    store_contract::multi_document_apply_is_all_or_nothing(memory()).await;
    store_contract::finalizers_keep_a_deleted_object_until_released(memory()).await;
    store_contract::a_watch_sees_every_change_once_in_order(memory()).await;
    store_contract::a_list_in_chunks_shows_the_store_at_its_first_page(memory()).await;
    let unique =
        store_contract::concurrent_writers_get_unique_increasing_revisions(memory(), 8, 25).await;
    assert_eq!(unique.len(), 200);
}

#[tokio::test]
async fn a_list_in_chunks_shows_the_store_at_its_first_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::a_list_in_chunks_shows_the_store_at_its_first_page(Arc::new(open(dir.path())))
        .await;
}

#[tokio::test]
async fn multi_document_apply_is_all_or_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::multi_document_apply_is_all_or_nothing(Arc::new(open(dir.path()))).await;
}

#[tokio::test]
async fn annotations_are_kept_and_replaced_by_an_apply() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::annotations_are_kept_and_replaced_by_an_apply(Arc::new(open(dir.path()))).await;
}

#[tokio::test]
async fn finalizers_keep_a_deleted_object_until_released() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::finalizers_keep_a_deleted_object_until_released(Arc::new(open(dir.path())))
        .await;
}

#[tokio::test]
async fn a_watch_sees_every_change_once_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_contract::a_watch_sees_every_change_once_in_order(Arc::new(open(dir.path()))).await;
}

#[tokio::test]
async fn each_change_of_a_multi_document_apply_has_its_own_revision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let applied = store
        .apply(vec![
            request("A", "x", json!(1)),
            request("A", "y", json!(1)),
        ])
        .await
        .expect("apply");
    assert_eq!(
        (
            applied[0].object.meta.revision,
            applied[1].object.meta.revision
        ),
        (1, 2)
    );
}

#[tokio::test]
async fn every_change_replays_as_it_was_after_its_object_changed_again_a_delete_and_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = open(dir.path());
        for (name, spec) in [("a", 1), ("a", 2), ("b", 1)] {
            store
                .apply(vec![request("A", name, json!(spec))])
                .await
                .expect("apply");
        }
        store.delete("A", "b", None).await.expect("delete");
        // Two changes of one object in one transaction.
        store
            .apply(vec![
                request("A", "a", json!(3)),
                request("A", "c", json!(1)),
            ])
            .await
            .expect("apply");
        store
            .apply(vec![request("A", "a", json!(4))])
            .await
            .expect("apply");
    }
    let report =
        reactor_host::store::embedded::verify(&dir.path().join("store.redb")).expect("verify runs");
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!((report.objects, report.log_entries), (2, 7));
    let store = open(dir.path());
    let expected = [
        (EventType::Created, "a", 1),
        (EventType::Updated, "a", 2),
        (EventType::Created, "b", 1),
        (EventType::Deleted, "b", 1),
        (EventType::Updated, "a", 3),
        (EventType::Created, "c", 1),
        (EventType::Updated, "a", 4),
    ];
    for from in 0..expected.len() as u64 {
        let mut watch = store.watch(Some("A"), from).await.expect("watch");
        for (at, (event_type, name, spec)) in expected.iter().enumerate().skip(from as usize) {
            let event = next_change(&mut watch).await;
            let object = event.object.expect("an object");
            assert_eq!(
                (event.event_type, event.revision, object.name.as_str()),
                (*event_type, at as u64 + 1, *name),
                "from {from}"
            );
            assert_eq!(
                (object.spec.clone(), object.meta.revision),
                (json!(spec), at as u64 + 1),
                "{name} at revision {} from {from}",
                at + 1
            );
        }
    }
}

#[tokio::test]
async fn a_damaged_log_entry_a_write_must_make_whole_fails_that_write_alone_and_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = open(dir.path());
        for name in ["a", "b"] {
            store
                .apply(vec![request("A", name, json!(1))])
                .await
                .expect("apply");
        }
    }
    // A bit of log entry 1 (a's creation, a reference while it is a's latest change) flips.
    {
        use redb::ReadableTable;
        let db = redb::Database::open(dir.path().join("store.redb")).expect("redb");
        let log: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("log");
        let txn = db.begin_write().expect("write");
        {
            let mut table = txn.open_table(log).expect("log");
            let mut record = table
                .get(1)
                .expect("read")
                .expect("entry 1")
                .value()
                .to_vec();
            let last = record.len() - 1;
            record[last] ^= 0x04;
            table.insert(1, record.as_slice()).expect("write");
        }
        txn.commit().expect("commit");
    }
    let store = open(dir.path());
    let err = store
        .apply(vec![request("A", "a", json!(2))])
        .await
        .expect_err("the write meets the damaged entry");
    assert!(
        err.to_string()
            .starts_with("corrupt record log entry 1: checksum mismatch"),
        "{err}"
    );
    let a = store.get("A", "a").await.expect("get").expect("a is kept");
    assert_eq!((a.spec.clone(), a.meta.revision), (json!(1), 1));
    // Other objects are written, and absence is still answered.
    store
        .apply(vec![request("A", "b", json!(2))])
        .await
        .expect("another object's write");
    assert!(store.get("A", "none").await.expect("absent").is_none());
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
    // More single-write batches than the live feed buffers (64), none read meanwhile.
    store_contract::a_slow_watcher_loses_nothing(Arc::new(open(dir.path())), 1500).await;
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

#[tokio::test]
async fn a_label_lookup_follows_relabels_and_deletes_and_survives_a_file_without_the_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let labelled = |name: &str, labels: &[(&str, &str)]| ApplyRequest {
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..request("Item", name, json!({"n": name}))
    };
    store
        .apply(vec![
            labelled("a", &[("app", "web")]),
            labelled("b", &[("app", "web"), ("tier", "x")]),
            labelled("c", &[("app", "webx")]),
        ])
        .await
        .expect("apply");
    store
        .apply(vec![labelled("a", &[("app", "db")])])
        .await
        .expect("relabel");
    store.delete("Item", "b", None).await.expect("delete");
    store
        .apply(vec![
            labelled("d", &[("app", "web"), ("tier", "y")]),
            labelled("e", &[("app", "web")]),
            labelled("f", &[("app", "web"), ("tier", "y")]),
            labelled("g", &[("app", "db"), ("tier", "y")]),
        ])
        .await
        .expect("apply");
    assert_eq!(names(&store, "app=web").await, ["d", "e", "f"]);
    assert_eq!(names(&store, "app=db").await, ["a", "g"]);
    assert_eq!(names(&store, "app=web,tier!=y").await, ["e"]);
    assert_eq!(names(&store, "tier=y,app=web").await, ["d", "f"]);
    assert_eq!(names(&store, "app=db,tier=y").await, ["g"]);
    assert_eq!(names(&store, "app=db,tier=x").await, Vec::<String>::new());
    store.close();

    // A file written before the index existed: it is indexed when opened.
    {
        let db = redb::Database::create(dir.path().join("store.redb")).expect("redb");
        let txn = db.begin_write().expect("write");
        let labels: redb::TableDefinition<&str, ()> = redb::TableDefinition::new("labels");
        txn.delete_table(labels).expect("drop the index");
        let counters: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("counters");
        txn.open_table(counters)
            .expect("counters")
            .remove("labels-indexed")
            .expect("forget it was built");
        txn.commit().expect("commit");
    }
    let store = open(dir.path());
    assert_eq!(names(&store, "app=web,tier=y").await, ["d", "f"]);
    assert_eq!(names(&store, "app=webx").await, ["c"]);
}

async fn names(store: &EmbeddedStore, selector: &str) -> Vec<String> {
    let selector: Selector = selector.parse().expect("selector");
    let listing = store.list("Item", &selector).await.expect("list");
    listing.items.into_iter().map(|o| o.name).collect()
}

#[tokio::test]
async fn a_batch_too_large_for_the_live_feed_reaches_watchers_from_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = open(dir.path());
    let mut sheets = store.watch(Some("Sheet"), 0).await.expect("watch");
    let mut items = store.watch(Some("Item"), 0).await.expect("watch");
    let mut everything = store.watch(None, 0).await.expect("watch");
    // Watches are following live before the writes.
    store
        .apply(vec![request("Item", "first", json!(1))])
        .await
        .expect("apply");
    assert_eq!(next_change(&mut items).await.revision, 1);
    assert_eq!(next_change(&mut everything).await.revision, 1);
    // Over a MiB in one commit (and under the 1.5 MiB object limit): kept in the log only.
    let big: serde_json::Value = (0..25_000)
        .map(|i| {
            (
                format!("entry-{i:06}"),
                json!({"state": "applied", "revision": i}),
            )
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    store
        .apply(vec![
            request("Sheet", "big", big.clone()),
            request("Item", "beside", json!(2)),
        ])
        .await
        .expect("apply");
    // Nothing is written after it: the watches learn of it from the live feed's marker.
    let sheet = next_change(&mut sheets).await;
    assert_eq!(
        (sheet.revision, sheet.object.map(|o| o.spec.clone())),
        (2, Some(big))
    );
    store
        .apply(vec![request("Item", "after", json!(3))])
        .await
        .expect("apply");
    let names = |events: Vec<reactor_host::store::WatchEvent>| {
        events
            .into_iter()
            .filter_map(|e| e.object.map(|o| o.name.clone()))
            .collect::<Vec<_>>()
    };
    let seen = vec![next_change(&mut items).await, next_change(&mut items).await];
    assert_eq!(names(seen), ["beside", "after"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(next_change(&mut everything).await);
    }
    assert_eq!(names(seen), ["big", "beside", "after"]);
}
