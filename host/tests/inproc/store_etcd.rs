//! The etcd store against a real etcd (Debian's etcd-server, started per test): the shared
//! backend contract (store_contract), plus what only etcd does — one revision per
//! transaction, watches resumed after the connection breaks, and compaction.

use crate::store_contract::{self, assert_quiet, next_change, request};
use futures::StreamExt;
use reactor_host::store::{
    EtcdStore, EtcdStoreOptions, EtcdUrl, EventType, Store, StoreError, WatchStream,
};
use reactor_testkit::Etcd;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

async fn connect(etcd: &Etcd) -> EtcdStore {
    let url = EtcdUrl::parse(&etcd.url("/reactor")).expect("url");
    EtcdStore::connect(&url, EtcdStoreOptions::default())
        .await
        .expect("etcd store connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_get_unique_increasing_revisions_that_survive_reconnect() {
    let etcd = Etcd::start();
    let store = Arc::new(connect(&etcd).await);
    let unique =
        store_contract::concurrent_writers_get_unique_increasing_revisions(store, 8, 20).await;
    let again = connect(&etcd).await;
    let listing = again.list("Item", &Default::default()).await.expect("list");
    let reread: std::collections::HashSet<_> =
        listing.items.iter().map(|o| o.meta.revision).collect();
    assert_eq!(reread, unique, "a new connection reads the same revisions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_and_swap_increments_lose_nothing() {
    let etcd = Etcd::start();
    store_contract::compare_and_swap_increments_lose_nothing(Arc::new(connect(&etcd).await), 8, 10)
        .await;
}

#[tokio::test]
async fn multi_document_apply_is_all_or_nothing() {
    let etcd = Etcd::start();
    store_contract::multi_document_apply_is_all_or_nothing(Arc::new(connect(&etcd).await)).await;
}

#[tokio::test]
async fn a_list_in_chunks_shows_the_store_at_its_first_page() {
    let etcd = Etcd::start();
    store_contract::a_list_in_chunks_shows_the_store_at_its_first_page(Arc::new(
        connect(&etcd).await,
    ))
    .await;
}

#[tokio::test]
async fn annotations_are_kept_and_replaced_by_an_apply() {
    let etcd = Etcd::start();
    store_contract::annotations_are_kept_and_replaced_by_an_apply(Arc::new(connect(&etcd).await))
        .await;
}

#[tokio::test]
async fn finalizers_keep_a_deleted_object_until_released() {
    let etcd = Etcd::start();
    store_contract::finalizers_keep_a_deleted_object_until_released(Arc::new(connect(&etcd).await))
        .await;
}

#[tokio::test]
async fn a_watch_sees_every_change_once_in_order() {
    let etcd = Etcd::start();
    store_contract::a_watch_sees_every_change_once_in_order(Arc::new(connect(&etcd).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_watcher_loses_nothing() {
    let etcd = Etcd::start();
    store_contract::a_slow_watcher_loses_nothing(Arc::new(connect(&etcd).await), 400).await;
}

#[tokio::test]
async fn a_multi_document_apply_is_one_transaction_with_one_revision() {
    let etcd = Etcd::start();
    let store = connect(&etcd).await;
    let applied = store
        .apply(vec![
            request("A", "x", json!(1)),
            request("A", "y", json!(1)),
        ])
        .await
        .expect("apply");
    let at = applied[0].object.meta.revision;
    assert_eq!(applied[1].object.meta.revision, at, "one etcd transaction");
    assert_eq!(store.revision().await.expect("revision"), at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_hands_over_a_transaction_whole() {
    let etcd = Etcd::start();
    let store = connect(&etcd).await;
    let mut watch = store.watch(Some("A"), 0).await.expect("watch");
    let names: Vec<String> = (0..100).map(|i| format!("o{i:03}")).collect();
    let requests = names.iter().map(|n| request("A", n, json!(1))).collect();
    store.apply(requests).await.expect("apply");
    // Once its first event is here, the rest of the transaction is ready too: a cache that
    // takes what is ready before it says it reached the revision holds all of it.
    let first = tokio::time::timeout(Duration::from_secs(10), watch.next())
        .await
        .expect("an event")
        .expect("open")
        .expect("event");
    let mut seen = vec![first.object.expect("object").name.clone()];
    while let Some(Some(next)) = futures::FutureExt::now_or_never(watch.next()) {
        seen.push(next.expect("event").object.expect("object").name.clone());
    }
    assert_eq!(seen, names, "every event of the transaction, ready at once");
}

#[tokio::test]
async fn two_stores_on_one_etcd_see_each_other_and_race_safely() {
    let etcd = Etcd::start();
    let one = connect(&etcd).await;
    let two = connect(&etcd).await;
    let created = one
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("apply");
    let seen = two.get("A", "x").await.expect("get").expect("visible");
    assert_eq!(seen, created[0].object);
    // Both update from the same revision: exactly one wins, the other is told it is stale.
    let mut from_one = request("A", "x", json!("one"));
    from_one.expected_revision = Some(seen.meta.revision);
    let mut from_two = request("A", "x", json!("two"));
    from_two.expected_revision = Some(seen.meta.revision);
    let (a, b) = tokio::join!(one.apply(vec![from_one]), two.apply(vec![from_two]));
    assert!(a.is_ok() != b.is_ok(), "exactly one wins: {a:?} {b:?}");
    let loser = a.err().or(b.err()).expect("a loser");
    assert!(
        matches!(loser.root(), StoreError::Conflict { .. }),
        "{loser}"
    );
}

/// Reads changes (skipping bookmarks) until `count` arrived; panics on a watch error.
async fn changes(stream: &mut WatchStream, count: usize) -> Vec<(EventType, String, u64)> {
    let mut out = Vec::new();
    while out.len() < count {
        let event = next_change(stream).await;
        out.push((
            event.event_type,
            event.object.expect("object").name.clone(),
            event.revision,
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_resumes_after_etcd_restarts_without_gap_or_duplicate() {
    let mut etcd = Etcd::start();
    let options = EtcdStoreOptions {
        watch_retry: Duration::from_millis(50),
        ..EtcdStoreOptions::default()
    };
    let url = EtcdUrl::parse(&etcd.url("/reactor")).expect("url");
    let store = EtcdStore::connect(&url, options).await.expect("connect");
    let base = store.revision().await.expect("revision");
    let mut watch = store.watch(Some("A"), base).await.expect("watch");
    let batch = store
        .apply(vec![
            request("A", "one", json!(1)),
            request("A", "two", json!(1)),
            request("A", "three", json!(1)),
        ])
        .await
        .expect("apply");
    let at = batch[0].object.meta.revision;
    assert_eq!(
        changes(&mut watch, 3).await,
        vec![
            (EventType::Created, "one".into(), at),
            (EventType::Created, "two".into(), at),
            (EventType::Created, "three".into(), at),
        ]
    );

    // Every connection breaks; the watch keeps going from the last revision it delivered.
    etcd.restart();
    let again = store
        .apply(vec![
            request("A", "four", json!(1)),
            request("A", "one", json!(2)),
        ])
        .await;
    let again = match again {
        Ok(applied) => applied,
        // The first request on a fresh connection may still see the old one fail.
        Err(_) => store
            .apply(vec![
                request("A", "four", json!(1)),
                request("A", "one", json!(2)),
            ])
            .await
            .expect("apply after restart"),
    };
    let next = again[0].object.meta.revision;
    assert_eq!(
        changes(&mut watch, 2).await,
        vec![
            (EventType::Created, "four".into(), next),
            (EventType::Updated, "one".into(), next),
        ],
        "the changes after the restart, and nothing from before it again"
    );
    assert_quiet(&mut watch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compacted_revision_is_refused_and_a_stranded_watch_ends_with_compacted() {
    let mut etcd = Etcd::start();
    let options = EtcdStoreOptions {
        watch_retry: Duration::from_millis(50),
        ..EtcdStoreOptions::default()
    };
    let url = EtcdUrl::parse(&etcd.url("/reactor")).expect("url");
    let store = EtcdStore::connect(&url, options).await.expect("connect");
    let base = store.revision().await.expect("revision");
    // Watches only kind Quiet, so it delivers nothing and its position stays at `base`.
    let mut stranded = store.watch(Some("Quiet"), base).await.expect("watch");
    for i in 0..20 {
        store
            .apply(vec![request("B", &format!("o{i}"), json!(i))])
            .await
            .expect("apply");
    }
    let latest = store.revision().await.expect("revision");
    store
        .client()
        .compact(i64::try_from(latest).expect("small"), None)
        .await
        .expect("compact");

    let err = match store.watch(None, base).await {
        Ok(_) => panic!("watch from a compacted revision must fail"),
        Err(e) => e,
    };
    assert!(
        matches!(err, StoreError::Compacted { requested, oldest } if requested == base && oldest == latest),
        "{err}"
    );
    let mut recent = store
        .watch(Some("B"), latest)
        .await
        .expect("a watch from the compaction point works");
    let last = store
        .apply(vec![request("B", "after", json!(1))])
        .await
        .expect("apply");
    assert_eq!(
        next_change(&mut recent).await.revision,
        last[0].object.meta.revision
    );

    // The stranded watch must resume from `base` after the break, which is gone: it ends
    // with Compacted (the caller re-lists) instead of silently skipping history.
    etcd.restart();
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match stranded.next().await {
                Some(Ok(event)) => assert_eq!(event.event_type, EventType::Bookmark),
                Some(Err(e)) => return e,
                None => panic!("the stream ended without saying why"),
            }
        }
    })
    .await
    .expect("the stranded watch ends within 20s");
    assert!(matches!(ended, StoreError::Compacted { .. }), "{ended}");
}

#[tokio::test]
async fn a_fenced_write_lands_only_while_its_lease_lives() {
    use reactor_host::store::etcd::lease::{register, revoke};
    let etcd = Etcd::start();
    let store = connect(&etcd).await;
    let member = register(&store, "replica-a", Duration::from_secs(30))
        .await
        .expect("register");
    let (fence_tx, fence) = tokio::sync::watch::channel(Some(member.guard.clone()));
    let fenced = store.fenced(fence);
    let written = fenced
        .apply(vec![request("A", "x", json!(1))])
        .await
        .expect("a write while the lease lives");
    let at = written[0].object.meta.revision;

    // The lease ends (as when a paused replica outlives its TTL): its writes are refused and
    // change nothing, while unfenced writers go on.
    revoke(&store, member.lease).await;
    let refused = fenced
        .set_status("A", "x", json!({"stale": true}), None)
        .await
        .expect_err("a stale write is refused");
    assert!(refused.to_string().contains("does not own"), "{refused}");
    let stored = store.get("A", "x").await.expect("get").expect("x");
    assert_eq!(
        (stored.meta.revision, stored.status.clone()),
        (at, serde_json::Value::Null)
    );

    // Registering again makes a new guard; the old one stays refused.
    let again = register(&store, "replica-a", Duration::from_secs(30))
        .await
        .expect("register again");
    assert_ne!(again.guard, member.guard);
    let refused = fenced
        .apply(vec![request("A", "x", json!(2))])
        .await
        .expect_err("the old guard stays refused");
    assert!(refused.to_string().contains("does not own"), "{refused}");
    fence_tx.send_replace(None);
    let closed = fenced
        .apply(vec![request("A", "y", json!(1))])
        .await
        .expect_err("no lease, no write");
    assert!(closed.to_string().contains("does not own"), "{closed}");
    fence_tx.send_replace(Some(again.guard.clone()));
    fenced
        .apply(vec![request("A", "x", json!(2))])
        .await
        .expect("the new guard writes");
}

/// Each store plans from what it wrote last; a write by another process in between must be
/// seen, never overwritten or mistaken.
#[tokio::test]
async fn two_processes_writing_one_object_in_turn_see_each_others_writes() {
    let etcd = Etcd::start();
    let (a, b) = (connect(&etcd).await, connect(&etcd).await);
    let first = a
        .apply(vec![request("Item", "x", json!({"v": 1}))])
        .await
        .expect("a creates");
    let second = b
        .apply(vec![request("Item", "x", json!({"v": 2}))])
        .await
        .expect("b updates");
    assert_eq!(second[0].object.meta.generation, 2);
    // `a` last wrote generation 1: its guess is stale.
    let third = a
        .apply(vec![request("Item", "x", json!({"v": 3}))])
        .await
        .expect("a updates again");
    assert_eq!(third[0].object.meta.generation, 3);
    assert_eq!(third[0].object.meta.uid, first[0].object.meta.uid);
    let stale = reactor_host::object::ApplyRequest {
        expected_revision: Some(second[0].object.meta.revision),
        owner: None,
        ..request("Item", "x", json!({"v": 4}))
    };
    let refused = b.apply(vec![stale]).await.map(|_| ());
    assert!(
        matches!(
            refused.as_ref().map_err(StoreError::root),
            Err(StoreError::Conflict { .. })
        ),
        "{refused:?}"
    );
    b.set_status("Item", "x", json!({"seen": 3}), None)
        .await
        .expect("b sets the status");
    // `a` still guesses its own last write: the status `b` set must survive.
    let fourth = a
        .apply(vec![request("Item", "x", json!({"v": 5}))])
        .await
        .expect("a updates");
    assert_eq!(fourth[0].object.status, json!({"seen": 3}));
    b.delete("Item", "x", None).await.expect("b deletes");
    let created = a
        .apply(vec![request("Item", "x", json!({"v": 6}))])
        .await
        .expect("a creates it anew");
    assert_eq!(
        created[0].outcome,
        reactor_host::store::ApplyOutcome::Created
    );
    assert_ne!(created[0].object.meta.uid, first[0].object.meta.uid);
    let stored = b.get("Item", "x").await.expect("get").expect("there");
    assert_eq!((stored.spec, stored.meta.generation), (json!({"v": 6}), 1));
}
