//! The KV scheduler driving a real descriptor component (`guests/files-descriptor`) through
//! `WasmDescriptor`: dependencies from the guest, files in its southbound folder, resync.

use reactor_host::agent::WasmDescriptor;
use reactor_host::kvscheduler::{KvScheduler, Resync, TxnOptions, ValueState};
use reactor_host::runtime::{Runtime, RuntimeConfig, World};
use serde_json::json;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_descriptor_component_applies_in_dependency_order_and_heals_drift() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let southbound = tmp.path().join("southbound");
    let mut config = RuntimeConfig::new(tmp.path().join("data"));
    config.southbound = Some(southbound.clone());
    let runtime = Runtime::new(config).expect("runtime");
    let component = reactor_testkit::built().join("files-descriptor.wasm");
    runtime
        .load_file(&component, World::Descriptor)
        .await
        .expect("load the descriptor");
    let descriptor =
        WasmDescriptor::new(runtime.descriptor("files-descriptor")).expect("described");
    let scheduler = KvScheduler::new();
    scheduler.register_descriptor(Arc::new(descriptor)).await;
    let files = southbound.join("files");

    scheduler
        .transaction(
            vec![("file/a".to_owned(), Some(json!({"a": 1})))],
            TxnOptions::default(),
        )
        .await
        .expect("file/a");
    let status = scheduler.status("file/a").await;
    assert_eq!(status.state, ValueState::Pending);
    assert_eq!(status.missing_dependencies[0].label, "base");
    assert!(!files.join("a.json").exists());

    scheduler
        .transaction(
            vec![("file/base".to_owned(), Some(json!({"base": true})))],
            TxnOptions::default(),
        )
        .await
        .expect("file/base");
    assert_eq!(
        scheduler.status("file/a").await.state,
        ValueState::Configured
    );
    assert!(files.join("base.json").exists());
    assert!(files.join("a.json").exists());

    std::fs::remove_file(files.join("a.json")).expect("drift");
    scheduler.resync(Resync::Downstream).await.expect("resync");
    let text = std::fs::read_to_string(files.join("a.json")).expect("re-created");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).expect("json"),
        json!({"a": 1})
    );
}
