//! The example descriptor components (`examples/*-descriptor`) loaded in a `Runtime` with a
//! southbound folder and driven by the KV scheduler through `WasmDescriptor`: their files
//! and folders, drift healed by resync, and failures injected under `.fail/` as a busy or
//! broken device would show them. (The scheduler's behaviour itself is the ported
//! scenario list, run on WASM descriptors by the `ligato` module.)
//!
//! Every create and delete is checked against the files present at that moment, so an
//! operation done out of dependency order fails the test, as the native test southbound
//! (crates/kvscheduler/src/testing.rs) refuses it.

use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use reactor_host::agent::WasmDescriptor;
use reactor_host::kvscheduler::{
    Dependency, DependencyTarget, Descriptor, DescriptorError, InvalidValue, Key, KvScheduler,
    Metadata, Resync, RetrievedValue, RetryOptions, TxnError, TxnOptions, TxnRecord, Value,
    ValueState,
};
use reactor_host::runtime::{Runtime, RuntimeConfig, World};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Component (folder of examples/), descriptor name, key prefix and retrieve dependencies,
/// as the native test descriptors of crates/kvscheduler/src/testing.rs (plus `policy-rule`).
const DESCRIPTORS: [(&str, &str, &str, &[&str]); 8] = [
    ("policy-rule-descriptor", "policy-rule", "policy/", &[]),
    (
        "vpp-interface-descriptor",
        "vpp-interface",
        "vpp/interface/",
        &["linux-interface"],
    ),
    (
        "vpp-address-descriptor",
        "vpp-address",
        "vpp/interface/address/",
        &["vpp-interface"],
    ),
    (
        "vpp-unnumbered-descriptor",
        "vpp-unnumbered",
        "vpp/unnumbered/",
        &["vpp-address"],
    ),
    (
        "vpp-route-descriptor",
        "vpp-route",
        "vpp/route/",
        &["vpp-interface"],
    ),
    (
        "vpp-bridge-domain-descriptor",
        "vpp-bridge-domain",
        "vpp/bd/",
        &[],
    ),
    (
        "vpp-bd-interface-descriptor",
        "vpp-bd-interface",
        "vpp/bd-interface/",
        &["vpp-bridge-domain"],
    ),
    (
        "linux-interface-descriptor",
        "linux-interface",
        "linux/interface/host-name/",
        &[],
    ),
];

fn interface(name: &str) -> Key {
    format!("vpp/interface/{name}")
}
fn address(interface: &str, ip: &str) -> Key {
    format!("vpp/interface/address/{interface}/{ip}")
}
fn route(name: &str) -> Key {
    format!("vpp/route/{name}")
}
fn bridge_domain(name: &str) -> Key {
    format!("vpp/bd/{name}")
}
fn bd_interface(bd: &str, interface: &str) -> Key {
    format!("vpp/bd-interface/{bd}/{interface}")
}
fn host_interface(name: &str) -> Key {
    format!("linux/interface/host-name/{name}")
}

fn put(key: Key, value: Value) -> (Key, Option<Value>) {
    (key, Some(value))
}

fn delete(key: Key) -> (Key, Option<Value>) {
    (key, None)
}

fn tap(addresses: &[&str]) -> Value {
    json!({"type": "tap", "rx_ring": 256, "addresses": addresses})
}

fn route_via(name: &str) -> Value {
    json!({"interface": name, "dst": "10.1.0.0/16"})
}

fn failed_record(error: TxnError) -> (TxnRecord, bool) {
    match error {
        TxnError::Failed { record, reverted } => (*record, reverted),
        other => panic!("expected a failed transaction, got {other}"),
    }
}

/// The southbound folder as an administrator (or a test) sees it: the value of key
/// `<prefix><rest>` is the file `<southbound>/<descriptor>/<rest>.json`.
#[derive(Clone)]
struct Southbound {
    root: PathBuf,
}

impl Southbound {
    /// The descriptor name and prefix of `key`: the longest prefix wins.
    fn owner(key: &str) -> (&'static str, &'static str) {
        DESCRIPTORS
            .iter()
            .filter(|(_, _, prefix, _)| key.starts_with(prefix))
            .max_by_key(|(_, _, prefix, _)| prefix.len())
            .map(|(_, name, prefix, _)| (*name, *prefix))
            .unwrap_or_else(|| panic!("no descriptor for {key}"))
    }

