//! Reactors in Python (componentize-py), JavaScript (componentize-js) and C (clang,
//! `wit-bindgen c`), built by `scripts/build-components.sh`, through the real binary: each
//! replaces the Rust Policy reactor in a running host under load with no failed call, then
//! behaves exactly as the Rust one (status, validate refusal, Nimbus items, delete), then comes back after a
//! restart from the compiled cache without being compiled again. And the Python
//! `policy-rule` descriptor, loaded by the runtime, writes, retrieves and deletes files
//! under its southbound root.
//!
//! One host per language: the Python and JS components are 12–18 MB and take tens of seconds
//! to compile in a debug build, so each is compiled once per test.

use reactor_testkit::built;
use reactor_testkit::{Host, assert_fails_with, eventually, metric, stderr, stdout};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The components folder holds the reactor as `policy.wasm`: the component is `policy`
/// whichever language's build is in the file.
const COMPONENT: &str = "policy";
/// Compiling a Python or JS component in a debug build takes up to a minute on two busy
/// cores.
const COMPILE_SECONDS: u64 = 240;

fn policy(name: &str, selector: &str, rules: &[(&str, &str)]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|(n, a)| format!("{{name: {n}, action: {a}}}"))
        .collect();
    format!(
        "kind: Policy\nname: {name}\nlabels: {{app: test}}\nspec: {{selector: {selector}, rules: [{}]}}\n",
        rules.join(", ")
    )
}

fn apply(host: &Host, yaml: &str) {
    let out = host.cli_with_stdin(&["apply", "-f", "-"], Some(yaml));
    assert!(out.status.success(), "apply failed: {}", stderr(&out));
}

/// `GET /v1/components/policy`, if the component is known.
fn component(host: &Host) -> Option<Value> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let text = runtime
        .block_on(
            host.client()
                .get_text(&format!("/v1/components/{COMPONENT}")),
        )
        .ok()?;
    serde_json::from_str(&text).ok()
}

fn serving_sha256(host: &Host) -> Option<String> {
    let info = component(host)?;
    (info["serving"] == true)
        .then(|| info["sha256"].as_str().map(str::to_owned))
        .flatten()
}

fn sha256_of(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).expect("read component");
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `from` as `<dir>/policy.wasm` atomically, as a deployment would.
fn deploy(from: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("components folder");
    let tmp = dir.join(".policy.wasm.tmp");
    std::fs::copy(from, &tmp).expect("copy component");
    std::fs::rename(&tmp, dir.join(format!("{COMPONENT}.wasm"))).expect("rename component");
}

/// The Nimbus items owned by Policy `name`: key → (value, target).
fn items_of(host: &Host, name: &str) -> BTreeMap<String, (Value, Value)> {
    let out = host.cli(&["get", "NimbusItem", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).expect("get -o json prints JSON");
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["spec"]["owner"]["kind"] == "Policy")
        .filter(|item| item["spec"]["owner"]["name"] == name)
        .map(|item| {
            let spec = &item["spec"];
            (
                spec["key"].as_str().unwrap_or_default().to_owned(),
                (spec["value"].clone(), spec["target"].clone()),
            )
        })
        .collect()
}

/// Waits until Policy `name` was handled by `reactor` at its current generation.
fn handled_by(host: &Host, name: &str, reactor: &str) -> Value {
    eventually(&format!("{name} handled by {reactor}"), 60, || {
        let o = host.object("Policy", name)?;
        let done = o["status"]["reactor"] == reactor
            && o["status"]["reconcile"][COMPONENT]["observedGeneration"] == o["meta"]["generation"];
        done.then_some(o)
    })
}

fn series(metrics: &str, name: &str) -> f64 {
    metric(metrics, &format!("{name}{{component=\"{COMPONENT}\"}}")).unwrap_or(0.0)
}

/// The whole story for one language (`python`, `js` or `c`).
fn replaces_rust_behaves_like_it_and_restarts_from_cache(language: &str) {
    let new_wasm = built().join(format!("policy-{language}.wasm"));
    replaces_rust_behaves_like_it(language, &new_wasm);
}

