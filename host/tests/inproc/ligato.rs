//! Ligato's KV scheduler tests (vpp-agent `plugins/kvscheduler/*_test.go`) and the
//! project's own scenarios, one scenario list in `reactor-testkit`, run here in process on
//! two harnesses on paused time (every step runs, also those needing controlled time):
//! native mock descriptors, and the same mock descriptor as WASM components
//! (`guests/mock-descriptor`). The agent harness runs the list through a real agent
//! (tests/binary/agent_scheduler.rs).

use reactor_testkit::kv::{Harness, NativeHarness, WasmHarness, ported, run};

async fn play(name: &str, harness: &mut dyn Harness) {
    let scenario = ported::named(name);
    if let Err(error) = run(&scenario, harness).await {
        panic!("{error:#}");
    }
}

macro_rules! ported {
    ($($name:ident),* $(,)?) => {
        mod native {
            $(
                #[tokio::test(start_paused = true)]
                async fn $name() {
                    super::play(stringify!($name), &mut super::NativeHarness::default()).await;
                }
            )*
        }

        mod wasm {
            $(
                #[tokio::test(start_paused = true)]
                async fn $name() {
                    let mut harness = super::WasmHarness::new().expect("harness");
                    super::play(stringify!($name), &mut harness).await;
                }
            )*
        }

        #[test]
        fn every_ported_scenario_runs_on_both_harnesses() {
            let here = [$(stringify!($name)),*];
            for scenario in ported::all() {
                assert!(here.contains(&scenario.name), "{} is not run in process", scenario.name);
            }
        }
    };
}

ported!(
    data_change_transactions,
    data_change_transaction_with_revert,
    dependency_cycles,
    failed_delete_of_derived_value,
    failed_recreate_of_derived_value,
    empty_resync,
    resync_with_empty_sb,
    resync_with_non_empty_sb,
    resync_not_removing_sb_values,
    resync_with_multiple_descriptors,
    resync_with_retry,
    notifications,
    notifications_with_retry,
    dependant_waits_for_its_dependency,
    derived_value_waits_for_another_value,
    recreated_value_takes_its_dependant_down_and_back,
    any_of_dependency_loses_its_last_match,
    revert_of_new_values,
    invalid_and_unimplemented_values,
    obtained_and_managed_keys_are_refused,
    failed_create_retried_with_backoff,
    non_retriable_failure_stays_failed,
    newer_change_supersedes_a_scheduled_retry,
    downstream_resync_heals_drift,
    descriptor_registered_late_then_replaced,
);
