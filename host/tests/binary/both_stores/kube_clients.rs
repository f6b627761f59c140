//! kube-rs, the Rust client users reach for, against the real binaries with the kubeconfig
//! `serve` writes: a `watcher` and a `reflector` that follow the server across a restart and
//! re-list after an expired revision, and a `Controller` that writes status with
//! `Api::patch_status`, seen through `/v1`.

use futures::{Stream, StreamExt};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use reactor_testkit::{Host, eventually, get_json, stderr};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// A kind with a status column, and two objects of it.
const WIDGETS: &str = "kind: Kind
name: Widget
spec:
  schema:
    type: object
    properties:
      size: {type: integer}
  columns:
    - {name: SIZE, path: .spec.size}
---
kind: Widget
name: w1
spec: {size: 1}
---
kind: Widget
name: w2
spec: {size: 2}
";

fn apply(host: &Host, doc: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(doc));
    assert!(out.status.success(), "apply: {}", stderr(&out));
}

fn delete(host: &Host, name: &str) {
    let out = host.cli(&["delete", "Widget", name]);
    assert!(out.status.success(), "delete: {}", stderr(&out));
}

fn widget(name: &str, size: u32) -> String {
    format!("kind: Widget\nname: {name}\nspec: {{size: {size}}}\n")
}

/// The widgets as the server has them through `/v1` (the project's own CLI): name →
/// (revision, size).
fn on_the_server(host: &Host) -> BTreeMap<String, (String, Value)> {
    let listing = get_json(host, &["Widget"]);
    let items = listing["items"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listing}"));
    items
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap_or_default().to_owned(),
                (o["meta"]["revision"].to_string(), o["spec"]["size"].clone()),
            )
        })
        .collect()
}

/// The widgets in a reflector's store, in the same shape.
fn in_the_store(store: &reflector::Store<DynamicObject>) -> BTreeMap<String, (String, Value)> {
    store
        .state()
        .iter()
        .map(|o| {
            (
                o.metadata.name.clone().unwrap_or_default(),
                (
                    o.metadata.resource_version.clone().unwrap_or_default(),
                    o.data["spec"]["size"].clone(),
                ),
            )
        })
        .collect()
}

/// A kube-rs client from the kubeconfig `serve` wrote into `data` (address, CA, token).
async fn client(data: &Path) -> kube::Client {
    let kubeconfig = Kubeconfig::read_from(data.join("kubeconfig")).expect("the kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a kube-rs config from the kubeconfig");
    kube::Client::try_from(config).expect("a kube-rs client")
}

fn widgets_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("reactor.dev", "v1", "Widget"),
        "widgets",
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Polls `stream` until `until` holds for an item, answering the items seen; fails the test
/// if none does within 30 seconds.
async fn poll_until<S, T>(stream: &mut S, what: &str, until: impl Fn(&T) -> bool) -> Vec<T>
where
    S: Stream<Item = T> + Unpin,
    T: std::fmt::Debug,
{
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let next = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(next)) => next,
            Ok(None) => panic!("the stream ended before {what}; seen: {seen:#?}"),
            Err(_) => panic!(
                "no {what} within 30s; the last seen: {:#?}",
                seen.iter().rev().take(3).collect::<Vec<_>>()
            ),
        };
        let done = until(&next);
        seen.push(next);
        if done {
            return seen;
        }
    }
}

