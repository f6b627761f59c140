//! One test per scenario of the Ligato control flows, over the test southbound.

use super::api::{
    Operation, Resync, RetryOptions, TxnError, TxnOptions, TxnRecord, TxnType, ValueState,
};
use super::testing::*;
use serde_json::{Value, json};
use std::time::Duration;

fn put(key: String, value: Value) -> (String, Option<Value>) {
    (key, Some(value))
}

fn delete(key: String) -> (String, Option<Value>) {
    (key, None)
}

fn tap(addresses: &[&str]) -> Value {
    json!({"type": "tap", "rx_ring": 256, "addresses": addresses})
}

fn route_via(name: &str) -> Value {
    json!({"interface": name, "dst": "10.1.0.0/16"})
}

fn position(log: &[String], entry: &str) -> usize {
    log.iter()
        .position(|e| e == entry)
        .unwrap_or_else(|| panic!("{entry:?} not in {log:?}"))
}

fn failed_record(error: TxnError) -> (TxnRecord, bool) {
    match error {
        TxnError::Failed { record, reverted } => (*record, reverted),
        other => panic!("expected a failed transaction, got {other}"),
    }
}

#[tokio::test]
async fn af_packet_interface_is_pending_until_the_host_interface_is_notified() {
    let (scheduler, southbound) = scheduler().await;
    let afpacket = json!({"type": "afpacket", "rx_ring": 256, "host_if": "eth1"});
    scheduler
        .transaction(
            vec![put(interface("my-afpacket"), afpacket)],
            TxnOptions::default(),
        )
        .await
        .expect("pending is not a failure");
    let status = scheduler.status(&interface("my-afpacket")).await;
    assert_eq!(status.state, ValueState::Pending);
    assert_eq!(status.missing_dependencies[0].label, "host-interface");
    assert!(!southbound.has(&interface("my-afpacket")));

    // The administrator creates eth1; the watcher notifies it.
    southbound.put_behind_back(&host_interface("eth1"), json!({"up": true}));
    let record = scheduler
        .notify(host_interface("eth1"), Some(json!({"up": true})))
        .await
        .expect("notification");
    assert_eq!(record.txn_type, TxnType::SbNotification);
    assert_eq!(
        scheduler.status(&host_interface("eth1")).await.state,
        ValueState::Obtained
    );
    assert_eq!(
        scheduler.status(&interface("my-afpacket")).await.state,
        ValueState::Configured
    );
    assert!(southbound.has(&interface("my-afpacket")));
    let created = record
        .executed
        .iter()
        .find(|op| op.key == interface("my-afpacket"))
        .expect("created by the notification's transaction");
    assert!(created.was_pending);

    // The host interface goes away: the AF-Packet goes back to PENDING.
    southbound.remove_behind_back(&host_interface("eth1"));
    scheduler
        .notify(host_interface("eth1"), None)
        .await
        .expect("notification");
    assert_eq!(
        scheduler.status(&interface("my-afpacket")).await.state,
        ValueState::Pending
    );
    assert!(!southbound.has(&interface("my-afpacket")));
}

#[tokio::test]
async fn bridge_domain_is_created_before_its_interfaces_and_bindings_wait() {
    let (scheduler, southbound) = scheduler().await;
    scheduler
        .transaction(
            vec![put(
                bridge_domain("my-bd"),
                json!({"interfaces": ["if1", "if2"]}),
            )],
            TxnOptions::default(),
        )
        .await
        .expect("bridge domain");
    assert!(southbound.has(&bridge_domain("my-bd")));
    let binding = scheduler.status(&bd_interface("my-bd", "if1")).await;
    assert_eq!(binding.state, ValueState::Pending);
    assert_eq!(binding.derived_from, Some(bridge_domain("my-bd")));

    let record = scheduler
        .transaction(vec![put(interface("if1"), tap(&[]))], TxnOptions::default())
        .await
        .expect("interface");
    let log = southbound.take_log();
    assert!(
        position(&log, "create vpp/interface/if1")
            < position(&log, "create vpp/bd-interface/my-bd/if1")
    );
    assert!(
        record
            .executed
            .iter()
            .any(|op| op.key == bd_interface("my-bd", "if1") && op.derived)
    );
    assert_eq!(
        scheduler.status(&bd_interface("my-bd", "if1")).await.state,
        ValueState::Configured
    );
    assert_eq!(
        scheduler.status(&bd_interface("my-bd", "if2")).await.state,
        ValueState::Pending
    );

    // Removing the interface breaks only its binding; the bridge domain stays.
    scheduler
        .transaction(vec![delete(interface("if1"))], TxnOptions::default())
        .await
        .expect("delete interface");
    assert_eq!(
        southbound.take_log(),
        vec![
            "delete vpp/bd-interface/my-bd/if1",
            "delete vpp/interface/if1"
        ]
    );
    assert!(southbound.has(&bridge_domain("my-bd")));
    assert_eq!(
        scheduler.status(&bd_interface("my-bd", "if1")).await.state,
        ValueState::Pending
    );

    // Removing the bridge domain removes its derived bindings with it.
    scheduler
        .transaction(vec![delete(bridge_domain("my-bd"))], TxnOptions::default())
        .await
        .expect("delete bridge domain");
    assert_eq!(
        scheduler.status(&bd_interface("my-bd", "if2")).await.state,
        ValueState::Nonexistent
    );
    assert!(southbound.contents().is_empty());
}

