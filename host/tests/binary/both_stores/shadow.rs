//! Shadow runs through the real binary (issue 37, part 4): with `rollout: {shadow: ...}` in a
//! component's entry, a new version first runs beside the serving one on every object,
//! committing nothing. One whose writes match is promoted (and then rolls out); one whose
//! writes differ, or that traps, is dropped as a rollback with its diff shown, and the
//! serving version's writes are all that ever landed. A restart while a shadow runs serves
//! the version that served before, and runs the new one as a shadow again.

use reactor_testkit::policy::apply;
use reactor_testkit::{Host, built, eventually, get_json, stdout};
use serde_json::Value;

/// `bytes` with a custom section added: the same code under another sha256, as a rebuild
/// that changes nothing the guest does.
fn another_build(mut bytes: Vec<u8>) -> Vec<u8> {
    let (name, payload) = (b"rebuilt", b"same code");
    let size = 1 + name.len() + payload.len();
    bytes.push(0); // a custom section
    bytes.push(u8::try_from(size).expect("a short section"));
    bytes.push(u8::try_from(name.len()).expect("a short name"));
    bytes.extend_from_slice(name);
    bytes.extend_from_slice(payload);
    bytes
}

fn built_bytes(guest: &str) -> Vec<u8> {
    std::fs::read(built().join(format!("{guest}.wasm"))).expect("a built guest")
}

fn serving(host: &Host, name: &str, sha: &str) {
    eventually(&format!("{name} serves {}", &sha[..12]), 120, || {
        let info = host.component(name);
        (info["sha256"] == sha && info["state"] == "ready").then_some(())
    });
}

/// The reasons of component `name`'s events, oldest first.
fn events(host: &Host, name: &str) -> Vec<String> {
    let out = host.cli(&["events", "Component", name, "-o", "json"]);
    let all: Value = serde_json::from_str(&stdout(&out)).expect("json");
    (all.as_array().into_iter().flatten())
        .filter_map(|e| e["reason"].as_str().map(str::to_owned))
        .collect()
}

/// Each Echo's `status.version` (the guest that last committed it).
fn echo_versions(host: &Host) -> Vec<Value> {
    let listing = get_json(host, &["Echo"]);
    (listing["items"].as_array().into_iter().flatten())
        .map(|o| o["status"]["version"].clone())
        .collect()
}

