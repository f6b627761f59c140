//! `reactor-host agents`: every registered agent, connected or not, and what it applied;
//! `agents remove ID` removes a decommissioned one.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use clap::{Args, Subcommand};
use std::time::{Duration, UNIX_EPOCH};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
    /// Print JSON instead of a table (as `-o json`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Remove a decommissioned agent: its registration goes, and its reports are withdrawn
    /// (the owners' reactors hear them as `removed`; `status.propagation` stops counting it).
    /// An agent still running that registers again comes back as a new one.
    Remove {
        /// The agent's id.
        id: String,
    },
    /// Revoke an agent's credential and its unused join tokens: its open feed ends and it is
    /// refused from then on (a new join token lets it join again).
    Revoke {
        /// The agent's id.
        id: String,
    },
}

pub async fn run(args: AgentsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    match args.command {
        Some(AgentsCommand::Remove { id }) => {
            global.client()?.remove_agent(&id).await.map_err(explain)?;
            println!("agent {id} removed");
            return Ok(());
        }
        Some(AgentsCommand::Revoke { id }) => {
            let answer = global.client()?.revoke_agent(&id).await.map_err(explain)?;
            let count = answer["revoked"].as_u64().unwrap_or(0);
            let plural = if count == 1 { "" } else { "s" };
            println!("agent {id} revoked ({count} credential{plural})");
            return Ok(());
        }
        None => {}
    }
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
