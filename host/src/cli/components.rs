//! `reactor-host components`: the loaded components and their state.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::runtime::ComponentInfo;
use clap::Args;

#[derive(Debug, Args)]
pub struct ComponentsArgs {
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
    /// Print JSON instead of a table (as `-o json`).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: ComponentsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let components = global.client()?.components().await.map_err(explain)?;
    let output = if args.json { Output::Json } else { args.output };
    match output.render(&components)? {
        Some(text) => print!("{text}"),
        None => print!("{}", table(&components)),
    }
    Ok(())
}

/// The rollout cell: `rolled back: <why>`, `rolled N/M`, `canary N/M` or `-`.
fn rollout(c: &ComponentInfo) -> String {
    if let Some(why) = &c.rolled_back {
        return format!("rolled back: {why}");
    }
    c.rollout
        .as_ref()
        .map_or_else(|| "-".to_owned(), |r| r.cell())
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
        "CALLS",
        "TRAPS",
        "FILE",
        "LAST ERROR",
    ];
    let rows = components.iter().map(|c| {
        vec![
            c.name.clone(),
            c.world.to_string(),
            format!("{:?}", c.state).to_lowercase(),
            if c.serving { "yes" } else { "no" }.to_owned(),
            c.sha256
                .as_deref()
                .map(|h| h.chars().take(12).collect())
                .unwrap_or_else(|| "-".into()),
            rollout(c),
            c.calls.to_string(),
            c.traps.to_string(),
            c.file.display().to_string(),
            c.error.clone().unwrap_or_else(|| "-".into()),
        ]
    });
    render(&header, rows)
}
