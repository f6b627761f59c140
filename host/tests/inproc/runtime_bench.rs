//! The bench functions run end to end on real guests and measure something (no timing is
//! asserted here: figures belong to the benchmark harness); read them with
//! `BENCH_SAMPLES=N cargo test --release -p reactor-host --features bench --test inproc -- runtime_bench:: --nocapture`.

use reactor_host::runtime::World;
use reactor_host::runtime::bench::{call_vs_native, instantiation, reload_latency};
use reactor_testkit::{Sink, guest};
use std::sync::Arc;
use std::time::Duration;

fn samples(default: usize) -> usize {
    std::env::var("BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_functions_measure_real_calls_instantiations_and_reloads() {
    let v1 = guest("version-1");
    let v2 = guest("version-2");

    let (wasm, native) = call_vs_native(&v1, samples(200), Arc::new(Sink))
        .await
        .expect("call vs native");
    println!(
        "call: wasm median {:?} p99 {:?}; native median {:?} p99 {:?}; ratio {:.1}",
        wasm.median,
        wasm.p99,
        native.median,
        native.p99,
        wasm.median.as_secs_f64() / native.median.as_secs_f64().max(1e-9)
    );
    assert!(wasm.median > Duration::ZERO, "{wasm:?}");
    assert!(
        native.samples > 0 && wasm.samples > 0,
        "{native:?} {wasm:?}"
    );

    let (on_demand, pooling) = instantiation(&v1, World::Controller, samples(100))
        .await
        .expect("instantiation");
    println!(
        "instantiate: on-demand median {:?} p99 {:?}; pooling median {:?} p99 {:?}",
        on_demand.median, on_demand.p99, pooling.median, pooling.p99
    );
    assert!(
        on_demand.median > Duration::ZERO && pooling.median > Duration::ZERO,
        "{on_demand:?} {pooling:?}"
    );

    let reload = reload_latency(&v1, &v2, samples(10), Arc::new(Sink))
        .await
        .expect("reload latency");
    println!(
        "reload: median {:?} p99 {:?} over {} reloads",
        reload.median, reload.p99, reload.samples
    );
    assert_eq!(
        reload.samples,
        samples(10),
        "every reload was measured: {reload:?}"
    );
}
