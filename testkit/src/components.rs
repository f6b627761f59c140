//! Guest and example components built from source once per process: the examples by
//! `scripts/build-components.sh`, the test guests of `guests/` by cargo.

use crate::binary::target_tmpdir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The crates of `guests/` built together (controller world).
const CONTROLLER_GUESTS: &[&str] = &[
    "version-1",
    "version-2",
    "version-trap",
    "version-loop",
    "misbehave",
    "bad-describe",
];
/// Built on their own (descriptor world).
const DESCRIPTOR_GUESTS: &[&str] = &["files-descriptor"];

/// The repository's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Shared by every test binary, so the guests are compiled once per target folder.
fn guest_target_dir() -> PathBuf {
    target_tmpdir().join("guests-target")
}

/// The folder holding `<name>.wasm` for every guest and example
/// (`scripts/build-components.sh` into the target folder's scratch space).
pub fn built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = target_tmpdir().join("components");
        let status = Command::new("bash")
            .arg(root().join("scripts/build-components.sh"))
            .arg("--with-test-guests")
            .arg(&out)
            .env("CARGO_TARGET_DIR", guest_target_dir())
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run scripts/build-components.sh");
        assert!(status.success(), "building the components failed");
        out
    })
}

/// Copies component `name` into `dir` as `<name>.wasm`.
pub fn install(name: &str, dir: &Path) {
    std::fs::create_dir_all(dir).expect("components folder");
    let from = built().join(format!("{name}.wasm"));
    std::fs::copy(&from, dir.join(format!("{name}.wasm")))
        .unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
}

fn cargo_build(crates: &[&str]) {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root().join("guests"))
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", guest_target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET");
    for krate in crates {
        cmd.args(["-p", krate]);
    }
    let status = cmd.status().expect("run cargo to build the guests");
    assert!(status.success(), "building guests {crates:?} failed");
}

/// Builds the test guests once per process (cargo's lock serialises processes).
fn guests_built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        cargo_build(CONTROLLER_GUESTS);
        cargo_build(DESCRIPTOR_GUESTS);
        guest_target_dir().join("wasm32-wasip2/release")
    })
}

/// The component built from guest crate `name` (e.g. `version-1`).
pub fn guest(name: &str) -> Vec<u8> {
    let path = guests_built().join(format!("{}.wasm", name.replace('-', "_")));
    std::fs::read(&path).unwrap_or_else(|e| panic!("read guest {}: {e}", path.display()))
}
