//! Rollouts through the real binary: a new version of a component re-reconciles every object
//! its reactor watches and records itself in each one's status; with a canary, a version
//! that traps is rolled back by itself and a good one rolls out to the rest. A rollback
//! outlives a restart and reaches the other replicas on one etcd, until it is cleared.

use reactor_testkit::{Etcd, Host, built, eventually, get_json, stderr, stdout};
use std::path::Path;

/// Puts guest `guest` in the folder as `versioned.wasm`, atomically (a rename), as a deploy
/// would.
fn deploy(host: &Host, guest: &str) {
    let dir = host.components_dir();
    std::fs::create_dir_all(&dir).expect("components folder");
    let tmp = dir.join(".versioned.wasm.tmp");
    std::fs::copy(built().join(format!("{guest}.wasm")), &tmp).expect("copy the guest");
    std::fs::rename(&tmp, dir.join("versioned.wasm")).expect("rename into place");
}

fn echoes(n: usize) -> String {
    (0..n)
        .map(|i| format!("kind: Echo\nname: e{i:03}\nspec: {{n: {i}}}\n"))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The `versioned` component as `components -o json` shows it, once listed.
fn listed(host: &Host) -> Option<serde_json::Value> {
    let all: serde_json::Value =
        serde_json::from_str(&stdout(&host.cli(&["components", "-o", "json"]))).expect("json");
    all.as_array()?
        .iter()
        .find(|c| c["name"] == "versioned")
        .cloned()
}

fn component(host: &Host) -> serde_json::Value {
    listed(host).expect("versioned is listed")
}

/// The `components` table's line of `versioned`.
fn table_line(host: &Host) -> String {
    stdout(&host.cli(&["components"]))
        .lines()
        .find(|l| l.starts_with("versioned "))
        .map(str::to_owned)
        .unwrap_or_default()
}

/// The version serving, as `components` shows it (12 hex digits), once `guest` serves.
fn serving(host: &Host, guest: &str) -> String {
    let wanted = sha256_of(&built().join(format!("{guest}.wasm")));
    eventually(&format!("{guest} serves"), 60, || {
        (listed(host)?["sha256"] == wanted.as_str()).then_some(())
    });
    wanted[..12].to_owned()
}

fn sha256_of(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a hash")
        .to_owned()
}

/// Waits until every Echo was reconciled by `guest` at `version`; answers their statuses.
fn all_reconciled_by(host: &Host, n: usize, guest: &str, version: &str) -> Vec<serde_json::Value> {
    eventually(&format!("all {n} Echo reconciled by {guest}"), 60, || {
        let listing = get_json(host, &["Echo"]);
        let items = listing["items"].as_array()?.clone();
        let done = items.iter().all(|o| {
            o["status"]["version"] == guest
                && o["status"]["reconcile"]["versioned"]["version"] == version
        });
        (items.len() == n && done).then_some(items)
    })
}

/// The reasons of the rollout events of `versioned`, oldest first.
fn rollout_events(host: &Host) -> Vec<String> {
    let out = host.cli(&["events", "Component", "versioned", "-o", "json"]);
    let events: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    events
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|e| e["reason"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Deploys version-1, applies `n` echoes and waits until it reconciled them all; its sha prefix.
fn echoes_at_version_1(host: &Host, n: usize) -> String {
    deploy(host, "version-1");
    let v1 = serving(host, "version-1");
    let applied = host.cli_with_stdin(&["apply", "-f", "-"], Some(&echoes(n)));
    assert!(
        applied.status.success(),
        "{}",
        reactor_testkit::stderr(&applied)
    );
    all_reconciled_by(host, n, "version-1", &v1);
    v1
}

#[test]
fn a_new_version_re_reconciles_every_object_and_records_itself() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--rollout-rate", "100"]);
    let n = 60;
    let v1 = echoes_at_version_1(&host, n);
    assert!(table_line(&host).contains(" - "), "{}", table_line(&host));
    assert_eq!(
        component(&host).get("rollout"),
        None,
        "no rollout on a first load"
    );

    // Nothing about the objects changes: only the code. Their resync is 30 s away.
    let swapped = std::time::Instant::now();
    deploy(&host, "version-2");
    let v2 = serving(&host, "version-2");
    let items = all_reconciled_by(&host, n, "version-2", &v2);
    assert!(
        swapped.elapsed() < std::time::Duration::from_secs(25),
        "rolled by the rollout, not the resync: {:?}",
        swapped.elapsed()
    );
    for item in &items {
        assert_eq!(
            item["status"]["reconcile"]["versioned"]["lastError"],
            serde_json::Value::Null
        );
    }
    let line = eventually("the table shows the rollout done", 30, || {
        let line = table_line(&host);
        line.contains(&format!("rolled {n}/{n}")).then_some(line)
    });
    assert!(line.contains(&v2), "{line}");
    let rollout = &component(&host)["rollout"];
    assert_eq!(rollout["version"], v2.as_str(), "{rollout}");
    assert_eq!(rollout["phase"], "done", "{rollout}");
    assert_eq!(rollout["rolled"], n, "{rollout}");
    assert_eq!(
        rollout_events(&host),
        vec!["RolloutStarted", "RolloutFinished"],
        "a step event when it starts and finishes"
    );
    let text = stdout(&host.cli(&["events", "Component", "versioned"]));
    assert!(
        text.contains(&format!(
            "rolling {v2} out (replacing {v1}) to {n} of {n} objects"
        )),
        "{text}"
    );
}

#[test]
fn a_canary_that_traps_rolls_back_by_itself_and_a_good_one_completes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    std::fs::write(&config, "rollout: {rate: 100, canary: 0.25}\n").expect("config");
    let config = config.to_str().expect("utf8").to_owned();
    let host = Host::start(&tmp.path().join("data"), &["--config", &config]);
    let n = 20;
    let v1 = echoes_at_version_1(&host, n);

    deploy(&host, "version-trap");
    let line = eventually("the trapping version is rolled back", 60, || {
        let line = table_line(&host);
        line.contains("rolled back:").then_some(line)
    });
    let component_now = component(&host);
    let why = component_now["rolled_back"]
        .as_str()
        .expect("a reason")
        .to_owned();
    assert!(
        why.contains("the canary failed 5 of 5 reconciles (100%)"),
        "{why}"
    );
    assert!(line.contains(&format!("rolled back: {why}")), "{line}");
    // The previous version serves again, and every object ends up reconciled by it.
    assert_eq!(
        component_now["sha256"].as_str().map(|s| &s[..12]),
        Some(v1.as_str())
    );
    all_reconciled_by(&host, n, "version-1", &v1);
    let traps = component(&host)["traps"].as_u64().expect("traps");
    assert!(
        (5..n as u64).contains(&traps),
        "only the canary ran on the trapping version: {traps} traps"
    );
    let events = rollout_events(&host);
    assert!(events.contains(&"RolledBack".to_owned()), "{events:?}");
    let text = stdout(&host.cli(&["events", "Component", "versioned"]));
    assert!(text.contains("Warning"), "{text}");
    // An operator's alert sees it as a metric; the last rollout is now the one back to v1.
    let metrics = host.metrics();
    assert_eq!(reactor_testkit::promtool_check(&metrics), "", "{metrics}");
    assert!(
        metrics.contains(&format!(
            "reactor_component_rollout_phase{{component=\"versioned\",version=\"{v1}\","
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("reactor_component_rolled_back{component=\"versioned\"} 1"),
        "{metrics}"
    );

    // A good version afterwards: the canary passes and it rolls out to the rest.
    deploy(&host, "version-2");
    let v2 = serving(&host, "version-2");
    all_reconciled_by(&host, n, "version-2", &v2);
    let line = eventually("the good rollout completes", 30, || {
        let line = table_line(&host);
        line.contains(&format!("rolled {n}/{n}")).then_some(line)
    });
    assert!(!line.contains("rolled back"), "{line}");
    let events = rollout_events(&host);
    assert!(events.contains(&"CanaryPassed".to_owned()), "{events:?}");
    assert_eq!(
        events.last().map(String::as_str),
        Some("RolloutFinished"),
        "{events:?}"
    );
    let metrics = host.metrics();
    for row in [
        format!(
            "reactor_component_rollout_phase{{component=\"versioned\",version=\"{v2}\",phase=\"done\"}} 1"
        ),
        format!(
            "reactor_component_rollout_objects{{component=\"versioned\",state=\"rolled\"}} {n}"
        ),
        format!("reactor_component_rollout_objects{{component=\"versioned\",state=\"total\"}} {n}"),
        "reactor_component_compiling{component=\"versioned\"} 0".to_owned(),
    ] {
        assert!(metrics.contains(&row), "{row} in {metrics}");
    }
}

/// Echoes with a spec changed from [`echoes`] (generation 2).
fn echoes_changed(n: usize) -> String {
    (0..n)
        .map(|i| format!("kind: Echo\nname: e{i:03}\nspec: {{n: {}}}\n", i + 1000))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Waits until every Echo's generation `generation` was reconciled by `guest` at `version`
/// without an error.
fn generation_reconciled_by(host: &Host, n: usize, generation: u64, guest: &str, version: &str) {
    eventually(
        &format!("generation {generation} of all {n} Echo reconciled by {guest}"),
        60,
        || {
            let listing = get_json(host, &["Echo"]);
            let items = listing["items"].as_array()?.clone();
            let done = items.iter().all(|o| {
                let reconcile = &o["status"]["reconcile"]["versioned"];
                o["meta"]["generation"] == generation
                    && o["status"]["version"] == guest
                    && reconcile["version"] == version
                    && reconcile["observedGeneration"] == generation
                    && reconcile["lastError"].is_null()
            });
            (items.len() == n && done).then_some(())
        },
    );
}

/// Waits until `versioned` shows a rollback; answers its reason.
fn rolled_back(host: &Host) -> String {
    eventually("versioned is rolled back", 60, || {
        listed(host)?["rolled_back"].as_str().map(str::to_owned)
    })
}

fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_rollback_outlives_a_restart_until_the_cli_clears_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    std::fs::write(&config, "rollout: {rate: 100, canary: 0.25}\n").expect("config");
    let config = config.to_str().expect("utf8").to_owned();
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, &["--config", &config]);
    let n = 10;
    let v1 = echoes_at_version_1(&host, n);
    deploy(&host, "version-trap");
    let why = rolled_back(&host);
    let trap = sha256_of(&built().join("version-trap.wasm"));

    // Killed, and restarted without a canary: only the recorded rollback keeps the trapping
    // version, still in the folder, from serving every object at once.
    host.kill9();
    std::fs::write(&config, "rollout: {rate: 100}\n").expect("config");
    let mut host = Host::start(&data, &["--config", &config]);
    let after = eventually("the restarted server serves a version", 60, || {
        listed(&host).filter(|c| c["serving"] == true)
    });
    assert_eq!(
        after["sha256"].as_str().map(|s| &s[..12]),
        Some(v1.as_str()),
        "the version rolled back to serves, not the file's: {after}"
    );
    assert_eq!(after["rolled_back"], why.as_str(), "{after}");
    assert_eq!(after["state"], "ready", "{after}");
    let line = table_line(&host);
    assert!(line.contains(&format!("rolled back: {why}")), "{line}");
    apply(&host, &echoes_changed(n));
    generation_reconciled_by(&host, n, 2, "version-1", &v1);
    assert_eq!(
        component(&host)["traps"],
        0,
        "the trapping version never ran"
    );
    let record = host
        .object("ComponentRollback", "versioned")
        .expect("the rollback is recorded in the store");
    assert_eq!(record["spec"]["sha256"], trap.as_str(), "{record}");

    // Without the wasm of the version rolled back to, nothing serves, and the table says why.
    host.kill9();
    std::fs::remove_dir_all(data.join("versions")).expect("the kept versions");
    let host = Host::start(&data, &["--config", &config]);
    let unloaded = eventually("the restarted server refuses the file", 60, || {
        listed(&host).filter(|c| c["state"] == "failed")
    });
    assert_eq!(unloaded["serving"], false, "{unloaded}");
    assert_eq!(unloaded["sha256"], serde_json::Value::Null, "{unloaded}");
    let error = unloaded["error"].as_str().expect("why nothing serves");
    assert!(
        error.contains(&format!(
            "the version it was rolled back to, {v1}, is not kept here"
        )),
        "{error}"
    );
    assert!(error.contains("clear-rollback versioned"), "{error}");
    let line = table_line(&host);
    assert!(
        line.contains("rolled back:") && line.contains(" no "),
        "{line}"
    );

    // Cleared: the file serves again, and the record is gone.
    let cleared = host.cli(&["components", "clear-rollback", "versioned"]);
    assert!(cleared.status.success(), "{}", stderr(&cleared));
    assert!(stdout(&cleared).contains("rollback of versioned cleared"));
    serving(&host, "version-trap");
    assert_eq!(component(&host)["rolled_back"], serde_json::Value::Null);
    assert_eq!(host.object("ComponentRollback", "versioned"), None);
    let again = host.cli(&["components", "clear-rollback", "versioned"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("component versioned has no rollback to clear"),
        "{}",
        stderr(&again)
    );
}

/// A replica on `url` named `name`, serving version-1 of `versioned` with a canary.
fn replica(tmp: &Path, name: &str, url: &str, config: &str) -> Host {
    let data = tmp.join(name);
    let host = Host::start(
        &data,
        &[
            "--store",
            url,
            "--lease-ttl",
            "2s",
            "--replica-id",
            name,
            "--config",
            config,
        ],
    );
    deploy(&host, "version-1");
    serving(&host, "version-1");
    host
}

#[test]
fn a_version_rolled_back_on_one_replica_is_not_served_by_the_other() {
    let etcd = Etcd::start();
    let url = etcd.url("/reactor");
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    std::fs::write(&config, "rollout: {rate: 100, canary: 0.25}\n").expect("config");
    let config = config.to_str().expect("utf8").to_owned();
    let a = replica(tmp.path(), "a", &url, &config);
    let mut b = replica(tmp.path(), "b", &url, &config);
    let n = 40;
    apply(&a, &echoes(n));
    let v1 = serving(&a, "version-1");
    all_reconciled_by(&a, n, "version-1", &v1);
    // The canary runs on the objects of a's shards: a must hold some.
    eventually("both replicas hold shards", 60, || {
        (a.log().contains("shard claimed") && b.log().contains("shard claimed")).then_some(())
    });

    deploy(&a, "version-trap");
    let why = rolled_back(&a);
    // The same file reaches the other replica afterwards: it never serves there.
    deploy(&b, "version-trap");
    let seen = eventually("b refuses the version rolled back on a", 60, || {
        listed(&b).filter(|c| c["rolled_back"].is_string())
    });
    assert_eq!(seen["rolled_back"], why.as_str(), "{seen}");
    assert_eq!(
        seen["sha256"].as_str().map(|s| &s[..12]),
        Some(v1.as_str()),
        "{seen}"
    );
    assert_eq!(seen["traps"], 0, "{seen}");

    // Nor after a restart.
    b.kill9();
    let b = Host::start(
        &tmp.path().join("b"),
        &[
            "--store",
            &url,
            "--lease-ttl",
            "2s",
            "--replica-id",
            "b",
            "--config",
            &config,
        ],
    );
    let after = eventually("the restarted replica serves a version", 60, || {
        listed(&b).filter(|c| c["serving"] == true)
    });
    assert_eq!(
        after["sha256"].as_str().map(|s| &s[..12]),
        Some(v1.as_str()),
        "{after}"
    );
    apply(&b, &echoes_changed(n));
    generation_reconciled_by(&b, n, 2, "version-1", &v1);
    assert_eq!(component(&b)["traps"], 0);
}
