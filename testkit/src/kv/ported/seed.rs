//! The project's own scenarios, beside Ligato's: what the seed's hand-written tests of the
//! scheduler asserted (a route waiting for its interface, bridge-domain bindings, an
//! interface re-created around its route, an unnumbered interface borrowing any address,
//! revert of new values, INVALID and UNIMPLEMENTED values, obtained and managed keys,
//! retries with backoff, superseded and refused, drift healed by a downstream resync,
//! descriptors registered late or replaced), on the same mock descriptor.

use crate::kv::args::{MockDescArgs, array, string};
use crate::kv::record::TxnExpect;
use crate::kv::scenario::Action;
use crate::kv::scenario::{
    Scenario, Step, notify, plan_error, register, resync, sb_set, txn, txn_backoff, txn_retry,
    txn_revert, wait,
};
use reactor_host::kvscheduler::TxnType::{
    DownstreamResync, NbTransaction, RetryFailedOps, SbNotification,
};
use reactor_host::kvscheduler::ValueState::*;
use serde_json::json;
use std::time::Duration;

const TAP0: &str = "/interface/tap0";
const TAP0_ADDR: &str = "/interface/tap0/addr1";
const IF1: &str = "/interface/if1";
const IF2: &str = "/interface/if2";
const BORROWER: &str = "/interface/borrower";
const UNNUMBERED: &str = "/interface/borrower/unnumbered";
const LENDER: &str = "/interface/lender";
const LENDER_IP1: &str = "/interface/lender/ip1";
const LENDER_IP2: &str = "/interface/lender/ip2";
const BUSY0: &str = "/interface/busy0";
const DEAD0: &str = "/interface/dead0";
const R1: &str = "/route/r1";
const STALE: &str = "/route/stale";
const BAD: &str = "/route/bad";
const BD1: &str = "/bd/bd1";
const BD1_IF1: &str = "/bd/bd1/if1";
const BD1_IF2: &str = "/bd/bd1/if2";
const ETH1: &str = "/host/eth1";
const WEB: &str = "/acl/web";

const BUSY: &str = "device busy";
const FATAL: &str = "fatal error";

pub fn all() -> Vec<Scenario> {
    vec![
        dependant_waits_for_its_dependency(),
        derived_value_waits_for_another_value(),
        recreated_value_takes_its_dependant_down_and_back(),
        any_of_dependency_loses_its_last_match(),
        revert_of_new_values(),
        invalid_and_unimplemented_values(),
        obtained_and_managed_keys_are_refused(),
        failed_create_retried_with_backoff(),
        non_retriable_failure_stays_failed(),
        newer_change_supersedes_a_scheduled_retry(),
        downstream_resync_heals_drift(),
        descriptor_registered_late_then_replaced(),
    ]
}

/// Interfaces: `{"items": [addresses]}` derive `INTERFACE/ADDRESS`.
fn interfaces() -> MockDescArgs {
    MockDescArgs::new("interface", "/interface/").derived()
}

/// Routes: r1 goes out through tap0.
fn routes() -> MockDescArgs {
    MockDescArgs::new("route", "/route/").depends(R1, &[TAP0])
}

/// Interfaces of the southbound (Linux host interfaces), never configured by the scheduler.
fn host_interfaces() -> MockDescArgs {
    MockDescArgs::new("host-interface", "/host/")
}

fn route_via_tap0() -> serde_json::Value {
    json!({"interface": "tap0", "dst": "10.1.0.0/16"})
}

fn tap0_with_address() -> serde_json::Value {
    array(&["addr1"])
}

