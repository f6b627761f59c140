//! The reflector: its diff, its sharing per kind, its label index and revision waits.

use super::*;
use reactor_core::object::ApplyRequest;
use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};

fn object(name: &str, revision: Revision) -> Arc<Object> {
    Arc::new(Object {
        kind: "A".into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::Value::Null,
        status: serde_json::Value::Null,
        meta: reactor_core::object::Meta {
            revision,
            ..Default::default()
        },
    })
}

#[test]
fn relist_diff_synthesizes_deletes_for_vanished_objects() {
    let old: HashMap<_, _> = [("a", 1), ("b", 2), ("c", 3)]
        .into_iter()
        .map(|(n, r)| (n.to_string(), object(n, r)))
        .collect();
    let new: HashMap<_, _> = [("b", 2), ("c", 7), ("d", 8)]
        .into_iter()
        .map(|(n, r)| (n.to_string(), object(n, r)))
        .collect();
    let mut events: Vec<(bool, String)> = diff(&old, &new)
        .into_iter()
        .map(|e| {
            (
                matches!(e, ReflectorEvent::Deleted(_)),
                e.object().name.clone(),
            )
        })
        .collect();
    events.sort();
    assert_eq!(
        events,
        vec![(false, "c".into()), (false, "d".into()), (true, "a".into())],
        "a deleted, c changed, d new, b untouched"
    );
}

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("within 10s")
}

#[tokio::test]
async fn shared_per_kind_follows_changes_and_stops_with_its_last_user() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    let req = |name: &str| ApplyRequest {
        kind: "A".into(),
        name: name.into(),
        labels: Default::default(),
        annotations: Default::default(),
        spec: serde_json::json!(1),
        expected_revision: None,
        owner: None,
    };
    store.apply(vec![req("before")]).await.expect("apply");
    let reflectors = Reflectors::new(store.clone());
    let first = reflectors.acquire("A").expect("reflector");
    let second = reflectors.acquire("A").expect("reflector");
    assert!(Arc::ptr_eq(&first, &second), "one reflector per kind");
    assert_eq!(within(first.synced()).await, 1);
    assert!(first.get("before").is_some());

    let mut events = first.subscribe();
    store.apply(vec![req("after")]).await.expect("apply");
    let seen = within(events.recv()).await.expect("event");
    assert!(
        matches!(&seen, ReflectorEvent::Applied(o) if o.name == "after"),
        "{seen:?}"
    );
    store.delete("A", "before", None).await.expect("delete");
    let seen = within(events.recv()).await.expect("event");
    assert!(
        matches!(&seen, ReflectorEvent::Deleted(o) if o.name == "before"),
        "{seen:?}"
    );
    assert_eq!(first.names(), vec!["after".to_string()]);

    assert_eq!(reflectors.kinds(), vec!["A".to_string()]);
    drop(first);
    assert_eq!(
        reflectors.kinds(),
        vec!["A".to_string()],
        "still held by the second user"
    );
    drop(second);
    assert!(reflectors.kinds().is_empty(), "stopped with its last user");
    drop(events);
}

fn labelled(name: &str, owner: &str) -> ApplyRequest {
    ApplyRequest {
        kind: "A".into(),
        name: name.into(),
        labels: [("owner".to_owned(), owner.to_owned())].into(),
        annotations: Default::default(),
        spec: serde_json::json!(1),
        expected_revision: None,
        owner: None,
    }
}

#[tokio::test]
async fn an_indexed_label_lists_what_carries_it_as_changes_move_objects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    store
        .apply(vec![
            labelled("a1", "a"),
            labelled("a2", "a"),
            labelled("b1", "b"),
        ])
        .await
        .expect("apply");
    let reflectors = Reflectors::new(store.clone()).indexing("A", "owner");
    let cache = reflectors.acquire("A").expect("reflector");
    within(cache.synced()).await;
    let names = |owner: &str| {
        let selector: Selector = format!("owner={owner}").parse().expect("selector");
        (cache.list(&selector).into_iter())
            .map(|o| o.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names("a"), ["a1", "a2"], "from the first listing");
    assert_eq!(names("b"), ["b1"]);

    // a2 moves to b, a1 goes, c1 comes.
    let moved = store.apply(vec![labelled("a2", "b")]).await.expect("apply");
    store.delete("A", "a1", None).await.expect("delete");
    let last = store.apply(vec![labelled("c1", "c")]).await.expect("apply");
    assert!(moved[0].object.meta.revision < last[0].object.meta.revision);
    within(cache.reached(last[0].object.meta.revision)).await;
    assert!(names("a").is_empty(), "{:?}", names("a"));
    assert_eq!(names("b"), ["a2", "b1"]);
    assert_eq!(names("c"), ["c1"]);
    // A selector with more terms still applies them all.
    let narrower: Selector = "owner=b,other=x".parse().expect("selector");
    assert!(cache.list(&narrower).is_empty());
}

#[tokio::test]
async fn reached_waits_for_the_revision_of_a_change_of_the_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open"));
    let reflectors = Reflectors::new(store.clone());
    let cache = reflectors.acquire("A").expect("reflector");
    within(cache.synced()).await;
    let waiter = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache.reached(1).await;
            cache.get("later").is_some()
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished(), "nothing of revision 1 yet");
    store
        .apply(vec![labelled("later", "x")])
        .await
        .expect("apply");
    assert!(
        within(waiter).await.expect("join"),
        "the change is in the cache"
    );
}
