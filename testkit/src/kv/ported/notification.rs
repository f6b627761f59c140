//! Ported from Ligato's `plugins/kvscheduler/notification_test.go`.

use super::{D1, D2, D3, PREFIX_A, PREFIX_B, PREFIX_C};
use crate::kv::args::{MockDescArgs, array, string};
use crate::kv::record::TxnExpect;
use crate::kv::scenario::{Action, Scenario, Step, notify, plan_error, resync, txn_retry, wait};
use reactor_host::kvscheduler::TxnType::{RetryFailedOps, SbNotification};
use reactor_host::kvscheduler::ValueState::*;
use std::time::Duration;

const A1: &str = "/prefixA/base-value1";
const A1_1: &str = "/prefixA/base-value1/item1";
const A1_2: &str = "/prefixA/base-value1/item2";
const B2: &str = "/prefixB/base-value2";
const B2_1: &str = "/prefixB/base-value2/item1";
const B2_2: &str = "/prefixB/base-value2/item2";
const C3: &str = "/prefixC/base-value3";

pub fn all() -> Vec<Scenario> {
    vec![notifications(), notifications_with_retry()]
}

/// The southbound's own value appears (or changes) and is notified.
fn sb_value(value: Option<serde_json::Value>) -> Action {
    Action::SbSet {
        key: A1.to_owned(),
        value,
        from_sb: true,
        metadata: None,
    }
}

fn b_depends_on_a() -> MockDescArgs {
    MockDescArgs::new(D2, PREFIX_B)
        .derived()
        .with_metadata()
        .depends(B2, &[A1])
        .depends(B2_2, &[A1_2])
        .retrieve_after(D1)
}