#[tokio::test]
async fn interface_recreation_removes_and_restores_its_route() {
    let (scheduler, southbound) = scheduler().await;
    scheduler
        .transaction(
            vec![
                put(interface("my-tap"), tap(&["10.0.0.1/24"])),
                put(route("my-route"), route_via("my-tap")),
            ],
            TxnOptions::default(),
        )
        .await
        .expect("interface and route");
    southbound.take_log();

    let bigger_ring = json!({"type": "tap", "rx_ring": 1024, "addresses": ["10.0.0.1/24"]});
    let record = scheduler
        .transaction(
            vec![put(interface("my-tap"), bigger_ring.clone())],
            TxnOptions::default(),
        )
        .await
        .expect("re-creation");
    assert_eq!(
        southbound.take_log(),
        // Ligato's order: a value removed takes its derived values, then its dependants;
        // a value created brings its dependants, then its derived values.
        vec![
            "delete vpp/interface/address/my-tap/10.0.0.1/24",
            "delete vpp/route/my-route",
            "delete vpp/interface/my-tap",
            "create vpp/interface/my-tap",
            "create vpp/route/my-route",
            "create vpp/interface/address/my-tap/10.0.0.1/24",
        ]
    );
    let route_ops: Vec<_> = record
        .executed
        .iter()
        .filter(|op| op.key == route("my-route"))
        .map(|op| (op.operation, op.new_state))
        .collect();
    assert_eq!(
        route_ops,
        vec![
            (Operation::Delete, ValueState::Pending),
            (Operation::Create, ValueState::Configured)
        ]
    );
    assert!(
        record
            .executed
            .iter()
            .any(|op| op.operation == Operation::Recreate)
    );
    assert_eq!(record.planned.len(), record.executed.len());
    assert_eq!(southbound.contents()[&interface("my-tap")], bigger_ring);
    assert_eq!(
        scheduler.status(&route("my-route")).await.state,
        ValueState::Configured
    );
}

