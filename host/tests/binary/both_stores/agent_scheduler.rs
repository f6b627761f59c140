//! Agents applying through the KV scheduler with real descriptor components: items from
//! Nimbus and values from the agent's own API, in dependency order, with drift repaired;
//! and Ligato's scheduler tests (the ported scenario list of `reactor-testkit`) played
//! through a real agent's API on the WASM mock descriptor.

use reactor_testkit::Agent;
use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{eventually, stderr, stdout};
use std::collections::BTreeSet;

fn files(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn rules_converge(agent: &Agent, want: &BTreeSet<String>) {
    eventually(&format!("{} holds {want:?}", agent.id), 60, || {
        (agent.files_of("policy-rule") == *want).then_some(())
    });
}

#[test]
fn policy_rules_from_nimbus_are_applied_by_the_descriptor_and_drift_is_repaired() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &["--resync-period", "0s", "--retry-period", "100ms"],
    );
    // The device is busy for rule y's first create: it is reported pending, and applied
    // (reported again) once the scheduler's retry succeeds.
    let fail = agent.southbound.join("policy-rule/.fail/a");
    std::fs::create_dir_all(&fail).expect("failure folder");
    std::fs::write(fail.join("y.json"), "busy 1").expect("inject");
    apply(&host, &policy("a", "edge", &["x", "y"]));
    rules_converge(&agent, &files(&["a/x", "a/y"]));
    agent.wait_state("policy/a/x", "CONFIGURED");
    eventually("the reactor counts 2 items applied on edge-1", 30, || {
        let status = host.object("Policy", "a")?["status"].clone();
        (status["agents"]["edge-1"] == 2 && status["propagation"]["updated"] == 1).then_some(())
    });

    // Drift: a rule file removed behind the agent's back comes back with a resync.
    let x = agent.southbound.join("policy-rule/a/x.json");
    std::fs::remove_file(&x).expect("remove a rule file");
    let out = agent.scheduler(&["resync"]);
    assert!(out.status.success(), "resync: {}", stderr(&out));
    assert!(
        stdout(&out).contains("create policy/a/x"),
        "{}",
        stdout(&out)
    );
    let text = std::fs::read_to_string(&x).expect("the rule file is back");
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["action"], "allow");

    // A value the descriptor refuses is INVALID on the agent and failed upstream.
    apply(&host, &policy("escape", "edge", &[".."]));
    let status = agent.wait_state("policy/escape/..", "INVALID");
    assert!(status["invalid"].is_object(), "{status}");
    eventually("the refused item is failed in the roll-up", 30, || {
        let p = host.object("Policy", "escape")?["status"]["propagation"].clone();
        (p["failed"] == 1).then_some(())
    });

    // Changes and a delete while the agent is down: the full resync at start removes the
    // rules no longer wanted and creates the new one.
    agent.kill9();
    apply(&host, &policy("a", "edge", &["x", "w"]));
    assert!(host.cli(&["delete", "Policy", "escape"]).status.success());
    agent.restart();
    rules_converge(&agent, &files(&["a/x", "a/w"]));
    agent.wait_state("policy/a/w", "CONFIGURED");
    assert_eq!(agent.status("policy/a/y")["state"], "NONEXISTENT");
}

#[test]
fn a_descriptor_swapped_while_running_takes_over_and_a_broken_file_leaves_the_old_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &["--resync-period", "0s"],
    );
    apply(&host, &policy("a", "edge", &["x"]));
    rules_converge(&agent, &files(&["a/x"]));
    let installed = tmp
        .path()
        .join("edge-1-descriptors/policy-rule-descriptor.wasm");
    let descriptors = |agent: &Agent| -> serde_json::Value {
        let out = agent.scheduler(&["descriptors", "--json"]);
        assert!(out.status.success(), "descriptors: {}", stderr(&out));
        let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
        all.into_iter()
            .find(|d| d["name"] == "policy-rule-descriptor")
            .expect("listed")
    };
    let first = descriptors(&agent)["sha256"].clone();

    // A broken file: the error shows and the old version keeps applying.
    std::fs::write(&installed, b"not a component").expect("write garbage");
    eventually("the broken file's error", 30, || {
        let d = descriptors(&agent);
        (d["state"] == "failed" && d["sha256"] == first).then_some(())
    });
    apply(&host, &policy("a", "edge", &["x", "y"]));
    rules_converge(&agent, &files(&["a/x", "a/y"]));

    // The Python version of the same descriptor takes over for the next transaction.
    let python = reactor_testkit::built().join("policy-rule-descriptor-py.wasm");
    let tmp_copy = installed.with_extension("partial");
    std::fs::copy(&python, &tmp_copy).expect("copy");
    std::fs::rename(&tmp_copy, &installed).expect("swap");
    eventually("the Python version serving", 120, || {
        let d = descriptors(&agent);
        (d["state"] == "ready" && d["sha256"] != first).then_some(())
    });
    apply(&host, &policy("a", "edge", &["x", "y", "z"]));
    rules_converge(&agent, &files(&["a/x", "a/y", "a/z"]));
    agent.wait_state("policy/a/z", "CONFIGURED");
}

