//! Nimbus and agents through the real binaries: a server running examples/policy-rust and
//! several `reactor-host agent` processes that come and go (kill -9, SIGSTOP, compaction).

use reactor_testkit::Agent;
use reactor_testkit::policy::{apply, keys, policy, policy_host};
use reactor_testkit::{Host, assert_fails_with, eventually, stdout};
use serde_json::Value;
use std::collections::BTreeSet;

fn converges(agent: &Agent, want: &BTreeSet<String>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while agent.applied() != *want {
        assert!(
            std::time::Instant::now() < deadline,
            "{} holds {:?}, not {want:?}; its log:\n{}",
            agent.id,
            agent.applied(),
            agent.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn agents_json(host: &Host) -> Vec<Value> {
    let out = host.cli(&["agents", "--json"]);
    assert!(
        out.status.success(),
        "agents: {}",
        reactor_testkit::stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("agents --json prints JSON")
}

fn agent_view(host: &Host, id: &str) -> Option<Value> {
    agents_json(host).into_iter().find(|a| a["id"] == id)
}

#[test]
fn items_reach_exactly_their_targets_and_status_comes_back_up() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let web1 = Agent::start(&host, tmp.path(), "web-1", &["role=web"]);
    let web2 = Agent::start(&host, tmp.path(), "web-2", &["role=web", "zone=b"]);
    let db = Agent::start(&host, tmp.path(), "db-1", &["role=db"]);
    apply(
        &host,
        &format!(
            "{}---\n{}",
            policy("web-allow", "web", &["http", "https"]),
            policy("db-allow", "db", &["pg"])
        ),
    );
    let web = keys("web-allow", &["http", "https"]);
    converges(&web1, &web);
    converges(&web2, &web);
    converges(&db, &keys("db-allow", &["pg"]));
    assert_eq!(
        web1.value("policy/web-allow/http"),
        Some(serde_json::json!({"name": "http", "action": "allow"}))
    );

    // on-agent-status ran for each agent, and the host rolled up the propagation.
    let status = eventually("web-allow's agents and propagation", 30, || {
        let status = host.object("Policy", "web-allow")?["status"].clone();
        (status["agents"] == serde_json::json!({"web-1": 2, "web-2": 2})
            && status["propagation"]["updated"] == 2)
            .then_some(status)
    });
    assert_eq!(status["propagation"]["pending"], 0);
    assert_eq!(status["propagation"]["generation"], 1);
    assert_eq!(status["ruleCount"], 2);
    // Its rounds count in the reconcile families, told apart by their callback label.
    let rounds = "reactor_reconcile_total{component=\"policy-rust\",callback=\"on-agent-status\",result=\"success\"}";
    let metrics = host.metrics();
    assert!(
        reactor_testkit::metric(&metrics, rounds) >= Some(2.0),
        "{rounds} in:\n{metrics}"
    );
    assert!(
        status["reconcile"]["policy-rust"]
            .get("lastError")
            .is_none(),
        "{status}"
    );

    // Connected once its first heartbeat is in (sent as it starts, beside its feed).
    let table = eventually("db-1 listed as connected", 30, || {
        let table = stdout(&host.cli(&["agents"]));
        table
            .lines()
            .any(|l| l.starts_with("db-1 ") && l.contains(" yes "))
            .then_some(table)
    });
    let header = table.lines().next().expect("a header");
    for column in [
        "ID",
        "CONNECTED",
        "LAST SEEN",
        "APPLIED",
        "PENDING",
        "FAILED",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let db_line = table
        .lines()
        .find(|l| l.starts_with("db-1 "))
        .expect("db-1 listed");
    assert!(db_line.contains(" yes "), "{db_line}");
    let view = agent_view(&host, "web-2").expect("web-2 listed");
    assert_eq!(view["applied"], 2);
    assert_eq!(view["labels"]["zone"], "b");

    // A change of rules: one withdrawn, one added; the roll-up follows the new generation.
    apply(&host, &policy("web-allow", "web", &["http", "ssh"]));
    let web = keys("web-allow", &["http", "ssh"]);
    converges(&web1, &web);
    converges(&web2, &web);
    eventually("propagation of generation 2", 30, || {
        let p = host.object("Policy", "web-allow")?["status"]["propagation"].clone();
        (p["generation"] == 2 && p["updated"] == 2 && p["pending"] == 0).then_some(())
    });

    // An item the agent cannot apply is reported failed, up to the agents table and roll-up.
    apply(&host, &policy("escape", "db", &[".."]));
    eventually("db-1 reports the failed item", 30, || {
        let view = agent_view(&host, "db-1")?;
        let p = host.object("Policy", "escape")?["status"]["propagation"].clone();
        (view["failed"] == 1 && view["applied"] == 1 && p["failed"] == 1 && p["pending"] == 1)
            .then_some(())
    });

    // Deleting a policy withdraws its items from its agents.
    assert!(host.cli(&["delete", "Policy", "db-allow"]).status.success());
    converges(&db, &BTreeSet::new());
    converges(&web1, &web);
}

#[test]
fn a_killed_agent_converges_to_what_changed_while_it_was_away() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    apply(
        &host,
        &format!(
            "{}---\n{}",
            policy("a", "edge", &["x", "y"]),
            policy("b", "edge", &["z"])
        ),
    );
    let mut want = keys("a", &["x", "y"]);
    want.extend(keys("b", &["z"]));
    converges(&agent, &want);

    agent.kill9();
    eventually("edge-1 shows as disconnected", 30, || {
        (agent_view(&host, "edge-1")?["connected"] == false).then_some(())
    });
    apply(&host, &policy("a", "edge", &["x", "w"]));
    assert!(host.cli(&["delete", "Policy", "b"]).status.success());
    eventually("b's items are withdrawn", 30, || {
        host.object("Policy", "b").is_none().then_some(())
    });
    agent.restart();
    converges(&agent, &keys("a", &["x", "w"]));
    eventually("edge-1 is connected again", 30, || {
        (agent_view(&host, "edge-1")?["connected"] == true).then_some(())
    });
    // The count is exact: y, withdrawn while edge-1 was away, is no longer counted.
    eventually("a counts 2 items applied on edge-1", 30, || {
        let status = host.object("Policy", "a")?["status"].clone();
        (status["agents"]["edge-1"] == 2 && status["propagation"]["updated"] == 1).then_some(())
    });
}

#[test]
fn an_item_no_longer_meant_for_an_agent_leaves_its_count() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let edge = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    let web = Agent::start(&host, tmp.path(), "web-1", &["role=web"]);
    apply(&host, &policy("p", "edge", &["r1", "r2"]));
    converges(&edge, &keys("p", &["r1", "r2"]));
    eventually("edge-1 counted", 30, || {
        let status = host.object("Policy", "p")?["status"].clone();
        (status["agents"]["edge-1"] == 2).then_some(())
    });
    // Re-targeted: edge-1 removes the items, the reactor hears `removed` and recounts.
    apply(&host, &policy("p", "web", &["r1", "r2"]));
    converges(&web, &keys("p", &["r1", "r2"]));
    converges(&edge, &BTreeSet::new());
    eventually("edge-1 counts nothing, web-1 two", 30, || {
        let status = host.object("Policy", "p")?["status"].clone();
        (status["agents"]["edge-1"] == 0 && status["agents"]["web-1"] == 2).then_some(())
    });
}

/// A decommissioned agent is removed by hand: it leaves `agents`, the reactor hears its
/// reports as `removed`, and the owner's propagation counts only the agents left (a dead
/// agent that never reported, and so was pending, included).
#[test]
fn a_removed_agent_leaves_the_list_and_the_owners_propagation() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let live = Agent::start(&host, tmp.path(), "web-1", &["role=web"]);
    let mut dead = Agent::start(&host, tmp.path(), "web-2", &["role=web"]);
    // Registered, never running: it never reports.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let labels = std::collections::BTreeMap::from([("role".to_owned(), "web".to_owned())]);
    runtime
        .block_on(host.client().register_agent("ghost", labels))
        .expect("register");
    apply(&host, &policy("p", "web", &["a", "b"]));
    converges(&live, &keys("p", &["a", "b"]));
    converges(&dead, &keys("p", &["a", "b"]));
    eventually("both agents counted, ghost pending", 30, || {
        let status = host.object("Policy", "p")?["status"].clone();
        let p = &status["propagation"];
        (status["agents"]["web-2"] == 2
            && p["updated"] == 2
            && p["pending"] == 1
            && p["pendingAgents"] == serde_json::json!(["ghost"]))
        .then_some(())
    });

    dead.kill9();
    for id in ["web-2", "ghost"] {
        let out = host.cli(&["agents", "remove", id]);
        assert!(
            out.status.success(),
            "remove: {}",
            reactor_testkit::stderr(&out)
        );
        assert_eq!(stdout(&out).trim(), format!("agent {id} removed"));
    }
    // The reactor heard web-2's reports as `removed`; only web-1 counts, nobody is pending.
    eventually("only web-1 counts", 30, || {
        let status = host.object("Policy", "p")?["status"].clone();
        let p = &status["propagation"];
        (status["agents"]["web-2"] == 0
            && p["updated"] == 1
            && p["pending"] == 0
            && p["pendingAgents"].is_null())
        .then_some(())
    });
    let ids: Vec<Value> = agents_json(&host).iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, vec![serde_json::json!("web-1")]);
    // The next generation counts web-1 alone too.
    apply(&host, &policy("p", "web", &["a", "c"]));
    converges(&live, &keys("p", &["a", "c"]));
    eventually("generation 2 counts web-1 alone", 30, || {
        let p = host.object("Policy", "p")?["status"]["propagation"].clone();
        (p["generation"] == 2 && p["updated"] == 1 && p["pending"] == 0).then_some(())
    });

    // An agent not registered: one line naming it.
    assert_fails_with(
        &host.cli(&["agents", "remove", "web-2"]),
        &["agent web-2 is not registered"],
    );
}

