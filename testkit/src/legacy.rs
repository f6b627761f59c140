//! Components built against `reactor:host@0.1.0`, kept as fixtures in
//! `tests/fixtures/reactor-host-0.1.0/` (compressed), unpacked once per process.

use crate::binary::target_tmpdir;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The path of the unpacked 0.1.0 build of example `name` (e.g. `policy-rust`).
pub fn v0_1_0(name: &str) -> PathBuf {
    // The tests of one process ask at once: one unpacks, the others wait and share it.
    static UNPACKED: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut unpacked = UNPACKED.lock();
    if let Some(path) = unpacked.get(name) {
        return path.clone();
    }
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/reactor-host-0.1.0")
        .join(format!("{name}.wasm.zst"));
    let dir = target_tmpdir().join("reactor-host-0.1.0");
    std::fs::create_dir_all(&dir).expect("fixture folder");
    let to = dir.join(format!("{name}.wasm"));
    let packed = std::fs::read(&from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    let bytes = zstd::decode_all(packed.as_slice())
        .unwrap_or_else(|e| panic!("unpack {}: {e}", from.display()));
    // Written aside and renamed: another test process may read the same file meanwhile.
    let partial = dir.join(format!(".{name}.{}.part", std::process::id()));
    std::fs::write(&partial, bytes).expect("write the unpacked fixture");
    std::fs::rename(&partial, &to).expect("move the unpacked fixture");
    unpacked.insert(name.to_owned(), to.clone());
    to
}