/// Every example device descriptor.
const DEVICE: &[&str] = &[
    "vpp-interface-descriptor",
    "vpp-address-descriptor",
    "vpp-unnumbered-descriptor",
    "vpp-route-descriptor",
    "vpp-bridge-domain-descriptor",
    "vpp-bd-interface-descriptor",
    "linux-interface-descriptor",
];

/// A server with no reactor and one agent with every device descriptor, its values put
/// through the agent's own API; retries after 100 ms.
fn device_agent(tmp: &std::path::Path) -> (reactor_testkit::Host, Agent) {
    let host = reactor_testkit::Host::start(&tmp.join("data"), &[]);
    let agent = Agent::with_descriptors(
        &host,
        tmp,
        "vpp-1",
        &[],
        DEVICE,
        &["--resync-period", "0s", "--retry-period", "100ms"],
    );
    (host, agent)
}

/// `reactor-host scheduler txn`: `puts` as `KEY=JSON`, `deletes` as keys.
fn txn(
    agent: &Agent,
    puts: &[(&str, &str)],
    deletes: &[&str],
    revert: bool,
) -> std::process::Output {
    let mut args: Vec<String> = vec!["txn".into()];
    for (key, value) in puts {
        args.push("--put".into());
        args.push(format!("{key}={value}"));
    }
    for key in deletes {
        args.push("--delete".into());
        args.push((*key).into());
    }
    if revert {
        args.push("--revert".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    agent.scheduler(&args)
}

fn txn_ok(agent: &Agent, puts: &[(&str, &str)], deletes: &[&str]) -> String {
    let out = txn(agent, puts, deletes, false);
    assert!(
        out.status.success(),
        "txn: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

#[test]
fn a_reverted_transaction_of_local_values_is_not_kept_for_a_restart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (_host, mut agent) = device_agent(tmp.path());
    let fail = agent.southbound.join("vpp-route/.fail");
    std::fs::create_dir_all(&fail).expect("failure folder");
    std::fs::write(fail.join("r1.json"), "fatal").expect("inject");

    let out = txn(
        &agent,
        &[
            ("vpp/interface/tap0", r#"{"type":"tap"}"#),
            ("vpp/route/r1", r#"{"interface":"tap0","dst":"10.0.0.0/8"}"#),
        ],
        &[],
        true,
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("reverted"), "{}", stderr(&out));
    assert!(
        agent.files_of("vpp-interface").is_empty(),
        "the interface was undone"
    );
    assert!(agent.files_of("vpp-route").is_empty());
    for key in ["vpp/interface/tap0", "vpp/route/r1"] {
        let state = agent.status(key)["state"].clone();
        assert!(
            state == "NONEXISTENT" || state == "REMOVED",
            "{key}: {state}"
        );
    }

    // Not kept either: a restart configures nothing of it. A transaction that works is.
    txn_ok(
        &agent,
        &[("vpp/interface/lo0", r#"{"type":"loopback"}"#)],
        &[],
    );
    agent.kill9();
    std::fs::remove_file(agent.southbound.join("vpp-interface/lo0.json")).expect("drift");
    agent.restart();
    agent.wait_state("vpp/interface/lo0", "CONFIGURED");
    assert_eq!(agent.files_of("vpp-interface"), files(&["lo0"]));
    assert_eq!(agent.status("vpp/route/r1")["state"], "NONEXISTENT");
}

/// Reads `GET /scheduler/status/watch` into `seen` as it streams (raw HTTP: the lines are
/// looked for in the bytes, chunk framing and all).
async fn watch_statuses(
    url: String,
    token: String,
    ca: Option<String>,
    seen: std::sync::Arc<parking_lot::Mutex<String>>,
) -> Result<(), reqwest::Error> {
    use futures::StreamExt;
    let response = reactor_testkit::http_client(ca.as_deref())
        .get(format!("{url}/scheduler/status/watch"))
        .bearer_auth(token)
        .send()
        .await?;
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        seen.lock().push_str(&String::from_utf8_lossy(&chunk?));
    }
    Ok(())
}

/// Ligato's API beside the transactions: a simulated transaction, dumps by view,
/// descriptor and key prefix, history by time with descriptions, record flags, and the
/// status watch, all through a real agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_api_simulates_dumps_by_view_keeps_history_by_time_and_streams_statuses() {
    use reactor_host::agent::http::TxnRequest;
    use reactor_host::kvscheduler::{DumpFilter, DumpView};
    use reactor_testkit::kv::args::{MockDescArgs, array};
    use reactor_testkit::kv::{AgentHarness, Harness};
    let (a1, a1_item, b1) = (
        "/prefixA/base-value1",
        "/prefixA/base-value1/item1",
        "/prefixB/base-value1",
    );
    let mut harness = AgentHarness::new().expect("harness");
    harness
        .start(&[
            MockDescArgs::new("descriptor1", "/prefixA/").derived(),
            MockDescArgs::new("descriptor2", "/prefixB/").depends(b1, &["/prefixC/never"]),
        ])
        .await
        .expect("agent");
    let (url, token, ca) = harness.api().expect("started");
    let seen = std::sync::Arc::new(parking_lot::Mutex::new(String::new()));
    let watch = tokio::spawn(watch_statuses(url, token, ca, seen.clone()));
    let client = harness.client().expect("client").clone();
    let before = harness.history().await.expect("history").len();

    // A simulation plans, and changes nothing.
    let mut request = TxnRequest {
        simulate: true,
        ..TxnRequest::default()
    };
    request.values.insert(a1.into(), Some(array(&["item1"])));
    let simulated = client.txn(&request).await.expect("simulate").record;
    assert!(simulated.with_simulation);
    assert!(simulated.executed.is_empty());
    let planned: Vec<String> = simulated
        .planned
        .iter()
        .map(reactor_testkit::kv::op_line)
        .collect();
    assert_eq!(
        planned,
        [
            format!("create {a1} NONEXISTENT->CONFIGURED"),
            format!("create {a1_item} NONEXISTENT->CONFIGURED derived"),
        ]
    );
    assert!(
        harness
            .sb()
            .and_then(|sb| sb.contents())
            .expect("sb")
            .is_empty()
    );
    assert_eq!(harness.history().await.expect("history").len(), before);
    assert_eq!(
        harness.status(a1).await.expect("status").state.to_string(),
        "NONEXISTENT"
    );

    // The real thing, described; a value waiting for a dependency is a NOOP.
    request.simulate = false;
    request.description = "first values".into();
    request.values.insert(b1.into(), Some(array(&[])));
    let record = client.txn(&request).await.expect("txn").record;
    let waiting = record
        .executed
        .iter()
        .find(|op| op.key == b1)
        .expect("b1 recorded");
    assert!(waiting.noop, "{waiting:?}");
    assert_eq!(waiting.new_state.to_string(), "PENDING");

    // Dumps by view, descriptor and key prefix.
    let nb = client
        .dump_filtered(&DumpFilter {
            view: Some(DumpView::Nb),
            descriptor: Some("descriptor1".into()),
            key_prefix: None,
        })
        .await
        .expect("NB dump");
    assert_eq!(nb.desired, vec![(a1.to_owned(), array(&["item1"]))]);
    assert!(nb.retrieved.is_empty() && nb.cached.is_empty());
    let cached = client
        .dump_filtered(&DumpFilter {
            view: Some(DumpView::Cached),
            descriptor: None,
            key_prefix: Some(format!("{a1}/")),
        })
        .await
        .expect("cached dump");
    let keys: Vec<&str> = cached.cached.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, [a1_item]);
    let sb = client
        .dump_filtered(&DumpFilter {
            view: Some(DumpView::Sb),
            descriptor: Some("descriptor1".into()),
            key_prefix: None,
        })
        .await
        .expect("SB dump");
    let keys: Vec<&str> = sb.retrieved.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, [a1], "retrieve returns base values");

    // History by time: the transaction is within the last hour, none is in the next one.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let recent = client
        .history_between(Some(now - 3600), Some(now + 1))
        .await
        .expect("history");
    assert!(
        recent.iter().any(|r| r.description == "first values"),
        "{recent:?}"
    );
    let later = client
        .history_between(Some(now + 3600), None)
        .await
        .expect("history");
    assert!(later.is_empty(), "{later:?}");

    // The watch streamed each value's new status.
    let configured = format!(r#""key":"{a1}","state":"CONFIGURED""#);
    let pending = format!(r#""key":"{b1}","state":"PENDING""#);
    reactor_testkit::eventually_async(
        "the watch shows a1 CONFIGURED and b1 PENDING",
        std::time::Duration::from_secs(30),
        || {
            let seen = seen.lock();
            (seen.contains(&configured) && seen.contains(&pending)).then_some(())
        },
    )
    .await;
    watch.abort();
}

/// Plays a ported scenario on an agent; a failure shows the agent's log.
async fn play(name: &str) {
    let scenario = reactor_testkit::kv::ported::named(name);
    let mut harness = reactor_testkit::kv::AgentHarness::new().expect("harness");
    if let Err(error) = reactor_testkit::kv::run(&scenario, &mut harness).await {
        panic!("{error:#}\nthe agent's log:\n{}", harness.log());
    }
}

macro_rules! ported {
    ($($name:ident),* $(,)?) => {
        mod ligato {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::play(stringify!($name)).await;
                }
            )*

            /// Every scenario runs through an agent, but the steps that need controlled
            /// time (an agent's clock runs for real): exactly those listed in `SKIPPED`.
            #[test]
            fn every_ported_scenario_runs_through_an_agent() {
                let here = [$(stringify!($name)),*];
                for scenario in reactor_testkit::kv::ported::all() {
                    assert!(here.contains(&scenario.name), "{} is not run through an agent", scenario.name);
                    let skipped = super::SKIPPED
                        .iter()
                        .find(|(name, _)| *name == scenario.name)
                        .map(|(_, steps)| steps.to_vec())
                        .unwrap_or_default();
                    assert_eq!(
                        scenario.controlled_time_steps(),
                        skipped,
                        "the steps of {} skipped through an agent",
                        scenario.name
                    );
                }
            }
        }
    };
}

/// The steps skipped through an agent, by scenario: they need time under the test's
/// control (nothing happening before a deadline, exact backoff periods, a retry timer
/// firing between two transactions), which an agent process on a real clock cannot give.
/// What they lead to is checked on the agent by the scenario's later steps.
const SKIPPED: &[(&str, &[usize])] = &[
    // Not before the period, the first retry at 1 s, the second at 2 s more, exactly.
    ("failed_create_retried_with_backoff", &[4, 5, 6, 7]),
    // Never retried within an hour.
    ("non_retriable_failure_stays_failed", &[5]),
    // The stale timer firing between the two transactions' retries.
    ("newer_change_supersedes_a_scheduled_retry", &[4, 6, 7]),
];

reactor_testkit::foreach_ported!(ported);

/// Issue 33's recipe: a rule published and withdrawn again while the agent was away reaches
/// it as a put and a delete in one batch; the delete is the last word, so the rule's file
/// never stays, the scheduler does not keep it desired, and the roll-up counts what is there.
#[test]
fn a_rule_published_and_withdrawn_while_the_agent_was_away_never_stays() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::with_descriptors(
        &host,
        tmp.path(),
        "edge-1",
        &["role=edge"],
        &["policy-rule-descriptor"],
        &[],
    );
    apply(&host, &policy("p", "edge", &["a"]));
    rules_converge(&agent, &files(&["p/a"]));
    agent.wait_state("policy/p/a", "CONFIGURED");

    agent.kill9();
    apply(&host, &policy("p", "edge", &["a", "b"]));
    eventually("b is published", 30, || {
        (host.object("Policy", "p")?["status"]["ruleCount"] == 2).then_some(())
    });
    apply(&host, &policy("p", "edge", &["a"]));
    eventually("b is withdrawn", 30, || {
        (host.object("Policy", "p")?["status"]["ruleCount"] == 1).then_some(())
    });
    agent.restart();
    eventually("edge-1 is following again", 30, || {
        (agent.status("policy/p/a")["state"] == "CONFIGURED").then_some(())
    });
    // The agent's own periodic resync is not what removes it: the feed's delete is.
    let out = agent.scheduler(&["resync"]);
    assert!(out.status.success(), "resync: {}", stderr(&out));
    rules_converge(&agent, &files(&["p/a"]));
    assert_eq!(agent.status("policy/p/b")["state"], "NONEXISTENT");
    eventually("p counts 1 rule applied on edge-1", 30, || {
        let status = host.object("Policy", "p")?["status"].clone();
        (status["agents"]["edge-1"] == 1).then_some(())
    });
}
