//! Ligato's KV scheduler tests (vpp-agent `plugins/kvscheduler/*_test.go`) and the
//! project's own scenarios, one scenario list in `reactor-testkit`, run here in process on
//! two harnesses on paused time (every step runs, also those needing controlled time):
//! native mock descriptors, and the same mock descriptor as WASM components
//! (`guests/mock-descriptor`). The agent harness runs the list through a real agent
//! (host/tests/binary/both_stores/agent_scheduler.rs).

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

reactor_testkit::foreach_ported!(ported);
