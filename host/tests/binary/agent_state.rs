//! The agent's saved state through the real binaries: a large publish cut by `kill -9`
//! loses nothing the agent reported, the restarted agent resumes its feed from the saved
//! revision instead of starting over, and a damaged state file stops the agent with one
//! line naming it, the file left as it was.

use reactor_host::agent::AgentState;
use reactor_host::api::Client;
use reactor_testkit::policy::{apply, policy, policy_host};
use reactor_testkit::{Agent, Host, eventually, reactor_host_bin};
use std::time::Duration;

const ITEMS: usize = 3000;
// 500 rules each: one callback publishes them within its write cap (`serve --max-callback-writes`, 1000).
const POLICIES: usize = 6;

/// The agent's `applied` count as the server sees it.
fn applied(runtime: &tokio::runtime::Runtime, client: &Client, id: &str) -> Option<usize> {
    let views = runtime.block_on(client.agents()).ok()?;
    views.into_iter().find(|v| v.id == id).map(|v| v.applied)
}

#[test]
fn a_publish_cut_by_kill_9_loses_nothing_reported_and_the_agent_resumes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = policy_host(tmp.path(), &[]);
    let mut agent = Agent::start(&host, tmp.path(), "bulk-1", &["role=bulk"]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let client = host.client();
    eventually("bulk-1 is registered", 30, || {
        applied(&runtime, &client, "bulk-1")
    });
    // Published at once: POLICIES Policies of ITEMS / POLICIES rules, one item per rule.
    let rules: Vec<String> = (0..ITEMS / POLICIES).map(|i| format!("r{i:05}")).collect();
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    let yaml: Vec<String> = (0..POLICIES)
        .map(|p| policy(&format!("bulk-{p}"), "bulk", &rules))
        .collect();
    apply(&host, &yaml.join("---\n"));

    // Stopped in the middle of the publish, so that no report is in flight, then killed.
    eventually("bulk-1 reported part of the publish", 60, || {
        applied(&runtime, &client, "bulk-1").filter(|n| *n > 0)
    });
    agent.pause();
    std::thread::sleep(Duration::from_millis(500));
    let reported = applied(&runtime, &client, "bulk-1").expect("bulk-1 listed");
    agent.kill9();
    assert!(
        reported < ITEMS,
        "the agent had everything before it was killed: make the publish larger"
    );
    let saved = AgentState::load(&agent.data).expect("the state loads after kill -9");
    assert!(
        saved.items().len() >= reported,
        "the server has {reported} items reported applied, the saved state holds only {}",
        saved.items().len()
    );
    assert!(saved.revision > 0, "no revision saved");
    let held = saved.items().len();
    drop(saved);

    agent.restart();
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let count = applied(&runtime, &client, "bulk-1");
        if count == Some(ITEMS) && agent.applied().len() == ITEMS {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server has {count:?} of {ITEMS} applied, the agent holds {}; its log:\n{}",
            agent.applied().len(),
            agent.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = agent.log();
    assert_eq!(
        log.matches("re-listed").count(),
        1,
        "only the first life starts from a snapshot:\n{log}"
    );
    let resumed = log
        .lines()
        .filter(|l| l.contains("following the server"))
        .nth(1)
        .unwrap_or_else(|| panic!("no second start in the log:\n{log}"));
    assert!(
        resumed.contains(&format!("items={held}")),
        "the restarted agent did not start from its {held} saved items: {resumed}"
    );
}

#[test]
fn a_damaged_state_file_stops_the_agent_with_one_line_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let host = Host::start(&tmp.path().join("data"), &[]);
    let data = tmp.path().join("edge-data");
    std::fs::create_dir_all(&data).expect("data folder");
    let file = data.join("agent-state.redb");
    let garbage = vec![0x5a_u8; 8192];
    std::fs::write(&file, &garbage).expect("damaged state");
    let out = std::process::Command::new(reactor_host_bin())
        .args(["agent", "--id", "edge-1", "--server", &host.url])
        .args(["--token", &host.token(), "--data"])
        .arg(&data)
        .env("RUST_LOG", "off")
        .output()
        .expect("agent runs");
    assert!(!out.status.success(), "the agent ran on a damaged state");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("cannot read the agent state")
            && lines[0].contains(&*file.to_string_lossy()),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&file).expect("still there"), garbage);
}
