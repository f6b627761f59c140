//! The components folder as a user edits it: a file moved out detaches its component, and
//! the good file put back after a broken one serves again with no stale error.

use reactor_testkit::{Host, built, eventually, stdout};

/// The `components` table's line for `name`, if listed.
fn line_of(host: &Host, name: &str) -> Option<String> {
    stdout(&host.cli(&["components"]))
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .map(str::to_owned)
}

#[test]
fn moves_and_repairs_in_the_folder_are_followed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let dir = host.components_dir();
    let good = built().join("probe.wasm");
    let file = dir.join("probe.wasm");
    std::fs::create_dir_all(&dir).expect("components folder");
    std::fs::copy(&good, &file).expect("install probe");
    host.wait_ready("probe");

    let outside = tmp.path().join("probe.wasm");
    std::fs::rename(&file, &outside).expect("move out");
    eventually("the component moved out is detached", 30, || {
        line_of(&host, "probe").is_none().then_some(())
    });
    std::fs::rename(&outside, &file).expect("move back");
    host.wait_ready("probe");

    std::fs::write(&file, b"\0asm broken").expect("break it");
    let failed = eventually("the broken file is reported", 30, || {
        line_of(&host, "probe").filter(|l| l.contains(" failed "))
    });
    assert!(failed.contains("failed to parse"), "{failed}");

    std::fs::copy(&good, &file).expect("put the good file back");
    let line = eventually("the good file serves again", 30, || {
        line_of(&host, "probe").filter(|l| l.contains(" ready "))
    });
    assert!(line.trim_end().ends_with(" -"), "no stale error: {line}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&host.cli(&["components", "-o", "json"]))).expect("json");
    assert_eq!(json[0]["error"], serde_json::Value::Null, "{json}");
    let state = host.cli(&["components", "-o", "jsonpath={[*].name}={[*].state}"]);
    assert_eq!(stdout(&state), "probe=ready\n");
}
