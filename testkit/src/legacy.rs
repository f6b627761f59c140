//! Components built against `reactor:host@0.1.0`, kept as fixtures in
//! `tests/fixtures/reactor-host-0.1.0/` (compressed), unpacked once per process.

use crate::binary::target_tmpdir;
use std::path::{Path, PathBuf};

/// The path of the unpacked 0.1.0 build of example `name` (e.g. `policy-rust`).
pub fn v0_1_0(name: &str) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/reactor-host-0.1.0")
        .join(format!("{name}.wasm.zst"));
    let dir = target_tmpdir().join("reactor-host-0.1.0");
    std::fs::create_dir_all(&dir).expect("fixture folder");
    let to = dir.join(format!("{name}.wasm"));
    let packed = std::fs::read(&from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    let bytes = zstd::decode_all(packed.as_slice())
        .unwrap_or_else(|e| panic!("unpack {}: {e}", from.display()));
    // Written aside and renamed: tests of one process may unpack the same fixture at once.
    let partial = dir.join(format!(".{name}.{}.part", std::process::id()));
    std::fs::write(&partial, bytes).expect("write the unpacked fixture");
    std::fs::rename(&partial, &to).expect("move the unpacked fixture");
    to
}
