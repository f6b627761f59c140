//! Property: a watch from any revision delivers exactly the later changes of the history, in
//! order, once each — checked against a model of what every write should have done.

use futures::StreamExt;
use proptest::prelude::*;
use reactor_host::object::ApplyRequest;
use reactor_host::store::{EmbeddedStore, EmbeddedStoreOptions, EventType, Store, WatchEvent};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

#[derive(Debug, Clone)]
enum Op {
    Apply { kind: u8, name: u8, spec: u8 },
    Status { kind: u8, name: u8, value: u8 },
    Delete { kind: u8, name: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..2u8, 0..4u8, 0..3u8).prop_map(|(kind, name, spec)| Op::Apply { kind, name, spec }),
        1 => (0..2u8, 0..4u8, 0..2u8).prop_map(|(kind, name, value)| Op::Status { kind, name, value }),
        2 => (0..2u8, 0..4u8).prop_map(|(kind, name)| Op::Delete { kind, name }),
    ]
}

fn kind(k: u8) -> String {
    ["Alpha", "Beta"][k as usize % 2].to_owned()
}

/// (revision, event type, kind, name) of every change the model expects.
type History = Vec<(u64, EventType, String, String)>;

async fn run_ops(store: &EmbeddedStore, ops: &[Op]) -> History {
    let mut model: HashMap<(String, String), (serde_json::Value, serde_json::Value)> =
        HashMap::new();
    let mut history = Vec::new();
    let mut revision = 0;
    for op in ops {
        match op {
            Op::Apply {
                kind: k,
                name,
                spec,
            } => {
                let key = (kind(*k), format!("n{name}"));
                let spec = json!(spec);
                let applied = store
                    .apply(vec![ApplyRequest {
                        kind: key.0.clone(),
                        name: key.1.clone(),
                        labels: Default::default(),
                        annotations: Default::default(),
                        spec: spec.clone(),
                        expected_revision: None,
                        owner: None,
                    }])
                    .await
                    .expect("apply");
                let expected = match model.get(&key) {
                    None => Some(EventType::Created),
                    Some((old, _)) if *old != spec => Some(EventType::Updated),
                    Some(_) => None,
                };
                let status = model.get(&key).map(|(_, s)| s.clone()).unwrap_or_default();
                model.insert(key.clone(), (spec, status));
                if let Some(t) = expected {
                    revision += 1;
                    history.push((revision, t, key.0, key.1));
                }
                assert_eq!(
                    applied[0].object.meta.revision,
                    history
                        .iter()
                        .rev()
                        .find(|h| (h.2.as_str(), h.3.as_str())
                            == (
                                applied[0].object.kind.as_str(),
                                applied[0].object.name.as_str()
                            ))
                        .map(|h| h.0)
                        .unwrap_or(0)
                );
            }
            Op::Status {
                kind: k,
                name,
                value,
            } => {
                let key = (kind(*k), format!("n{name}"));
                let result = store.set_status(&key.0, &key.1, json!(value), None).await;
                match model.get_mut(&key) {
                    None => assert!(result.is_err(), "status of a missing object fails"),
                    Some((_, status)) => {
                        result.expect("status");
                        if *status != json!(value) {
                            *status = json!(value);
                            revision += 1;
                            history.push((revision, EventType::Updated, key.0, key.1));
                        }
                    }
                }
            }
            Op::Delete { kind: k, name } => {
                let key = (kind(*k), format!("n{name}"));
                let result = store.delete(&key.0, &key.1, None).await;
                if model.remove(&key).is_some() {
                    assert_eq!(result.expect("delete"), None);
                    revision += 1;
                    history.push((revision, EventType::Deleted, key.0, key.1));
                } else {
                    assert!(result.is_err(), "deleting a missing object fails");
                }
            }
        }
    }
    history
}

/// Reads a watch until its first bookmark at or past `until`.
async fn collect(
    store: &EmbeddedStore,
    kind: Option<&str>,
    from: u64,
    until: u64,
) -> Vec<WatchEvent> {
    let mut stream = store.watch(kind, from).await.expect("watch");
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("watch answers")
            .expect("stream open")
            .expect("no error");
        if event.event_type == EventType::Bookmark {
            if event.revision >= until {
                return events;
            }
            continue;
        }
        events.push(event);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn watch_from_any_revision_replays_the_rest_of_history(
        ops in proptest::collection::vec(op(), 1..40),
        from_pick in 0.0f64..=1.0,
        filter in proptest::option::of(0..2u8),
    ) {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async {
            let dir = tempfile::tempdir().expect("tempdir");
            let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
            let history = run_ops(&store, &ops).await;
            let last = history.last().map(|h| h.0).unwrap_or(0);
            prop_assert_eq!(store.revision().await.expect("rev"), last);
            let from = (from_pick * last as f64).floor() as u64;
            let kind_filter = filter.map(kind);
            let expected: Vec<_> = history
                .iter()
                .filter(|h| h.0 > from && kind_filter.as_ref().is_none_or(|k| *k == h.2))
                .map(|h| (h.0, h.1, h.2.clone(), h.3.clone()))
                .collect();
            let seen: Vec<_> = collect(&store, kind_filter.as_deref(), from, last)
                .await
                .into_iter()
                .map(|e| {
                    let o = e.object.expect("change events carry the object");
                    prop_assert_eq!(o.meta.revision, e.revision);
                    Ok((e.revision, e.event_type, o.kind.clone(), o.name.clone()))
                })
                .collect::<Result<_, TestCaseError>>()?;
            prop_assert_eq!(seen, expected);
            Ok(())
        })?;
    }
}
