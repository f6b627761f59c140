//! A component file as the `component` commands read it: at most the runtime's limit, and a
//! component, not a core module.

use anyhow::Context;

/// A component file's bytes: at most the runtime's limit, and a component, not a core module.
pub fn read(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("read {}", path.display()))?
        .len();
    if size > crate::runtime::MAX_COMPONENT_BYTES {
        anyhow::bail!(
            "{} is {size} bytes, more than the {} a component may have",
            path.display(),
            crate::runtime::MAX_COMPONENT_BYTES
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        anyhow::bail!("{} is not WebAssembly", path.display());
    }
    if bytes[4..8] == [1, 0, 0, 0] {
        anyhow::bail!(
            "{} is a core wasm module, not a component (build it for wasm32-wasip2)",
            path.display()
        );
    }
    Ok(bytes)
}
