//! reactor-bench: scenarios measured against a peer or a native baseline in the same run.

mod end_to_end;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let wasm = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: reactor-bench POLICY_WASM [OBJECTS]"))?;
    let count = args.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let result = end_to_end::measure(count, std::path::Path::new(&wasm)).await?;
    println!(
        "end-to-end, {} objects: wasm {:.0}/s, native {:.0}/s, wasm/native cost ratio {:.2}",
        result.objects,
        result.wasm_per_s,
        result.native_per_s,
        result.native_per_s / result.wasm_per_s
    );
    Ok(())
}
