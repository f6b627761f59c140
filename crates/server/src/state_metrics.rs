//! The families `/metrics` reads from the server's state at each scrape (the catalog's
//! `SCRAPED`): build info, each component's state, the agents and their items. They are
//! written as text, never kept by the recorder, so what is gone leaves no series.

use super::AppState;
use reactor_core::component::ComponentInfo;
use reactor_core::metrics::{self, Family};
use std::fmt::Write;

/// The Prometheus text of the scraped families.
pub async fn render(state: &AppState) -> String {
    let mut page = String::new();
    family(
        &mut page,
        metrics::BUILD_INFO,
        &[(vec![("version", env!("CARGO_PKG_VERSION"))], 1.0)],
    );
    if let Some(api) = &state.components {
        let components = api.runtime.components();
        let states: Vec<(String, String)> = components
            .iter()
            .map(|c| {
                let name = serde_json::to_value(c.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                (c.name.clone(), name)
            })
            .collect();
        let rows: Vec<_> = states
            .iter()
            .map(|(component, state)| {
                (
                    vec![("component", component.as_str()), ("state", state.as_str())],
                    1.0,
                )
            })
            .collect();
        family(&mut page, metrics::COMPONENT_STATE, &rows);
        let flags: [(&str, Flag); 3] = [
            (metrics::COMPONENT_ROLLED_BACK, |c| c.rolled_back.is_some()),
            (metrics::COMPONENT_COMPILING, |c| c.compiling.is_some()),
            (metrics::COMPONENT_WAITING_APPROVAL, |c| c.waiting.is_some()),
        ];
        for (name, on) in flags {
            let rows: Vec<_> = components
                .iter()
                .map(|c| {
                    (
                        vec![("component", c.name.as_str())],
                        f64::from(u8::from(on(c))),
                    )
                })
                .collect();
            family(&mut page, name, &rows);
        }
        rollouts(&mut page, &components);
    }
    // An unreachable store leaves the agents' families out of this scrape.
    if let Ok(agents) =
        reactor_nimbus::list_agents(state.store.as_ref(), &state.fanout, &state.reports).await
    {
        let connected = agents.iter().filter(|a| a.connected).count();
        let connected_rows = [
            (vec![("state", "connected")], connected as f64),
            (
                vec![("state", "disconnected")],
                (agents.len() - connected) as f64,
            ),
        ];
        family(&mut page, metrics::AGENTS, &connected_rows);
        let counts: Vec<(&str, &str, f64)> = agents
            .iter()
            .flat_map(|a| {
                [
                    (a.id.as_str(), "applied", a.applied as f64),
                    (a.id.as_str(), "pending", a.pending as f64),
                    (a.id.as_str(), "failed", a.failed as f64),
                ]
            })
            .collect();
        let rows: Vec<_> = counts
            .iter()
            .map(|(agent, state, n)| (vec![("agent", *agent), ("state", *state)], *n))
            .collect();
        family(&mut page, metrics::AGENT_ITEMS, &rows);
    }
    page
}

/// Whether a component has a state a 0/1 family shows.
type Flag = fn(&ComponentInfo) -> bool;

/// The rollout and shadow families: one row set per component that has had a rollout or
/// runs a shadow.
fn rollouts(page: &mut String, components: &[ComponentInfo]) {
    let phases: Vec<(&str, &str, String)> = components
        .iter()
        .filter_map(|c| {
            let rollout = c.rollout.as_ref()?;
            let phase = serde_json::to_value(rollout.phase)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            Some((c.name.as_str(), rollout.version.as_str(), phase))
        })
        .collect();
    let rows: Vec<_> = phases
        .iter()
        .map(|(component, version, phase)| {
            (
                vec![
                    ("component", *component),
                    ("version", *version),
                    ("phase", phase.as_str()),
                ],
                1.0,
            )
        })
        .collect();
    family(page, metrics::ROLLOUT_PHASE, &rows);
    let rows: Vec<_> = components
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.rollout.as_ref()?)))
        .flat_map(|(component, rollout)| {
            [
                (
                    vec![("component", component), ("state", "rolled")],
                    rollout.rolled as f64,
                ),
                (
                    vec![("component", component), ("state", "total")],
                    rollout.total as f64,
                ),
            ]
        })
        .collect();
    family(page, metrics::ROLLOUT_OBJECTS, &rows);
    let rows: Vec<_> = components
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.shadow.as_ref()?)))
        .flat_map(|(component, shadow)| {
            [
                ("matched", shadow.matched),
                ("differed", shadow.differed),
                ("needed", shadow.needed),
            ]
            .map(|(state, n)| (vec![("component", component), ("state", state)], n as f64))
        })
        .collect();
    family(page, metrics::SHADOW_OBJECTS, &rows);
}

/// Appends one family: its help and type, then one sample per row (labels, value).
fn family(page: &mut String, name: &str, rows: &[(Vec<(&str, &str)>, f64)]) {
    let Some(described) = metrics::SCRAPED.iter().find(|f: &&Family| f.name == name) else {
        return;
    };
    let _ = writeln!(page, "# HELP {name} {}", described.help);
    let _ = writeln!(page, "# TYPE {name} gauge");
    for (labels, value) in rows {
        let labels: Vec<String> = labels
            .iter()
            .map(|(key, value)| format!("{key}=\"{}\"", escape(value)))
            .collect();
        let _ = writeln!(page, "{name}{{{}}} {value}", labels.join(","));
    }
}

/// A label value as Prometheus' text format quotes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
