//! Hot reload: replacing the file changes behaviour without a restart; calls during rapid
//! replacements all succeed on one version or the other; bad files leave the old version
//! serving with a clear error.

use reactor_host::runtime::{
    Action, ComponentEvent, ComponentState, ControllerHandle, Runtime, RuntimeConfig, World,
    version_of,
};
use reactor_testkit::{RecordingHost, eventually_async, guest, object};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

struct Fixture {
    _dir: tempfile::TempDir,
    components: PathBuf,
    runtime: Runtime,
    host: Arc<RecordingHost>,
}

async fn serving_version_1() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components).expect("components dir");
    std::fs::write(components.join("echo.wasm"), guest("version-1")).expect("write v1");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    let runtime = Runtime::new(config).expect("runtime");
    runtime
        .watch_dir(&components, World::Controller)
        .await
        .expect("watch");
    let info = runtime.component("echo").expect("loaded at watch start");
    assert_eq!(info.state, ComponentState::Ready, "{info:?}");
    Fixture {
        _dir: dir,
        components,
        runtime,
        host,
    }
}

/// Calls on-create for `name` and returns the version that handled it.
async fn version(echo: &ControllerHandle, host: &RecordingHost, name: &str) -> String {
    let reaction = echo
        .on_create(&object("Echo", name, json!({"n": 1})))
        .await
        .expect("call succeeds");
    assert_eq!(reaction, Ok(Action::Done));
    let status = host.status("Echo", name).expect("status set");
    status["version"]
        .as_str()
        .expect("version in status")
        .to_owned()
}

#[tokio::test]
async fn replacing_the_file_changes_behaviour_without_a_restart() {
    let f = serving_version_1().await;
    let echo = f.runtime.controller("echo");
    assert_eq!(version(&echo, &f.host, "a").await, "version-1");
    let first = f.runtime.component("echo").expect("known").sha256;

    let mut events = f.runtime.subscribe();
    std::fs::write(f.components.join("echo.wasm"), guest("version-2")).expect("write v2");
    let loaded = tokio::time::timeout(LOAD_TIMEOUT, async {
        loop {
            match events.recv().await.expect("events") {
                ComponentEvent::Loaded { name, sha256, .. } if name == "echo" => return sha256,
                _ => continue,
            }
        }
    })
    .await
    .expect("a Loaded event for echo");
    assert_ne!(Some(loaded.clone()), first);
    assert_eq!(version(&echo, &f.host, "a").await, "version-2");
    assert_eq!(
        f.runtime.component("echo").expect("known").sha256,
        Some(loaded)
    );
}