#[test]
fn a_stopped_agent_does_not_hold_back_the_others_and_converges_when_continued() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let slow = Agent::start(&host, tmp.path(), "slow", &["role=web"]);
    let fast = Agent::start(&host, tmp.path(), "fast", &["role=web"]);
    apply(&host, &policy("p", "web", &["one"]));
    converges(&slow, &keys("p", &["one"]));
    converges(&fast, &keys("p", &["one"]));

    slow.pause();
    let rules: Vec<String> = (0..50).map(|i| format!("r{i}")).collect();
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    apply(&host, &policy("p", "web", &rules));
    converges(&fast, &keys("p", &rules));
    assert_eq!(
        slow.applied(),
        keys("p", &["one"]),
        "a stopped agent applies nothing"
    );
    slow.resume();
    converges(&slow, &keys("p", &rules));
}

#[test]
fn an_agent_behind_the_compacted_log_relists_and_drops_what_was_deleted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A tiny log: the agent's resume revision is compacted away while it is down.
    let host = policy_host(tmp.path(), &["--log-retention", "8"]);
    let mut agent = Agent::start(&host, tmp.path(), "n1", &["role=web"]);
    apply(&host, &policy("old", "web", &["a", "b"]));
    converges(&agent, &keys("old", &["a", "b"]));
    agent.kill9();
    assert!(host.cli(&["delete", "Policy", "old"]).status.success());
    for i in 0..10 {
        apply(&host, &policy(&format!("new-{i}"), "web", &["c"]));
    }
    agent.restart();
    let want: BTreeSet<String> = (0..10)
        .flat_map(|i| keys(&format!("new-{i}"), &["c"]))
        .collect();
    converges(&agent, &want);
    // Logged once the re-list's state is saved, just after its items were applied.
    eventually("the agent logs that it re-listed", 30, || {
        agent.log().contains("re-listed").then_some(())
    });
}

