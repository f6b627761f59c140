//! A callback's limit of writes through the real binary, with examples/blocklist-rust under
//! `serve --max-callback-writes 50`: a list of 180 addresses goes out a batch per run over
//! requeues, its progress in status, with no error; cut to 100, the items left over are
//! withdrawn over requeues too, and the rest when it is deleted; a batch over the limit
//! fails for good naming the setting and keeps none of its writes.

use reactor_testkit::policy::apply;
use reactor_testkit::{Host, eventually, get_json, install, metric, stderr};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

const COMPONENT: &str = "blocklist-rust";
const LIMIT: &str = "50";
const ADDRESSES: usize = 180;

/// A server whose callbacks may make 50 writes, running the Blocklist reactor configured to
/// make at most `batch` writes a run.
fn start(dir: &Path, batch: usize) -> Host {
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("components")).expect("components");
    let config = dir.join("config.yaml");
    let text = format!("components:\n  {COMPONENT}:\n    config: {{batch: {batch}}}\n");
    std::fs::write(&config, text).expect("config");
    let config = config.to_str().expect("utf8");
    let host = Host::start(&data, &["--max-callback-writes", LIMIT, "--config", config]);
    install(COMPONENT, &host.components_dir());
    host.wait_ready(COMPONENT);
    host
}

/// The first `count` addresses.
fn addresses(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("10.0.{}.{}", i / 256, i % 256))
        .collect()
}

fn blocklist(name: &str, count: usize) -> String {
    let spec = json!({"selector": {"role": "edge"}, "addresses": addresses(count)});
    format!("kind: Blocklist\nname: {name}\nspec: {spec}\n")
}

/// The items `list` should hold: one per address of its first `count`.
fn keys(list: &str, count: usize) -> BTreeSet<String> {
    (addresses(count).iter())
        .map(|address| format!("blocklist/{list}/{address}"))
        .collect()
}

/// The status of `list` once its reactor says it is complete for generation `generation`.
fn complete(host: &Host, list: &str, generation: u64) -> Value {
    eventually("the whole list is published", 60, || {
        let list = host.object("Blocklist", list)?;
        let status = &list["status"];
        (status["complete"] == true && status["generation"] == generation).then(|| status.clone())
    })
}

/// The keys of the items `list` published.
fn item_keys(host: &Host, list: &str) -> BTreeSet<String> {
    let prefix = format!("blocklist/{list}/");
    let items = get_json(host, &["NimbusItem"]);
    (items["items"].as_array().into_iter().flatten())
        .filter_map(|item| item["spec"]["key"].as_str())
        .filter(|key| key.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

/// The lines of the server's log at level WARN or ERROR.
fn complaints(host: &Host) -> Vec<String> {
    (host.log().lines())
        .filter(|line| line.contains(" WARN ") || line.contains(" ERROR "))
        .map(str::to_owned)
        .collect()
}

fn reconciles(host: &Host, result: &str) -> f64 {
    let series =
        format!("reactor_reconcile_total{{component=\"{COMPONENT}\",result=\"{result}\"}}");
    metric(&host.metrics(), &series).unwrap_or(0.0)
}

#[test]
fn a_list_over_the_limit_goes_out_over_requeues_and_is_withdrawn_when_deleted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // 49 addresses and the status a run: 180 in four runs.
    let host = start(tmp.path(), 50);
    apply(&host, &blocklist("big", ADDRESSES));
    let status = complete(&host, "big", 1);
    assert_eq!(status["published"], ADDRESSES, "{status}");
    assert_eq!(status["total"], ADDRESSES, "{status}");
    let reconcile = &status["reconcile"][COMPONENT];
    assert_eq!(reconcile.get("lastError"), None, "{reconcile}");
    assert_eq!(item_keys(&host, "big"), keys("big", ADDRESSES));
    assert_eq!(reconciles(&host, "requeue"), 3.0, "{}", host.metrics());
    assert_eq!(reconciles(&host, "success"), 1.0, "{}", host.metrics());
    assert_eq!(reconciles(&host, "error"), 0.0, "{}", host.metrics());
    assert_eq!(complaints(&host), Vec::<String>::new());

    // Cut to 100: the 80 items left over go, within the batch too.
    apply(&host, &blocklist("big", 100));
    let status = complete(&host, "big", 2);
    assert_eq!(status["total"], 100, "{status}");
    assert_eq!(item_keys(&host, "big"), keys("big", 100));
    assert_eq!(reconciles(&host, "error"), 0.0, "{}", host.metrics());

    // Its items go with it, in transactions within the limit too.
    let out = host.cli(&["delete", "Blocklist", "big"]);
    assert!(out.status.success(), "delete: {}", stderr(&out));
    eventually("every item is withdrawn", 60, || {
        item_keys(&host, "big").is_empty().then_some(())
    });
    assert_eq!(complaints(&host), Vec::<String>::new());
}

#[test]
fn a_batch_over_the_limit_fails_for_good_and_keeps_none_of_its_writes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // 59 addresses a run: its 51st write is refused.
    let host = start(tmp.path(), 60);
    apply(&host, &blocklist("big", ADDRESSES));
    let (list, reconcile) = eventually("the failure shows in status", 60, || {
        let list = host.object("Blocklist", "big")?;
        let reconcile = list["status"]["reconcile"][COMPONENT].clone();
        (reconcile["permanent"] == true).then_some((list, reconcile))
    });
    let error = reconcile["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("at most 50 writes (serve --max-callback-writes)"),
        "{reconcile}"
    );
    assert_eq!(list["status"].get("published"), None::<&Value>, "{list}");
    assert_eq!(item_keys(&host, "big"), BTreeSet::new(), "no item landed");
    assert_eq!(reconciles(&host, "permanent"), 1.0, "{}", host.metrics());
}
