//! A component dropped in the watched folder is loaded and called; removing it detaches
//! it; a descriptor works on its own southbound folder.

use reactor_host::runtime::{
    Action, CallError, ComponentState, Described, Runtime, RuntimeConfig, RuntimeSettings, World,
};
use reactor_testkit::{RecordingHost, eventually_async, guest, object};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_component_dropped_in_the_folder_is_loaded_and_called() {
    let dir = tempfile::tempdir().expect("temp dir");
    let components = dir.path().join("components");
    let host = Arc::new(RecordingHost::default());
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.host = host.clone();
    config.settings = RuntimeSettings::from_yaml(
        Path::new("inline"),
        "components:\n  echo:\n    revision: 7\n    config: {greeting: hello}\n    limits: {concurrency: 1}\n",
    )
    .expect("valid settings");
    let runtime = Runtime::new(config).expect("runtime");
    runtime
        .watch_dir(&components, World::Controller)
        .await
        .expect("watch");
    assert!(runtime.components().is_empty());

    let wasm = guest("version-1");
    std::fs::write(components.join("echo.wasm"), &wasm).expect("drop the component");
    let info = eventually_async("echo to load", LOAD_TIMEOUT, || {
        runtime.component("echo").filter(|i| i.serving)
    })
    .await;
    assert_eq!(info.state, ComponentState::Ready);
    assert_eq!(info.world, World::Controller);
    assert_eq!(info.revision, 7);
    assert_eq!(info.error, None);
    assert_eq!(info.file, components.join("echo.wasm"));
    assert_eq!(info.sha256.as_deref().map(str::len), Some(64));
    let Some(Described::Controller(described)) = &info.described else {
        panic!("echo should describe itself as a controller: {info:?}")
    };
    assert_eq!(described.name, "versioned");
    assert_eq!(described.kinds, vec!["Echo".to_owned()]);
    assert_eq!(described.resync_period_ms, 30_000);

    let echo = runtime.controller("echo");
    let refused = echo
        .validate(&object("Echo", "a", json!({"reject": true})))
        .await
        .expect("call");
    assert_eq!(refused, Err("rejected by version-1".to_owned()));
    assert_eq!(
        echo.validate(&object("Echo", "a", json!({"x": 1})))
            .await
            .expect("call"),
        Ok(())
    );

    for expected_calls in 1..=3 {
        let reaction = echo
            .on_create(&object("Echo", "a", json!({"x": 1})))
            .await
            .expect("call");
        assert_eq!(reaction, Ok(Action::Done));
        let status = host.status("Echo", "a").expect("status set");
        assert_eq!(status["version"], "version-1");
        assert_eq!(status["echo"], json!({"x": 1}));
        assert_eq!(status["config"], json!({"greeting": "hello"}));
        assert_eq!(status["configRevision"], 7);
        // One warm instance (concurrency 1) serves every call.
        assert_eq!(status["calls"], expected_calls);
    }
    let reaction = echo
        .on_create(&object("Echo", "b", json!({"requeueMs": 250})))
        .await
        .expect("call");
    assert_eq!(reaction, Ok(Action::RequeueAfter(250)));
    assert!(host.items.lock().expect("items").contains_key("echo/b"));
    assert_eq!(
        echo.on_delete(&object("Echo", "b", json!({})))
            .await
            .expect("call"),
        Ok(Action::Done)
    );
    assert!(!host.items.lock().expect("items").contains_key("echo/b"));

    let info = runtime.component("echo").expect("known");
    assert!(
        info.calls >= 7,
        "describe, 2 validates, 4 callbacks: {}",
        info.calls
    );
    assert_eq!(info.traps, 0);

    std::fs::remove_file(components.join("echo.wasm")).expect("remove");
    eventually_async("echo to detach", LOAD_TIMEOUT, || {
        runtime.component("echo").is_none().then_some(())
    })
    .await;
    let gone = echo.on_create(&object("Echo", "a", json!({}))).await;
    assert_eq!(gone, Err(CallError::NotLoaded("echo".into())));
}

#[tokio::test]
async fn a_descriptor_works_only_in_its_own_southbound_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let southbound = dir.path().join("southbound");
    let mut config = RuntimeConfig::new(dir.path().join("data"));
    config.southbound = Some(southbound.clone());
    let runtime = Runtime::new(config).expect("runtime");
    let descriptors = dir.path().join("descriptors");
    let info = runtime
        .install(
            &descriptors,
            World::Descriptor,
            "files",
            &guest("files-descriptor"),
        )
        .await
        .expect("install the descriptor");
    assert_eq!(info.state, ComponentState::Ready);
    let files = runtime.descriptor("files");
    let described = files.info().expect("info");
    assert_eq!(
        (described.name.as_str(), described.key_prefix.as_str()),
        ("files", "file/")
    );

    assert_eq!(
        files.validate("file/a", "{\"x\":1}").await.expect("call"),
        Ok(())
    );
    assert!(
        files
            .validate("file/a", "not json")
            .await
            .expect("call")
            .is_err()
    );
    let metadata = files
        .create("file/a", "{\"x\":1}")
        .await
        .expect("call")
        .expect("created");
    assert_eq!(metadata.as_deref(), Some("/a.json"));
    let written = std::fs::read_to_string(southbound.join("files/a.json")).expect("file written");
    assert_eq!(written, "{\"x\":1}");

    // Drift behind the agent's back shows in retrieve.
    std::fs::write(southbound.join("files/b.json"), "{\"y\":2}").expect("drift");
    let found = files.retrieve(&[]).await.expect("call").expect("retrieved");
    let keys: Vec<&str> = found.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, vec!["file/a", "file/b"]);
    assert_eq!(found[1].value, "{\"y\":2}");

    let deps = files.dependencies("file/a", "{}").await.expect("call");
    assert_eq!(deps.len(), 1);
    assert!(
        files
            .dependencies("file/base", "{}")
            .await
            .expect("call")
            .is_empty()
    );
    assert!(
        !files
            .update_with_recreate("file/a", "{}", "{}", None)
            .await
            .expect("call")
    );
    assert!(files.is_retriable("boom").await.expect("call"));
    assert!(
        files
            .derived_values("file/a", "{}")
            .await
            .expect("call")
            .is_empty()
    );

    files
        .delete("file/a", "{}", None)
        .await
        .expect("call")
        .expect("deleted");
    assert!(!southbound.join("files/a.json").exists());

    // A controller handle on a descriptor is refused, not misrouted.
    let wrong = runtime
        .controller("files")
        .on_create(&object("X", "y", json!({})))
        .await;
    assert_eq!(
        wrong,
        Err(CallError::WrongWorld {
            name: "files".into(),
            world: World::Descriptor
        })
    );

    assert!(
        runtime
            .uninstall(&descriptors, "files")
            .await
            .expect("uninstall")
    );
    assert!(runtime.component("files").is_none());
    assert!(!descriptors.join("files.wasm").exists());
}