/// The same with `new_wasm`, a build of `examples/policy-LANGUAGE` (today's, or a fixture
/// built against an older WIT version).
fn replaces_rust_behaves_like_it(language: &str, new_wasm: &Path) {
    let reactor = format!("policy-{language}");
    let new_wasm = new_wasm.to_owned();
    let rust_wasm = built().join("policy-rust.wasm");
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    deploy(&rust_wasm, &data.join("components"));
    let host = Host::start(&data, &[]);
    eventually("policy-rust serves", 60, || serving_sha256(&host));

    // Load: a writer keeps changing four policies (every apply also runs validate).
    let names: Vec<String> = (0..4).map(|i| format!("load-{i}")).collect();
    for name in &names {
        apply(&host, &policy(name, "{role: edge}", &[("a", "allow")]));
    }
    for name in &names {
        handled_by(&host, name, "policy-rust");
    }
    let stop = AtomicBool::new(false);
    let applied = AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(Vec::<String>::new());
    let new_sha = sha256_of(&new_wasm);
    let rust_sha = serving_sha256(&host).expect("serving");
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            // Bounded: stops when told, or after 5000 applies.
            for round in 0..5000usize {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let name = &names[round % names.len()];
                let rules: Vec<String> = (0..=round % 3).map(|r| format!("r{r}")).collect();
                let rules: Vec<(&str, &str)> =
                    rules.iter().map(|n| (n.as_str(), "allow")).collect();
                let out = host.cli_with_stdin(
                    &["apply", "-f", "-"],
                    Some(&policy(name, "{role: edge}", &rules)),
                );
                if out.status.success() {
                    applied.fetch_add(1, Ordering::Relaxed);
                } else {
                    failed.lock().expect("lock").push(stderr(&out));
                }
                // Paced, so that the compile has a core.
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
        let check = || {
            assert!(!writer.is_finished(), "the writer stopped early");
        };
        eventually("the writer is running", 30, || {
            (applied.load(Ordering::Relaxed) >= 4).then_some(())
        });

        // The swap: the new build is compiled in the background while policy-rust serves.
        deploy(&new_wasm, &host.components_dir());
        let during = applied.load(Ordering::Relaxed);
        eventually(&format!("{reactor} serves"), COMPILE_SECONDS, || {
            (serving_sha256(&host)? == new_sha).then_some(())
        });
        check();
        let while_compiling = applied.load(Ordering::Relaxed) - during;
        // A C component compiles in well under a second: there may be no apply in between.
        if language != "c" {
            assert!(
                while_compiling > 0,
                "applies (validate calls) were served while {reactor} compiled"
            );
        }
        let after = applied.load(Ordering::Relaxed);
        eventually("the writer goes on with the new version", 60, || {
            (applied.load(Ordering::Relaxed) >= after + 8).then_some(())
        });
        stop.store(true, Ordering::Relaxed);
    });
    assert_ne!(rust_sha, new_sha);
    assert_eq!(
        failed.lock().expect("lock").as_slice(),
        &[] as &[String],
        "no apply failed during the swap"
    );
    for name in &names {
        let o = handled_by(&host, name, &reactor);
        let rules = o["spec"]["rules"].as_array().map_or(0, Vec::len);
        assert_eq!(o["status"]["ruleCount"], rules, "{o}");
        assert_eq!(
            items_of(&host, name).len(),
            rules,
            "{name}: one item per rule"
        );
    }
    let metrics = host.metrics();
    for failure in [
        "reactor_reconcile_errors_total",
        "reactor_component_traps_total",
        "reactor_component_load_failures_total",
    ] {
        assert_eq!(series(&metrics, failure), 0.0, "{failure}: {metrics}");
    }
    assert_eq!(
        metric(
            &metrics,
            &format!("reactor_reconcile_total{{component=\"{COMPONENT}\",result=\"error\"}}")
        )
        .unwrap_or(0.0),
        0.0,
        "{metrics}"
    );
    assert!(
        metric(
            &metrics,
            &format!("reactor_reconcile_total{{component=\"{COMPONENT}\",result=\"success\"}}")
        )
        .is_some_and(|n| n >= 8.0),
        "{metrics}"
    );
    assert_eq!(
        series(&metrics, "reactor_component_compiles_total"),
        2.0,
        "policy-rust, then {reactor}: {metrics}"
    );

    // The same behaviour as policy-rust: status, items to the selected agents, update.
    apply(
        &host,
        &policy(
            "web-allow",
            "{role: edge}",
            &[("http", "allow"), ("https", "allow")],
        ),
    );
    let web = handled_by(&host, "web-allow", &reactor);
    assert_eq!(web["status"]["ruleCount"], 2, "{web}");
    assert_eq!(
        web["meta"]["finalizers"],
        json!([format!("reactor-host/{COMPONENT}")])
    );
    let items = items_of(&host, "web-allow");
    let expected: BTreeMap<String, (Value, Value)> = [
        (
            "policy/web-allow/http".to_owned(),
            (
                json!({"name": "http", "action": "allow"}),
                json!({"labels": {"role": "edge"}}),
            ),
        ),
        (
            "policy/web-allow/https".to_owned(),
            (
                json!({"name": "https", "action": "allow"}),
                json!({"labels": {"role": "edge"}}),
            ),
        ),
    ]
    .into();
    assert_eq!(items, expected);

    apply(
        &host,
        &policy("web-allow", "{role: web}", &[("https", "deny")]),
    );
    eventually("the rule that went away is withdrawn", 60, || {
        let o = host.object("Policy", "web-allow")?;
        (o["status"]["ruleCount"] == 1).then_some(())
    });
    assert_eq!(
        items_of(&host, "web-allow"),
        [(
            "policy/web-allow/https".to_owned(),
            (
                json!({"name": "https", "action": "deny"}),
                json!({"labels": {"role": "web"}})
            )
        )]
        .into()
    );

    // validate refuses a policy without rules; nothing is stored.
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some("kind: Policy\nname: empty\nspec: {selector: {}, rules: []}\n"),
    );
    assert_fails_with(
        &out,
        &[&format!("refused by {COMPONENT}: policy has no rules")],
    );
    assert!(host.object("Policy", "empty").is_none());

    // Delete withdraws the items, then the object leaves the store.
    let out = host.cli(&["delete", "Policy", "web-allow"]);
    assert!(out.status.success(), "{}", stderr(&out));
    eventually("web-allow leaves the store", 60, || {
        host.object("Policy", "web-allow").is_none().then_some(())
    });
    assert!(items_of(&host, "web-allow").is_empty());

    // Restart: the component comes from the compiled cache, nothing is compiled.
    let mut host = host;
    host.kill9();
    let host = Host::start(&data, &[]);
    assert_eq!(serving_sha256(&host).as_deref(), Some(new_sha.as_str()));
    let metrics = host.metrics();
    assert_eq!(
        series(&metrics, "reactor_component_compiles_total"),
        0.0,
        "{metrics}"
    );
    assert_eq!(
        series(&metrics, "reactor_component_cache_hits_total"),
        1.0,
        "{metrics}"
    );
    let log = std::fs::read_to_string(data.with_extension("serve.log")).expect("server log");
    let loads: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("component loaded") && l.contains(&new_sha))
        .collect();
    assert!(
        loads.last().is_some_and(|l| l.contains("code=\"cache\"")),
        "{loads:?}"
    );
    apply(&host, &policy("after-restart", "{}", &[("x", "allow")]));
    let o = handled_by(&host, "after-restart", &reactor);
    assert_eq!(o["status"]["ruleCount"], 1);
    let components = stdout(&host.cli(&["components"]));
    assert!(
        components
            .lines()
            .any(|l| l.starts_with(COMPONENT) && l.contains("ready")),
        "{components}"
    );
}