#[tokio::test(start_paused = true)]
async fn failed_create_is_retried_with_backoff() {
    let (scheduler, southbound) = scheduler().await;
    let mut records = scheduler.subscribe();
    southbound.fail_next(&interface("my-tap"), 2, true);
    let retry = RetryOptions {
        period: Duration::from_secs(1),
        max_attempts: 3,
        exponential_backoff: true,
    };
    let error = scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::best_effort(Some(retry)),
        )
        .await
        .expect_err("the create fails");
    let (record, reverted) = failed_record(error);
    assert!(!reverted);
    assert_eq!(record.failures()[0].0, interface("my-tap"));
    let status = scheduler.status(&interface("my-tap")).await;
    assert_eq!(status.state, ValueState::Retrying);
    assert!(
        status
            .error
            .as_deref()
            .is_some_and(|e| e.contains("injected"))
    );
    assert_eq!(records.recv().await.expect("first record").seq, record.seq);

    // Not before the period.
    tokio::time::advance(Duration::from_millis(999)).await;
    assert!(records.try_recv().is_err());
    let first_retry = records.recv().await.expect("first retry");
    assert_eq!(first_retry.txn_type, TxnType::RetryFailedOps);
    assert!(first_retry.executed[0].error.is_some());
    // The second retry waits twice as long, then succeeds.
    tokio::time::advance(Duration::from_millis(1999)).await;
    assert!(records.try_recv().is_err());
    let second_retry = records.recv().await.expect("second retry");
    assert_eq!(second_retry.txn_type, TxnType::RetryFailedOps);
    assert_eq!(second_retry.executed[0].error, None);
    assert!(southbound.has(&interface("my-tap")));
    assert_eq!(
        scheduler.status(&interface("my-tap")).await.state,
        ValueState::Configured
    );
    let states: Vec<_> = scheduler
        .timeline(&interface("my-tap"))
        .await
        .iter()
        .map(|e| e.new_state)
        .collect();
    assert_eq!(
        states,
        vec![
            ValueState::Retrying,
            ValueState::Retrying,
            ValueState::Configured
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn non_retriable_failure_stays_failed() {
    let (scheduler, southbound) = scheduler().await;
    southbound.fail_next(&interface("my-tap"), 1, false);
    scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::default(),
        )
        .await
        .expect_err("the create fails");
    assert_eq!(
        scheduler.status(&interface("my-tap")).await.state,
        ValueState::Failed
    );
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(scheduler.history().await.len(), 1, "no retry was scheduled");
}

#[tokio::test]
async fn revert_mode_undoes_the_interface_when_the_route_fails() {
    let (scheduler, southbound) = scheduler().await;
    southbound.fail_next(&route("my-route"), 1, true);
    let error = scheduler
        .transaction(
            vec![
                put(interface("my-tap"), tap(&["10.0.0.1/24"])),
                put(route("my-route"), route_via("my-tap")),
            ],
            TxnOptions::revert(),
        )
        .await
        .expect_err("the route fails");
    assert!(error.to_string().contains("reverted"), "{error}");
    let (record, reverted) = failed_record(error);
    assert!(reverted);
    assert!(
        southbound.contents().is_empty(),
        "no visible effect remains"
    );
    let reverts: Vec<_> = record
        .executed
        .iter()
        .filter(|op| op.is_revert)
        .map(|op| (op.key.clone(), op.operation))
        .collect();
    assert_eq!(
        reverts,
        // Newest first, as Ligato: the failed route (never created: no southbound call),
        // then the interface with its address.
        vec![
            (route("my-route"), Operation::Delete),
            (address("my-tap", "10.0.0.1/24"), Operation::Delete),
            (interface("my-tap"), Operation::Delete)
        ]
    );
    assert_eq!(
        scheduler.status(&interface("my-tap")).await.state,
        ValueState::Nonexistent
    );
}

#[tokio::test]
async fn unnumbered_interface_borrows_an_address_once_one_exists() {
    let (scheduler, southbound) = scheduler().await;
    let unnumbered_tap = json!({"type": "tap", "rx_ring": 256, "unnumbered": "lender"});
    scheduler
        .transaction(
            vec![
                put(interface("borrower"), unnumbered_tap),
                put(interface("lender"), tap(&[])),
            ],
            TxnOptions::default(),
        )
        .await
        .expect("interfaces");
    assert!(southbound.has(&interface("borrower")), "exists in L2 mode");
    let binding = scheduler.status(&unnumbered("borrower")).await;
    assert_eq!(binding.state, ValueState::Pending);
    assert_eq!(binding.missing_dependencies[0].label, "borrowed-ip");

    scheduler
        .transaction(
            vec![put(interface("lender"), tap(&["10.0.0.1/24"]))],
            TxnOptions::default(),
        )
        .await
        .expect("address added");
    assert!(southbound.has(&unnumbered("borrower")));

    // A second address then removing the first: still satisfied by any of them.
    scheduler
        .transaction(
            vec![put(
                interface("lender"),
                tap(&["10.0.0.1/24", "10.0.0.2/24"]),
            )],
            TxnOptions::default(),
        )
        .await
        .expect("second address");
    scheduler
        .transaction(
            vec![put(interface("lender"), tap(&["10.0.0.2/24"]))],
            TxnOptions::default(),
        )
        .await
        .expect("first address removed");
    assert!(southbound.has(&unnumbered("borrower")));

    southbound.take_log();
    scheduler
        .transaction(
            vec![put(interface("lender"), tap(&[]))],
            TxnOptions::default(),
        )
        .await
        .expect("last address removed");
    assert_eq!(
        southbound.take_log(),
        vec![
            "delete vpp/unnumbered/borrower",
            "delete vpp/interface/address/lender/10.0.0.2/24",
            "update vpp/interface/lender"
        ]
    );
    assert!(
        southbound.has(&interface("borrower")),
        "back to L2, not removed"
    );
    assert_eq!(
        scheduler.status(&unnumbered("borrower")).await.state,
        ValueState::Pending
    );
}

#[tokio::test]
async fn route_waits_for_its_interface() {
    let (scheduler, southbound) = scheduler().await;
    scheduler
        .transaction(
            vec![put(route("my-route"), route_via("my-tap"))],
            TxnOptions::default(),
        )
        .await
        .expect("route");
    let status = scheduler.status(&route("my-route")).await;
    assert_eq!(status.state, ValueState::Pending);
    assert_eq!(status.missing_dependencies[0].label, "outgoing-interface");

    let record = scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::default(),
        )
        .await
        .expect("interface");
    assert_eq!(
        southbound.take_log(),
        vec!["create vpp/interface/my-tap", "create vpp/route/my-route"]
    );
    let keys: Vec<_> = record.planned.iter().map(|op| op.key.clone()).collect();
    assert_eq!(
        keys,
        vec![interface("my-tap"), route("my-route")],
        "planned as executed"
    );
    assert_eq!(
        scheduler.status(&route("my-route")).await.state,
        ValueState::Configured
    );
}

