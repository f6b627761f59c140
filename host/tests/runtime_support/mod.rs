//! Shared by the runtime integration tests: guest components built from source, a
//! recording controller host, and polling with a deadline.

#![allow(dead_code)]

use reactor_host::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_host::runtime::bindings::reactor::host::store::StoreError;
use reactor_host::runtime::host::{Caller, ControllerHost, ObjectRef};
use reactor_host::runtime::{ItemStatus, Object};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The crates of `guests/` built together (controller world).
const CONTROLLER_GUESTS: &[&str] = &["version-1", "version-2", "misbehave", "bad-describe"];
/// Built on their own (descriptor world).
const DESCRIPTOR_GUESTS: &[&str] = &["files-descriptor"];

fn guest_target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guests-target")
}

fn cargo_build(crates: &[&str]) {
    let guests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guests");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(&guests)
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

/// Builds the guests once per test process (cargo's lock serialises processes).
fn built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        cargo_build(CONTROLLER_GUESTS);
        cargo_build(DESCRIPTOR_GUESTS);
        guest_target_dir().join("wasm32-wasip2/release")
    })
}

/// The component built from guest crate `name` (e.g. `version-1`).
pub fn guest(name: &str) -> Vec<u8> {
    let path = built().join(format!("{}.wasm", name.replace('-', "_")));
    std::fs::read(&path).unwrap_or_else(|e| panic!("read guest {}: {e}", path.display()))
}

/// An object as the store would hand it to a reactor.
pub fn object(kind: &str, name: &str, spec: serde_json::Value) -> Object {
    Object {
        kind: kind.into(),
        name: name.into(),
        labels: vec![("app".into(), "test".into())],
        spec: spec.to_string(),
        status: None,
        meta: None,
    }
}

/// Polls `check` until it returns `Some`, failing the test after `timeout`.
pub async fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            started.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A controller host that keeps statuses and Nimbus items in memory, as the engine will
/// in the store.
#[derive(Default)]
pub struct RecordingHost {
    pub statuses: Mutex<BTreeMap<ObjectRef, serde_json::Value>>,
    pub items: Mutex<BTreeMap<String, (ObjectRef, String)>>,
}

impl RecordingHost {
    /// The last status set for `kind/name`.
    pub fn status(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let key = ObjectRef {
            kind: kind.into(),
            name: name.into(),
        };
        self.statuses
            .lock()
            .expect("statuses lock")
            .get(&key)
            .cloned()
    }
}

fn owner(caller: &Caller) -> ObjectRef {
    caller
        .primary
        .clone()
        .expect("the runtime only lets callbacks on an object reach here")
}

#[async_trait::async_trait]
impl ControllerHost for RecordingHost {
    async fn get(&self, _: &Caller, _: &str, _: &str) -> Result<Option<Object>, StoreError> {
        Ok(None)
    }
    async fn list(
        &self,
        _: &Caller,
        _: &str,
        _: &[(String, String)],
    ) -> Result<Vec<Object>, StoreError> {
        Ok(Vec::new())
    }
    async fn apply(&self, _: &Caller, obj: Object) -> Result<Object, StoreError> {
        Ok(obj)
    }
    async fn delete(&self, _: &Caller, _: &str, _: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    async fn set_status(&self, caller: &Caller, status: String) -> Result<(), StoreError> {
        let value =
            serde_json::from_str(&status).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.statuses
            .lock()
            .expect("statuses lock")
            .insert(owner(caller), value);
        Ok(())
    }
    async fn publish(
        &self,
        caller: &Caller,
        key: &str,
        value: String,
        _: Target,
    ) -> Result<(), NimbusError> {
        self.items
            .lock()
            .expect("items lock")
            .insert(key.into(), (owner(caller), value));
        Ok(())
    }
    async fn unpublish(&self, _: &Caller, key: &str) -> Result<(), NimbusError> {
        self.items.lock().expect("items lock").remove(key);
        Ok(())
    }
    async fn published(&self, caller: &Caller, prefix: &str) -> Result<Vec<String>, NimbusError> {
        let me = owner(caller);
        Ok(self
            .items
            .lock()
            .expect("items lock")
            .iter()
            .filter(|(k, (o, _))| k.starts_with(prefix) && *o == me)
            .map(|(k, _)| k.clone())
            .collect())
    }
    async fn statuses(&self, _: &Caller, _: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        Ok(Vec::new())
    }
}