#[test]
fn python_replaces_rust_under_load_behaves_like_it_and_restarts_from_cache() {
    replaces_rust_behaves_like_it_and_restarts_from_cache("python");
}

/// The Tenant example in Python: watches, owned children and their collection, as in Rust.
#[test]
fn python_tenant_follows_its_plan_and_owns_its_namespaces() {
    crate::both_stores::ownership::tenant_flow("tenant-python");
}

/// Built against `reactor:host@0.1.0` (testkit/fixtures/reactor-host-0.1.0/): served as before.
#[test]
fn python_built_against_0_1_0_replaces_rust_under_load_and_behaves_like_it() {
    replaces_rust_behaves_like_it("python", &reactor_testkit::v0_1_0("policy-python"));
}

/// Built against `reactor:host@0.1.0`: served as before.
#[test]
fn js_built_against_0_1_0_replaces_rust_under_load_and_behaves_like_it() {
    replaces_rust_behaves_like_it("js", &reactor_testkit::v0_1_0("policy-js"));
}

#[test]
fn js_replaces_rust_under_load_behaves_like_it_and_restarts_from_cache() {
    replaces_rust_behaves_like_it_and_restarts_from_cache("js");
}

#[test]
fn c_replaces_rust_under_load_behaves_like_it_and_restarts_from_cache() {
    replaces_rust_behaves_like_it_and_restarts_from_cache("c");
}

