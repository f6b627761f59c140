//! Ported from Ligato's `plugins/kvscheduler/resync_test.go`.

use super::{D1, D2, D3, PREFIX_A, PREFIX_B, PREFIX_C};
use crate::kv::args::{MockDescArgs, array, string};
use crate::kv::record::TxnExpect;
use crate::kv::scenario::{
    Action, Scenario, Step, plan_error, resync, resync_retry, sb_preset, wait,
};
use reactor_host::kvscheduler::TxnType::{FullResync, RetryFailedOps};
use reactor_host::kvscheduler::ValueState::*;
use std::time::Duration;

const A1: &str = "/prefixA/base-value1";
const A1_1: &str = "/prefixA/base-value1/item1";
const A1_2: &str = "/prefixA/base-value1/item2";
const A2: &str = "/prefixA/base-value2";
const A2_1: &str = "/prefixA/base-value2/item1";
const A2_2: &str = "/prefixA/base-value2/item2";
const A3: &str = "/prefixA/base-value3";
const A3_1: &str = "/prefixA/base-value3/item1";
const A3_2: &str = "/prefixA/base-value3/item2";
const B2: &str = "/prefixB/base-value2";
const B2_1: &str = "/prefixB/base-value2/item1";
const B2_2: &str = "/prefixB/base-value2/item2";
const C3: &str = "/prefixC/base-value3";
const C3_1: &str = "/prefixC/base-value3/item1";
const C3_2: &str = "/prefixC/base-value3/item2";

pub fn all() -> Vec<Scenario> {
    vec![
        empty_resync(),
        resync_with_empty_sb(Retrieve::BaseValues),
        resync_with_empty_sb(Retrieve::AlsoDerived),
        resync_with_non_empty_sb(Retrieve::BaseValues),
        resync_with_non_empty_sb(Retrieve::AlsoDerived),
        resync_not_removing_sb_values(),
        resync_with_multiple_descriptors(),
        resync_with_retry(),
    ]
}

/// What the mock descriptor's retrieve returns: base values only (Ligato's contract, and
/// its mock's), or derived values too (as a descriptor built before the contract may): a
/// scenario run both ways must see the same.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Retrieve {
    BaseValues,
    AlsoDerived,
}

impl Retrieve {
    /// Of `[base values, also derived]`, the one for this way (a scenario's name, its
    /// Ligato test).
    fn pick<T>(self, [base_values, also_derived]: [T; 2]) -> T {
        match self {
            Self::BaseValues => base_values,
            Self::AlsoDerived => also_derived,
        }
    }

    fn args(self, args: MockDescArgs) -> MockDescArgs {
        match self {
            Self::BaseValues => args,
            Self::AlsoDerived => args.retrieve_derived(),
        }
    }
}

