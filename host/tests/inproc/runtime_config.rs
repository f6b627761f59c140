//! The config file: per-component config, limits and revision; a changed entry with a
//! higher revision is re-applied without a restart; unknown fields are an error.

use reactor_host::runtime::{Action, CallError, Runtime, RuntimeConfig, RuntimeSettings, World};
use reactor_testkit::{RecordingHost, eventually_async, guest, object};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

struct Fixture {
    _dir: tempfile::TempDir,
    config: PathBuf,
    runtime: Runtime,
    host: Arc<RecordingHost>,
}

async fn start(initial: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let config_path = dir.path().join("reactor.yaml");
    std::fs::write(&config_path, initial).expect("write config");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    let runtime = Runtime::new(config).expect("runtime");
    runtime
        .watch_config(&config_path)
        .await
        .expect("watch config");
    let components = dir.path().join("components");
    std::fs::create_dir_all(&components).expect("components");
    std::fs::write(components.join("echo.wasm"), guest("version-1")).expect("write");
    std::fs::write(components.join("misbehave.wasm"), guest("misbehave")).expect("write");
    runtime
        .watch_dir(&components, World::Controller)
        .await
        .expect("watch");
    Fixture {
        _dir: dir,
        config: config_path,
        runtime,
        host,
    }
}

/// The config the echo guest sees, with its revision.
async fn echo_config(f: &Fixture) -> (Value, u64) {
    let reaction = f
        .runtime
        .controller("echo")
        .on_create(&object("Echo", "a", json!({})))
        .await;
    assert_eq!(reaction, Ok(Ok(Action::Done)));
    let status = f.host.status("Echo", "a").expect("status");
    (
        status["config"].clone(),
        status["configRevision"].as_u64().expect("revision"),
    )
}

fn entry(revision: u64, greeting: &str) -> String {
    format!(
        "components:\n  echo:\n    revision: {revision}\n    config: {{greeting: {greeting}}}\n"
    )
}

#[tokio::test]
async fn a_higher_revision_is_applied_without_a_restart() {
    let f = start(&entry(1, "one")).await;
    assert_eq!(echo_config(&f).await, (json!({"greeting": "one"}), 1));
    assert_eq!(f.runtime.component("echo").expect("echo").revision, 1);

    std::fs::write(&f.config, entry(2, "two")).expect("rewrite config");
    eventually_async("revision 2 to apply", TIMEOUT, || {
        (f.runtime.component("echo")?.revision == 2).then_some(())
    })
    .await;
    assert_eq!(echo_config(&f).await, (json!({"greeting": "two"}), 2));

    // The same revision with other contents is not applied (latest revision wins).
    let merge = f
        .runtime
        .apply_settings(
            RuntimeSettings::from_yaml(Path::new("inline"), &entry(2, "other")).expect("valid"),
        )
        .await;
    assert_eq!(merge.stale, vec!["echo".to_owned()]);
    assert_eq!(echo_config(&f).await, (json!({"greeting": "two"}), 2));
}

#[tokio::test]
async fn a_config_file_with_unknown_fields_is_refused_and_the_old_one_stays() {
    let f = start(&entry(1, "one")).await;
    std::fs::write(
        &f.config,
        "components:\n  echo:\n    revision: 5\n    confg: {greeting: typo}\n",
    )
    .expect("write");
    let error = eventually_async("the config error", TIMEOUT, || f.runtime.config_error()).await;
    assert!(error.contains("unknown field `confg`"), "{error}");
    assert_eq!(echo_config(&f).await, (json!({"greeting": "one"}), 1));

    let err = RuntimeSettings::from_yaml(Path::new("x.yaml"), "components: {}\nextra: 1\n")
        .expect_err("refused");
    assert!(
        err.to_string()
            .starts_with("config x.yaml: unknown field `extra`"),
        "{err}"
    );
}

#[tokio::test]
async fn new_limits_apply_to_the_next_calls() {
    let f = start("components:\n  misbehave:\n    revision: 1\n    limits: {deadline_ms: 5000}\n")
        .await;
    std::fs::write(
        &f.config,
        "components:\n  misbehave:\n    revision: 2\n    limits: {deadline_ms: 200}\n",
    )
    .expect("rewrite config");
    eventually_async("revision 2 to apply", TIMEOUT, || {
        (f.runtime.component("misbehave")?.revision == 2).then_some(())
    })
    .await;
    let looped = f
        .runtime
        .controller("misbehave")
        .on_create(&object("Chaos", "x", json!({"do": "loop"})))
        .await;
    assert_eq!(looped, Err(CallError::Deadline(200)));
}