#[test]
fn agents_without_the_token_get_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let run = |token: Option<&str>| {
        let mut command = std::process::Command::new(reactor_testkit::reactor_host_bin());
        command
            .args(["agent", "--id", "intruder", "--server", &host.url])
            .arg("--data")
            .arg(tmp.path().join("intruder"))
            .arg("--ca")
            .arg(host.data.join("ca.crt"))
            .env_remove("REACTOR_TOKEN");
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        command.output().expect("agent runs")
    };
    assert_fails_with(
        &run(Some("wrong")),
        &["refused the agent's credential: invalid API token"],
    );
    assert_fails_with(&run(None), &["the agent needs a credential: --join TOKEN"]);
    assert!(
        agent_view(&host, "intruder").is_none(),
        "a refused agent is not registered"
    );
}

#[test]
fn a_policy_of_many_rules_reaches_an_agent_whole() {
    // Its items are written in one transaction (on etcd: one revision for all of them); a
    // feed that saw part of the revision before the rest arrived would miss the rest.
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let edge = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    let rules: Vec<String> = (0..60).map(|i| format!("r{i}")).collect();
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    for name in ["p", "q", "s"] {
        apply(&host, &policy(name, "edge", &rules));
    }
    let mut want = keys("p", &rules);
    want.extend(keys("q", &rules));
    want.extend(keys("s", &rules));
    converges(&edge, &want);
}