fn notifications() -> Scenario {
    Scenario {
        name: "notifications",
        ligato: "TestNotifications",
        descriptors: vec![
            MockDescArgs::new(D1, PREFIX_A)
                .derived()
                .with_metadata()
                .without_retrieve(),
            b_depends_on_a(),
        ],
        steps: vec![
            Step::new(
                "resync: B2 waits for A1, which only the southbound can bring",
                resync(vec![(B2, array(&["item1", "item2"]))]),
            )
            .ops(&[&format!("retrieve {D2}")])
            .southbound(vec![])
            .states(&[(B2, Pending)])
            .waiting(B2, &[A1]),
            Step::new(
                "A1 appears in the southbound",
                sb_value(Some(array(&["item1"]))),
            ),
            Step::new(
                "notification of A1: OBTAINED with its derived values, B2 is created",
                notify(A1, Some(array(&["item1"]))),
            )
            .ops(&[&format!("create {B2}"), &format!("create {B2_1}")])
            .states(&[
                (A1, Obtained),
                (A1_1, Obtained),
                (B2, Configured),
                (B2_1, Configured),
                (B2_2, Pending),
            ])
            .records(vec![
                TxnExpect::new(
                    SbNotification,
                    &[
                        &format!("create {A1} NONEXISTENT->OBTAINED"),
                        &format!("create {B2} PENDING->CONFIGURED"),
                        &format!("create {B2_1} NONEXISTENT->CONFIGURED derived"),
                        &format!("create {B2_2} NONEXISTENT->PENDING derived noop"),
                        &format!("create {A1_1} NONEXISTENT->OBTAINED derived"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "A1 changes in the southbound",
                sb_value(Some(array(&["item1", "item2"]))),
            ),
            Step::new(
                "notification of the change: the new derived value unblocks B2/item2",
                notify(A1, Some(array(&["item1", "item2"]))),
            )
            .ops(&[&format!("create {B2_2}")])
            .states(&[
                (A1, Obtained),
                (A1_1, Obtained),
                (A1_2, Obtained),
                (B2_2, Configured),
            ]),
            Step::new(
                "not in Ligato's test: a downstream resync keeps the notified values",
                Action::DownstreamResync,
            )
            .states(&[
                (A1, Obtained),
                (A1_2, Obtained),
                (B2, Configured),
                (B2_2, Configured),
            ]),
            Step::new("A1 disappears from the southbound", sb_value(None)),
            Step::new(
                "notification of the removal: B2 goes back to PENDING, derived values first",
                notify(A1, None),
            )
            .ops(&[
                &format!("delete {B2_2}"),
                &format!("delete {B2_1}"),
                &format!("delete {B2}"),
            ])
            .southbound(vec![])
            .states(&[
                (A1, Nonexistent),
                (A1_1, Nonexistent),
                (B2, Pending),
                (B2_1, Nonexistent),
            ]),
        ],
    }
}

fn notifications_with_retry() -> Scenario {
    Scenario {
        name: "notifications_with_retry",
        ligato: "TestNotificationsWithRetry",
        descriptors: vec![
            MockDescArgs::new(D1, PREFIX_A)
                .derived()
                .with_metadata()
                .without_retrieve(),
            b_depends_on_a(),
            MockDescArgs::new(D3, PREFIX_C)
                .with_metadata()
                .depends_any_of(C3, PREFIX_A, PREFIX_A)
                .retrieve_after(D2),
        ],
        steps: vec![
            Step::new(
                "the create of B2/item2 will fail, leaving B2 with item1 only",
                plan_error(
                    B2_2,
                    Some("failed to add derived value"),
                    Some((B2, Some(array(&["item1"])))),
                ),
            ),
            Step::new(
                "the create of C3 will fail, leaving nothing",
                plan_error(C3, Some("failed to add value"), Some((C3, None))),
            ),
            Step::new(
                "B2 with the default retry: waits for A1",
                txn_retry(
                    vec![(B2, Some(array(&["item1", "item2"])))],
                    Duration::from_secs(1),
                    3,
                ),
            )
            .ops(&[])
            .states(&[(B2, Pending)]),
            Step::new(
                "C3 retried every 3 seconds: waits for any value under /prefixA/",
                txn_retry(
                    vec![(C3, Some(string("base-value3-data")))],
                    Duration::from_secs(3),
                    3,
                ),
            )
            .ops(&[])
            .southbound(vec![])
            .states(&[(C3, Pending)]),
            Step::new(
                "notification of A1: B2, B2/item1 created, C3 and B2/item2 fail, both base \
                 values are refreshed; retries follow with each value's own options",
                notify(A1, Some(array(&["item1", "item2"]))),
            )
            .failed(&[B2_2, C3])
            .ops(&[
                &format!("create {B2}"),
                &format!("create {B2_1}"),
                &format!("create {C3} !"),
                &format!("create {B2_2} !"),
                &format!("retrieve {D2}"),
                &format!("retrieve {D3}"),
            ])
            .southbound(vec![(B2, array(&["item1"])), (B2_1, string("item1"))])
            .states(&[
                (A1, Obtained),
                (A1_2, Obtained),
                (B2, Configured),
                (B2_1, Configured),
                (B2_2, Retrying),
                (C3, Retrying),
            ])
            .records(vec![
                TxnExpect::new(
                    SbNotification,
                    &[
                        &format!("create {A1} NONEXISTENT->OBTAINED"),
                        &format!("create {B2} PENDING->CONFIGURED"),
                        &format!("create {B2_1} NONEXISTENT->CONFIGURED derived"),
                        &format!("create {C3} PENDING->RETRYING ! failed to add value"),
                        &format!("create {A1_1} NONEXISTENT->OBTAINED derived"),
                        &format!("create {A1_2} NONEXISTENT->OBTAINED derived"),
                        &format!(
                            "create {B2_2} NONEXISTENT->RETRYING derived ! failed to add derived value"
                        ),
                    ],
                )
                .planned(&[
                    &format!("create {A1} NONEXISTENT->OBTAINED"),
                    &format!("create {B2} PENDING->CONFIGURED"),
                    &format!("create {B2_1} NONEXISTENT->CONFIGURED derived"),
                    &format!("create {C3} PENDING->CONFIGURED"),
                    &format!("create {A1_1} NONEXISTENT->OBTAINED derived"),
                    &format!("create {A1_2} NONEXISTENT->OBTAINED derived"),
                    &format!("create {B2_2} NONEXISTENT->CONFIGURED derived"),
                ]),
            ]),
            Step::new(
                "after a second B2/item2 is retried: its base value is re-applied first",
                wait(Duration::from_secs(2)),
            )
            .ops(&[&format!("update {B2}"), &format!("create {B2_2}")])
            .southbound(vec![
                (B2, array(&["item1", "item2"])),
                (B2_1, string("item1")),
                (B2_2, string("item2")),
            ])
            .states(&[(B2, Configured), (B2_2, Configured), (C3, Retrying)])
            .records(vec![TxnExpect::new(
                RetryFailedOps,
                &[
                    &format!("update {B2} CONFIGURED->CONFIGURED retry"),
                    &format!("create {B2_2} RETRYING->CONFIGURED derived retry"),
                ],
            )]),
            Step::new(
                "after three seconds C3 is retried",
                wait(Duration::from_secs(2)),
            )
            .ops(&[&format!("create {C3}")])
            .states(&[(C3, Configured)])
            .records(vec![TxnExpect::new(
                RetryFailedOps,
                &[&format!("create {C3} RETRYING->CONFIGURED retry")],
            )]),
        ],
    }
}
