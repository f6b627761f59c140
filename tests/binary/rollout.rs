//! Rollouts through the real binary: a new version of a component re-reconciles every object
//! its reactor watches and records itself in each one's status; with a canary, a version
//! that traps is rolled back by itself and a good one rolls out to the rest.

use reactor_testkit::{Host, built, eventually, get_json, stdout};
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
}
