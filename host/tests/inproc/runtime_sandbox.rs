//! The sandbox: deadlines, memory caps, traps, and WASI capabilities only when granted.
//! The host's threads are never blocked by a guest.

use reactor_host::runtime::{
    Action, CallError, ControllerHandle, ReactorError, Runtime, RuntimeConfig, RuntimeSettings,
    World,
};
use reactor_testkit::{RecordingHost, guest, object};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Fixture {
    dir: tempfile::TempDir,
    runtime: Runtime,
    host: Arc<RecordingHost>,
}

/// Loads `misbehave` with the given YAML entry body (indented under `misbehave:`).
async fn misbehave(entry: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    let yaml = format!("components:\n  misbehave:\n{entry}");
    config.settings =
        RuntimeSettings::from_yaml(Path::new("inline"), &yaml).expect("valid settings");
    let runtime = Runtime::new(config).expect("runtime");
    runtime
        .install(
            &dir.path().join("components"),
            World::Controller,
            "misbehave",
            &guest("misbehave"),
        )
        .await
        .expect("load misbehave");
    Fixture { dir, runtime, host }
}

async fn order(
    m: &ControllerHandle,
    spec: Value,
) -> Result<Result<Action, ReactorError>, CallError> {
    m.on_create(&object("Chaos", "x", spec)).await
}

/// A `count` call: succeeds and returns the instance's call count.
async fn count(f: &Fixture) -> u64 {
    let m = f.runtime.controller("misbehave");
    assert_eq!(
        order(&m, json!({"do": "count"})).await,
        Ok(Ok(Action::Done))
    );
    f.host.status("Chaos", "x").expect("status")["calls"]
        .as_u64()
        .expect("calls")
}