    fn folder(&self, descriptor: &str) -> PathBuf {
        self.root.join(descriptor)
    }

    fn relative(key: &str) -> String {
        let (_, prefix) = Self::owner(key);
        format!("{}.json", &key[prefix.len()..])
    }

    fn file(&self, key: &str) -> PathBuf {
        self.folder(Self::owner(key).0).join(Self::relative(key))
    }

    fn has(&self, key: &str) -> bool {
        self.file(key).is_file()
    }

    /// The value in the file of `key`.
    fn value(&self, key: &str) -> Value {
        let path = self.file(key);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn write_behind_back(&self, key: &str, text: &str) {
        let path = self.file(key);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
        std::fs::write(&path, text).expect("write behind the agent's back");
    }

    fn put_behind_back(&self, key: &str, value: &Value) {
        self.write_behind_back(key, &value.to_string());
    }

    fn remove_behind_back(&self, key: &str) {
        std::fs::remove_file(self.file(key)).expect("remove behind the agent's back");
    }

    /// `<southbound>/<descriptor>/.fail/<rest>.json`, the failure injection of `key`.
    fn failure_file(&self, key: &str) -> PathBuf {
        self.folder(Self::owner(key).0)
            .join(".fail")
            .join(Self::relative(key))
    }

    fn fail_next(&self, key: &str, content: &str) {
        let path = self.failure_file(key);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
        std::fs::write(&path, content).expect("failure file");
    }

    /// Every value in the southbound, read from the files (names starting with `.` are not
    /// values).
    fn contents(&self) -> BTreeMap<Key, Value> {
        fn walk(dir: &Path, relative: &str, prefix: &str, found: &mut BTreeMap<Key, Value>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                let path = entry.path();
                let child = format!("{relative}{name}");
                if path.is_dir() {
                    walk(&path, &format!("{child}/"), prefix, found);
                } else if let Some(stem) = child.strip_suffix(".json") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    found.insert(format!("{prefix}{stem}"), value);
                }
            }
        }
        let mut found = BTreeMap::new();
        for (_, name, prefix, _) in DESCRIPTORS {
            walk(&self.folder(name), "", prefix, &mut found);
        }
        found
    }
}

/// What a value needs present in the southbound, as testing.rs models it: its dependencies
/// and, for a derived value, its parent.
fn requirements(key: &str, value: &Value) -> Vec<DependencyTarget> {
    let text = |field: &str| value.get(field).and_then(Value::as_str);
    let mut needs = Vec::new();
    if let Some(rest) = key.strip_prefix("vpp/interface/address/") {
        needs.extend(
            rest.split('/')
                .next()
                .map(interface)
                .map(DependencyTarget::Key),
        );
    } else if key.starts_with("vpp/interface/") {
        needs.extend(text("host_if").map(|h| DependencyTarget::Key(host_interface(h))));
    } else if let Some(name) = key.strip_prefix("vpp/unnumbered/") {
        needs.push(DependencyTarget::Key(interface(name)));
        needs.extend(
            text("borrow")
                .map(|from| DependencyTarget::AnyOf(format!("vpp/interface/address/{from}/"))),
        );
    } else if key.starts_with("vpp/route/") {
        needs.extend(text("interface").map(|i| DependencyTarget::Key(interface(i))));
    } else if let Some(rest) = key.strip_prefix("vpp/bd-interface/") {
        let mut parts = rest.split('/');
        needs.extend(parts.next().map(bridge_domain).map(DependencyTarget::Key));
        needs.extend(parts.next().map(interface).map(DependencyTarget::Key));
    }
    needs
}

/// Operations done, and those done out of dependency order.
#[derive(Default)]
struct Journal {
    log: Vec<String>,
    violations: Vec<String>,
}

/// A descriptor component seen through a recorder: successful creates, updates and deletes
/// are logged; one done out of dependency order, as the files show at that moment, is a
/// violation.
struct Checked {
    inner: WasmDescriptor,
    southbound: Southbound,
    journal: Arc<Mutex<Journal>>,
}

