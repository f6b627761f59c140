//! `reactor-host components`: the loaded components and their state; `components
//! clear-rollback NAME` lets a version rolled back serve again.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::runtime::ComponentInfo;
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ComponentsArgs {
    #[command(subcommand)]
    pub command: Option<ComponentsCommand>,
    /// table, wide (with each version's accounting), json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
    /// Print JSON instead of a table (as `-o json`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ComponentsCommand {
    /// Let the version of NAME that was rolled back serve again: its rollback record goes
    /// (on every server sharing the store) and its file is loaded again.
    ClearRollback {
        /// The component (its file name without `.wasm`).
        name: String,
    },
}

pub async fn run(args: ComponentsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    if let Some(ComponentsCommand::ClearRollback { name }) = &args.command {
        global
            .client()?
            .clear_rollback(name)
            .await
            .map_err(explain)?;
        println!(
            "rollback of {name} cleared: its file is loaded again (see `reactor-host components`)"
        );
        return Ok(());
    }
    let components = global.client()?.components().await.map_err(explain)?;
    let output = if args.json { Output::Json } else { args.output };
    match output.render(&components)? {
        Some(text) => print!("{text}"),
        None if matches!(output, Output::Wide) => print!("{}", wide(&components)),
        None => print!("{}", table(&components)),
    }
    Ok(())
}

/// The rollout cell: a shadow running, `rolled back: <why>`, `rolled N/M`, `canary N/M`
/// or `-`.
fn rollout(c: &ComponentInfo) -> String {
    if let Some(shadow) = c.shadow.as_ref().filter(|s| !s.dropped) {
        return shadow.cell();
    }
    if let Some(why) = &c.rolled_back {
        return format!("rolled back: {why}");
    }
    c.rollout
        .as_ref()
        .map_or_else(|| "-".to_owned(), |r| r.cell())
}

/// The state cell: `compiling VERSION` while a new version compiles, `waiting VERSION adds
/// ...` for a version held for approval, else the state.
fn state(c: &ComponentInfo) -> String {
    if let Some(sha256) = &c.compiling {
        return format!("compiling {}", crate::runtime::version_of(sha256));
    }
    match &c.waiting {
        Some(waiting) => format!(
            "waiting {} adds {}",
            crate::runtime::version_of(&waiting.sha256),
            waiting.added.join(", ")
        ),
        None => format!("{:?}", c.state).to_lowercase(),
    }
}

/// Components as a table: `components`, and an agent's `scheduler descriptors`.
pub fn table(components: &[ComponentInfo]) -> String {
    let header = [
        "NAME",
        "WORLD",
        "STATE",
        "SERVING",
        "SHA256",
        "ROLLOUT",
        "PERMISSIONS",
        "CALLS",
        "TRAPS",
        "FILE",
        "LAST ERROR",
    ];
    let rows = components.iter().map(|c| {
        vec![
            c.name.clone(),
            c.world.to_string(),
            state(c),
            if c.serving { "yes" } else { "no" }.to_owned(),
            c.sha256
                .as_deref()
                .map(|h| h.chars().take(12).collect())
                .unwrap_or_else(|| "-".into()),
            rollout(c),
            reactor_core::component::permissions::summary(c.permissions.as_ref()),
            c.calls.to_string(),
            c.traps.to_string(),
            c.file.display().to_string(),
            c.error.clone().unwrap_or_else(|| "-".into()),
        ]
    });
    render(&header, rows)
}

/// `components -o wide`: the table's columns and what the serving version has cost since it
/// loaded — time in calls, peak linear memory, host-import calls, bytes written.
fn wide(components: &[ComponentInfo]) -> String {
    let header = [
        "NAME",
        "STATE",
        "SHA256",
        "PERMISSIONS",
        "CALLS",
        "TRAPS",
        "CPU",
        "PEAK MEMORY",
        "HOST CALLS",
        "WRITTEN",
    ];
    let rows = components.iter().map(|c| {
        let usage = c.usage.unwrap_or_default();
        vec![
            c.name.clone(),
            state(c),
            c.sha256
                .as_deref()
                .map(|h| h.chars().take(12).collect())
                .unwrap_or_else(|| "-".into()),
            reactor_core::component::permissions::summary(c.permissions.as_ref()),
            usage.calls.to_string(),
            c.traps.to_string(),
            format!("{:.3}s", usage.cpu_micros as f64 / 1e6),
            format!("{}Ki", usage.peak_memory_bytes / 1024),
            usage.host_calls.to_string(),
            format!("{}B", usage.written_bytes),
        ]
    });
    render(&header, rows)
}
