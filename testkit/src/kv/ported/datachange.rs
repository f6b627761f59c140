//! Ported from Ligato's `plugins/kvscheduler/datachange_test.go`.

use super::{D1, D2, D3};
use crate::kv::args::{MockDescArgs, array, array_with_suffix, string};
use crate::kv::record::TxnExpect;
use crate::kv::scenario::{Scenario, Step, plan_error, txn, txn_revert};
use reactor_host::kvscheduler::TxnType::NbTransaction;
use reactor_host::kvscheduler::ValueState::*;

const A1: &str = "/prefixA/base-value1";
const A1_1: &str = "/prefixA/base-value1/item1";
const A1_2: &str = "/prefixA/base-value1/item2";
const A2: &str = "/prefixA/base-value2";
const A3: &str = "/prefixA/base-value3";
const A4: &str = "/prefixA/base-value4";
const B2: &str = "/prefixB/base-value2";
const B2_1: &str = "/prefixB/base-value2/item1";
const B2_2: &str = "/prefixB/base-value2/item2";
const C3: &str = "/prefixC/base-value3";
const C3_1: &str = "/prefixC/base-value3/item1";
const C3_2: &str = "/prefixC/base-value3/item2";

pub fn all() -> Vec<Scenario> {
    vec![
        data_change_transactions(),
        data_change_transaction_with_revert(),
        dependency_cycles(),
        failed_delete_of_derived_value(),
        failed_recreate_of_derived_value(),
    ]
}

/// The three descriptors of the first two tests: B's items depend on A's values, C's
/// base value is updated by re-creation.
fn three_descriptors() -> Vec<MockDescArgs> {
    vec![
        MockDescArgs::new(D1, super::PREFIX_A)
            .derived()
            .with_metadata(),
        MockDescArgs::new(D2, super::PREFIX_B)
            .derived()
            .with_metadata()
            .depends(B2_1, &[A1])
            .depends(B2_2, &[A1_1])
            .retrieve_after(D1),
        MockDescArgs::new(D3, super::PREFIX_C)
            .derived()
            .with_metadata()
            .recreate(C3)
            .retrieve_after(D2),
    ]
}

/// The first transaction of both tests: everything but B2/item2 (waiting for A1/item1).
fn first_transaction() -> Step {
    Step::new(
        "run non-resync transaction against empty SB",
        txn(vec![
            (B2, Some(array(&["item1", "item2"]))),
            (A1, Some(array(&["item2"]))),
            (C3, Some(array(&["item1", "item2"]))),
        ]),
    )
    .ops(&[
        &format!("create {A1}"),
        &format!("create {A1_2}"),
        &format!("create {B2}"),
        &format!("create {B2_1}"),
        &format!("create {C3}"),
        &format!("create {C3_1}"),
        &format!("create {C3_2}"),
    ])
    .southbound(vec![
        (A1, array(&["item2"])),
        (A1_2, string("item2")),
        (B2, array(&["item1", "item2"])),
        (B2_1, string("item1")),
        (C3, array(&["item1", "item2"])),
        (C3_1, string("item1")),
        (C3_2, string("item2")),
    ])
    .states(&[
        (A1, Configured),
        (A1_2, Configured),
        (B2, Configured),
        (B2_1, Configured),
        (B2_2, Pending),
        (C3, Configured),
        (C3_1, Configured),
        (C3_2, Configured),
    ])
    .records(vec![
        TxnExpect::new(
            NbTransaction,
            &[
                &format!("create {A1} NONEXISTENT->CONFIGURED"),
                &format!("create {A1_2} NONEXISTENT->CONFIGURED derived"),
                &format!("create {B2} NONEXISTENT->CONFIGURED"),
                &format!("create {B2_1} NONEXISTENT->CONFIGURED derived"),
                &format!("create {B2_2} NONEXISTENT->PENDING derived noop"),
                &format!("create {C3} NONEXISTENT->CONFIGURED"),
                &format!("create {C3_1} NONEXISTENT->CONFIGURED derived"),
                &format!("create {C3_2} NONEXISTENT->CONFIGURED derived"),
            ],
        )
        .as_planned(),
    ])
}