#[tokio::test]
async fn invalid_and_unimplemented_values_are_reported_not_applied() {
    let (scheduler, southbound) = scheduler().await;
    let error = scheduler
        .transaction(
            vec![
                put(route("bad"), json!({"dst": "0.0.0.0/0"})),
                put("acl/web".to_owned(), json!({"allow": true})),
            ],
            TxnOptions::default(),
        )
        .await
        .expect_err("invalid route");
    assert!(
        error
            .to_string()
            .contains("route has no outgoing interface"),
        "{error}"
    );
    let invalid = scheduler.status(&route("bad")).await;
    assert_eq!(invalid.state, ValueState::Invalid);
    assert_eq!(invalid.invalid.expect("details").fields, vec!["interface"]);
    assert_eq!(
        scheduler.status("acl/web").await.state,
        ValueState::Unimplemented
    );
    assert!(southbound.contents().is_empty());
}

#[tokio::test]
async fn resync_heals_drift_and_keeps_obtained_values() {
    let (scheduler, southbound) = scheduler().await;
    southbound.put_behind_back(&host_interface("eth1"), json!({"up": true}));
    scheduler
        .notify(host_interface("eth1"), Some(json!({"up": true})))
        .await
        .expect("notification");
    scheduler
        .transaction(
            vec![
                put(interface("my-tap"), tap(&["10.0.0.1/24"])),
                put(route("my-route"), route_via("my-tap")),
            ],
            TxnOptions::default(),
        )
        .await
        .expect("configuration");
    let configured = southbound.contents();

    // Drift: a route removed and a stale value left behind the scheduler's back.
    southbound.remove_behind_back(&route("my-route"));
    southbound.put_behind_back(&route("stale"), route_via("my-tap"));
    let missing: Vec<_> = scheduler
        .dump()
        .await
        .retrieved
        .into_iter()
        .filter(|s| s.state == ValueState::Missing)
        .map(|s| s.key)
        .collect();
    assert_eq!(missing, vec![route("my-route")]);

    let record = scheduler
        .resync(super::api::Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(record.txn_type, TxnType::DownstreamResync);
    assert_eq!(southbound.contents(), configured);
    assert_eq!(
        scheduler.status(&host_interface("eth1")).await.state,
        ValueState::Obtained
    );

    // A full resync with a smaller desired state removes the rest, but never obtained values.
    scheduler
        .resync(Resync::Full(vec![(interface("my-tap"), tap(&[]))]))
        .await
        .expect("full resync");
    let keys: Vec<_> = southbound.contents().into_keys().collect();
    assert_eq!(keys, vec![host_interface("eth1"), interface("my-tap")]);
    let dump = scheduler.dump().await;
    assert_eq!(dump.desired, vec![(interface("my-tap"), tap(&[]))]);
}

#[tokio::test]
async fn northbound_cannot_change_obtained_values_nor_notify_managed_ones() {
    let (scheduler, _southbound) = scheduler().await;
    scheduler
        .notify(host_interface("eth1"), Some(json!({})))
        .await
        .expect("notification");
    let error = scheduler
        .transaction(vec![delete(host_interface("eth1"))], TxnOptions::default())
        .await
        .expect_err("obtained");
    assert!(matches!(error, TxnError::ObtainedKey(_)));
    scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::default(),
        )
        .await
        .expect("interface");
    let error = scheduler
        .notify(interface("my-tap"), None)
        .await
        .expect_err("managed");
    assert!(matches!(error, TxnError::ManagedKey(_)));
}