#[test]
fn a_shadow_that_writes_the_same_is_promoted_and_one_that_differs_or_traps_is_dropped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    std::fs::write(
        &config,
        "components:\n  tenant-rust:\n    rollout: {shadow: {objects: 2}}\n  versioned:\n    rollout: {shadow: {objects: 3}}\n",
    )
    .expect("config");
    let config = config.to_str().expect("utf-8 path").to_owned();
    let host = Host::start(&tmp.path().join("data"), &["--config", &config]);
    let tenant = built_bytes("tenant-rust");
    let tenant_v1 = host.deploy_component("tenant-rust", &tenant);
    let echo_v1 = host.deploy_component("versioned", &built_bytes("version-1"));
    serving(&host, "tenant-rust", &tenant_v1);
    serving(&host, "versioned", &echo_v1);
    apply(&host, "kind: Plan\nname: gold\nspec: {cpu: 2}\n");
    for (name, namespaces) in [("t1", "[a]"), ("t2", "[b, c]")] {
        apply(
            &host,
            &format!(
                "kind: Tenant\nname: {name}\nspec: {{plan: gold, namespaces: {namespaces}}}\n"
            ),
        );
    }
    for i in 0..3 {
        apply(
            &host,
            &format!("kind: Echo\nname: e{i}\nspec: {{n: {i}}}\n"),
        );
    }
    eventually(
        "the tenants are ready and the echoes reconciled",
        60,
        || {
            let ready = ["t1", "t2"].iter().all(|t| {
                host.object("Tenant", t)
                    .is_some_and(|o| o["status"]["ready"] == true)
            });
            let echoed = echo_versions(&host);
            (ready && echoed.len() == 3 && echoed.iter().all(|v| v == "version-1")).then_some(())
        },
    );

    // The same code rebuilt: it runs beside the serving version on every object, matches on
    // two, and serves.
    let tenant_v2 = host.deploy_component("tenant-rust", &another_build(tenant));
    serving(&host, "tenant-rust", &tenant_v2);
    let promoted = events(&host, "tenant-rust");
    assert!(
        promoted.contains(&"ShadowPromoted".to_owned()),
        "{promoted:?}"
    );
    assert_eq!(host.component("tenant-rust")["rolled_back"], Value::Null);

    // A version that writes otherwise (its status names version-2): compared on the three
    // echoes, dropped, and none of its writes landed.
    let echo_v2 = host.deploy_component("versioned", &built_bytes("version-2"));
    let dropped = eventually("version-2 is dropped as a shadow", 60, || {
        let info = host.component("versioned");
        (info["shadow"]["sha256"] == echo_v2.as_str() && info["shadow"]["dropped"] == true)
            .then_some(info)
    });
    assert_eq!(dropped["sha256"], echo_v1.as_str(), "version-1 serves on");
    assert_eq!(dropped["shadow"]["differed"], 3, "{dropped}");
    let why = dropped["rolled_back"].as_str().unwrap_or_default();
    assert!(
        why.contains("as a shadow its writes differed from the serving version's on 3 of 3"),
        "{why}"
    );
    // Every differing object is one of the echoes, its status naming the other version.
    let diffs = dropped["shadow"]["diffs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(diffs.len(), 3, "{dropped}");
    for diff in &diffs {
        let lines = diff["lines"].to_string();
        assert!(
            lines.contains(r#"status.version: \"version-1\" → \"version-2\""#),
            "{dropped}"
        );
    }
    assert!(
        echo_versions(&host).iter().all(|v| v == "version-1"),
        "the shadow committed nothing: {:?}",
        echo_versions(&host)
    );
    let described = stdout(&host.cli(&["describe", "component", "versioned"]));
    assert!(described.contains("differed on Echo/e"), "{described}");
    assert!(
        events(&host, "versioned").contains(&"ShadowDropped".to_owned()),
        "{:?}",
        events(&host, "versioned")
    );

    // A version that traps costs the serving one nothing: dropped too.
    let lines = dropped_beside(&host, "version-trap", &echo_v1);
    assert!(lines.contains("the shadow failed"), "{lines}");

    // A version that loops is abandoned a grace after the serving call, not at its deadline:
    // dropped. The serving version's commits never waited for it (see the in-process test
    // `controller_rollout::a_shadow_still_running_holds_no_commit_back...`).
    let lines = dropped_beside(&host, "version-loop", &echo_v1);
    assert!(
        lines.contains("abandoned: still running 1s after the serving version's call ended"),
        "{lines}"
    );
}

#[test]
fn a_restart_while_a_shadow_runs_serves_the_version_before_and_shadows_the_new_one_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    // More objects than there are: the shadow is never promoted nor dropped by itself.
    std::fs::write(
        &config,
        "components:\n  versioned:\n    rollout: {shadow: {objects: 50}}\n",
    )
    .expect("config");
    let config = config.to_str().expect("utf-8 path").to_owned();
    let data = tmp.path().join("data");
    let mut host = Host::start(&data, &["--config", &config]);
    let v1 = built_bytes("version-1");
    let v1_sha = host.deploy_component("versioned", &v1);
    serving(&host, "versioned", &v1_sha);
    apply(&host, "kind: Echo\nname: e0\nspec: {n: 0}\n");
    let rebuilt = host.deploy_component("versioned", &another_build(v1));
    let shadowing = |host: &Host| {
        eventually("the rebuild runs as a shadow, compared on e0", 60, || {
            let info = host.component("versioned");
            // version-1 counts its instance's calls in the status: a shadow's fresh
            // instance may differ there, which counts as compared all the same.
            let shadow = &info["shadow"];
            let compared = shadow["matched"].as_u64()? + shadow["differed"].as_u64()?;
            (shadow["sha256"] == rebuilt.as_str() && compared == 1).then_some(info)
        })
    };
    assert_eq!(shadowing(&host)["sha256"], v1_sha.as_str());

    drop(host);
    host = Host::start(&data, &["--config", &config]);
    serving(&host, "versioned", &v1_sha);
    let info = shadowing(&host);
    assert_eq!(info["shadow"]["dropped"], false, "{info}");
    assert_eq!(echo_versions(&host), vec![Value::from("version-1")]);
}

