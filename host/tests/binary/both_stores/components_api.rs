//! The component API: off unless `serve --allow-component-api`; then a `.wasm` uploaded is
//! loaded and serving, a broken upload is refused (400) and leaves the previous version
//! serving with its error shown, and removing detaches the component.

use reactor_testkit::built;
use reactor_testkit::{Host, eventually, metric, stdout};

fn put(host: &Host, name: &str, body: Vec<u8>) -> (u16, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let response = host
            .http()
            .put(format!("{}/v1/components/{name}", host.url))
            .bearer_auth(host.token())
            .body(body)
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    })
}

fn delete(host: &Host, name: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        host.http()
            .delete(format!("{}/v1/components/{name}", host.url))
            .bearer_auth(host.token())
            .send()
            .await
            .expect("request")
            .status()
            .as_u16()
    })
}

fn probe_wasm() -> Vec<u8> {
    std::fs::read(built().join("probe.wasm")).expect("probe.wasm")
}

#[test]
fn the_component_api_is_off_by_default() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let (status, body) = put(&host, "probe", probe_wasm());
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("--allow-component-api"), "{body}");
    assert!(
        !host.components_dir().join("probe.wasm").exists(),
        "nothing was written"
    );
    assert_eq!(
        stdout(&host.cli(&["components"])).lines().count(),
        1,
        "only the header"
    );
}

#[test]
fn upload_replace_with_a_broken_file_and_remove() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &["--allow-component-api"]);
    let (status, body) = put(&host, "probe", probe_wasm());
    assert_eq!(status, 200, "{body}");
    let listed = stdout(&host.cli(&["components"]));
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("probe ") && l.contains(" ready ")),
        "{listed}"
    );
    assert!(
        metric(
            &host.metrics(),
            "reactor_component_loads_total{component=\"probe\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "the load is counted"
    );

    let (status, body) = put(&host, "probe", b"\0asm not really".to_vec());
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("probe.wasm") && body.contains("failed to parse"),
        "{body}"
    );
    let listed = stdout(&host.cli(&["components"]));
    let line = listed
        .lines()
        .find(|l| l.starts_with("probe "))
        .expect("still listed");
    assert!(
        line.contains(" failed ") && line.contains(" yes "),
        "old version still serving: {line}"
    );
    let applied = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(applied.status.success());
    eventually("the serving version handles objects", 30, || {
        host.object("Probe", "p")
            .filter(|o| o["status"]["calls"] == 1)
            .map(|_| ())
    });

    assert_eq!(delete(&host, "probe"), 200);
    assert_eq!(delete(&host, "probe"), 404);
    eventually("the component is gone", 10, || {
        (stdout(&host.cli(&["components"])).lines().count() == 1).then_some(())
    });
}