fn data_change_transactions() -> Scenario {
    Scenario {
        name: "data_change_transactions",
        ligato: "TestDataChangeTransactions",
        descriptors: three_descriptors(),
        steps: vec![
            first_transaction(),
            Step::new(
                "run 2nd non-resync transaction: re-create C3 first (Ligato orders deletes, \
                 re-creates, creates, updates), then update A1, which unblocks B2/item2",
                txn(vec![
                    (C3, Some(array(&["item1"]))),
                    (A1, Some(array(&["item1"]))),
                ]),
            )
            .ops(&[
                &format!("delete {C3_1}"),
                &format!("delete {C3_2}"),
                &format!("delete {C3}"),
                &format!("create {C3}"),
                &format!("create {C3_1}"),
                &format!("delete {A1_2}"),
                &format!("update {A1}"),
                &format!("create {A1_1}"),
                &format!("create {B2_2}"),
            ])
            .southbound(vec![
                (A1, array(&["item1"])),
                (A1_1, string("item1")),
                (B2, array(&["item1", "item2"])),
                (B2_1, string("item1")),
                (B2_2, string("item2")),
                (C3, array(&["item1"])),
                (C3_1, string("item1")),
            ])
            .states(&[
                (A1, Configured),
                (A1_1, Configured),
                (A1_2, Nonexistent),
                (B2_2, Configured),
                (C3, Configured),
                (C3_1, Configured),
                (C3_2, Nonexistent),
            ])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("delete {C3_1} CONFIGURED->REMOVED derived recreate"),
                        &format!("delete {C3_2} CONFIGURED->REMOVED derived recreate"),
                        &format!("delete {C3} CONFIGURED->REMOVED recreate"),
                        &format!("create {C3} REMOVED->CONFIGURED recreate"),
                        &format!("create {C3_1} NONEXISTENT->CONFIGURED derived recreate"),
                        &format!("delete {A1_2} CONFIGURED->REMOVED derived"),
                        &format!("update {A1} CONFIGURED->CONFIGURED"),
                        &format!("create {A1_1} NONEXISTENT->CONFIGURED derived"),
                        &format!("create {B2_2} PENDING->CONFIGURED derived"),
                    ],
                )
                .as_planned(),
            ]),
        ],
    }
}

fn data_change_transaction_with_revert() -> Scenario {
    Scenario {
        name: "data_change_transaction_with_revert",
        ligato: "TestDataChangeTransactionWithRevert",
        descriptors: three_descriptors(),
        steps: vec![
            first_transaction(),
            Step::new(
                "plan error before 2nd txn: the update of A1 fails, leaving A1 empty",
                plan_error(
                    A1,
                    Some("failed to modify value"),
                    Some((A1, Some(array(&[])))),
                ),
            ),
            Step::new(
                "run 2nd transaction with revert: after the failed update A1 is refreshed, \
                 then both values are reverted, newest first, by real operations",
                txn_revert(vec![
                    (C3, Some(array(&["item1"]))),
                    (A1, Some(array(&["item1"]))),
                ]),
            )
            .failed(&[A1])
            .reverted()
            .ops(&[
                &format!("delete {C3_1}"),
                &format!("delete {C3_2}"),
                &format!("delete {C3}"),
                &format!("create {C3}"),
                &format!("create {C3_1}"),
                &format!("delete {A1_2}"),
                &format!("update {A1} !"),
                &format!("retrieve {D1}"),
                &format!("update {A1}"),
                &format!("create {A1_2}"),
                &format!("delete {C3_1}"),
                &format!("delete {C3}"),
                &format!("create {C3}"),
                &format!("create {C3_1}"),
                &format!("create {C3_2}"),
            ])
            .southbound(vec![
                (A1, array(&["item2"])),
                (A1_2, string("item2")),
                (B2, array(&["item1", "item2"])),
                (B2_1, string("item1")),
                (C3, array(&["item1", "item2"])),
                (C3_1, string("item1")),
                (C3_2, string("item2")),
            ])
            .states(&[
                (A1, Configured),
                (A1_1, Nonexistent),
                (A1_2, Configured),
                (B2_2, Pending),
                (C3, Configured),
                (C3_1, Configured),
                (C3_2, Configured),
            ])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("delete {C3_1} CONFIGURED->REMOVED derived recreate"),
                        &format!("delete {C3_2} CONFIGURED->REMOVED derived recreate"),
                        &format!("delete {C3} CONFIGURED->REMOVED recreate"),
                        &format!("create {C3} REMOVED->CONFIGURED recreate"),
                        &format!("create {C3_1} NONEXISTENT->CONFIGURED derived recreate"),
                        &format!("delete {A1_2} CONFIGURED->REMOVED derived"),
                        &format!("update {A1} CONFIGURED->FAILED ! failed to modify value"),
                        // Reverting, newest first:
                        &format!("update {A1} FAILED->CONFIGURED revert"),
                        &format!("create {A1_2} NONEXISTENT->CONFIGURED derived revert"),
                        &format!("delete {C3_1} CONFIGURED->REMOVED derived recreate revert"),
                        &format!("delete {C3} CONFIGURED->REMOVED recreate revert"),
                        &format!("create {C3} REMOVED->CONFIGURED recreate revert"),
                        &format!("create {C3_1} NONEXISTENT->CONFIGURED derived recreate revert"),
                        &format!("create {C3_2} NONEXISTENT->CONFIGURED derived revert"),
                    ],
                )
                .planned(&[
                    &format!("delete {C3_1} CONFIGURED->REMOVED derived recreate"),
                    &format!("delete {C3_2} CONFIGURED->REMOVED derived recreate"),
                    &format!("delete {C3} CONFIGURED->REMOVED recreate"),
                    &format!("create {C3} REMOVED->CONFIGURED recreate"),
                    &format!("create {C3_1} NONEXISTENT->CONFIGURED derived recreate"),
                    &format!("delete {A1_2} CONFIGURED->REMOVED derived"),
                    &format!("update {A1} CONFIGURED->CONFIGURED"),
                    &format!("create {A1_1} NONEXISTENT->CONFIGURED derived"),
                    &format!("create {B2_2} PENDING->CONFIGURED derived"),
                ]),
            ]),
        ],
    }
}