impl Checked {
    fn journal(&self) -> MutexGuard<'_, Journal> {
        self.journal.lock()
    }

    fn check_create(&self, key: &str, value: &Value) {
        let present = self.southbound.contents();
        for need in requirements(key, value) {
            if !present.keys().any(|k| k != key && need.matches(k)) {
                self.journal()
                    .violations
                    .push(format!("create {key} before {need:?}"));
            }
        }
    }

    fn check_delete(&self, key: &str) {
        let present = self.southbound.contents();
        for (other, value) in present.iter().filter(|(k, _)| k.as_str() != key) {
            for need in requirements(other, value) {
                let still_met = present
                    .keys()
                    .any(|k| k != key && k != other && need.matches(k));
                if need.matches(key) && !still_met {
                    self.journal()
                        .violations
                        .push(format!("delete {key} while {other} needs it"));
                }
            }
        }
    }

    fn record(&self, entry: String) {
        self.journal().log.push(entry);
    }
}

#[async_trait]
impl Descriptor for Checked {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn key_prefix(&self) -> &str {
        self.inner.key_prefix()
    }
    fn retrieve_dependencies(&self) -> Vec<String> {
        self.inner.retrieve_dependencies()
    }
    async fn validate(&self, key: &str, value: &Value) -> Result<(), InvalidValue> {
        self.inner.validate(key, value).await
    }
    async fn create(&self, key: &str, value: &Value) -> Result<Metadata, DescriptorError> {
        self.check_create(key, value);
        let result = self.inner.create(key, value).await;
        if result.is_ok() {
            self.record(format!("create {key}"));
        }
        result
    }
    async fn update(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> Result<Metadata, DescriptorError> {
        let result = self.inner.update(key, old, new, metadata).await;
        if result.is_ok() {
            self.record(format!("update {key}"));
        }
        result
    }
    async fn update_with_recreate(
        &self,
        key: &str,
        old: &Value,
        new: &Value,
        metadata: &Metadata,
    ) -> bool {
        self.inner
            .update_with_recreate(key, old, new, metadata)
            .await
    }
    async fn delete(
        &self,
        key: &str,
        value: &Value,
        metadata: &Metadata,
    ) -> Result<(), DescriptorError> {
        self.check_delete(key);
        let result = self.inner.delete(key, value, metadata).await;
        if result.is_ok() {
            self.record(format!("delete {key}"));
        }
        result
    }
    async fn retrieve(
        &self,
        correlate: &[(Key, Value)],
    ) -> Result<Option<Vec<RetrievedValue>>, DescriptorError> {
        self.inner.retrieve(correlate).await
    }
    async fn dependencies(&self, key: &str, value: &Value) -> Vec<Dependency> {
        self.inner.dependencies(key, value).await
    }
    async fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        self.inner.derived_values(key, value).await
    }
    async fn is_retriable(&self, error: &DescriptorError) -> bool {
        self.inner.is_retriable(error).await
    }
}

/// A data folder whose compile cache holds every example descriptor, compiled once per
/// test process (the tests' runtimes then load them from the cache).
async fn warm_data_dir() -> &'static Path {
    static DATA: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();
    DATA.get_or_init(|| async {
        let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("descriptors-wasm-data");
        let runtime = Runtime::new(RuntimeConfig::new(&data)).expect("runtime");
        for (component, ..) in DESCRIPTORS {
            let path = reactor_testkit::built().join(format!("{component}.wasm"));
            runtime
                .load_file(&path, World::Descriptor)
                .await
                .unwrap_or_else(|e| panic!("load {component}: {e}"));
        }
        data
    })
    .await
}

/// A scheduler with every example descriptor registered, over a fresh southbound folder.
struct Agent {
    scheduler: KvScheduler,
    southbound: Southbound,
    journal: Arc<Mutex<Journal>>,
    descriptors: Vec<Arc<Checked>>,
    _runtime: Runtime,
    tmp: tempfile::TempDir,
}