fn dependant_waits_for_its_dependency() -> Scenario {
    Scenario {
        name: "dependant_waits_for_its_dependency",
        ligato: "none (the seed's route waiting for its interface)",
        descriptors: vec![interfaces(), routes()],
        steps: vec![
            Step::new(
                "a route alone waits for its interface",
                txn(vec![(R1, Some(route_via_tap0()))]),
            )
            .ops(&[])
            .southbound(vec![])
            .states(&[(R1, Pending)])
            .waiting(R1, &[TAP0])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[&format!("create {R1} NONEXISTENT->PENDING noop")],
                )
                .as_planned(),
            ]),
            Step::new(
                "the interface comes: created, then the route that waited, then its address",
                txn(vec![(TAP0, Some(tap0_with_address()))]),
            )
            .ops(&[
                &format!("create {TAP0}"),
                &format!("create {R1}"),
                &format!("create {TAP0_ADDR}"),
            ])
            .southbound(vec![
                (TAP0, tap0_with_address()),
                (TAP0_ADDR, string("addr1")),
                (R1, route_via_tap0()),
            ])
            .states(&[
                (TAP0, Configured),
                (TAP0_ADDR, Configured),
                (R1, Configured),
            ])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("create {TAP0} NONEXISTENT->CONFIGURED"),
                        &format!("create {R1} PENDING->CONFIGURED"),
                        &format!("create {TAP0_ADDR} NONEXISTENT->CONFIGURED derived"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "a change the route can take in place is an update",
                txn(vec![(
                    R1,
                    Some(json!({"interface": "tap0", "dst": "10.2.0.0/16"})),
                )]),
            )
            .ops(&[&format!("update {R1}")]),
            Step::new(
                "removing the interface takes its address, then the route (back to PENDING), \
                 then itself",
                txn(vec![(TAP0, None)]),
            )
            .ops(&[
                &format!("delete {TAP0_ADDR}"),
                &format!("delete {R1}"),
                &format!("delete {TAP0}"),
            ])
            .southbound(vec![])
            .states(&[(R1, Pending), (TAP0, Nonexistent), (TAP0_ADDR, Nonexistent)])
            .waiting(R1, &[TAP0]),
        ],
    }
}

fn derived_value_waits_for_another_value() -> Scenario {
    Scenario {
        name: "derived_value_waits_for_another_value",
        ligato: "none (the seed's bridge domain and its interface bindings)",
        descriptors: vec![
            MockDescArgs::new("interface", "/interface/"),
            MockDescArgs::new("bridge-domain", "/bd/")
                .derived()
                .depends(BD1_IF1, &[IF1])
                .depends(BD1_IF2, &[IF2]),
        ],
        steps: vec![
            Step::new(
                "a bridge domain is created before its interfaces; each binding waits",
                txn(vec![(BD1, Some(array(&["if1", "if2"])))]),
            )
            .ops(&[&format!("create {BD1}")])
            .states(&[(BD1, Configured), (BD1_IF1, Pending), (BD1_IF2, Pending)])
            .waiting(BD1_IF1, &[IF1])
            .derived_from(BD1_IF1, BD1),
            Step::new(
                "interface if1 comes: its binding follows it",
                txn(vec![(IF1, Some(string("tap")))]),
            )
            .ops(&[&format!("create {IF1}"), &format!("create {BD1_IF1}")])
            .states(&[(BD1_IF1, Configured), (BD1_IF2, Pending)])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("create {IF1} NONEXISTENT->CONFIGURED"),
                        &format!("create {BD1_IF1} PENDING->CONFIGURED derived"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "removing if1 breaks only its binding; the bridge domain stays",
                txn(vec![(IF1, None)]),
            )
            .ops(&[&format!("delete {BD1_IF1}"), &format!("delete {IF1}")])
            .southbound(vec![(BD1, array(&["if1", "if2"]))])
            .states(&[(BD1, Configured), (BD1_IF1, Pending)]),
            Step::new("interface if2 comes", txn(vec![(IF2, Some(string("tap")))]))
                .ops(&[&format!("create {IF2}"), &format!("create {BD1_IF2}")])
                .states(&[(BD1_IF2, Configured)]),
            Step::new(
                "removing the bridge domain removes its bindings with it",
                txn(vec![(BD1, None)]),
            )
            .ops(&[&format!("delete {BD1_IF2}"), &format!("delete {BD1}")])
            .southbound(vec![(IF2, string("tap"))])
            .states(&[
                (BD1_IF1, Nonexistent),
                (BD1_IF2, Nonexistent),
                (IF2, Configured),
            ]),
        ],
    }
}