/// A descriptor that records which version handled which call.
struct Versioned {
    version: u32,
    calls: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Versioned {
    fn record(&self, call: &str, key: &str) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(format!("v{} {call} {key}", self.version));
        }
    }
}

#[async_trait::async_trait]
impl super::api::Descriptor for Versioned {
    fn name(&self) -> &str {
        "acl"
    }
    fn key_prefix(&self) -> &str {
        "acl/"
    }
    async fn create(
        &self,
        key: &str,
        _value: &Value,
    ) -> Result<super::api::Metadata, super::api::DescriptorError> {
        self.record("create", key);
        Ok(None)
    }
    async fn update(
        &self,
        key: &str,
        _old: &Value,
        _new: &Value,
        _metadata: &super::api::Metadata,
    ) -> Result<super::api::Metadata, super::api::DescriptorError> {
        self.record("update", key);
        Ok(None)
    }
    async fn delete(
        &self,
        key: &str,
        _value: &Value,
        _metadata: &super::api::Metadata,
    ) -> Result<(), super::api::DescriptorError> {
        self.record("delete", key);
        Ok(())
    }
}

#[tokio::test]
async fn a_late_descriptor_applies_unimplemented_values_and_a_new_version_takes_over() {
    let scheduler = super::KvScheduler::new();
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    scheduler
        .transaction(
            vec![put("acl/web".to_owned(), json!({"allow": 80}))],
            TxnOptions::default(),
        )
        .await
        .expect("no descriptor is not an error of the transaction");
    assert_eq!(
        scheduler.status("acl/web").await.state,
        ValueState::Unimplemented
    );
    let version = |version| {
        std::sync::Arc::new(Versioned {
            version,
            calls: calls.clone(),
        })
    };
    scheduler.register_descriptor(version(1)).await;
    scheduler
        .transaction(Vec::new(), TxnOptions::default())
        .await
        .expect("next transaction");
    assert_eq!(
        scheduler.status("acl/web").await.state,
        ValueState::Configured
    );
    scheduler.register_descriptor(version(2)).await;
    scheduler
        .transaction(
            vec![put("acl/web".to_owned(), json!({"allow": 443}))],
            TxnOptions::default(),
        )
        .await
        .expect("update");
    let calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls, vec!["v1 create acl/web", "v2 update acl/web"]);
}

#[tokio::test(start_paused = true)]
async fn a_newer_change_supersedes_a_scheduled_retry() {
    let (scheduler, southbound) = scheduler().await;
    let mut records = scheduler.subscribe();
    southbound.fail_next(&interface("my-tap"), 2, true);
    scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::default(),
        )
        .await
        .expect_err("the first create fails");
    tokio::time::advance(Duration::from_millis(500)).await;
    let changed = json!({"type": "tap", "rx_ring": 512, "addresses": []});
    scheduler
        .transaction(
            vec![put(interface("my-tap"), changed.clone())],
            TxnOptions::default(),
        )
        .await
        .expect_err("the changed value fails too, and schedules its own retry");
    for _ in 0..2 {
        records.recv().await.expect("the two transactions");
    }
    let stale = records.recv().await.expect("the first timer fires");
    assert_eq!(stale.txn_type, TxnType::RetryFailedOps);
    assert!(stale.executed.is_empty(), "{:?}", stale.executed);
    let retry = records.recv().await.expect("the second timer fires");
    assert_eq!(retry.executed.len(), 1);
    assert_eq!(retry.executed[0].error, None);
    assert_eq!(southbound.contents()[&interface("my-tap")], changed);
}