#[test]
fn a_watcher_and_a_reflector_follow_the_server_across_a_restart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let address = Host::free_address();
    let host = Host::start(&data, &["--listen", &address]);
    apply(&host, WIDGETS);
    let runtime = runtime();
    let client = runtime.block_on(client(&data));
    let resource = widgets_resource();
    let api: Api<DynamicObject> = Api::all_with(client, &resource);

    // A reflector, and a plain watcher whose changes are counted by name.
    let writer = Writer::new(resource.clone());
    let store = writer.as_reader();
    let _reflector = runtime.spawn(
        watcher(api.clone(), watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .for_each(|_| std::future::ready(())),
    );
    let (changes_tx, mut changes) = futures::channel::mpsc::unbounded();
    let _watcher = runtime.spawn(
        watcher(api, watcher::Config::default())
            .default_backoff()
            .for_each(move |event| {
                if let Ok(event) = event {
                    let _ = changes_tx.unbounded_send(event);
                }
                std::future::ready(())
            }),
    );
    runtime
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(30), store.wait_until_ready()).await
        })
        .expect("the reflector's first list within 30s")
        .expect("the reflector's store");
    assert_eq!(in_the_store(&store), on_the_server(&host));

    drop(host);
    let host = Host::start(&data, &["--listen", &address]);
    apply(&host, &widget("w3", 3));
    apply(&host, &widget("w2", 20));
    delete(&host, "w1");

    let expected = on_the_server(&host);
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        ["w2", "w3"],
        "{expected:?}"
    );
    eventually("the reflector's store is the server's objects", 30, || {
        (in_the_store(&store) == expected).then_some(())
    });
    // The watcher saw the writes made after the restart, each once.
    let seen =
        runtime.block_on(async {
            let mut seen = Vec::new();
            poll_until(&mut changes, "w1's deletion", |e| {
            matches!(e, watcher::Event::Delete(o) if o.metadata.name.as_deref() == Some("w1"))
        })
        .await
        .into_iter()
        .for_each(|e| seen.push(e));
            seen
        });
    let after_ready: Vec<String> = seen
        .iter()
        .skip_while(|e| !matches!(e, watcher::Event::InitDone))
        .skip(1)
        .map(|e| match e {
            watcher::Event::Apply(o) => {
                format!("apply {}", o.metadata.name.clone().unwrap_or_default())
            }
            watcher::Event::Delete(o) => {
                format!("delete {}", o.metadata.name.clone().unwrap_or_default())
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(after_ready, ["apply w3", "apply w2", "delete w1"]);
}

#[test]
fn a_watcher_relists_after_an_expired_revision() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let address = Host::free_address();
    // The embedded store keeps only the two newest changes for watches.
    let flags = ["--listen", &address, "--log-retention", "2"];
    let host = Host::start(&data, &flags);
    apply(&host, WIDGETS);
    let runtime = runtime();
    let client = runtime.block_on(client(&data));
    let resource = widgets_resource();
    let api: Api<DynamicObject> = Api::all_with(client, &resource);

    // The reflector's stream, polled here: while it is not polled it does not reconnect.
    let writer = Writer::new(resource.clone());
    let store = writer.as_reader();
    let mut stream = Box::pin(reflector::reflector(
        writer,
        watcher(api, watcher::Config::default()),
    ));
    runtime.block_on(poll_until(&mut stream, "the first list", |e| {
        matches!(e, Ok(watcher::Event::InitDone))
    }));
    apply(&host, &widget("w3", 3));
    runtime.block_on(poll_until(
        &mut stream,
        "w3",
        |e| matches!(e, Ok(watcher::Event::Apply(o)) if o.metadata.name.as_deref() == Some("w3")),
    ));
    assert_eq!(in_the_store(&store), on_the_server(&host));

    // The server goes; the watch breaks. Four changes later its revision is compacted away.
    drop(host);
    runtime.block_on(poll_until(&mut stream, "the broken watch", Result::is_err));
    let host = Host::start(&data, &flags);
    delete(&host, "w1");
    apply(&host, &widget("w2", 20));
    apply(&host, &widget("w4", 4));
    apply(&host, &widget("w2", 21));

    let seen = runtime.block_on(poll_until(&mut stream, "the re-list", |e| {
        matches!(e, Ok(watcher::Event::InitDone))
    }));
    let expired = seen.iter().any(|e| {
        matches!(e, Err(watcher::Error::WatchError(status)) if status.code == 410 && status.reason == "Expired")
    });
    assert!(expired, "no 410 Expired before the re-list: {seen:?}");
    let expected = on_the_server(&host);
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        ["w2", "w3", "w4"],
        "{expected:?}"
    );
    assert_eq!(in_the_store(&store), expected);
}

/// What the controller's reconcile needs.
struct Context {
    api: Api<DynamicObject>,
}

#[derive(Debug, thiserror::Error)]
#[error("status patch of {name}")]
struct ReconcileError {
    name: String,
    #[source]
    source: kube::Error,
}

/// Writes `status.observedSize` (the spec's size) and `status.ready`.
async fn reconcile(
    widget: Arc<DynamicObject>,
    context: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let name = widget.metadata.name.clone().unwrap_or_default();
    let size = widget.data["spec"]["size"].clone();
    if widget.data["status"]["observedSize"] != size {
        let patch = json!({"status": {"observedSize": size, "ready": true}});
        context
            .api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| ReconcileError { name, source })?;
    }
    Ok(Action::await_change())
}

#[test]
fn a_controller_writes_status_seen_through_v1() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = Host::start(&data, &[]);
    apply(&host, WIDGETS);
    let runtime = runtime();
    let client = runtime.block_on(client(&data));
    let resource = widgets_resource();
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let context = Arc::new(Context { api: api.clone() });
    let _controller = runtime.spawn(
        Controller::new_with(api, watcher::Config::default(), resource)
            .run(
                reconcile,
                |_, _, _| Action::requeue(Duration::from_millis(200)),
                context,
            )
            .for_each(|_| std::future::ready(())),
    );

    let observed = |name: &str, size: u64| {
        eventually(&format!("{name}'s status observes size {size}"), 30, || {
            let object = host.object("Widget", name)?;
            (object["status"]["observedSize"] == size && object["status"]["ready"] == true)
                .then_some(())
        });
    };
    observed("w1", 1);
    observed("w2", 2);
    // A new object and a changed one are reconciled as they come.
    apply(&host, &widget("w3", 3));
    apply(&host, &widget("w1", 10));
    observed("w3", 3);
    observed("w1", 10);
}
