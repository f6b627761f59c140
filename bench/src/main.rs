//! reactor-bench: scenarios measured against a native baseline in the same run. Absolute
//! times on a shared machine are noise; the ratios are the result.

mod end_to_end;
mod store;

use std::path::PathBuf;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let components = PathBuf::from(
        args.next()
            .ok_or_else(|| anyhow::anyhow!("usage: reactor-bench COMPONENTS_DIR [OBJECTS]"))?,
    );
    let objects = args.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("machine: {cores} cores");

    for writers in [1, 8, 64] {
        let s = store::measure(writers, 8_000).await?;
        println!(
            "store, {} writers, {} durable writes: {:.0} writes/s, watch lag p50 {:?} p99 {:?}",
            s.writers, s.writes, s.writes_per_s, s.lag_p50, s.lag_p99
        );
    }

    let read = |name: &str| std::fs::read(components.join(format!("{name}.wasm")));
    let (v1, v2) = (read("version-1")?, read("version-2")?);
    let (wasm, native) = reactor_host::runtime::bench::call_vs_native(&v1, 500).await?;
    println!(
        "call: wasm median {:?} p99 {:?}; native median {:?}; wasm/native {:.1}",
        wasm.median,
        wasm.p99,
        native.median,
        wasm.median.as_secs_f64() / native.median.as_secs_f64().max(1e-9)
    );
    let (on_demand, pooling) = reactor_host::runtime::bench::instantiation(
        &v1,
        reactor_host::runtime::World::Controller,
        200,
    )
    .await?;
    println!(
        "instantiate: on-demand median {:?}, pooling median {:?}",
        on_demand.median, pooling.median
    );
    let reload = reactor_host::runtime::bench::reload_latency(&v1, &v2, 20).await?;
    println!(
        "reload (file written → new version serving): median {:?} p99 {:?}",
        reload.median, reload.p99
    );

    let e2e = end_to_end::measure(objects, &components.join("policy-rust.wasm")).await?;
    println!(
        "end-to-end, {} objects apply→status: wasm {:.0}/s, native {:.0}/s, wasm/native cost {:.2}",
        e2e.objects,
        e2e.wasm_per_s,
        e2e.native_per_s,
        e2e.native_per_s / e2e.wasm_per_s
    );
    Ok(())
}