fn recreated_value_takes_its_dependant_down_and_back() -> Scenario {
    let bigger_ring = json!({"items": ["addr1"], "rx_ring": 1024});
    Scenario {
        name: "recreated_value_takes_its_dependant_down_and_back",
        ligato: "none (the seed's interface re-created around its route)",
        descriptors: vec![interfaces().recreate(TAP0), routes()],
        steps: vec![
            Step::new(
                "an interface with an address, and a route through it",
                txn(vec![
                    (TAP0, Some(tap0_with_address())),
                    (R1, Some(route_via_tap0())),
                ]),
            )
            .states(&[(TAP0, Configured), (R1, Configured)]),
            Step::new(
                "a change the interface cannot take in place: its address and the route go, \
                 it is re-created, the route and the address come back",
                txn(vec![(TAP0, Some(bigger_ring.clone()))]),
            )
            .ops(&[
                &format!("delete {TAP0_ADDR}"),
                &format!("delete {R1}"),
                &format!("delete {TAP0}"),
                &format!("create {TAP0}"),
                &format!("create {R1}"),
                &format!("create {TAP0_ADDR}"),
            ])
            .southbound(vec![
                (TAP0, bigger_ring),
                (TAP0_ADDR, string("addr1")),
                (R1, route_via_tap0()),
            ])
            .states(&[(TAP0, Configured), (R1, Configured)])
            .timeline(R1, &[Configured, Pending, Configured])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("delete {TAP0_ADDR} CONFIGURED->REMOVED derived recreate"),
                        &format!("delete {R1} CONFIGURED->PENDING"),
                        &format!("delete {TAP0} CONFIGURED->REMOVED recreate"),
                        &format!("create {TAP0} REMOVED->CONFIGURED recreate"),
                        &format!("create {R1} PENDING->CONFIGURED"),
                        &format!("create {TAP0_ADDR} NONEXISTENT->CONFIGURED derived recreate"),
                    ],
                )
                .as_planned(),
            ]),
        ],
    }
}

fn any_of_dependency_loses_its_last_match() -> Scenario {
    Scenario {
        name: "any_of_dependency_loses_its_last_match",
        ligato: "none (the seed's unnumbered interface borrowing an address)",
        descriptors: vec![interfaces().depends_any_of(
            UNNUMBERED,
            "borrowed-ip",
            "/interface/lender/",
        )],
        steps: vec![
            Step::new(
                "an unnumbered interface exists (L2) and its binding waits for any address \
                 of the lender",
                txn(vec![
                    (BORROWER, Some(array(&["unnumbered"]))),
                    (LENDER, Some(array(&[]))),
                ]),
            )
            .southbound(vec![
                (BORROWER, array(&["unnumbered"])),
                (LENDER, array(&[])),
            ])
            .states(&[(BORROWER, Configured), (UNNUMBERED, Pending)])
            .waiting(UNNUMBERED, &["borrowed-ip"]),
            Step::new(
                "the lender gets an address: the binding is created",
                txn(vec![(LENDER, Some(array(&["ip1"])))]),
            )
            .ops(&[
                &format!("update {LENDER}"),
                &format!("create {LENDER_IP1}"),
                &format!("create {UNNUMBERED}"),
            ])
            .states(&[(UNNUMBERED, Configured)]),
            Step::new(
                "a second address",
                txn(vec![(LENDER, Some(array(&["ip1", "ip2"])))]),
            )
            .ops(&[&format!("update {LENDER}"), &format!("create {LENDER_IP2}")]),
            Step::new(
                "the first address goes: any other will do, the binding stays",
                txn(vec![(LENDER, Some(array(&["ip2"])))]),
            )
            .ops(&[&format!("delete {LENDER_IP1}"), &format!("update {LENDER}")])
            .states(&[(UNNUMBERED, Configured)]),
            Step::new(
                "the last address goes: the binding goes first and waits again; the \
                 interface stays (L2)",
                txn(vec![(LENDER, Some(array(&[])))]),
            )
            .ops(&[
                &format!("delete {UNNUMBERED}"),
                &format!("delete {LENDER_IP2}"),
                &format!("update {LENDER}"),
            ])
            .southbound(vec![
                (BORROWER, array(&["unnumbered"])),
                (LENDER, array(&[])),
            ])
            .states(&[(BORROWER, Configured), (UNNUMBERED, Pending)])
            .waiting(UNNUMBERED, &["borrowed-ip"]),
        ],
    }
}