#[tokio::test]
async fn an_endless_loop_is_stopped_at_its_deadline_and_the_next_call_works() {
    let f = misbehave("    limits: {deadline_ms: 300}\n").await;
    let m = f.runtime.controller("misbehave");
    assert_eq!(count(&f).await, 1);
    let started = Instant::now();
    assert_eq!(
        order(&m, json!({"do": "loop"})).await,
        Err(CallError::Deadline(300))
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    // The looping instance was discarded: the next call runs on a fresh one.
    assert_eq!(count(&f).await, 1);
    assert_eq!(f.runtime.component("misbehave").expect("known").traps, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_looping_guest_does_not_block_the_async_thread() {
    let f = misbehave("    limits: {deadline_ms: 1000}\n").await;
    let m = f.runtime.controller("misbehave");
    let looping = tokio::spawn(async move { order(&m, json!({"do": "loop"})).await });
    // On this single-threaded runtime, timers still fire while the guest loops.
    let started = Instant::now();
    let mut ticks = 0;
    while !looping.is_finished() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        ticks += 1;
    }
    assert_eq!(looping.await.expect("task"), Err(CallError::Deadline(1000)));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        ticks >= 10,
        "only {ticks} timer ticks ran during a 1 s guest loop"
    );
}

#[tokio::test]
async fn unbounded_allocation_is_stopped_at_the_memory_cap() {
    let f = misbehave("    limits: {memory_bytes: 33554432, deadline_ms: 10000}\n").await;
    let m = f.runtime.controller("misbehave");
    assert_eq!(
        order(&m, json!({"do": "alloc"})).await,
        Err(CallError::MemoryCap(32 << 20))
    );
    assert_eq!(count(&f).await, 1);
}

#[tokio::test]
async fn a_trap_does_not_affect_the_next_call() {
    let f = misbehave("    revision: 1\n").await;
    let m = f.runtime.controller("misbehave");
    assert_eq!(count(&f).await, 1);
    assert_eq!(count(&f).await, 2);
    let trapped = order(&m, json!({"do": "panic"})).await;
    assert!(
        matches!(&trapped, Err(CallError::Trap(msg)) if msg.contains("unreachable")),
        "{trapped:?}"
    );
    assert_eq!(count(&f).await, 1, "a fresh instance after the trap");
    assert_eq!(count(&f).await, 2);
    let info = f.runtime.component("misbehave").expect("known");
    assert_eq!(info.traps, 1);
}

fn refused(result: Result<Result<Action, ReactorError>, CallError>, prefix: &str) -> String {
    match result {
        Ok(Err(ReactorError::Permanent(message))) if message.starts_with(prefix) => message,
        other => panic!("expected a refusal starting with {prefix:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn files_and_sockets_are_refused_unless_granted() {
    let f = misbehave("    revision: 1\n").await;
    let m = f.runtime.controller("misbehave");
    let secret = f.dir.path().join("secret.txt");
    std::fs::write(&secret, "top secret").expect("write secret");

    refused(
        order(&m, json!({"do": "read-file", "path": secret})).await,
        "read ",
    );
    refused(
        order(&m, json!({"do": "read-file", "path": "/etc/hostname"})).await,
        "read /etc/hostname",
    );
    refused(
        order(
            &m,
            json!({"do": "write-file", "path": "/tmp/escape", "text": "x"}),
        )
        .await,
        "write /tmp/escape",
    );
    assert!(!Path::new("/tmp/escape").exists());

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr").to_string();
    refused(
        order(&m, json!({"do": "connect", "addr": addr})).await,
        "connect ",
    );
    assert!(
        listener.accept().is_err(),
        "the guest must not have connected"
    );
    // Refusals are answers, not traps.
    assert_eq!(f.runtime.component("misbehave").expect("known").traps, 0);
}

#[tokio::test]
async fn granted_folders_are_reachable_with_their_access_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ro = dir.path().join("ro");
    let rw = dir.path().join("rw");
    std::fs::create_dir_all(&ro).expect("ro");
    std::fs::create_dir_all(&rw).expect("rw");
    std::fs::write(ro.join("in.txt"), "12345").expect("input");
    let entry = format!(
        "    grants:\n      dirs:\n        - {{host: {}, guest: /ro}}\n        - {{host: {}, guest: /rw, mode: rw}}\n",
        ro.display(),
        rw.display()
    );
    let f = misbehave(&entry).await;
    let m = f.runtime.controller("misbehave");

    assert_eq!(
        order(&m, json!({"do": "read-file", "path": "/ro/in.txt"})).await,
        Ok(Ok(Action::Done))
    );
    assert_eq!(f.host.status("Chaos", "x").expect("status")["read"], 5);
    refused(
        order(
            &m,
            json!({"do": "write-file", "path": "/ro/out.txt", "text": "x"}),
        )
        .await,
        "write /ro/out.txt",
    );
    assert!(!ro.join("out.txt").exists());
    assert_eq!(
        order(
            &m,
            json!({"do": "write-file", "path": "/rw/out.txt", "text": "hi"})
        )
        .await,
        Ok(Ok(Action::Done))
    );
    assert_eq!(
        std::fs::read_to_string(rw.join("out.txt")).expect("written"),
        "hi"
    );
    // Outside the grants, still nothing.
    refused(
        order(&m, json!({"do": "read-file", "path": "/etc/hostname"})).await,
        "read /etc/hostname",
    );
}

#[tokio::test]
async fn guest_output_does_not_break_the_call() {
    let f = misbehave("    revision: 1\n").await;
    let m = f.runtime.controller("misbehave");
    assert_eq!(
        order(&m, json!({"do": "print", "text": "hello from the guest"})).await,
        Ok(Ok(Action::Done))
    );
    assert_eq!(
        f.host.status("Chaos", "x").expect("status")["printed"],
        "hello from the guest"
    );
}

#[tokio::test]
async fn calls_beyond_the_concurrency_limit_wait_their_turn() {
    let f = misbehave("    limits: {concurrency: 2}\n").await;
    let m = f.runtime.controller("misbehave");
    let started = Instant::now();
    let calls: Vec<_> = (0..4)
        .map(|i| {
            let m = m.clone();
            tokio::spawn(async move {
                m.on_create(&object(
                    "Chaos",
                    &format!("s{i}"),
                    json!({"do": "sleep", "ms": 300}),
                ))
                .await
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.expect("task"), Ok(Ok(Action::Done)));
    }
    let took = started.elapsed();
    // Four 300 ms calls, two at a time: two rounds.
    assert!(took >= Duration::from_millis(600), "{took:?}");
    assert!(took < Duration::from_millis(1100), "{took:?}");
}