/// `(op, key)` pairs as the southbound logs them; `("!", "")` marks the previous one failed.
fn ops(list: &[(&str, &str)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (op, key) in list {
        match (*op, out.last_mut()) {
            ("!", Some(last)) => last.push_str(" !"),
            _ => out.push(format!("{op} {key}")),
        }
    }
    out
}

fn step_ops(step: Step, list: &[(&str, &str)]) -> Step {
    let list = ops(list);
    let refs: Vec<&str> = list.iter().map(String::as_str).collect();
    step.ops(&refs)
}

fn empty_resync() -> Scenario {
    Scenario {
        name: "empty_resync",
        ligato: "TestEmptyResync",
        descriptors: vec![MockDescArgs::new(D1, PREFIX_A).derived().with_metadata()],
        steps: vec![
            Step::new("transaction against empty SB", resync(vec![]))
                .ops(&[&format!("retrieve {D1}")])
                .southbound(vec![])
                .records(vec![TxnExpect::new(FullResync, &[]).as_planned()]),
        ],
    }
}

fn resync_with_empty_sb(retrieve: Retrieve) -> Scenario {
    Scenario {
        name: retrieve.pick([
            "resync_with_empty_sb",
            "resync_with_empty_sb_retrieving_derived",
        ]),
        ligato: retrieve.pick([
            "TestResyncWithEmptySB",
            "TestResyncWithEmptySB (retrieve returning derived values too)",
        ]),
        descriptors: vec![
            retrieve.args(
                MockDescArgs::new(D1, PREFIX_A)
                    .derived()
                    .with_metadata()
                    // a base value depends on a derived value, a derived value on another
                    .depends(A2, &[A1_1])
                    .depends(A1_2, &[A2_1]),
            ),
        ],
        steps: vec![
            step_ops(
                Step::new(
                    "resync against empty SB: created in dependency order",
                    resync(vec![
                        (A2, array(&["item1"])),
                        (A1, array(&["item1", "item2"])),
                    ]),
                ),
                &[
                    ("retrieve", D1),
                    ("create", A1),
                    ("create", A1_1),
                    ("create", A2),
                    ("create", A2_1),
                    ("create", A1_2),
                ],
            )
            .southbound(vec![
                (A1, array(&["item1", "item2"])),
                (A1_1, string("item1")),
                (A1_2, string("item2")),
                (A2, array(&["item1"])),
                (A2_1, string("item1")),
            ])
            .states(&[
                (A1, Configured),
                (A1_1, Configured),
                (A1_2, Configured),
                (A2, Configured),
                (A2_1, Configured),
            ])
            .records(vec![
                TxnExpect::new(
                    FullResync,
                    &[
                        &format!("create {A1} NONEXISTENT->CONFIGURED"),
                        &format!("create {A1_1} NONEXISTENT->CONFIGURED derived"),
                        &format!("create {A2} NONEXISTENT->CONFIGURED"),
                        &format!("create {A2_1} NONEXISTENT->CONFIGURED derived"),
                        &format!("create {A1_2} NONEXISTENT->CONFIGURED derived"),
                    ],
                )
                .as_planned(),
            ]),
            step_ops(
                Step::new(
                    "resync with empty NB: removed in reverse dependency order, derived \
                     values before their parents",
                    resync(vec![]),
                ),
                &[
                    ("retrieve", D1),
                    ("delete", A1_2),
                    ("delete", A2_1),
                    ("delete", A2),
                    ("delete", A1_1),
                    ("delete", A1),
                ],
            )
            .southbound(vec![])
            .states(&[(A1, Nonexistent), (A2, Nonexistent), (A1_1, Nonexistent)])
            .records(vec![
                TxnExpect::new(
                    FullResync,
                    &[
                        &format!("delete {A1_2} CONFIGURED->REMOVED derived"),
                        &format!("delete {A2_1} CONFIGURED->REMOVED derived"),
                        &format!("delete {A2} CONFIGURED->REMOVED"),
                        &format!("delete {A1_1} CONFIGURED->REMOVED derived"),
                        &format!("delete {A1} CONFIGURED->REMOVED"),
                    ],
                )
                .as_planned(),
            ]),
            // The second resync again, from a southbound this life did not configure: as
            // a previous life of the agent left it (the scheduler knows none of it).
            Step::new(
                "the southbound as the first resync left it, by a previous life",
                sb_preset(A1, array(&["item1", "item2"]), Some("0")),
            ),
            Step::new("(derived)", sb_preset(A1_1, string("item1"), None)),
            Step::new("(derived)", sb_preset(A1_2, string("item2"), None)),
            Step::new(
                "(base value 2)",
                sb_preset(A2, array(&["item1"]), Some("1")),
            ),
            Step::new("(derived)", sb_preset(A2_1, string("item1"), None)),
            step_ops(
                Step::new(
                    "resync with empty NB: the values found (DISCOVERED) depend on what their \
                     found contents need, and go in the same reverse dependency order",
                    resync(vec![]),
                ),
                &[
                    ("retrieve", D1),
                    ("delete", A1_2),
                    ("delete", A2_1),
                    ("delete", A2),
                    ("delete", A1_1),
                    ("delete", A1),
                ],
            )
            .southbound(vec![])
            .states(&[(A1, Nonexistent), (A2, Nonexistent), (A1_1, Nonexistent)])
            .records(vec![TxnExpect::new(
                FullResync,
                &[
                    &format!("delete {A1_2} DISCOVERED->REMOVED derived"),
                    &format!("delete {A2_1} DISCOVERED->REMOVED derived"),
                    &format!("delete {A2} DISCOVERED->REMOVED"),
                    &format!("delete {A1_1} DISCOVERED->REMOVED derived"),
                    &format!("delete {A1} DISCOVERED->REMOVED"),
                ],
            )]),
            // The plan is made on belief, without a retrieve (see docs/src/kvscheduler.md): it knows
            // none of these values.
        ],
    }
}

/// What a previous life of the agent left: A1, A2, A3 each with derived item1.
fn previous_life(base: [&'static str; 3]) -> Vec<Step> {
    let mut steps = Vec::new();
    for (i, key) in base.into_iter().enumerate() {
        let metadata = if base[0] == A1 && base[1] == A2 {
            i.to_string()
        } else {
            "0".to_owned()
        };
        steps.push(Step::new(
            "initial content of the SB",
            sb_preset(key, array(&["item1"]), Some(&metadata)),
        ));
        steps.push(Step::new(
            "initial content of the SB (derived)",
            sb_preset(&format!("{key}/item1"), string("item1"), None),
        ));
    }
    steps
}

fn resync_with_non_empty_sb(retrieve: Retrieve) -> Scenario {
    let mut steps = previous_life([A1, A2, A3]);
    steps.push(
        step_ops(
            Step::new(
                "resync against non-empty SB: re-create A3 first, then update A1 and A2",
                resync(vec![
                    (A1, array(&["item2"])),
                    (A2, array(&["item1", "item2"])),
                    (A3, array(&["item1", "item2"])),
                ]),
            ),
            &[
                ("retrieve", D1),
                ("delete", A3_1),
                ("delete", A3),
                ("create", A3),
                ("create", A3_1),
                ("create", A3_2),
                ("delete", A1_1),
                ("update", A1),
                ("create", A1_2),
                ("update", A2),
            ],
        )
        .southbound(vec![
            (A1, array(&["item2"])),
            (A1_2, string("item2")),
            (A2, array(&["item1", "item2"])),
            (A2_1, string("item1")),
            (A3, array(&["item1", "item2"])),
            (A3_1, string("item1")),
            (A3_2, string("item2")),
        ])
        .states(&[
            (A1, Configured),
            (A1_1, Nonexistent),
            (A1_2, Configured),
            (A2, Configured),
            (A2_1, Configured),
            (A2_2, Pending),
            (A3, Configured),
            (A3_1, Configured),
            (A3_2, Configured),
        ])
        .records(vec![TxnExpect::new(
            FullResync,
            &[
                &format!("delete {A3_1} DISCOVERED->REMOVED derived recreate"),
                &format!("delete {A3} DISCOVERED->REMOVED recreate"),
                &format!("create {A3} REMOVED->CONFIGURED recreate"),
                &format!("create {A3_1} NONEXISTENT->CONFIGURED derived recreate"),
                &format!("create {A3_2} NONEXISTENT->CONFIGURED derived"),
                &format!("delete {A1_1} DISCOVERED->REMOVED derived"),
                &format!("update {A1} DISCOVERED->CONFIGURED"),
                &format!("create {A1_2} NONEXISTENT->CONFIGURED derived"),
                &format!("update {A2} DISCOVERED->CONFIGURED"),
                &format!("create {A2_2} NONEXISTENT->PENDING derived noop"),
            ],
        )]),
    );
    Scenario {
        name: retrieve.pick([
            "resync_with_non_empty_sb",
            "resync_with_non_empty_sb_retrieving_derived",
        ]),
        ligato: retrieve.pick([
            "TestResyncWithNonEmptySB",
            "TestResyncWithNonEmptySB (retrieve returning derived values too)",
        ]),
        descriptors: vec![
            retrieve.args(
                MockDescArgs::new(D1, PREFIX_A)
                    .derived()
                    .with_metadata()
                    .first_index(3)
                    .depends(A2_1, &[A1])
                    .depends(A2_2, &[A1_1])
                    .recreate(A3),
            ),
        ],
        steps,
    }
}

fn resync_not_removing_sb_values() -> Scenario {
    Scenario {
        name: "resync_not_removing_sb_values",
        ligato: "TestResyncNotRemovingSBValues",
        descriptors: vec![
            MockDescArgs::new(D1, PREFIX_A)
                .derived()
                .with_metadata()
                .depends(A2, &[A1]),
        ],
        steps: vec![
            Step::new(
                "a value the southbound owns",
                Action::SbSet {
                    key: A1.to_owned(),
                    value: Some(string("base-value1")),
                    from_sb: true,
                    metadata: None,
                },
            ),
            step_ops(
                Step::new(
                    "resync: the southbound's value is OBTAINED and kept, and satisfies A2",
                    resync(vec![(A2, array(&["item1"]))]),
                ),
                &[("retrieve", D1), ("create", A2), ("create", A2_1)],
            )
            .southbound(vec![
                (A1, string("base-value1")),
                (A2, array(&["item1"])),
                (A2_1, string("item1")),
            ])
            .states(&[(A1, Obtained), (A2, Configured), (A2_1, Configured)])
            .records(vec![
                TxnExpect::new(
                    FullResync,
                    &[
                        &format!("create {A2} NONEXISTENT->CONFIGURED"),
                        &format!("create {A2_1} NONEXISTENT->CONFIGURED derived"),
                    ],
                ),
                // The plan is made on belief, without a retrieve (see docs/src/kvscheduler.md): it
                // does not know A1 yet.
            ]),
        ],
    }
}

fn resync_with_multiple_descriptors() -> Scenario {
    let mut steps = previous_life([A1, B2, C3]);
    steps.push(
        step_ops(
            Step::new(
                "resync with three descriptors, retrieved in their dependency order",
                resync(vec![
                    (B2, array(&["item1", "item2"])),
                    (A1, array(&["item2"])),
                    (C3, array(&["item1", "item2"])),
                ]),
            ),
            &[
                ("retrieve", D1),
                ("retrieve", D2),
                ("retrieve", D3),
                ("delete", C3_1),
                ("delete", C3),
                ("create", C3),
                ("create", C3_1),
                ("create", C3_2),
                ("delete", A1_1),
                ("update", A1),
                ("create", A1_2),
                ("update", B2),
            ],
        )
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
                FullResync,
                &[
                    &format!("delete {C3_1} DISCOVERED->REMOVED derived recreate"),
                    &format!("delete {C3} DISCOVERED->REMOVED recreate"),
                    &format!("create {C3} REMOVED->CONFIGURED recreate"),
                    &format!("create {C3_1} NONEXISTENT->CONFIGURED derived recreate"),
                    &format!("create {C3_2} NONEXISTENT->CONFIGURED derived"),
                    &format!("delete {A1_1} DISCOVERED->REMOVED derived"),
                    &format!("update {A1} DISCOVERED->CONFIGURED"),
                    &format!("create {A1_2} NONEXISTENT->CONFIGURED derived"),
                    &format!("update {B2} DISCOVERED->CONFIGURED"),
                    &format!("create {B2_2} NONEXISTENT->PENDING derived noop"),
                ],
            ), // The plan is made on belief, without a retrieve (see docs/src/kvscheduler.md).
        ]),
    );
    Scenario {
        name: "resync_with_multiple_descriptors",
        ligato: "TestResyncWithMultipleDescriptors",
        descriptors: vec![
            MockDescArgs::new(D1, PREFIX_A)
                .derived()
                .with_metadata()
                .first_index(1),
            MockDescArgs::new(D2, PREFIX_B)
                .derived()
                .with_metadata()
                .first_index(1)
                .depends(B2_1, &[A1])
                .depends(B2_2, &[A1_1])
                .retrieve_after(D1),
            MockDescArgs::new(D3, PREFIX_C)
                .derived()
                .with_metadata()
                .first_index(1)
                .recreate(C3)
                .retrieve_after(D2),
        ],
        steps,
    }
}

