//! Guest and example components, built from source once per test process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Shared with the runtime tests, so the guests are compiled once per target folder.
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guests-target")
}

/// The folder holding `<name>.wasm` for every guest and example.
pub fn built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("components");
        let status = Command::new("bash")
            .arg(root.join("scripts/build-components.sh"))
            .arg("--with-test-guests")
            .arg(&out)
            .env("CARGO_TARGET_DIR", target_dir())
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