fn revert_of_new_values() -> Scenario {
    let values = || {
        vec![
            (TAP0, Some(tap0_with_address())),
            (R1, Some(route_via_tap0())),
        ]
    };
    Scenario {
        name: "revert_of_new_values",
        ligato: "none (the seed's failed route reverting its new interface)",
        descriptors: vec![interfaces(), routes()],
        steps: vec![
            Step::new(
                "the route's create will fail",
                plan_error(R1, Some("failed to add route"), None),
            ),
            Step::new(
                "a transaction in revert mode: the route fails, the interface and its \
                 address are removed again, newest first; nothing remains",
                txn_revert(values()),
            )
            .failed(&[R1])
            .reverted()
            .ops(&[
                &format!("create {TAP0}"),
                &format!("create {TAP0_ADDR}"),
                &format!("create {R1} !"),
                "retrieve route",
                &format!("delete {TAP0_ADDR}"),
                &format!("delete {TAP0}"),
            ])
            .southbound(vec![])
            .states(&[
                (TAP0, Nonexistent),
                (TAP0_ADDR, Nonexistent),
                (R1, Nonexistent),
            ]),
            Step::new(
                "the failure was once: the same transaction goes through",
                txn_revert(values()),
            )
            .southbound(vec![
                (TAP0, tap0_with_address()),
                (TAP0_ADDR, string("addr1")),
                (R1, route_via_tap0()),
            ]),
        ],
    }
}

fn invalid_and_unimplemented_values() -> Scenario {
    let bad = json!({"dst": "0.0.0.0/0"});
    Scenario {
        name: "invalid_and_unimplemented_values",
        ligato: "none (the seed's invalid route and a value no descriptor handles)",
        descriptors: vec![routes().invalid(BAD, bad.clone())],
        steps: vec![
            Step::new(
                "a value the descriptor refuses is INVALID, one no descriptor handles is \
             UNIMPLEMENTED; neither reaches the southbound",
                txn(vec![(BAD, Some(bad)), (WEB, Some(json!({"allow": 80})))]),
            )
            .failed(&[BAD])
            .ops(&["retrieve route"])
            .southbound(vec![])
            .states(&[(BAD, Invalid), (WEB, Unimplemented)])
            .invalid(BAD, "invalid value"),
        ],
    }
}

fn obtained_and_managed_keys_are_refused() -> Scenario {
    Scenario {
        name: "obtained_and_managed_keys_are_refused",
        ligato: "none (the seed's northbound against obtained values, notifications of managed ones)",
        descriptors: vec![host_interfaces(), interfaces()],
        steps: vec![
            Step::new(
                "eth1 appears on the host",
                sb_set(ETH1, Some(string("up")), true),
            ),
            Step::new("eth1 is notified", notify(ETH1, Some(string("up"))))
                .states(&[(ETH1, Obtained)])
                .records(vec![TxnExpect::new(
                    SbNotification,
                    &[&format!("create {ETH1} NONEXISTENT->OBTAINED")],
                )]),
            Step::new(
                "the northbound cannot remove an obtained value: it alone is refused, the \
                 rest of the transaction (an interface the scheduler manages) is applied",
                txn(vec![(ETH1, None), (TAP0, Some(array(&[])))]),
            )
            .failed(&[ETH1])
            .ops(&[&format!("create {TAP0}")])
            .southbound(vec![(ETH1, string("up")), (TAP0, array(&[]))])
            .states(&[(ETH1, Obtained), (TAP0, Configured)])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!(
                            "delete {ETH1} OBTAINED->OBTAINED noop ! {ETH1} is obtained from \
                             the southbound: a transaction cannot change it"
                        ),
                        &format!("create {TAP0} NONEXISTENT->CONFIGURED"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "the southbound cannot notify a managed value away",
                notify(TAP0, None),
            )
            .refused(&[TAP0])
            .ops(&[])
            .states(&[(TAP0, Configured)])
            .records(vec![]),
        ],
    }
}