fn dependency_cycles() -> Scenario {
    let data = |v: &str| Some(string(&format!("{v}-data")));
    Scenario {
        name: "dependency_cycles",
        ligato: "TestDependencyCycles",
        descriptors: vec![
            MockDescArgs::new(D1, super::PREFIX_A)
                .without_retrieve()
                .depends(A1, &[A2])
                .depends(A2, &[A3])
                .depends(A3, &[A1, A4]),
        ],
        steps: vec![
            Step::new(
                "run transaction with a cycle A1 -> A2 -> A3 -> {A1, A4}: all wait for A4",
                txn(vec![
                    (A1, data("base-value1")),
                    (A2, data("base-value2")),
                    (A3, data("base-value3")),
                ]),
            )
            .ops(&[])
            .southbound(vec![])
            .states(&[(A1, Pending), (A2, Pending), (A3, Pending)])
            .waiting(A1, &[A2])
            .waiting(A2, &[A3])
            .waiting(A3, &[A1, A4])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("create {A1} NONEXISTENT->PENDING noop"),
                        &format!("create {A2} NONEXISTENT->PENDING noop"),
                        &format!("create {A3} NONEXISTENT->PENDING noop"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "run second transaction that will make the cycle of values ready to be added",
                txn(vec![(A4, data("base-value4"))]),
            )
            .ops(&[
                &format!("create {A4}"),
                &format!("create {A3}"),
                &format!("create {A2}"),
                &format!("create {A1}"),
            ])
            .states(&[
                (A1, Configured),
                (A2, Configured),
                (A3, Configured),
                (A4, Configured),
            ])
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("create {A4} NONEXISTENT->CONFIGURED"),
                        &format!("create {A3} PENDING->CONFIGURED"),
                        &format!("create {A2} PENDING->CONFIGURED"),
                        &format!("create {A1} PENDING->CONFIGURED"),
                    ],
                )
                .as_planned(),
            ]),
            Step::new(
                "plan error for the removal of A2",
                plan_error(A2, Some("failed to remove the value"), None),
            ),
            Step::new(
                "remove A2 (breaking the cycle): its dependants go first, its delete fails; \
                 A2 stays in the southbound but, on its way out, satisfies no dependency",
                txn(vec![(A2, None)]),
            )
            .failed(&[A2])
            .ops(&[
                &format!("delete {A3}"),
                &format!("delete {A1}"),
                &format!("delete {A2} !"),
            ])
            .southbound(vec![
                (A2, string("base-value2-data")),
                (A4, string("base-value4-data")),
            ])
            .states(&[(A1, Pending), (A2, Failed), (A3, Pending), (A4, Configured)])
            .waiting(A1, &[A2])
            .waiting(A3, &[A1])
            .error(A2, "failed to remove the value")
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("delete {A3} CONFIGURED->PENDING"),
                        &format!("delete {A1} CONFIGURED->PENDING"),
                        &format!("delete {A2} CONFIGURED->FAILED ! failed to remove the value"),
                    ],
                )
                .planned(&[
                    &format!("delete {A3} CONFIGURED->PENDING"),
                    &format!("delete {A1} CONFIGURED->PENDING"),
                    &format!("delete {A2} CONFIGURED->REMOVED"),
                ]),
            ]),
            Step::new(
                "put A2 back with a new value: the cycle is configured again",
                txn(vec![(A2, data("base-value2-new"))]),
            )
            .southbound(vec![
                (A1, string("base-value1-data")),
                (A2, string("base-value2-new-data")),
                (A3, string("base-value3-data")),
                (A4, string("base-value4-data")),
            ])
            .states(&[
                (A1, Configured),
                (A2, Configured),
                (A3, Configured),
                (A4, Configured),
            ]),
        ],
    }
}

