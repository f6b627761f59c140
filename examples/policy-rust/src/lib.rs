//! The Policy reactor: publishes one Nimbus item per rule to the agents its selector matches,
//! records what it did in status, and counts per agent the items applied there.

use reactor_sdk::{
    Action, Error, Info, ItemState, ItemStatus, Object, Reactor, Target, export_reactor, nimbus,
    store,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const NAME: &str = "policy-rust";

#[derive(Debug, Deserialize, Serialize)]
struct Rule {
    name: String,
    action: String,
}

#[derive(Debug, Deserialize)]
struct PolicySpec {
    #[serde(default)]
    selector: BTreeMap<String, String>,
    #[serde(default)]
    rules: Vec<Rule>,
}

fn prefix(policy: &str) -> String {
    format!("policy/{policy}/")
}

/// The object's status as a JSON map, to change some keys and keep the others.
fn status_map(obj: &Object) -> Map<String, Value> {
    match obj.status::<Value>() {
        Ok(Some(Value::Object(map))) => map,
        _ => Map::new(),
    }
}

/// Sets `status.agents` from every agent's reports now, so a count whose report a crash
/// kept from `on-agent-status` is right again at the next reconcile (after a restart every
/// object is reconciled): the agents with reports, and those counted before at 0 if they
/// have none. No reports and no counts: the key stays out.
fn recount(status: &mut Map<String, Value>, prefix: &str) -> Result<(), Error> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for report in nimbus::statuses(prefix)? {
        let count = counts.entry(report.agent.clone()).or_default();
        if report.state == ItemState::Applied {
            *count += 1;
        }
    }
    let mut agents = match status.remove("agents") {
        Some(Value::Object(agents)) => agents,
        _ => Map::new(),
    };
    for count in agents.values_mut() {
        *count = 0.into();
    }
    for (agent, count) in counts {
        agents.insert(agent, count.into());
    }
    if !agents.is_empty() {
        status.insert("agents".into(), Value::Object(agents));
    }
    Ok(())
}

struct Policy;

impl Reactor for Policy {
    fn describe() -> Info {
        Info::new(NAME, ["Policy"])
            .resync_every_ms(60_000)
            .handles_delete()
    }

    fn validate(obj: Object) -> Result<(), String> {
        let spec: PolicySpec = obj
            .spec()
            .map_err(|e| format!("invalid policy spec: {e}"))?;
        if spec.rules.is_empty() {
            return Err("policy has no rules".into());
        }
        Ok(())
    }

    /// Level-triggered: makes the published items match the rules, whatever was there.
    fn on_create(obj: Object) -> Result<Action, Error> {
        let spec: PolicySpec = obj.spec()?;
        let prefix = prefix(&obj.name);
        let to = Target::labels(&spec.selector);
        let mut keep = Vec::new();
        for rule in &spec.rules {
            let key = format!("{prefix}{}", rule.name);
            nimbus::publish(&key, rule, &to)?;
            keep.push(key);
        }
        for key in nimbus::published(&prefix)? {
            if !keep.contains(&key) {
                nimbus::unpublish(&key)?;
            }
        }
        let mut status = status_map(&obj);
        status.insert("ruleCount".into(), keep.len().into());
        status.insert("reactor".into(), NAME.into());
        recount(&mut status, &prefix)?;
        store::set_status(&status)?;
        reactor_sdk::info!("policy {} publishes {} rules", obj.name, keep.len());
        Ok(Action::Done)
    }

    fn on_update(_old: Object, new: Object) -> Result<Action, Error> {
        Self::on_create(new)
    }

    fn on_delete(obj: Object) -> Result<Action, Error> {
        for key in nimbus::published(&prefix(&obj.name))? {
            nimbus::unpublish(&key)?;
        }
        Ok(Action::Done)
    }

    /// Records `status.agents.<agent>` = how many of this policy's items that agent applied.
    fn on_agent_status(owner: Object, report: ItemStatus) -> Result<Action, Error> {
        let applied = nimbus::agent_statuses(&prefix(&owner.name), &report.agent)?
            .iter()
            .filter(|s| s.state == ItemState::Applied)
            .count();
        let mut status = status_map(&owner);
        let agents = status
            .entry("agents")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(agents) = agents {
            agents.insert(report.agent.clone(), applied.into());
        }
        store::set_status(&status)?;
        Ok(Action::Done)
    }
}

export_reactor!(Policy);

#[cfg(test)]
mod tests;
