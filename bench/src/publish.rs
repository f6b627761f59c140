//! Large publish: a hundred Policies of N/100 rules each (one Nimbus item per rule, through the
//! Policy reactor) all selecting one agent, against the same Policies spread over ten
//! agents (each selects one): the same server work, N items held by one agent or by ten. An agent whose
//! cost per batch grows with what it already holds (a whole state file rewritten per batch,
//! a whole graph copied per transaction) falls behind the ten; one that pays for what a
//! batch changes keeps up.

use crate::fan_out::{AgentProcess, start_agent, wait_until};
use crate::report::{Scenario, Target};
use crate::scenarios::Rows;
use crate::server::{Server, Transport};
use reactor_host::api::Client;
use reactor_host::object::ApplyRequest;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Agents sharing the items in the second run.
const SHARED_BY: usize = 10;
/// Policies published: small enough each that the reactor publishes one within its call
/// deadline (5 s by default; 5000 rules in one call do not make it on this machine).
const POLICIES: usize = 100;

/// First write → every agent holds its items, and → the server has every report.
#[derive(Debug, Clone, Copy)]
pub struct Publish {
    pub held: Duration,
    pub reported: Duration,
}

/// `POLICIES` Policies of `items / POLICIES` rules each, applied at once on a fresh
/// server with `agents` fresh agents, Policy `p` selecting agent `p % agents`.
pub async fn measure(policy: &Path, items: usize, agents: usize) -> anyhow::Result<Publish> {
    let dir = tempfile::tempdir()?;
    let (server, client) = policy_server(dir.path(), policy).await?;
    let fleet: Vec<AgentProcess> = (0..agents)
        .map(|i| {
            start_agent(
                &server,
                dir.path(),
                &format!("publish-{i}"),
                &format!("role=pub-{i}"),
            )
        })
        .collect::<anyhow::Result<_>>()?;
    wait_until("agents connected", || {
        fleet.iter().all(|a| a.held.load(Ordering::Relaxed) == 0)
    })
    .await?;
    let policies = policies(items, |p| format!("pub-{}", p % agents));
    let each = items / agents;
    let started = Instant::now();
    client.apply(policies).await?;
    wait_until("agents hold their items", || {
        fleet.iter().all(|a| a.held.load(Ordering::Relaxed) == each)
    })
    .await?;
    let held = started.elapsed();
    Ok(Publish {
        held,
        reported: reports_back(&client, agents, each, started).await?,
    })
}

/// Waits until `GET /v1/agents` shows `agents` agents with `each` items applied each; answers
/// the time since `started`.
pub async fn reports_back(
    client: &Client,
    agents: usize,
    each: usize,
    started: Instant,
) -> anyhow::Result<Duration> {
    loop {
        let views = client.agents().await?;
        if views.len() == agents && views.iter().all(|v| v.applied == each) {
            return Ok(started.elapsed());
        }
        if started.elapsed() > crate::fan_out::DEADLINE {
            anyhow::bail!("reports not back within {:?}", crate::fan_out::DEADLINE);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `POLICIES` Policies of `items / POLICIES` rules each (one Nimbus item per rule), Policy
/// `p` selecting the agents labelled `role=<role(p)>`.
pub fn policies(items: usize, role: impl Fn(usize) -> String) -> Vec<ApplyRequest> {
    let per_policy = items / POLICIES;
    let rules: Vec<serde_json::Value> = (0..per_policy)
        .map(|r| serde_json::json!({"name": format!("r{r}"), "action": "allow"}))
        .collect();
    (0..POLICIES)
        .map(|p| ApplyRequest {
            kind: "Policy".into(),
            name: format!("publish-{p}"),
            labels: Default::default(),
            annotations: Default::default(),
            spec: serde_json::json!({
                "selector": {"role": role(p)},
                "rules": rules,
            }),
            expected_revision: None,
            owner: None,
        })
        .collect()
}

/// A fresh server in `dir` serving the Policy reactor `policy`, and its client.
pub async fn policy_server(dir: &Path, policy: &Path) -> anyhow::Result<(Server, Client)> {
    policy_server_on(Transport::Plain, dir, policy).await
}

/// As [`policy_server`], on `transport`.
pub async fn policy_server_on(
    transport: Transport,
    dir: &Path,
    policy: &Path,
) -> anyhow::Result<(Server, Client)> {
    let components = dir.join("components");
    std::fs::create_dir_all(&components)?;
    std::fs::copy(policy, components.join("policy-rust.wasm"))?;
    let server = Server::start_on(transport, &dir.join("data"), &components, &[])?;
    server.wait_components(1).await?;
    let client = server.client()?;
    Ok((server, client))
}

/// The row: N items to one agent against N/10 to each of ten, same run.
pub async fn rows(components: &Path, items: usize) -> anyhow::Result<Rows> {
    let policy = components.join("policy-rust.wasm");
    let one = measure(&policy, items, 1).await?;
    eprintln!("  1 agent × {items}: {one:?}");
    let shared = measure(&policy, items, SHARED_BY).await?;
    eprintln!("  {SHARED_BY} agents × {}: {shared:?}", items / SHARED_BY);
    let rows = vec![Scenario::measured(
        "agent-publish",
        &format!(
            "s until {items} items published at once are applied and reported by one agent (against {SHARED_BY} agents × {})",
            items / SHARED_BY
        ),
        one.reported.as_secs_f64(),
        (
            &format!("{SHARED_BY} agents × {} each", items / SHARED_BY),
            Some(shared.reported.as_secs_f64()),
        ),
        (Target::RatioAtMost(2.0), "within 2×"),
        &format!(
            "real `reactor-host agent` processes (plain applier, durable agent state) of a fresh `serve` running policy-rust; {POLICIES} Policies of {} rules (one item each) applied at once, all selecting the one agent, or spread over {SHARED_BY}; apply → GET /v1/agents shows every item applied. The agents held every item after {:.2} s (one) and {:.2} s (ten)",
            items / POLICIES,
            one.held.as_secs_f64(),
            shared.held.as_secs_f64()
        ),
    )];
    Ok((rows, Vec::new()))
}
