//! The fault loop: a writer changes, re-targets and deletes Policies while the server and
//! the agents are killed with -9, restarted and paused at random; afterwards every agent's
//! files and every Policy's roll-up must be exactly what the stored Policies say. The seed
//! is printed, and `REACTOR_FAULT_SEED` replays it; `REACTOR_FAULT_SECONDS` sets how long
//! the faults go on (default 40).

use reactor_testkit::Agent;
use reactor_testkit::Host;
use reactor_testkit::policy::policy_host;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift64*), so a seed replays a run's choices.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from))
    }
}

const POLICIES: [&str; 4] = ["p0", "p1", "p2", "p3"];
const RULES: [&str; 5] = ["r0", "r1", "r2", "r3", "r4"];
const SELECTORS: [(&str, &str); 4] = [
    ("role", "edge"),
    ("role", "web"),
    ("zone", "a"),
    ("zone", "b"),
];

/// One agent of the loop: how it applies, and its labels.
struct Node {
    agent: Agent,
    labels: BTreeMap<String, String>,
    /// Applies through the KV scheduler and the policy-rule descriptor (else as files).
    scheduled: bool,
}

impl Node {
    /// The rule files it holds, as `policy/rule`.
    fn files(&self) -> BTreeSet<String> {
        if self.scheduled {
            self.agent.files_of("policy-rule")
        } else {
            (self.agent.applied().into_iter())
                .filter_map(|key| key.strip_prefix("policy/").map(str::to_owned))
                .collect()
        }
    }
}

/// A Policy selecting `selector`, with `rules`.
fn document(name: &str, selector: (&str, &str), rules: &[&str]) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|r| format!("{{name: {r}, action: allow}}"))
        .collect();
    format!(
        "kind: Policy\nname: {name}\nspec: {{selector: {{{}: {}}}, rules: [{}]}}\n",
        selector.0,
        selector.1,
        rules.join(", ")
    )
}

/// One write of the loop; `false` if the server did not take it (it is down).
fn write(host: &Host, dice: &mut Dice) -> bool {
    let name = POLICIES[dice.below(POLICIES.len() as u64) as usize];
    if dice.below(6) == 0 {
        return host.cli(&["delete", "Policy", name]).status.success();
    }
    let selector = SELECTORS[dice.below(SELECTORS.len() as u64) as usize];
    let mut rules: Vec<&str> = RULES
        .iter()
        .copied()
        .filter(|_| dice.below(2) == 0)
        .collect();
    if rules.is_empty() {
        rules.push(RULES[dice.below(RULES.len() as u64) as usize]);
    }
    let out = host.cli_with_stdin(
        &["apply", "-f", "-"],
        Some(&document(name, selector, &rules)),
    );
    out.status.success()
}

/// What the stored Policies say: each agent's rule files, and each Policy's count per agent.
type Expected = (
    BTreeMap<String, BTreeSet<String>>,
    BTreeMap<String, BTreeMap<String, u64>>,
);

fn expected(host: &Host, nodes: &[Node]) -> Option<(Expected, Vec<Value>)> {
    let out = host.cli(&["get", "Policy", "-o", "json"]);
    if !out.status.success() {
        return None;
    }
    let listed: Value = serde_json::from_slice(&out.stdout).ok()?;
    let policies: Vec<Value> = listed["items"].as_array()?.clone();
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for node in nodes {
        files.insert(node.agent.id.clone(), BTreeSet::new());
    }
    for policy in &policies {
        let name = policy["name"].as_str()?.to_owned();
        let selector = policy["spec"]["selector"].as_object()?;
        let rules: Vec<String> = (policy["spec"]["rules"].as_array()?.iter())
            .filter_map(|r| r["name"].as_str().map(str::to_owned))
            .collect();
        for node in nodes {
            let meant = selector
                .iter()
                .all(|(k, v)| node.labels.get(k).map(String::as_str) == v.as_str());
            let held = files.entry(node.agent.id.clone()).or_default();
            if meant {
                held.extend(rules.iter().map(|r| format!("{name}/{r}")));
            }
            let count = if meant { rules.len() as u64 } else { 0 };
            counts
                .entry(name.clone())
                .or_default()
                .insert(node.agent.id.clone(), count);
        }
    }
    Some(((files, counts), policies))
}

