//! Components built against older versions of `reactor:host`, kept as fixtures in
//! `testkit/fixtures/reactor-host-<version>/` (compressed), unpacked once per process.

use crate::binary::target_tmpdir;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The path of the unpacked 0.1.0 build of example `name` (e.g. `policy-rust`).
pub fn v0_1_0(name: &str) -> PathBuf {
    built_against("0.1.0", name)
}

/// The path of the unpacked build of example `name` kept from `reactor:host@<version>`.
pub fn built_against(version: &str, name: &str) -> PathBuf {
    // The tests of one process ask at once: one unpacks, the others wait and share it.
    static UNPACKED: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut unpacked = UNPACKED.lock();
    let folder = format!("reactor-host-{version}");
    let id = format!("{folder}/{name}");
    if let Some(path) = unpacked.get(&id) {
        return path.clone();
    }
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(&folder)
        .join(format!("{name}.wasm.zst"));
    let dir = target_tmpdir().join(&folder);
    std::fs::create_dir_all(&dir).expect("fixture folder");
    let to = dir.join(format!("{name}.wasm"));
    let packed = std::fs::read(&from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    let bytes = zstd::decode_all(packed.as_slice())
        .unwrap_or_else(|e| panic!("unpack {}: {e}", from.display()));
    // Written aside and renamed: another test process may read the same file meanwhile.
    let partial = dir.join(format!(".{name}.{}.part", std::process::id()));
    std::fs::write(&partial, bytes).expect("write the unpacked fixture");
    std::fs::rename(&partial, &to).expect("move the unpacked fixture");
    unpacked.insert(id, to.clone());
    to
}
