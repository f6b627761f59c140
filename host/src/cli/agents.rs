//! `reactor-host agents`: every registered agent, connected or not, and what it applied.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use clap::Args;
use std::time::{Duration, UNIX_EPOCH};

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
    /// Print JSON instead of a table (as `-o json`).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: AgentsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let agents = global.client()?.agents().await.map_err(explain)?;
    let output = if args.json { Output::Json } else { args.output };
    if let Some(text) = output.render(&agents)? {
        print!("{text}");
        return Ok(());
    }
    let header = [
        "ID",
        "CONNECTED",
        "LAST SEEN",
        "APPLIED",
        "PENDING",
        "FAILED",
        "LABELS",
    ];
    let rows = agents.iter().map(|a| {
        let last_seen = a
            .last_seen_ms
            .map(|ms| {
                humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms))
                    .to_string()
            })
            .unwrap_or_else(|| "never".into());
        let labels: Vec<String> = a.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        vec![
            a.id.clone(),
            if a.connected { "yes" } else { "no" }.to_owned(),
            last_seen,
            a.applied.to_string(),
            a.pending.to_string(),
            a.failed.to_string(),
            labels.join(","),
        ]
    });
    print!("{}", render(&header, rows));
    Ok(())
}
