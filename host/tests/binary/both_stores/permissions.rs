//! Declared permissions through the real binary (issue 37, part 3): `component annotate`
//! writes what a reactor may touch into the component; the server refuses and counts any call
//! outside it, shows it in `components` and `describe component`, holds a version that
//! declares more until an admin approves it (recorded in the store: it survives a restart,
//! and the version serving before a restart serves again while a wider one waits),
//! and loads a narrower one at once. An undeclared component keeps today's powers.

use reactor_testkit::policy::apply;
use reactor_testkit::{Host, eventually, guest, promtool_check, run_cli, stderr, stdout};
use std::path::Path;

const NAME: &str = "misbehave";

/// The misbehave guest declaring `flags` (`component annotate` flags), written to `to`.
fn annotated(dir: &Path, version: &str, flags: &[&str]) -> std::path::PathBuf {
    let file = dir.join(format!("{version}.wasm"));
    std::fs::write(&file, guest(NAME)).expect("write the guest");
    let mut args = vec!["component", "annotate", file.to_str().expect("utf-8 path")];
    args.extend(flags);
    let out = run_cli(&args);
    assert!(out.status.success(), "annotate: {}", stderr(&out));
    file
}

/// Puts `file` in the server's folder as the component (renamed in, as a deploy would).
fn deploy(host: &Host, file: &Path) -> String {
    host.deploy_component(NAME, &std::fs::read(file).expect("read the version"))
}

fn serving(host: &Host, sha: &str) {
    eventually(&format!("{NAME} serves {sha}"), 120, || {
        let info = host.component(NAME);
        (info["sha256"] == sha && info["state"] == "ready").then_some(())
    });
}

fn row(host: &Host) -> String {
    stdout(&host.cli(&["components"]))
        .lines()
        .find(|l| l.starts_with(&format!("{NAME} ")))
        .unwrap_or_default()
        .to_owned()
}

/// Applies a Chaos object doing `order` and answers its status once it was reconciled, or
/// its reconcile error.
fn chaos(host: &Host, name: &str, order: &str) -> Result<serde_json::Value, String> {
    apply(host, &format!("kind: Chaos\nname: {name}\nspec: {order}\n"));
    eventually(&format!("Chaos {name} reconciled"), 60, || {
        let status = host.object("Chaos", name)?["status"].clone();
        if let Some(error) = status["reconcile"][NAME]["lastError"].as_str() {
            return Some(Err(error.to_owned()));
        }
        status.get("calls").is_some().then_some(Ok(status))
    })
}