fn failed_create_retried_with_backoff() -> Scenario {
    Scenario {
        name: "failed_create_retried_with_backoff",
        ligato: "none (the seed's failed create retried with exponential backoff)",
        descriptors: vec![interfaces()],
        steps: vec![
            Step::new(
                "the device is busy twice",
                plan_error(TAP0, Some(BUSY), None),
            ),
            Step::new(
                "the device is busy twice (2)",
                plan_error(TAP0, Some(BUSY), None),
            ),
            Step::new(
                "the create fails and is RETRYING with its error",
                txn_backoff(vec![(TAP0, Some(array(&[])))], Duration::from_secs(1), 3),
            )
            .failed(&[TAP0])
            .ops(&[&format!("create {TAP0} !"), "retrieve interface"])
            .states(&[(TAP0, Retrying)])
            .error(TAP0, BUSY)
            .records(vec![TxnExpect::new(
                NbTransaction,
                &[&format!("create {TAP0} NONEXISTENT->RETRYING ! {BUSY}")],
            )]),
            Step::new(
                "not retried before the period",
                wait(Duration::from_millis(999)),
            )
            .controlled_time()
            .ops(&[])
            .records(vec![]),
            Step::new(
                "the first retry, after the period (within a millisecond), fails again",
                wait(Duration::from_millis(2)),
            )
            .controlled_time()
            .ops(&[&format!("create {TAP0} !"), "retrieve interface"])
            .records(vec![TxnExpect::new(
                RetryFailedOps,
                &[&format!("create {TAP0} RETRYING->RETRYING retry ! {BUSY}")],
            )]),
            Step::new(
                "the second retry waits twice as long",
                wait(Duration::from_millis(1998)),
            )
            .controlled_time()
            .ops(&[])
            .records(vec![]),
            Step::new(
                "the second retry (within a millisecond) succeeds",
                wait(Duration::from_millis(2)),
            )
            .controlled_time()
            .ops(&[&format!("create {TAP0}")])
            .records(vec![TxnExpect::new(
                RetryFailedOps,
                &[&format!("create {TAP0} RETRYING->CONFIGURED retry")],
            )]),
            Step::new(
                "in the end the interface is configured",
                wait(Duration::from_secs(5)),
            )
            .southbound(vec![(TAP0, array(&[]))])
            .states(&[(TAP0, Configured)])
            .timeline(TAP0, &[Retrying, Retrying, Configured]),
        ],
    }
}

fn non_retriable_failure_stays_failed() -> Scenario {
    Scenario {
        name: "non_retriable_failure_stays_failed",
        ligato: "none (the seed's fatal failure not retried)",
        descriptors: vec![interfaces().non_retriable(FATAL)],
        steps: vec![
            Step::new(
                "busy0's device is busy once",
                plan_error(BUSY0, Some(BUSY), None),
            ),
            Step::new(
                "dead0's device fails for good",
                plan_error(DEAD0, Some(FATAL), None),
            ),
            Step::new(
                "both creates fail: busy0 is RETRYING, dead0 FAILED",
                txn_retry(
                    vec![(BUSY0, Some(array(&[]))), (DEAD0, Some(array(&[])))],
                    Duration::from_secs(1),
                    3,
                ),
            )
            .failed(&[BUSY0, DEAD0])
            .states(&[(BUSY0, Retrying), (DEAD0, Failed)])
            .error(DEAD0, FATAL),
            Step::new("the retry is of busy0 only", wait(Duration::from_secs(2)))
                .ops(&[&format!("create {BUSY0}")])
                .southbound(vec![(BUSY0, array(&[]))])
                .states(&[(BUSY0, Configured), (DEAD0, Failed)])
                .records(vec![TxnExpect::new(
                    RetryFailedOps,
                    &[&format!("create {BUSY0} RETRYING->CONFIGURED retry")],
                )]),
            Step::new("dead0 is never retried", wait(Duration::from_secs(3600)))
                .controlled_time()
                .ops(&[])
                .states(&[(DEAD0, Failed)])
                .records(vec![]),
        ],
    }
}

fn newer_change_supersedes_a_scheduled_retry() -> Scenario {
    let retried = |value: &'static str| {
        txn_retry(vec![(TAP0, Some(string(value)))], Duration::from_secs(1), 3)
    };
    Scenario {
        name: "newer_change_supersedes_a_scheduled_retry",
        ligato: "none (the seed's retry superseded by a newer change)",
        descriptors: vec![interfaces()],
        steps: vec![
            Step::new(
                "the device is busy twice",
                plan_error(TAP0, Some(BUSY), None),
            ),
            Step::new(
                "the device is busy twice (2)",
                plan_error(TAP0, Some(BUSY), None),
            ),
            Step::new(
                "the first value fails, a retry is due in a second",
                retried("v1"),
            )
            .failed(&[TAP0]),
            Step::new("half a second", wait(Duration::from_millis(500)))
                .controlled_time()
                .records(vec![]),
            Step::new(
                "a newer value fails too and schedules its own retry",
                retried("v2"),
            )
            .failed(&[TAP0])
            .ops(&[&format!("create {TAP0} !"), "retrieve interface"]),
            Step::new(
                "the first retry is due: the value it was for is superseded, it does nothing",
                wait(Duration::from_millis(501)),
            )
            .controlled_time()
            .ops(&[])
            .records(vec![TxnExpect::new(RetryFailedOps, &[])]),
            Step::new(
                "the newer retry applies the newer value",
                wait(Duration::from_millis(500)),
            )
            .controlled_time()
            .ops(&[&format!("create {TAP0}")])
            .records(vec![TxnExpect::new(
                RetryFailedOps,
                &[&format!("create {TAP0} RETRYING->CONFIGURED retry")],
            )]),
            Step::new(
                "in the end the newer value is configured",
                wait(Duration::from_secs(3)),
            )
            .southbound(vec![(TAP0, string("v2"))])
            .states(&[(TAP0, Configured)]),
        ],
    }
}