#[test]
fn reports_all_land_through_an_in_flight_budget_smaller_than_one_request() {
    // 256 bytes: each report request is larger, so each waits for the others and goes alone.
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &["--reports-in-flight-bytes", "256"]);
    let fleet: Vec<Agent> = (0..3)
        .map(|i| Agent::start(&host, tmp.path(), &format!("edge-{i}"), &["role=edge"]))
        .collect();
    let rules: Vec<String> = (0..40).map(|i| format!("r{i}")).collect();
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    for name in ["p", "q"] {
        apply(&host, &policy(name, "edge", &rules));
    }
    let mut want = keys("p", &rules);
    want.extend(keys("q", &rules));
    for agent in &fleet {
        converges(agent, &want);
    }
    eventually("every agent's report on every item is back", 60, || {
        let views = agents_json(&host);
        (views.len() == fleet.len() && views.iter().all(|v| v["applied"] == want.len()))
            .then_some(())
    });
    eventually("the roll-up counts every agent", 30, || {
        let p = host.object("Policy", "q")?["status"]["propagation"].clone();
        (p["updated"] == fleet.len() && p["pending"] == 0).then_some(())
    });
}

#[test]
fn a_report_whose_body_never_comes_is_refused_at_its_deadline_and_frees_its_share() {
    // 256 bytes of budget; a request that declares 250 and sends nothing holds them until
    // `--report-body-timeout` (1 s) refuses it.
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(
        tmp.path(),
        &[
            "--reports-in-flight-bytes",
            "256",
            "--report-body-timeout",
            "1s",
        ],
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (http, url, token) = (host.http(), host.url.clone(), host.token());
    let stalled = runtime.spawn(async move {
        let never = futures::stream::pending::<Result<Vec<u8>, std::io::Error>>();
        let response = http
            .post(format!("{url}/v1/nimbus/status"))
            .bearer_auth(token)
            .header(reqwest::header::CONTENT_LENGTH, 250)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(reqwest::Body::wrap_stream(never))
            .send()
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    });
    let agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    apply(&host, &policy("p", "edge", &["r1", "r2"]));
    let want = keys("p", &["r1", "r2"]);
    converges(&agent, &want);
    eventually("the agent's reports are back", 60, || {
        let views = agents_json(&host);
        (views.len() == 1 && views[0]["applied"] == want.len()).then_some(())
    });
    let within = std::time::Duration::from_secs(30);
    let (status, body) = runtime
        .block_on(async { tokio::time::timeout(within, stalled).await })
        .expect("the stalled request is answered")
        .expect("the request task");
    assert_eq!(status, 408, "{body}");
    assert!(
        body.contains("the report's body did not arrive within 1s"),
        "{body}"
    );
}

/// Deletes Policy `name` while its reactor is absent and removes its finalizer by hand, as
/// an operator would: nobody runs `on-delete`.
fn delete_without_its_reactor(host: &Host, name: &str) {
    let installed = host.components_dir().join("policy-rust.wasm");
    if installed.exists() {
        std::fs::remove_file(&installed).expect("remove the reactor");
    }
    eventually("policy-rust is unloaded", 30, || {
        (!stdout(&host.cli(&["components"])).contains("policy-rust")).then_some(())
    });
    assert!(host.cli(&["delete", "Policy", name]).status.success());
    let held = host.object("Policy", name).expect("held by its finalizer");
    let finalizer = held["meta"]["finalizers"][0]
        .as_str()
        .expect("a finalizer")
        .to_owned();
    let out = host.cli(&["finalize", "Policy", name, "--remove", &finalizer]);
    assert!(
        out.status.success(),
        "finalize: {}",
        reactor_testkit::stderr(&out)
    );
    assert!(host.object("Policy", name).is_none(), "{name} is gone");
}

/// The keys of the items stored now.
fn stored_items(host: &Host) -> BTreeSet<String> {
    let out = host.cli(&["get", "NimbusItem", "-o", "json"]);
    assert!(
        out.status.success(),
        "get: {}",
        reactor_testkit::stderr(&out)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let items = listed["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|item| item["spec"]["key"].as_str().map(str::to_owned))
        .collect()
}

/// Issue 33's recipe: a Policy deleted while its reactor is absent, its finalizer removed by
/// hand: its items are withdrawn all the same (the sweep of owners that are gone, at an
/// interval and at start) and the agent drops their files.
#[test]
fn items_of_an_owner_gone_without_its_reactor_are_withdrawn() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let host = policy_host(tmp.path(), &["--orphan-sweep-interval", "1s"]);
    let agent = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    apply(
        &host,
        &format!(
            "{}---\n{}",
            policy("p", "edge", &["a", "b"]),
            policy("kept", "edge", &["c"])
        ),
    );
    let mut both = keys("p", &["a", "b"]);
    both.extend(keys("kept", &["c"]));
    converges(&agent, &both);
    delete_without_its_reactor(&host, "p");
    converges(&agent, &keys("kept", &["c"]));

    // With no sweep until the next start, an owner gone while the server is up keeps its
    // items until then; the start's sweep withdraws them.
    let mut host = host;
    host.kill9();
    let mut again = Host::start(&data, &["--orphan-sweep-interval", "1h"]);
    reactor_testkit::install("policy-rust", &again.components_dir());
    again.wait_ready("policy-rust");
    apply(&again, &policy("q", "none", &["d"]));
    eventually("q's item is published", 30, || {
        stored_items(&again).contains("policy/q/d").then_some(())
    });
    delete_without_its_reactor(&again, "q");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        stored_items(&again).contains("policy/q/d"),
        "no sweep before the next start"
    );
    again.kill9();
    let last = Host::start(&data, &["--orphan-sweep-interval", "1h"]);
    eventually("q's item is withdrawn at start", 30, || {
        let items = stored_items(&last);
        (!items.contains("policy/q/d") && items.contains("policy/kept/c")).then_some(())
    });
    drop((host, again));
}

/// A line the reactor logs while it reconciles says which object it was reconciling (the
/// `reconcile` span), as do the host's own lines in the same run.
#[test]
fn a_guests_log_line_names_the_object_it_reconciled() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    apply(&host, &policy("web", "edge", &["a", "b"]));
    let line = reactor_testkit::eventually("the reactor logs its run", 30, || {
        host.log()
            .lines()
            .find(|line| line.contains("policy web publishes 2 rules"))
            .map(str::to_owned)
    });
    assert!(
        line.contains("reconcile{component=policy-rust kind=Policy name=web}"),
        "{line}"
    );
}