fn failed_delete_of_derived_value() -> Scenario {
    Scenario {
        name: "failed_delete_of_derived_value",
        ligato: "TestFailedDeleteOfDerivedValue",
        descriptors: vec![
            MockDescArgs::new(D1, super::PREFIX_A)
                .derived()
                .with_metadata(),
        ],
        steps: vec![
            Step::new(
                "create a value with one derived value",
                txn(vec![(A1, Some(array(&["item1"])))]),
            )
            .ops(&[&format!("create {A1}"), &format!("create {A1_1}")]),
            Step::new(
                "plan error for the removal of the derived value",
                plan_error(
                    A1_1,
                    Some("failed to delete value"),
                    Some((A1, Some(array(&["item1"])))),
                ),
            ),
            Step::new(
                "remove the value: the failed delete of its derived value stops it, the \
                 value stays CONFIGURED with the derived value FAILED",
                txn(vec![(A1, None)]),
            )
            .failed(&[A1_1])
            .ops(&[&format!("delete {A1_1} !"), &format!("retrieve {D1}")])
            .southbound(vec![(A1, array(&["item1"])), (A1_1, string("item1"))])
            .states(&[(A1, Configured), (A1_1, Failed)])
            .error(A1_1, "failed to delete value")
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[&format!(
                        "delete {A1_1} CONFIGURED->FAILED derived ! failed to delete value"
                    )],
                )
                .planned(&[
                    &format!("delete {A1_1} CONFIGURED->REMOVED derived"),
                    &format!("delete {A1} CONFIGURED->REMOVED"),
                ]),
            ]),
        ],
    }
}

fn failed_recreate_of_derived_value() -> Scenario {
    Scenario {
        name: "failed_recreate_of_derived_value",
        ligato: "TestFailedRecreateOfDerivedValue",
        descriptors: vec![
            MockDescArgs::new(D1, super::PREFIX_A)
                .derived()
                .with_metadata()
                .recreate(A1_1),
        ],
        steps: vec![
            Step::new(
                "create a value with one derived value",
                txn(vec![(A1, Some(array_with_suffix("-v1", &["item1"])))]),
            )
            .ops(&[&format!("create {A1}"), &format!("create {A1_1}")])
            .southbound(vec![
                (A1, array_with_suffix("-v1", &["item1"])),
                (A1_1, string("item1-v1")),
            ]),
            Step::new(
                "the delete of the derived value passes",
                plan_error(A1_1, None, None),
            ),
            Step::new(
                "its re-create fails, and the base value is found empty",
                plan_error(
                    A1_1,
                    Some("failed to create value"),
                    Some((A1, Some(array(&[])))),
                ),
            ),
            Step::new(
                "update the value: the derived value is re-created and that fails",
                txn(vec![(A1, Some(array_with_suffix("-v2", &["item1"])))]),
            )
            .failed(&[A1_1])
            .ops(&[
                &format!("update {A1}"),
                &format!("delete {A1_1}"),
                &format!("create {A1_1} !"),
                &format!("retrieve {D1}"),
            ])
            .states(&[(A1, Configured), (A1_1, Failed)])
            .error(A1_1, "failed to create value")
            .records(vec![
                TxnExpect::new(
                    NbTransaction,
                    &[
                        &format!("update {A1} CONFIGURED->CONFIGURED"),
                        &format!("delete {A1_1} CONFIGURED->REMOVED derived recreate"),
                        &format!(
                            "create {A1_1} REMOVED->FAILED derived recreate ! failed to create value"
                        ),
                    ],
                )
                .planned(&[
                    &format!("update {A1} CONFIGURED->CONFIGURED"),
                    &format!("delete {A1_1} CONFIGURED->REMOVED derived recreate"),
                    &format!("create {A1_1} REMOVED->CONFIGURED derived recreate"),
                ]),
            ]),
        ],
    }
}