/// What differs between what the agents hold and report and what the Policies say; empty
/// when everything agrees.
fn differences(host: &Host, nodes: &[Node]) -> Vec<String> {
    let Some(((files, counts), policies)) = expected(host, nodes) else {
        return vec!["the server does not answer".into()];
    };
    let mut found = Vec::new();
    for node in nodes {
        let held = node.files();
        let want = &files[&node.agent.id];
        if held != *want {
            found.push(format!("{} holds {held:?}, not {want:?}", node.agent.id));
        }
    }
    let wanted: BTreeSet<String> = (policies.iter())
        .flat_map(|policy| {
            let name = policy["name"].as_str().unwrap_or_default().to_owned();
            let rules = policy["spec"]["rules"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            rules
                .into_iter()
                .filter_map(move |r| r["name"].as_str().map(|r| format!("policy/{name}/{r}")))
        })
        .collect();
    let out = host.cli(&["get", "NimbusItem", "-o", "json"]);
    let items: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let stored: BTreeSet<String> = (items["items"].as_array().into_iter().flatten())
        .filter_map(|item| item["spec"]["key"].as_str().map(str::to_owned))
        .collect();
    if stored != wanted {
        found.push(format!("items stored {stored:?}, not {wanted:?}"));
    }
    for policy in &policies {
        let name = policy["name"].as_str().unwrap_or_default();
        let status = &policy["status"];
        if status["ruleCount"].as_u64()
            != policy["spec"]["rules"].as_array().map(|r| r.len() as u64)
        {
            found.push(format!(
                "{name}: the reactor has not seen its spec: {status}"
            ));
        }
        for (agent, count) in &counts[name] {
            let reported = status["agents"][agent].as_u64().unwrap_or(0);
            if reported != *count {
                found.push(format!(
                    "{name}: status.agents.{agent} = {reported}, not {count}"
                ));
            }
        }
    }
    found
}

#[test]
fn agents_and_roll_ups_are_exact_after_random_kills_and_pauses() {
    let seed = std::env::var("REACTOR_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.map_or(1, |d| d.as_nanos() as u64) | 1
        });
    let seconds: u64 = std::env::var("REACTOR_FAULT_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    println!("fault loop: REACTOR_FAULT_SEED={seed} for {seconds} s");
    let mut dice = Dice(seed);

    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let address = Host::free_address();
    let serve = [
        "--listen",
        address.as_str(),
        "--orphan-sweep-interval",
        "2s",
    ];
    let mut host = policy_host(tmp.path(), &serve);
    // Killed servers are kept until the end: on etcd they hold the test's etcd.
    let mut killed = Vec::new();
    let spec = [
        ("edge-1", "role=edge", "zone=a", false),
        ("edge-2", "role=edge", "zone=b", true),
        ("web-1", "role=web", "zone=a", false),
        ("web-2", "role=web", "zone=b", true),
    ];
    let mut nodes: Vec<Node> = spec
        .iter()
        .map(|&(id, role, zone, scheduled)| {
            let agent = if scheduled {
                Agent::with_descriptors(
                    &host,
                    tmp.path(),
                    id,
                    &[role, zone],
                    &["policy-rule-descriptor"],
                    &["--resync-period", "0s"],
                )
            } else {
                Agent::start(&host, tmp.path(), id, &[role, zone])
            };
            let labels = [role, zone]
                .iter()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            Node {
                agent,
                labels,
                scheduled,
            }
        })
        .collect();

    let start = Instant::now();
    let mut faults: Vec<String> = Vec::new();
    let (mut writes, mut refused) = (0u32, 0u32);
    while start.elapsed() < Duration::from_secs(seconds) {
        for _ in 0..1 + dice.below(4) {
            if write(&host, &mut dice) {
                writes += 1;
            } else {
                refused += 1;
            }
            std::thread::sleep(dice.millis(20, 300));
        }
        let node = dice.below(nodes.len() as u64) as usize;
        let fault = match dice.below(10) {
            0..=2 => {
                nodes[node].agent.kill9();
                std::thread::sleep(dice.millis(0, 1500));
                nodes[node].agent.restart();
                format!("kill -9 {}", nodes[node].agent.id)
            }
            3..=4 => {
                nodes[node].agent.pause();
                // Changes go on while it is paused.
                let _ = write(&host, &mut dice);
                std::thread::sleep(dice.millis(300, 3000));
                nodes[node].agent.resume();
                format!("pause {}", nodes[node].agent.id)
            }
            5..=6 => {
                host.kill9();
                std::thread::sleep(dice.millis(0, 1000));
                let again = Host::start(&data, &serve);
                killed.push(std::mem::replace(&mut host, again));
                host.wait_ready("policy-rust");
                "kill -9 the server".to_owned()
            }
            7 => {
                host.signal("-STOP");
                std::thread::sleep(dice.millis(300, 2500));
                host.signal("-CONT");
                "pause the server".to_owned()
            }
            _ => "none".to_owned(),
        };
        // Printed as it happens: a failure's output says where the loop was.
        println!(
            "fault loop: {:.1} s: {fault}",
            start.elapsed().as_secs_f64()
        );
        faults.push(fault);
    }
    let quiet = Instant::now();
    println!(
        "fault loop: {writes} writes taken, {refused} refused while the server was down, {} faults: {faults:?}",
        faults.iter().filter(|f| *f != "none").count()
    );
    let deadline = quiet + Duration::from_secs(120);
    loop {
        let found = differences(&host, &nodes);
        if found.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not converged 120 s after the last fault (seed {seed}):\n{}\nserver log tail:\n{}",
            found.join("\n"),
            tail(&host.log(), 40)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    println!(
        "fault loop: converged {:.1} s after the last fault",
        quiet.elapsed().as_secs_f64()
    );
    drop(killed);
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
