//! The fan-out as an agent's feed sees it, on the embedded store.

use super::*;
use crate::{FeedEvent, ItemTarget, Owner, publish, unpublish};
use futures::StreamExt;
use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
use serde_json::json;
use std::collections::BTreeMap;

fn owner() -> Owner {
    Owner {
        kind: "Policy".into(),
        name: "p".into(),
        component: "test".into(),
    }
}

fn agent(id: &str, role: &str) -> Recipient {
    Recipient {
        id: id.into(),
        labels: BTreeMap::from([("role".into(), role.into())]),
    }
}

fn role(value: &str) -> ItemTarget {
    ItemTarget::Labels(BTreeMap::from([("role".into(), value.into())]))
}

fn store(dir: &tempfile::TempDir) -> Arc<dyn Store> {
    Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"))
}

/// A feed's chunks as one line each.
fn per_line(
    chunks: impl Stream<Item = Result<Bytes, StoreError>> + Send + 'static,
) -> std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, StoreError>> + Send>> {
    Box::pin(chunks.flat_map(|chunk| {
        let lines: Vec<Result<Bytes, StoreError>> = match chunk {
            Ok(chunk) => chunk
                .split_inclusive(|b| *b == b'\n')
                .map(|line| Ok(Bytes::copy_from_slice(line)))
                .collect(),
            Err(e) => vec![Err(e)],
        };
        futures::stream::iter(lines)
    }))
}

fn event(line: Result<Bytes, StoreError>) -> Result<FeedEvent, StoreError> {
    line.map(|bytes| serde_json::from_slice(&bytes).expect("a feed line is JSON"))
}

/// The next `n` puts and deletes of a feed, as `put KEY VALUE` / `delete KEY`.
async fn next_changes(
    feed: &mut (impl Stream<Item = Result<Bytes, StoreError>> + Unpin),
    n: usize,
) -> Vec<String> {
    let mut seen = Vec::new();
    while seen.len() < n {
        match event(feed.next().await.expect("open")).expect("event") {
            FeedEvent::Bookmark { .. } => {}
            FeedEvent::Put { item, .. } => seen.push(format!("put {} {}", item.key, item.value)),
            FeedEvent::Delete { key, .. } => seen.push(format!("delete {key}")),
        }
    }
    seen
}

fn known(snapshot: &Snapshot) -> HashMap<String, u64> {
    snapshot
        .items
        .iter()
        .map(|i| (i.key.clone(), i.version))
        .collect()
}

#[tokio::test]
async fn an_agent_gets_its_items_and_a_delete_when_one_stops_being_meant_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir);
    let fanout = Fanout::start(store.clone(), FanoutLimits::default());
    publish(store.as_ref(), &owner(), "k/web", json!(1), role("web"))
        .await
        .expect("publish");
    publish(store.as_ref(), &owner(), "k/db", json!(2), role("db"))
        .await
        .expect("publish");
    let web = agent("a1", "web");
    let start = loop {
        let snapshot = fanout.snapshot(&web).await.expect("snapshot");
        if snapshot.revision >= store.revision().await.expect("revision") {
            break snapshot;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        start.items.iter().map(|i| &i.key[..]).collect::<Vec<_>>(),
        vec!["k/web"]
    );
    let mut feed = per_line(
        fanout
            .follow(web, start.revision, known(&start))
            .await
            .expect("follow"),
    );
    // A report (status only) is not news; a new value is.
    store
        .set_status(
            ITEM_KIND,
            &crate::items::object_name("k/web"),
            json!({"agents": {}}),
            None,
        )
        .await
        .expect("status");
    publish(store.as_ref(), &owner(), "k/web", json!(10), role("web"))
        .await
        .expect("publish");
    publish(store.as_ref(), &owner(), "k/web", json!(10), role("db"))
        .await
        .expect("retarget");
    publish(store.as_ref(), &owner(), "k/new", json!(3), role("web"))
        .await
        .expect("publish");
    unpublish(store.as_ref(), &owner(), "k/db")
        .await
        .expect("unpublish");
    unpublish(store.as_ref(), &owner(), "k/new")
        .await
        .expect("unpublish");
    assert_eq!(
        next_changes(&mut feed, 4).await,
        vec![
            "put k/web 10",
            "delete k/web",
            "put k/new 3",
            "delete k/new"
        ]
    );
}