impl Agent {
    async fn start() -> Agent {
        let tmp = tempfile::tempdir().expect("tempdir");
        let southbound = Southbound {
            root: tmp.path().join("southbound"),
        };
        let mut config = RuntimeConfig::new(warm_data_dir().await);
        config.southbound = Some(southbound.root.clone());
        let runtime = Runtime::new(config).expect("runtime");
        let scheduler = KvScheduler::new();
        let journal = Arc::new(Mutex::new(Journal::default()));
        let mut descriptors = Vec::new();
        for (component, ..) in DESCRIPTORS {
            let path = reactor_testkit::built().join(format!("{component}.wasm"));
            runtime
                .load_file(&path, World::Descriptor)
                .await
                .unwrap_or_else(|e| panic!("load {component}: {e}"));
            let inner = WasmDescriptor::new(runtime.descriptor(component))
                .unwrap_or_else(|e| panic!("describe {component}: {e}"));
            let checked = Arc::new(Checked {
                inner,
                southbound: southbound.clone(),
                journal: journal.clone(),
            });
            scheduler.register_descriptor(checked.clone()).await;
            descriptors.push(checked);
        }
        Agent {
            scheduler,
            southbound,
            journal,
            descriptors,
            _runtime: runtime,
            tmp,
        }
    }

    async fn apply(&self, values: Vec<(Key, Option<Value>)>) -> TxnRecord {
        self.scheduler
            .transaction(values, TxnOptions::default())
            .await
            .unwrap_or_else(|e| panic!("transaction failed: {e}"))
    }

    async fn state(&self, key: &str) -> ValueState {
        self.scheduler.status(key).await.state
    }