/// Deploys the test guest `guest` as a new version of `versioned` (serving `serving`), waits
/// until it is dropped as a shadow with `serving` still in service and none of its writes
/// landed, and answers its diff's lines.
fn dropped_beside(host: &Host, guest: &str, serving: &str) -> String {
    let sha256 = host.deploy_component("versioned", &built_bytes(guest));
    let dropped = eventually(&format!("{guest} is dropped as a shadow"), 60, || {
        let info = host.component("versioned");
        (info["shadow"]["sha256"] == sha256.as_str() && info["shadow"]["dropped"] == true)
            .then_some(info)
    });
    assert_eq!(dropped["sha256"], serving, "version-1 serves on");
    assert!(echo_versions(host).iter().all(|v| v == "version-1"));
    dropped["shadow"]["diffs"][0]["lines"].to_string()
}

#[test]
fn a_callback_reads_what_its_last_run_wrote_and_its_shadow_reads_the_same() {
    // `probe` reads its ProbeLog, counts the call in it and writes it back; requeued every
    // millisecond, each run reads what the run before committed an instant earlier. A read
    // from a cache that does not show that commit yet loses a call, and a shadow that reads
    // later than the serving run counts one more: either is a difference.
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("config.yaml");
    std::fs::write(
        &config,
        "components:\n  probe:\n    rollout: {shadow: {objects: 100000}}\n",
    )
    .expect("config");
    let config = config.to_str().expect("utf-8 path").to_owned();
    let host = Host::start(&tmp.path().join("data"), &["--config", &config]);
    let probe = built_bytes("probe");
    let v1 = host.deploy_component("probe", &probe);
    serving(&host, "probe", &v1);
    let v2 = host.deploy_component("probe", &another_build(probe));
    eventually("the rebuild runs as a shadow", 60, || {
        (host.component("probe")["shadow"]["sha256"] == v2.as_str()).then_some(())
    });
    let (objects, runs) = (20, 15);
    let documents: Vec<String> = (0..objects)
        .map(|i| format!("kind: Probe\nname: p{i}\nspec: {{requeueMs: 1, requeueTimes: {runs}}}\n"))
        .collect();
    apply(&host, &documents.join("---\n"));
    eventually("every probe ran its runs", 120, || {
        let listing = get_json(&host, &["Probe"]);
        let items = listing["items"].as_array()?;
        (items.len() == objects
            && items
                .iter()
                .all(|o| o["status"]["calls"].as_u64() == Some(runs + 1)))
        .then_some(())
    });
    for i in 0..objects {
        let log = host
            .object("ProbeLog", &format!("p{i}"))
            .expect("a ProbeLog");
        let events = log["spec"]["events"].as_array().map(Vec::len);
        assert_eq!(events, Some(runs as usize + 1), "p{i}: {log}");
    }
    let info = host.component("probe");
    let shadow = &info["shadow"];
    assert_eq!(shadow["sha256"], v2.as_str(), "{info}");
    assert_eq!(shadow["differed"], 0, "{info}");
    assert_eq!(shadow["dropped"], false, "{info}");
    assert!(shadow["matched"].as_u64() >= Some(objects as u64), "{info}");
}