/// The count of refused calls of `import`, 0 if none.
fn denied(host: &Host, import: &str) -> f64 {
    let text = host.metrics();
    text.lines()
        .filter(|l| l.starts_with("reactor_component_denied_calls_total{"))
        .filter(|l| l.contains(&format!("component=\"{NAME}\"")))
        .filter(|l| l.contains(&format!("import=\"{import}\"")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_reactor_does_only_what_it_declares_and_a_wider_version_waits_for_an_admin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("components")).expect("components folder");
    let versions = tmp.path().join("versions");
    std::fs::create_dir_all(&versions).expect("versions folder");
    let mut host = Host::start(&data, &[]);

    // Undeclared: today's powers, shown as such.
    let plain = versions.join("plain.wasm");
    std::fs::write(&plain, guest(NAME)).expect("write the guest");
    let plain_sha = deploy(&host, &plain);
    serving(&host, &plain_sha);
    assert!(row(&host).contains("undeclared"), "{}", row(&host));
    let status = chaos(&host, "free", "{do: write, kind: Secret, name: s0}");
    assert!(
        status.is_ok(),
        "an undeclared reactor writes any kind: {status:?}"
    );
    assert!(host.object("Secret", "s0").is_some());

    // A declaration narrower than undeclared: loads at once, shown before anything else.
    let v1 = annotated(&versions, "v1", &["--reads", "Note", "--writes", "Note"]);
    let v1_sha = deploy(&host, &v1);
    serving(&host, &v1_sha);
    assert!(
        row(&host).contains("reads Note; writes Note"),
        "{}",
        row(&host)
    );
    let described = stdout(&host.cli(&["describe", "component", NAME]));
    for line in [
        "reads:      Note",
        "writes:     Note",
        "publishes:  no",
        "Waiting:      <none>",
    ] {
        assert!(described.contains(line), "{line:?} in\n{described}");
    }

    // Calls inside it work; calls outside it are refused with `denied` and counted.
    assert!(chaos(&host, "note", "{do: write, kind: Note, name: n1}").is_ok());
    let before = denied(&host, "store.apply");
    let refused = chaos(&host, "secret", "{do: write, kind: Secret, name: s1}")
        .expect_err("writing an undeclared kind");
    assert!(
        refused.contains("Denied") && refused.contains("did not declare writing kind Secret"),
        "{refused}"
    );
    assert!(host.object("Secret", "s1").is_none(), "nothing was written");
    // (at least: the rollout may run `free` again on v1, refused too)
    assert!(denied(&host, "store.apply") >= before + 1.0);
    let refused = chaos(&host, "peek", "{do: read, kind: Plan}").expect_err("reading Plan");
    assert!(
        refused.contains("did not declare reading kind Plan"),
        "{refused}"
    );
    assert!(denied(&host, "store.list") >= 1.0);
    assert!(
        chaos(&host, "own", "{do: read, kind: Chaos}").is_ok(),
        "its own kind"
    );
    let metrics = host.metrics();
    assert!(
        metrics.contains("# HELP reactor_component_denied_calls_total "),
        "{metrics}"
    );

    // Each version's accounting (issue 37, part 6), in the metrics and `components -o wide`.
    let version = format!("version=\"{}\"", &v1_sha[..12]);
    let sample = |family: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(&format!("{family}{{")))
            .filter(|l| l.contains(&format!("component=\"{NAME}\"")) && l.contains(&version))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert!(sample("reactor_component_calls_total") >= 4.0, "{metrics}");
    assert!(
        sample("reactor_component_host_calls_total") >= 6.0,
        "{metrics}"
    );
    assert!(
        sample("reactor_component_written_bytes_total") > 0.0,
        "{metrics}"
    );
    assert!(
        sample("reactor_component_memory_peak_bytes") >= 65536.0,
        "{metrics}"
    );
    assert!(sample("reactor_component_cpu_seconds") > 0.0, "{metrics}");
    for family in [
        "calls_total",
        "host_calls_total",
        "cpu_seconds",
        "memory_peak_bytes",
        "written_bytes_total",
    ] {
        assert!(
            metrics.contains(&format!("# HELP reactor_component_{family} ")),
            "{family}"
        );
    }
    assert_eq!(promtool_check(&metrics), "");
    let wide = stdout(&host.cli(&["components", "-o", "wide"]));
    assert!(
        wide.lines()
            .next()
            .is_some_and(|h| h.contains("PEAK MEMORY") && h.contains("HOST CALLS")),
        "{wide}"
    );
    let usage = host.component(NAME)["usage"].clone();
    assert!(
        usage["calls"].as_u64() >= Some(4) && usage["writtenBytes"].as_u64() > Some(0),
        "{usage}"
    );

    // A wider version waits; v1 goes on serving; `components` and `describe` say what it adds.
    let v2 = annotated(
        &versions,
        "v2",
        &["--reads", "Note", "--writes", "Note,Secret"],
    );
    let v2_sha = deploy(&host, &v2);
    eventually("v2 waits", 60, || {
        host.component(NAME)["waiting"]["sha256"]
            .as_str()
            .map(|s| s == v2_sha)?
            .then_some(())
    });
    assert_eq!(
        host.component(NAME)["sha256"],
        v1_sha.as_str(),
        "v1 still serves"
    );
    let version = &v2_sha[..12];
    assert!(
        row(&host).contains(&format!("waiting {version} adds writes Secret")),
        "{}",
        row(&host)
    );
    let described = stdout(&host.cli(&["describe", "component", NAME]));
    assert!(
        described.contains("adds:       writes Secret"),
        "{described}"
    );

    // Only an admin approves it.
    let editor = host.user("editor", "edit");
    let refused = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(host.client_with(Some(editor)).approve(NAME))
        .expect_err("an editor may not approve");
    assert!(
        format!("{refused:?}").contains("status: 403"),
        "{refused:?}"
    );
    assert_eq!(host.component(NAME)["sha256"], v1_sha.as_str(), "still v1");
    let out = host.cli(&["component", "approve", NAME]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("approved"), "{}", stdout(&out));
    serving(&host, &v2_sha);
    assert!(host.component(NAME)["waiting"].is_null());
    assert!(chaos(&host, "secret2", "{do: write, kind: Secret, name: s2}").is_ok());
    let out = host.cli(&["component", "approve", NAME]);
    assert!(
        !out.status.success() && stderr(&out).contains("no version waiting"),
        "{}",
        stderr(&out)
    );

    // A narrower one loads at once.
    let v3 = annotated(&versions, "v3", &["--writes", "Note"]);
    let v3_sha = deploy(&host, &v3);
    serving(&host, &v3_sha);
    assert!(host.component(NAME)["waiting"].is_null());

    // The approval is in the store: after a restart (v3 serving first), v2 loads at once.
    drop(host);
    host = Host::start(&data, &[]);
    serving(&host, &v3_sha);
    deploy(&host, &v2);
    serving(&host, &v2_sha);
    // And a version wider than both still waits.
    let v4 = annotated(&versions, "v4", &["--writes", "Note,Secret", "--publishes"]);
    let v4_sha = deploy(&host, &v4);
    eventually("v4 waits", 60, || {
        host.component(NAME)["waiting"]["sha256"]
            .as_str()
            .map(|s| s == v4_sha)?
            .then_some(())
    });
    assert_eq!(
        host.component(NAME)["waiting"]["added"],
        serde_json::json!(["publishes"])
    );

    // A restart while v4 waits (its file in the folder): v2, which served before, serves
    // again, and v4 still waits.
    drop(host);
    host = Host::start(&data, &[]);
    serving(&host, &v2_sha);
    eventually("v4 waits after the restart", 60, || {
        host.component(NAME)["waiting"]["sha256"]
            .as_str()
            .map(|s| s == v4_sha)?
            .then_some(())
    });
}