fn resync_with_retry() -> Scenario {
    Scenario {
        name: "resync_with_retry",
        ligato: "TestResyncWithRetry",
        descriptors: vec![
            MockDescArgs::new(D1, PREFIX_A)
                .derived()
                .with_metadata()
                .first_index(1),
        ],
        steps: vec![
            Step::new(
                "initial content of the SB",
                sb_preset(A1, array(&[]), Some("0")),
            ),
            Step::new(
                "the create of A1/item2 fails, and leaves A1 with item1 only",
                plan_error(
                    A1_2,
                    Some("failed to add value"),
                    Some((A1, Some(array(&["item1"])))),
                ),
            ),
            step_ops(
                Step::new(
                    "resync with retry every 3 seconds",
                    resync_retry(
                        vec![(A1, array(&["item1", "item2"]))],
                        Duration::from_secs(3),
                        3,
                    ),
                ),
                &[
                    ("retrieve", D1),
                    ("update", A1),
                    ("create", A1_1),
                    ("create", A1_2),
                    ("!", ""),
                    ("retrieve", D1),
                ],
            )
            .failed(&[A1_2])
            .southbound(vec![(A1, array(&["item1"])), (A1_1, string("item1"))])
            .states(&[(A1, Configured), (A1_1, Configured), (A1_2, Retrying)]),
            step_ops(
                Step::new(
                    "the retry re-applies the base value, then its derived values",
                    wait(Duration::from_secs(4)),
                ),
                &[("update", A1), ("create", A1_2)],
            )
            .southbound(vec![
                (A1, array(&["item1", "item2"])),
                (A1_1, string("item1")),
                (A1_2, string("item2")),
            ])
            .states(&[(A1, Configured), (A1_1, Configured), (A1_2, Configured)])
            .records(vec![
                TxnExpect::new(
                    RetryFailedOps,
                    &[
                        &format!("update {A1} CONFIGURED->CONFIGURED retry"),
                        &format!("create {A1_2} RETRYING->CONFIGURED derived retry"),
                    ],
                )
                .as_planned(),
            ]),
        ],
    }
}