/// What an operator alerts on is on `/metrics`, read from the state at each scrape: the
/// agents connected, each agent's items by state, each component's state, the build.
#[test]
fn metrics_tell_agents_their_items_and_components_states() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let _edge = Agent::start(&host, tmp.path(), "edge-1", &["role=edge"]);
    apply(&host, &policy("web", "edge", &["a", "b"]));
    let series = |metrics: &str, s: &str| reactor_testkit::metric(metrics, s);
    // Applied both items, and heartbeating (its first beat may come before it registered).
    let metrics = eventually("the agent applied both items", 30, || {
        let metrics = host.metrics();
        (series(
            &metrics,
            "reactor_agent_items{agent=\"edge-1\",state=\"applied\"}",
        ) == Some(2.0)
            && series(&metrics, "reactor_agents{state=\"connected\"}") == Some(1.0))
        .then_some(metrics)
    });
    assert_eq!(
        series(&metrics, "reactor_agents{state=\"connected\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        series(
            &metrics,
            "reactor_agent_items{agent=\"edge-1\",state=\"failed\"}"
        ),
        Some(0.0),
        "{metrics}"
    );
    assert_eq!(
        series(
            &metrics,
            "reactor_component_state{component=\"policy-rust\",state=\"ready\"}"
        ),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        series(
            &metrics,
            "reactor_component_rolled_back{component=\"policy-rust\"}"
        ),
        Some(0.0),
        "{metrics}"
    );
    assert!(
        metrics.contains("reactor_build_info{version=\""),
        "{metrics}"
    );
    assert_eq!(reactor_testkit::promtool_check(&metrics), "", "{metrics}");
}
