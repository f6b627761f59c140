//! Ligato's KV scheduler tests (vpp-agent `plugins/kvscheduler/*_test.go`), ported as one
//! scenario list in `reactor-testkit`, run here on the native engine in process.

use reactor_testkit::kv::{NativeHarness, ported, run};

async fn native(name: &str) {
    let scenario = ported::named(name);
    let mut harness = NativeHarness::default();
    if let Err(error) = run(&scenario, &mut harness).await {
        panic!("{error:#}");
    }
}

macro_rules! ported {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test(start_paused = true)]
            async fn $name() {
                native(stringify!($name)).await;
            }
        )*

        #[test]
        fn every_ported_scenario_runs_here() {
            let here = [$(stringify!($name)),*];
            for scenario in ported::all() {
                assert!(here.contains(&scenario.name), "{} is not run natively", scenario.name);
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
);