/// The Python `policy-rule` descriptor in the runtime, as an agent would load it: writes
/// `/<policy>/<rule>.json` under its own southbound folder, retrieves what is there
/// (drift included) and deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_policy_rule_descriptor_writes_retrieves_and_deletes_files() {
    use reactor_host::runtime::{ComponentState, Runtime, RuntimeConfig, World};
    let tmp = tempfile::tempdir().expect("tempdir");
    let southbound = tmp.path().join("southbound");
    let mut config = RuntimeConfig::new(tmp.path().join("data"));
    config.southbound = Some(southbound.clone());
    let runtime = Runtime::new(config).expect("runtime");
    let wasm = tokio::task::spawn_blocking(|| {
        std::fs::read(built().join("policy-rule-descriptor-py.wasm")).expect("descriptor built")
    })
    .await
    .expect("read");
    let info = runtime
        .install(
            &tmp.path().join("descriptors"),
            World::Descriptor,
            "policy-rule",
            &wasm,
        )
        .await
        .expect("install the descriptor");
    assert_eq!(info.state, ComponentState::Ready, "{info:?}");
    let rules = runtime.descriptor("policy-rule");
    let described = rules.info().expect("info");
    assert_eq!(
        (described.name.as_str(), described.key_prefix.as_str()),
        ("policy-rule", "policy/")
    );

    let value = r#"{"name":"http","action":"allow"}"#;
    assert_eq!(
        rules
            .validate("policy/web/http", value)
            .await
            .expect("call"),
        Ok(())
    );
    let refused = rules
        .validate("policy/web", value)
        .await
        .expect("call")
        .expect_err("a key without a rule is refused");
    assert!(refused.contains("policy/<policy>/<rule>"), "{refused}");
    assert!(
        rules
            .validate("policy/web/http", "not json")
            .await
            .expect("call")
            .is_err()
    );

    let metadata = rules
        .create("policy/web/http", value)
        .await
        .expect("call")
        .expect("created");
    assert_eq!(metadata.as_deref(), Some("/web/http.json"));
    let root = southbound.join("policy-rule");
    assert_eq!(
        std::fs::read_to_string(root.join("web/http.json")).expect("written"),
        value
    );

    // Drift: a file edited and one added behind the agent's back show in retrieve.
    std::fs::write(
        root.join("web/http.json"),
        r#"{"name":"http","action":"deny"}"#,
    )
    .expect("edit");
    std::fs::create_dir_all(root.join("db")).expect("mkdir");
    std::fs::write(
        root.join("db/all.json"),
        r#"{"name":"all","action":"deny"}"#,
    )
    .expect("add");
    let found = rules.retrieve(&[]).await.expect("call").expect("retrieved");
    let found: Vec<(&str, &str, Option<&str>)> = found
        .iter()
        .map(|r| (r.key.as_str(), r.value.as_str(), r.metadata.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "policy/db/all",
                r#"{"name":"all","action":"deny"}"#,
                Some("/db/all.json")
            ),
            (
                "policy/web/http",
                r#"{"name":"http","action":"deny"}"#,
                Some("/web/http.json")
            ),
        ]
    );

    rules
        .delete("policy/web/http", value, metadata.as_deref())
        .await
        .expect("call")
        .expect("deleted");
    assert!(
        !root.join("web").exists(),
        "the emptied policy folder goes too"
    );
    rules
        .delete("policy/web/http", value, None)
        .await
        .expect("call")
        .expect("deleting a missing rule is fine");
    let left = rules.retrieve(&[]).await.expect("call").expect("retrieved");
    assert_eq!(left.len(), 1);
    assert!(
        rules.is_retriable("anything").await.expect("call"),
        "SDK default"
    );
}