    /// The operations logged since the last call.
    fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.journal.lock().log)
    }

    fn assert_in_dependency_order(&self) {
        let journal = self.journal.lock();
        assert!(
            journal.violations.is_empty(),
            "out of dependency order: {:?}",
            journal.violations
        );
    }

    /// Polls the state of `key` until it is `state`, for at most 10 s.
    async fn wait_for(&self, key: &str, state: ValueState) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now = self.state(key).await;
            if now == state {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{key} is {now}, not {state}, after 10 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_descriptor_describes_itself_as_the_native_test_family() {
    let agent = Agent::start().await;
    let described: Vec<_> = agent
        .descriptors
        .iter()
        .map(|d| {
            (
                d.name().to_owned(),
                d.key_prefix().to_owned(),
                d.retrieve_dependencies(),
            )
        })
        .collect();
    let expected: Vec<_> = DESCRIPTORS
        .iter()
        .map(|(_, name, prefix, after)| {
            (
                (*name).to_owned(),
                (*prefix).to_owned(),
                after.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
            )
        })
        .collect();
    assert_eq!(described, expected);
    for (_, name, ..) in DESCRIPTORS {
        assert!(
            agent.southbound.folder(name).is_dir(),
            "the runtime made the folder of {name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_removed_edited_or_left_behind_the_agents_back_are_healed_by_resync() {
    let agent = Agent::start().await;
    let southbound = &agent.southbound;
    agent
        .apply(vec![
            put(interface("my-tap"), tap(&["10.0.0.1/24"])),
            put(route("my-route"), route_via("my-tap")),
            put(bridge_domain("my-bd"), json!({"interfaces": ["my-tap"]})),
        ])
        .await;
    let configured = southbound.contents();
    assert_eq!(configured.len(), 5, "{configured:?}");
    assert!(
        southbound
            .folder("vpp-address")
            .join("my-tap/10.0.0.1/24.json")
            .is_file(),
        "an address is a nested file"
    );

    // Drift: two files removed, one edited, one corrupted, one left by nobody.
    southbound.remove_behind_back(&route("my-route"));
    southbound.remove_behind_back(&address("my-tap", "10.0.0.1/24"));
    southbound.put_behind_back(
        &interface("my-tap"),
        &json!({"type": "tap", "rx_ring": 256}),
    );
    southbound.write_behind_back(&bd_interface("my-bd", "my-tap"), "{not json");
    southbound.put_behind_back(&route("stale"), &route_via("my-tap"));

    let dump = agent.scheduler.dump().await;
    let missing: Vec<_> = dump
        .retrieved
        .iter()
        .filter(|s| s.state == ValueState::Missing)
        .map(|s| s.key.clone())
        .collect();
    assert_eq!(
        missing,
        vec![address("my-tap", "10.0.0.1/24"), route("my-route")]
    );
    let edited = dump
        .retrieved
        .iter()
        .find(|s| s.key == interface("my-tap"))
        .and_then(|s| s.value.clone());
    assert_eq!(edited, Some(json!({"type": "tap", "rx_ring": 256})));

    agent.take_log();
    let record = agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert!(record.failures().is_empty(), "{:?}", record.failures());
    assert_eq!(southbound.contents(), configured);
    for key in [
        interface("my-tap"),
        address("my-tap", "10.0.0.1/24"),
        route("my-route"),
        bd_interface("my-bd", "my-tap"),
    ] {
        assert_eq!(agent.state(&key).await, ValueState::Configured, "{key}");
    }
    assert_eq!(agent.state(&route("stale")).await, ValueState::Nonexistent);
    let log = agent.take_log();
    assert!(
        log.contains(&"delete vpp/route/stale".to_owned()),
        "{log:?}"
    );
    assert!(
        log.contains(&"create vpp/route/my-route".to_owned()),
        "{log:?}"
    );

    // Nothing left to heal: a second resync changes nothing.
    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(agent.take_log(), Vec::<String>::new());

    agent.apply(vec![delete(interface("my-tap"))]).await;
    assert!(
        !southbound.folder("vpp-address").join("my-tap").exists(),
        "emptied folders are removed"
    );
    agent.assert_in_dependency_order();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_busy_failure_is_retried_until_the_interface_is_configured() {
    let agent = Agent::start().await;
    let southbound = &agent.southbound;
    southbound.fail_next(&interface("my-tap"), "2");
    let retry = RetryOptions {
        period: Duration::from_millis(100),
        max_attempts: 3,
        exponential_backoff: false,
    };
    let error = agent
        .scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&["10.0.0.1/24"]))],
            TxnOptions::best_effort(Some(retry)),
        )
        .await
        .expect_err("the create fails");
    let (record, reverted) = failed_record(error);
    assert!(!reverted);
    assert_eq!(record.failures()[0].0, interface("my-tap"));
    let status = agent.scheduler.status(&interface("my-tap")).await;
    assert_eq!(status.state, ValueState::Retrying);
    let message = status.error.unwrap_or_default();
    assert!(
        message.starts_with("busy: vpp/interface/my-tap: injected failure"),
        "{message}"
    );
    assert!(!southbound.has(&interface("my-tap")));

    agent
        .wait_for(&interface("my-tap"), ValueState::Configured)
        .await;
    assert_eq!(
        southbound.value(&interface("my-tap")),
        tap(&["10.0.0.1/24"])
    );
    assert!(
        southbound.has(&address("my-tap", "10.0.0.1/24")),
        "derived values follow the retried create"
    );
    assert!(
        !southbound.failure_file(&interface("my-tap")).exists(),
        "both injected failures were used"
    );
    let states: Vec<_> = agent
        .scheduler
        .timeline(&interface("my-tap"))
        .await
        .iter()
        .map(|e| e.new_state)
        .collect();
    assert_eq!(
        states,
        vec![
            ValueState::Retrying,
            ValueState::Retrying,
            ValueState::Configured
        ]
    );
    agent.assert_in_dependency_order();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_fatal_failure_is_failed_and_not_retried() {
    let agent = Agent::start().await;
    let southbound = &agent.southbound;
    southbound.fail_next(&interface("my-tap"), "fatal");
    let retry = RetryOptions {
        period: Duration::from_millis(50),
        max_attempts: 3,
        exponential_backoff: false,
    };
    agent
        .scheduler
        .transaction(
            vec![put(interface("my-tap"), tap(&[]))],
            TxnOptions::best_effort(Some(retry)),
        )
        .await
        .expect_err("the create fails");
    let status = agent.scheduler.status(&interface("my-tap")).await;
    assert_eq!(status.state, ValueState::Failed);
    let message = status.error.unwrap_or_default();
    assert!(
        message.starts_with("fatal: vpp/interface/my-tap: injected failure"),
        "{message}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(agent.scheduler.history().await.len(), 1, "no retry");
    assert_eq!(agent.state(&interface("my-tap")).await, ValueState::Failed);
    assert!(!southbound.has(&interface("my-tap")));

    // The device is fine again: a resync applies the value.
    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(
        agent.state(&interface("my-tap")).await,
        ValueState::Configured
    );
    assert!(southbound.has(&interface("my-tap")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_interfaces_in_the_folder_are_obtained_and_resync_never_removes_them() {
    let agent = Agent::start().await;
    let southbound = &agent.southbound;
    southbound.put_behind_back(&host_interface("eth0"), &json!({"mtu": 1500}));
    agent
        .apply(vec![put(
            interface("my-afpacket"),
            json!({"type": "afpacket", "host_if": "eth0"}),
        )])
        .await;
    assert_eq!(
        agent.state(&interface("my-afpacket")).await,
        ValueState::Pending,
        "not known before a retrieve"
    );

    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    // Retrieved as the southbound's own: OBTAINED, as Ligato names it.
    let eth0 = agent.scheduler.status(&host_interface("eth0")).await;
    assert_eq!(eth0.state, ValueState::Obtained);
    assert_eq!(eth0.value, Some(json!({"mtu": 1500})));
    assert_eq!(
        agent.state(&interface("my-afpacket")).await,
        ValueState::Configured
    );

    // A full resync to an empty desired state removes what the agent configured, never
    // what the southbound owns.
    agent
        .scheduler
        .resync(Resync::Full(Vec::new()))
        .await
        .expect("full resync");
    assert_eq!(
        agent.state(&host_interface("eth0")).await,
        ValueState::Obtained
    );
    assert_eq!(
        southbound.contents(),
        BTreeMap::from([(host_interface("eth0"), json!({"mtu": 1500}))])
    );

    // The northbound can neither remove it (refused, left as it is) nor configure another
    // host interface.
    let obtained = agent.scheduler.status(&host_interface("eth0")).await;
    let error = agent
        .scheduler
        .transaction(vec![delete(host_interface("eth0"))], TxnOptions::default())
        .await
        .expect_err("obtained");
    let TxnError::Failed { record, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        record.failures(),
        [(
            host_interface("eth0"),
            format!(
                "{} is obtained from the southbound: a transaction cannot change it",
                host_interface("eth0")
            )
        )]
    );
    assert_eq!(
        agent.scheduler.status(&host_interface("eth0")).await,
        obtained
    );
    agent
        .scheduler
        .transaction(
            vec![put(host_interface("eth9"), json!({}))],
            TxnOptions::default(),
        )
        .await
        .expect_err("not the agent's to configure");
    let eth9 = agent.scheduler.status(&host_interface("eth9")).await;
    assert_eq!(eth9.state, ValueState::Invalid);
    let message = eth9.invalid.map(|i| i.message).unwrap_or_default();
    assert!(
        message.contains("linux/interface/host-name/eth9")
            && message.contains("owned by the southbound"),
        "{message}"
    );
    assert!(!southbound.has(&host_interface("eth9")));
    assert!(agent.take_log().iter().all(|op| !op.contains("linux/")));
    // (An INVALID desired value would fail every resync until it is withdrawn.)
    agent.apply(vec![delete(host_interface("eth9"))]).await;

    // When the administrator removes it, it is gone at the next resync.
    southbound.remove_behind_back(&host_interface("eth0"));
    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(
        agent.state(&host_interface("eth0")).await,
        ValueState::Nonexistent
    );
    agent.assert_in_dependency_order();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_rules_are_written_as_policy_folder_rule_json() {
    let agent = Agent::start().await;
    let folder = agent.southbound.folder("policy-rule");
    let rule = json!({"name": "http", "action": "allow"});
    agent
        .apply(vec![put("policy/web-allow/http".to_owned(), rule.clone())])
        .await;
    let text = std::fs::read_to_string(folder.join("web-allow/http.json")).expect("rule file");
    assert_eq!(serde_json::from_str::<Value>(&text).expect("JSON"), rule);

    // A rule file edited behind the agent's back is drift that resync repairs.
    std::fs::write(folder.join("web-allow/http.json"), r#"{"action":"deny"}"#).expect("edit");
    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(agent.southbound.value("policy/web-allow/http"), rule);

    // A rule without a text action is refused, naming the key.
    for bad in [json!({"name": "ssh"}), json!({"name": "ssh", "action": 22})] {
        agent
            .scheduler
            .transaction(
                vec![put("policy/web-allow/ssh".to_owned(), bad)],
                TxnOptions::default(),
            )
            .await
            .expect_err("invalid rule");
        let status = agent.scheduler.status("policy/web-allow/ssh").await;
        assert_eq!(status.state, ValueState::Invalid);
        let message = status.invalid.map(|i| i.message).unwrap_or_default();
        assert_eq!(message, "policy/web-allow/ssh: rule has no action (a text)");
    }
    assert!(!folder.join("web-allow/ssh.json").exists());

    agent
        .apply(vec![
            delete("policy/web-allow/http".to_owned()),
            delete("policy/web-allow/ssh".to_owned()),
        ])
        .await;
    assert!(
        !folder.join("web-allow").exists(),
        "the emptied policy folder goes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_and_values_that_would_leave_the_folder_are_invalid() {
    let agent = Agent::start().await;
    let cases = [
        (route("../../escaped"), route_via("my-tap"), "`..`"),
        (interface(".fail"), tap(&[]), "starting with `.`"),
        (route("a//b"), route_via("my-tap"), "empty part"),
        (
            interface("my-tap"),
            tap(&["../../../escaped"]),
            "addresses \"../../../escaped\"",
        ),
        (
            route("r"),
            json!({"interface": "../x"}),
            "interface \"../x\" contains `/`",
        ),
        (
            route("no-interface"),
            json!({"dst": "0.0.0.0/0"}),
            "route has no outgoing interface",
        ),
    ];
    for (key, value, needle) in cases {
        agent
            .scheduler
            .transaction(vec![put(key.clone(), value)], TxnOptions::default())
            .await
            .expect_err("invalid");
        let status = agent.scheduler.status(&key).await;
        assert_eq!(status.state, ValueState::Invalid, "{key}");
        let message = status.invalid.map(|i| i.message).unwrap_or_default();
        assert!(
            message.starts_with(&format!("{key}: ")) && message.contains(needle),
            "{key}: {message}"
        );
    }
    let mut everything: Vec<PathBuf> = Vec::new();
    let mut stack = vec![agent.tmp.path().to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("list").flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                everything.push(entry.path());
            }
        }
    }
    assert!(
        everything
            .iter()
            .all(|p| p.extension().is_none_or(|e| e != "json")),
        "no value was written anywhere: {everything:?}"
    );
    assert!(agent.take_log().is_empty());
}

/// A derived value has no dependency on its parent (it is implicit), so a resync must
/// repair parents first: the MISSING address `vpp/interface/address/my-tap/…` sorts before
/// its MISSING interface `vpp/interface/my-tap`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_recreates_a_missing_parent_before_its_missing_derived_values() {
    let agent = Agent::start().await;
    let southbound = &agent.southbound;
    agent
        .apply(vec![
            put(interface("my-tap"), tap(&["10.0.0.1/24"])),
            put(bridge_domain("my-bd"), json!({"interfaces": ["my-tap"]})),
        ])
        .await;
    let configured = southbound.contents();

    // The device lost whole items: each value with what was derived from it.
    for key in [
        interface("my-tap"),
        address("my-tap", "10.0.0.1/24"),
        bridge_domain("my-bd"),
        bd_interface("my-bd", "my-tap"),
    ] {
        southbound.remove_behind_back(&key);
    }
    agent.take_log();
    agent
        .scheduler
        .resync(Resync::Downstream)
        .await
        .expect("resync");
    assert_eq!(southbound.contents(), configured);
    let log = agent.take_log();
    let position = |entry: &str| {
        log.iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("{entry:?} not in {log:?}"))
    };
    assert!(
        position("create vpp/interface/my-tap")
            < position("create vpp/interface/address/my-tap/10.0.0.1/24"),
        "{log:?}"
    );
    assert!(
        position("create vpp/bd/my-bd") < position("create vpp/bd-interface/my-bd/my-tap"),
        "{log:?}"
    );
    agent.assert_in_dependency_order();
}