#[test]
fn annotate_refuses_bad_input_and_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("m.wasm");
    std::fs::write(&file, guest(NAME)).expect("write");
    let before = std::fs::read(&file).expect("read");
    let path = file.to_str().expect("utf-8");
    for (flags, needle) in [
        (
            vec!["--writes", "not a kind"],
            "writes: \"not a kind\" is not a kind",
        ),
        (vec!["--wasi", "data"], "is not an absolute guest folder"),
    ] {
        let mut args = vec!["component", "annotate", path];
        args.extend(flags);
        let out = run_cli(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr(&out).contains(needle),
            "{needle:?} in {}",
            stderr(&out)
        );
    }
    let yaml = tmp.path().join("p.yaml");
    std::fs::write(&yaml, "raeds: [Note]\n").expect("write");
    let out = run_cli(&[
        "component",
        "annotate",
        path,
        "--from",
        yaml.to_str().expect("utf-8"),
    ]);
    assert!(stderr(&out).contains("raeds"), "{}", stderr(&out));
    let module = tmp.path().join("core.wasm");
    std::fs::write(&module, b"\0asm\x01\0\0\0").expect("write");
    let out = run_cli(&[
        "component",
        "annotate",
        module.to_str().expect("utf-8"),
        "--publishes",
    ]);
    assert!(
        stderr(&out).contains("core wasm module"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).expect("read"), before, "unchanged");
}