fn downstream_resync_heals_drift() -> Scenario {
    let configured = || {
        vec![
            (ETH1, string("up")),
            (TAP0, tap0_with_address()),
            (TAP0_ADDR, string("addr1")),
            (R1, route_via_tap0()),
        ]
    };
    Scenario {
        name: "downstream_resync_heals_drift",
        ligato: "none (the seed's drift healed by resync, obtained values kept)",
        descriptors: vec![host_interfaces(), interfaces(), routes()],
        steps: vec![
            Step::new(
                "eth1 appears on the host",
                sb_set(ETH1, Some(string("up")), true),
            ),
            Step::new("eth1 is notified", notify(ETH1, Some(string("up"))))
                .states(&[(ETH1, Obtained)]),
            Step::new(
                "an interface and a route are configured",
                txn(vec![
                    (TAP0, Some(tap0_with_address())),
                    (R1, Some(route_via_tap0())),
                ]),
            )
            .southbound(configured()),
            Step::new(
                "the route is removed behind the scheduler's back",
                sb_set(R1, None, false),
            )
            .missing(&[R1]),
            Step::new(
                "a stale route is left behind the scheduler's back",
                Action::SbSet {
                    key: STALE.to_owned(),
                    value: Some(route_via_tap0()),
                    from_sb: false,
                    metadata: None,
                },
            ),
            Step::new(
                "a downstream resync puts the route back and removes the stale one; the \
                 obtained value stays",
                Action::DownstreamResync,
            )
            .southbound(configured())
            .states(&[(ETH1, Obtained), (R1, Configured)])
            .missing(&[])
            .records(vec![TxnExpect::new(
                DownstreamResync,
                &[
                    &format!("delete {STALE} DISCOVERED->REMOVED"),
                    &format!("create {R1} MISSING->CONFIGURED"),
                ],
            )]),
            Step::new(
                "a full resync with less removes the rest, but never the obtained value",
                resync(vec![(TAP0, array(&[]))]),
            )
            .southbound(vec![(ETH1, string("up")), (TAP0, array(&[]))])
            .states(&[(ETH1, Obtained), (R1, Nonexistent)]),
        ],
    }
}

fn descriptor_registered_late_then_replaced() -> Scenario {
    let acl = || MockDescArgs::new("acl", "/acl/");
    Scenario {
        name: "descriptor_registered_late_then_replaced",
        ligato: "none (the seed's descriptor registered late, then a new version of it)",
        descriptors: vec![routes()],
        steps: vec![
            Step::new(
                "no descriptor handles the value yet: UNIMPLEMENTED",
                txn(vec![(WEB, Some(json!({"allow": 80})))]),
            )
            .ops(&[])
            .states(&[(WEB, Unimplemented)]),
            Step::new(
                "the descriptor is registered: the value is created by it",
                register(acl().version(1)),
            )
            .ops(&[
                "retrieve acl (v1)",
                "retrieve route",
                &format!("create {WEB} (v1)"),
            ])
            .southbound(vec![(WEB, json!({"allow": 80}))])
            .states(&[(WEB, Configured)]),
            Step::new(
                "a new version of the descriptor replaces it",
                register(acl().version(2)),
            ),
            Step::new(
                "the new version does the next change",
                txn(vec![(WEB, Some(json!({"allow": 443})))]),
            )
            .ops(&[&format!("update {WEB} (v2)")])
            .southbound(vec![(WEB, json!({"allow": 443}))])
            .states(&[(WEB, Configured)]),
        ],
    }
}