#[tokio::test]
async fn calls_during_fifty_rapid_replacements_all_succeed_on_one_version() {
    let f = serving_version_1().await;
    let echo = f.runtime.controller("echo");
    let v1 = guest("version-1");
    let v2 = guest("version-2");
    let stop = Arc::new(AtomicBool::new(false));

    let callers: Vec<_> = (0..3)
        .map(|i| {
            let echo = echo.clone();
            let host = f.host.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let name = format!("c{i}-{n}");
                    seen.push(version(&echo, &host, &name).await);
                }
                seen
            })
        })
        .collect();

    let file = f.components.join("echo.wasm");
    for round in 0..50 {
        let bytes = if round % 2 == 0 { &v2 } else { &v1 };
        tokio::fs::write(&file, bytes)
            .await
            .expect("replace the file");
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    // The last write was version-1; wait until it serves, calls still running.
    eventually_async(
        "version-1 to serve after the replacements",
        LOAD_TIMEOUT,
        || {
            let info = f.runtime.component("echo")?;
            (info.state == ComponentState::Ready && info.sha256.is_some()).then_some(())
        },
    )
    .await;
    let mut last = String::new();
    for i in 0..200 {
        last = version(&echo, &f.host, &format!("final-{i}")).await;
        if last == "version-1" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(last, "version-1");
    stop.store(true, Ordering::Relaxed);

    let mut total = 0;
    for caller in callers {
        let seen = caller.await.expect("caller task");
        total += seen.len();
        assert!(
            seen.iter().all(|v| v == "version-1" || v == "version-2"),
            "{seen:?}"
        );
    }
    assert!(total > 0, "the callers made calls during the replacements");
}

/// Writes `bytes` over echo.wasm and waits for the load to fail; returns the error.
async fn replace_and_fail(f: &Fixture, bytes: &[u8]) -> String {
    let mut events = f.runtime.subscribe();
    std::fs::write(f.components.join("echo.wasm"), bytes).expect("write the bad file");
    let error = tokio::time::timeout(LOAD_TIMEOUT, async {
        loop {
            match events.recv().await.expect("events") {
                ComponentEvent::Failed { name, error } if name == "echo" => return error,
                ComponentEvent::Loaded { name, .. } if name == "echo" => {
                    panic!("a bad file was loaded")
                }
                _ => continue,
            }
        }
    })
    .await
    .expect("a Failed event for echo");
    let info = f.runtime.component("echo").expect("still known");
    assert_eq!(info.state, ComponentState::Failed);
    assert_eq!(info.error.as_deref(), Some(error.as_str()));
    assert!(info.serving, "the old version keeps serving");
    error
}

#[tokio::test]
async fn bad_files_leave_the_previous_version_serving_with_a_clear_error() {
    let f = serving_version_1().await;
    let echo = f.runtime.controller("echo");
    let good_sha = f.runtime.component("echo").expect("known").sha256;

    let v2 = guest("version-2");
    let truncated = replace_and_fail(&f, &v2[..v2.len() / 2]).await;
    assert!(truncated.starts_with("compile "), "{truncated}");
    assert_eq!(version(&echo, &f.host, "a").await, "version-1");

    let wrong_world = replace_and_fail(&f, &guest("files-descriptor")).await;
    assert!(
        wrong_world.contains("is a descriptor component, expected a controller component"),
        "{wrong_world}"
    );
    assert_eq!(version(&echo, &f.host, "b").await, "version-1");

    let core = wat::parse_str("(module (func (export \"hello\")))").expect("core module");
    let core_error = replace_and_fail(&f, &core).await;
    assert!(
        core_error.contains("is a core wasm module, not a component"),
        "{core_error}"
    );
    assert_eq!(version(&echo, &f.host, "c").await, "version-1");

    let describe = replace_and_fail(&f, &guest("bad-describe")).await;
    assert!(
        describe.starts_with("describe echo: guest trapped"),
        "{describe}"
    );
    assert_eq!(version(&echo, &f.host, "d").await, "version-1");

    let empty = replace_and_fail(&f, b"").await;
    assert!(empty.starts_with("compile "), "{empty}");
    assert_eq!(f.runtime.component("echo").expect("known").sha256, good_sha);

    // A good file after all that loads and clears the error.
    std::fs::write(f.components.join("echo.wasm"), &v2).expect("write v2");
    eventually_async("version-2 to load", LOAD_TIMEOUT, || {
        let info = f.runtime.component("echo")?;
        (info.state == ComponentState::Ready && info.sha256 != good_sha).then_some(())
    })
    .await;
    assert_eq!(version(&echo, &f.host, "e").await, "version-2");
}

#[tokio::test]
async fn a_new_file_that_fails_is_listed_as_failed_and_not_serving() {
    let f = serving_version_1().await;
    std::fs::write(f.components.join("broken.wasm"), b"\0asm garbage").expect("write");
    let info = eventually_async("broken to be loaded", LOAD_TIMEOUT, || {
        f.runtime
            .component("broken")
            .filter(|info| info.state != ComponentState::Loading)
    })
    .await;
    assert_eq!(info.state, ComponentState::Failed);
    assert!(!info.serving);
    assert!(
        info.error
            .as_deref()
            .is_some_and(|e| e.starts_with("compile ")),
        "{info:?}"
    );
    // Others are unaffected.
    assert_eq!(
        f.runtime.component("echo").expect("echo").state,
        ComponentState::Ready
    );
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_version_it_started_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let components = dir.path().join("components");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    let runtime = Runtime::new(config).expect("runtime");
    std::fs::create_dir_all(&components).expect("components");
    std::fs::write(components.join("swap.wasm"), guest("misbehave")).expect("write");
    runtime
        .watch_dir(&components, World::Controller)
        .await
        .expect("watch");
    let swap = runtime.controller("swap");

    let slow = {
        let swap = swap.clone();
        tokio::spawn(async move {
            swap.on_create(&object("Chaos", "slow", json!({"do": "sleep", "ms": 4000})))
                .await
        })
    };
    // Swap in another component under the same name while the call sleeps (4 s, under the
    // 5 s deadline, so that a loaded machine still swaps before it wakes).
    let mut events = runtime.subscribe();
    std::fs::write(components.join("swap.wasm"), guest("version-2")).expect("replace");
    tokio::time::timeout(LOAD_TIMEOUT, async {
        while !matches!(
            events.recv().await.expect("events"),
            ComponentEvent::Loaded { .. }
        ) {}
    })
    .await
    .expect("the new version loads");
    assert!(
        !slow.is_finished(),
        "the slow call must still be running when the swap happens"
    );
    assert_eq!(version(&swap, &host, "new").await, "version-2");

    assert_eq!(slow.await.expect("task"), Ok(Ok(Action::Done)));
    assert_eq!(host.status("Chaos", "slow").expect("status")["slept"], 4000);
}

/// A runtime keeping versions in `data/versions`, with `echo.wasm` loaded from `components`.
fn keeping_versions(data: &std::path::Path, host: &Arc<RecordingHost>) -> Runtime {
    let mut config = RuntimeConfig::new(data);
    config.host = host.clone();
    config.versions_dir = Some(data.join("versions"));
    Runtime::new(config).expect("runtime")
}

#[tokio::test]
async fn a_version_rolled_back_stays_out_after_a_restart_until_cleared() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, file) = (dir.path().join("data"), dir.path().join("echo.wasm"));
    let host = Arc::new(RecordingHost::default());
    let runtime = keeping_versions(&data, &host);
    std::fs::write(&file, guest("version-1")).expect("write v1");
    let v1 = runtime
        .load_file(&file, World::Controller)
        .await
        .expect("v1");
    std::fs::write(&file, guest("version-2")).expect("write v2");
    let v2 = runtime
        .load_file(&file, World::Controller)
        .await
        .expect("v2");
    let (v1, v2) = (v1.sha256.expect("v1 serves"), v2.sha256.expect("v2 serves"));
    let rejection = runtime
        .rejection("echo", &version_of(&v2), "broken")
        .expect("v2 serves and v1 is kept");
    runtime.reject("echo", rejection.clone()).await;
    let echo = runtime.controller("echo");
    assert_eq!(version(&echo, &host, "a").await, "version-1");
    drop((echo, runtime));

    // Restarted with the rejection seeded first: the file is v2, v1 serves from the kept wasm.
    let runtime = keeping_versions(&data, &host);
    runtime.reject("echo", rejection.clone()).await;
    let info = runtime
        .load_file(&file, World::Controller)
        .await
        .expect("loads");
    assert_eq!(info.sha256.as_deref(), Some(v1.as_str()), "{info:?}");
    assert_eq!(info.state, ComponentState::Ready, "{info:?}");
    let shown = format!("{}: broken", version_of(&v2));
    assert_eq!(info.rolled_back.as_deref(), Some(shown.as_str()));
    let echo = runtime.controller("echo");
    assert_eq!(version(&echo, &host, "b").await, "version-1");

    // Cleared: the file's version serves.
    assert!(runtime.clear_rejection("echo").await);
    assert!(!runtime.clear_rejection("echo").await, "once only");
    assert_eq!(version(&echo, &host, "c").await, "version-2");
    let info = runtime.component("echo").expect("known");
    assert_eq!(info.rolled_back, None, "{info:?}");
    drop((echo, runtime));

    // Without v1's wasm nothing serves, never v2.
    std::fs::remove_dir_all(data.join("versions")).expect("kept versions");
    let runtime = keeping_versions(&data, &host);
    runtime.reject("echo", rejection).await;
    let error = runtime
        .load_file(&file, World::Controller)
        .await
        .expect_err("nothing can serve")
        .to_string();
    assert!(
        error.contains(&format!(
            "the version it was rolled back to, {}, is not kept here",
            version_of(&v1)
        )),
        "{error}"
    );
    let info = runtime.component("echo").expect("listed");
    assert!(!info.serving, "{info:?}");
    assert_eq!(info.state, ComponentState::Failed, "{info:?}");
    assert!(runtime.controller("echo").pin().is_none(), "not serving");
}
