//! `PUT /v1/objects/{kind}/{name}/status`: the client's status is written, the host-owned
//! `status.reconcile` is kept as the host wrote it, and a stale revision changes nothing.

use reactor_testkit::{Host, eventually, install};
use serde_json::{Value, json};

fn put_status(host: &Host, body: Value) -> (u16, Value) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let answer = host
            .http()
            .put(format!("{}/v1/objects/Probe/p/status", host.url))
            .bearer_auth(host.token())
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = answer.status().as_u16();
        (status, answer.json().await.unwrap_or(Value::Null))
    })
}

#[test]
fn a_status_put_keeps_the_hosts_reconcile_record() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    install("probe", &data.join("components"));
    let host = Host::start(&data, &[]);
    host.wait_ready("probe");
    let applied = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Probe\nname: p\nspec: {}\n"),
    );
    assert!(applied.status.success());
    let reconciled = eventually("probe reconciled p", 30, || {
        host.object("Probe", "p")
            .filter(|o| o["status"]["reconcile"]["probe"]["observedGeneration"] == 1)
    });
    let record = reconciled["status"]["reconcile"].clone();

    let (code, written) = put_status(
        &host,
        json!({"status": {"mine": 1, "reconcile": {"forged": true}}}),
    );
    assert_eq!(code, 200, "{written}");
    let object = host.object("Probe", "p").expect("p");
    assert_eq!(object["status"]["mine"], 1, "{object}");
    assert_eq!(object["status"]["reconcile"], record, "{object}");
    assert_eq!(written["status"], object["status"]);

    let stale = reconciled["meta"]["revision"].clone();
    let (code, refused) = put_status(&host, json!({"status": {"mine": 2}, "revision": stale}));
    assert_eq!(code, 409, "{refused}");
    assert_eq!(refused["code"], "conflict");
    assert_eq!(host.object("Probe", "p").expect("p")["status"]["mine"], 1);
}