#[tokio::test]
async fn every_agent_gets_the_same_line_and_a_known_version_is_not_sent_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir);
    let fanout = Fanout::start(store.clone(), FanoutLimits::default());
    let from = fanout
        .snapshot(&agent("x", "web"))
        .await
        .expect("snapshot")
        .revision;
    publish(store.as_ref(), &owner(), "k/1", json!(1), role("web"))
        .await
        .expect("publish");
    publish(store.as_ref(), &owner(), "k/2", json!(2), role("web"))
        .await
        .expect("publish");
    let mut a1 = per_line(
        fanout
            .follow(agent("a1", "web"), from, HashMap::new())
            .await
            .expect("follow"),
    );
    // a2 already holds k/1 at version 1 (it said so when it connected).
    let mut a2 = per_line(
        fanout
            .follow(agent("a2", "web"), from, HashMap::from([("k/1".into(), 1)]))
            .await
            .expect("follow"),
    );
    assert_eq!(
        next_changes(&mut a1, 2).await,
        vec!["put k/1 1", "put k/2 2"]
    );
    assert_eq!(next_changes(&mut a2, 1).await, vec!["put k/2 2"]);
}

#[tokio::test]
async fn a_feed_behind_the_bounded_log_is_told_to_re_list_and_the_listing_is_current() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir);
    let limits = FanoutLimits {
        max_changes: 4,
        max_bytes: 1 << 20,
    };
    let fanout = Fanout::start(store.clone(), limits);
    let web = agent("a1", "web");
    let from = fanout.snapshot(&web).await.expect("snapshot").revision;
    let mut slow = per_line(
        fanout
            .follow(web.clone(), from, HashMap::new())
            .await
            .expect("follow"),
    );
    for i in 0..10 {
        publish(
            store.as_ref(),
            &owner(),
            &format!("k/{i}"),
            json!(i),
            role("web"),
        )
        .await
        .expect("publish");
    }
    let latest = store.revision().await.expect("revision");
    while fanout.shared.state.read().log.position() < latest {
        tokio::task::yield_now().await;
    }
    // The slow feed has read nothing: the log kept only 4 changes, so it re-lists.
    assert!(matches!(
        event(slow.next().await.expect("a line")),
        Err(StoreError::Compacted { .. })
    ));
    assert!(slow.next().await.is_none(), "the feed ends after the error");
    // So does a feed asking for a revision the log no longer holds.
    assert!(matches!(
        fanout.follow(web.clone(), from, HashMap::new()).await,
        Err(NimbusError::Store(StoreError::Compacted { .. }))
    ));
    let listing = fanout.snapshot(&web).await.expect("snapshot");
    assert_eq!(listing.items.len(), 10);
    assert_eq!(listing.revision, latest);
    let mut caught_up = per_line(
        fanout
            .follow(web, listing.revision, known(&listing))
            .await
            .expect("follow"),
    );
    publish(store.as_ref(), &owner(), "k/last", json!("x"), role("web"))
        .await
        .expect("publish");
    assert_eq!(
        next_changes(&mut caught_up, 1).await,
        vec![r#"put k/last "x""#]
    );
}

#[tokio::test]
async fn a_feed_from_ahead_of_the_store_re_lists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir);
    let fanout = Fanout::start(store.clone(), FanoutLimits::default());
    let ahead = store.revision().await.expect("revision") + 100;
    assert!(matches!(
        fanout
            .follow(agent("a1", "web"), ahead, HashMap::new())
            .await,
        Err(NimbusError::Store(StoreError::Compacted { .. }))
    ));
}

#[test]
fn a_feed_resumes_from_no_further_back_than_the_store_keeps() {
    assert_eq!(FanoutLimits::resuming(8).max_changes, 8);
    assert_eq!(FanoutLimits::resuming(0).max_changes, 1);
    let default = FanoutLimits::default();
    assert_eq!(
        FanoutLimits::resuming(1 << 40).max_changes,
        default.max_changes
    );
    assert_eq!(FanoutLimits::resuming(8).max_bytes, default.max_bytes);
}
