//! Property: whatever the sequence of desired-state changes and notifications, the
//! southbound ends equal to the desired state wherever dependencies can be met.

use super::KvScheduler;
use super::api::{Key, TxnOptions, ValueState};
use super::testing::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Change {
    PutInterface {
        name: usize,
        ring: u32,
        addresses: Vec<usize>,
        unnumbered: Option<usize>,
        host: Option<usize>,
    },
    DeleteInterface(usize),
    PutRoute {
        name: usize,
        via: usize,
    },
    DeleteRoute(usize),
    PutBridgeDomain {
        name: usize,
        members: Vec<usize>,
    },
    DeleteBridgeDomain(usize),
    HostInterface {
        name: usize,
        up: bool,
    },
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (
            0..3usize,
            0..2u32,
            proptest::collection::vec(0..2usize, 0..3),
            proptest::option::of(0..3usize),
            proptest::option::weighted(0.3, 0..2usize),
        )
            .prop_map(
                |(name, ring, addresses, unnumbered, host)| Change::PutInterface {
                    name,
                    ring,
                    addresses,
                    unnumbered,
                    host
                }
            ),
        (0..3usize).prop_map(Change::DeleteInterface),
        (0..3usize, 0..3usize).prop_map(|(name, via)| Change::PutRoute { name, via }),
        (0..3usize).prop_map(Change::DeleteRoute),
        (0..2usize, proptest::collection::vec(0..3usize, 0..3))
            .prop_map(|(name, members)| Change::PutBridgeDomain { name, members }),
        (0..2usize).prop_map(Change::DeleteBridgeDomain),
        (0..2usize, any::<bool>()).prop_map(|(name, up)| Change::HostInterface { name, up }),
    ]
}

/// The test southbound's desired contents: every wanted value with its derived values,
/// kept only where everything it needs is itself there (the least fixpoint).
fn expected(desired: &BTreeMap<Key, Value>, hosts: &BTreeMap<Key, Value>) -> BTreeMap<Key, Value> {
    let mut candidates = desired.clone();
    let mut queue: Vec<(Key, Value)> = desired.clone().into_iter().collect();
    while let Some((key, value)) = queue.pop() {
        for (child, child_value) in derived_values(&key, &value) {
            candidates.insert(child.clone(), child_value.clone());
            queue.push((child, child_value));
        }
    }
    let mut present = hosts.clone();
    loop {
        let before = present.len();
        for (key, value) in &candidates {
            let met = requirements(key, value)
                .iter()
                .all(|t| present.keys().any(|k| t.matches(k)));
            if met {
                present.insert(key.clone(), value.clone());
            }
        }
        if present.len() == before {
            return present;
        }
    }
}

async fn apply(
    scheduler: &KvScheduler,
    southbound: &Southbound,
    change: Change,
    desired: &mut BTreeMap<Key, Value>,
    hosts: &mut BTreeMap<Key, Value>,
) {
    let name = |i: usize| format!("if{i}");
    let (key, value) = match change {
        Change::PutInterface {
            name: i,
            ring,
            addresses,
            unnumbered,
            host,
        } => {
            let mut value = json!({
                "type": if host.is_some() { "afpacket" } else { "tap" },
                "rx_ring": 256 << ring,
                "addresses": addresses.iter().map(|a| format!("10.0.{i}.{a}/24")).collect::<Vec<_>>(),
            });
            if let Some(from) = unnumbered {
                value["unnumbered"] = json!(name(from));
            }
            if let Some(h) = host {
                value["host_if"] = json!(format!("eth{h}"));
            }
            (interface(&name(i)), Some(value))
        }
        Change::DeleteInterface(i) => (interface(&name(i)), None),
        Change::PutRoute { name: r, via } => (
            route(&format!("r{r}")),
            Some(json!({"interface": name(via)})),
        ),
        Change::DeleteRoute(r) => (route(&format!("r{r}")), None),
        Change::PutBridgeDomain { name: b, members } => (
            bridge_domain(&format!("bd{b}")),
            Some(json!({"interfaces": members.iter().map(|m| name(*m)).collect::<Vec<_>>()})),
        ),
        Change::DeleteBridgeDomain(b) => (bridge_domain(&format!("bd{b}")), None),
        Change::HostInterface { name: h, up } => {
            let key = host_interface(&format!("eth{h}"));
            let value = up.then(|| json!({"up": true}));
            match &value {
                Some(v) => {
                    southbound.put_behind_back(&key, v.clone());
                    hosts.insert(key.clone(), v.clone());
                }
                None => {
                    southbound.remove_behind_back(&key);
                    hosts.remove(&key);
                }
            }
            if let Err(error) = scheduler.notify(key, value).await {
                panic!("notification failed: {error}");
            }
            return;
        }
    };
    match &value {
        Some(v) => desired.insert(key.clone(), v.clone()),
        None => desired.remove(&key),
    };
    if let Err(error) = scheduler
        .transaction(vec![(key, value)], TxnOptions::default())
        .await
    {
        panic!("transaction failed: {error}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn southbound_converges_to_the_desired_state(changes in proptest::collection::vec(change(), 1..25)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (scheduler, southbound) = scheduler().await;
            let mut desired = BTreeMap::new();
            let mut hosts = BTreeMap::new();
            for change in changes {
                apply(&scheduler, &southbound, change, &mut desired, &mut hosts).await;
                assert_eq!(southbound.contents(), expected(&desired, &hosts));
                for node in scheduler.graph().await {
                    let waiting_for_nothing = node.status.state == ValueState::Pending
                        && node.dependencies.iter().all(|(_, by)| !by.is_empty());
                    assert!(!waiting_for_nothing, "{} is PENDING with its dependencies met", node.status.key);
                    assert!(node.status.error.is_none(), "{}: {:?}", node.status.key, node.status.error);
                }
            }
        });
    }
}
