//! Compiled components are cached on disk: a restart does not recompile, and a corrupt
//! cache entry is discarded, never trusted.

use reactor_host::runtime::{Action, ComponentState, Runtime, RuntimeConfig, RuntimeStats, World};
use reactor_testkit::{RecordingHost, guest, object};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Starts a runtime on `data`, loads `components`, makes one call; returns its stats.
async fn start(data: &Path, components: &Path) -> RuntimeStats {
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(data);
    config.host = host.clone();
    let runtime = Runtime::new(config).expect("runtime");
    runtime
        .watch_dir(components, World::Controller)
        .await
        .expect("watch");
    let info = runtime.component("echo").expect("echo loaded");
    assert_eq!(info.state, ComponentState::Ready, "{info:?}");
    let reaction = runtime
        .controller("echo")
        .on_create(&object("Echo", "a", json!({})))
        .await;
    assert_eq!(reaction, Ok(Ok(Action::Done)));
    assert_eq!(
        host.status("Echo", "a").expect("status")["version"],
        "version-1"
    );
    runtime.stats()
}

fn cache_entries(data: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(data.join("cache"))
        .expect("cache folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    entries
}

#[tokio::test]
async fn a_restart_uses_the_cache_and_a_corrupt_entry_is_discarded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components).expect("components");
    std::fs::write(components.join("echo.wasm"), guest("version-1")).expect("write");

    let first = start(&data, &components).await;
    assert_eq!(
        first,
        RuntimeStats {
            compiled: 1,
            cache_hits: 0,
            cache_discarded: 0
        }
    );
    let entries = cache_entries(&data);
    assert_eq!(entries.len(), 2, "code and checksum: {entries:?}");

    let restarted = start(&data, &components).await;
    assert_eq!(
        restarted,
        RuntimeStats {
            compiled: 0,
            cache_hits: 1,
            cache_discarded: 0
        }
    );

    // Flip bytes in the middle of the compiled code: the checksum no longer matches.
    let code = entries
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .expect("code entry");
    let mut bytes = std::fs::read(code).expect("read code");
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 64] {
        *b ^= 0xff;
    }
    std::fs::write(code, &bytes).expect("corrupt code");
    let after_corruption = start(&data, &components).await;
    assert_eq!(
        after_corruption,
        RuntimeStats {
            compiled: 1,
            cache_hits: 0,
            cache_discarded: 1
        }
    );

    // Bytes that are not wasmtime's at all, even with a matching checksum, fail
    // wasmtime's own header check and the entry is discarded.
    std::fs::write(code, b"not compiled code").expect("garbage");
    let sum = code.with_extension("sha256");
    let garbage_sum = {
        use sha2::Digest;
        sha2::Sha256::digest(b"not compiled code")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    std::fs::write(&sum, garbage_sum).expect("matching checksum");
    let after_garbage = start(&data, &components).await;
    assert_eq!(
        after_garbage,
        RuntimeStats {
            compiled: 1,
            cache_hits: 0,
            cache_discarded: 1
        }
    );

    // The entry written after recompiling is sound again.
    let healed = start(&data, &components).await;
    assert_eq!(
        healed,
        RuntimeStats {
            compiled: 0,
            cache_hits: 1,
            cache_discarded: 0
        }
    );
}
