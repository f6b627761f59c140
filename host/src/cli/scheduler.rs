//! `reactor-host scheduler`: asks an agent's KV scheduler (its `--listen` API) for values'
//! states, the dump, graph and history, and sends it resyncs, notifications and transactions.

use super::client_args::ClientArgs;
use crate::agent::SchedulerClient;
use crate::agent::http::{TxnAnswer, TxnRequest};
use crate::kvscheduler::ValueStatus;
use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::Value;

#[derive(Debug, Args)]
pub struct SchedulerArgs {
    #[command(subcommand)]
    pub command: SchedulerCommand,
}

#[derive(Debug, Subcommand)]
pub enum SchedulerCommand {
    /// Each value's state (PENDING with what it waits for, FAILED with its error, ...).
    Status {
        /// Only this key.
        key: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Desired, retrieved (read from the southbound now) and cached values, as JSON.
    Dump,
    /// The graph of values with their dependencies and derived values, as JSON.
    Graph,
    /// Transaction records (planned and executed operations), as JSON.
    History {
        /// Only this transaction.
        #[arg(long)]
        seq: Option<u64>,
    },
    /// Every change of one key's state, as JSON.
    Timeline { key: String },
    /// The descriptors loaded by the agent, as a table.
    Descriptors {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Retrieve the southbound through the descriptors and repair any drift.
    Resync,
    /// A southbound notification: the value now exists (with JSON) or went away (without).
    Notify { key: String, value: Option<String> },
    /// Put and delete local values in one transaction.
    Txn {
        /// `KEY=JSON`; repeat for several.
        #[arg(long = "put", value_parser = parse_put)]
        puts: Vec<(String, Value)>,
        /// A key to remove; repeat for several.
        #[arg(long = "delete")]
        deletes: Vec<String>,
        /// Undo everything at the first failure instead of applying what can be.
        #[arg(long)]
        revert: bool,
    },
}

fn parse_put(text: &str) -> Result<(String, Value), String> {
    let (key, json) = text
        .split_once('=')
        .ok_or_else(|| format!("--put {text:?} is not KEY=JSON"))?;
    let value = serde_json::from_str(json).map_err(|e| format!("--put {key}: {e}"))?;
    Ok((key.to_owned(), value))
}

pub async fn run(args: SchedulerArgs, global: &ClientArgs) -> anyhow::Result<()> {
    global.refuse("scheduler", &["--server"])?;
    let client = SchedulerClient::with_client(global.agent_client()?);
    match args.command {
        SchedulerCommand::Status { key, json } => {
            let statuses = client.status(key.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&statuses)?);
            } else {
                print!("{}", status_table(&statuses));
            }
        }
        SchedulerCommand::Dump => print_json(&client.dump().await?)?,
        SchedulerCommand::Graph => print_json(&client.graph().await?)?,
        SchedulerCommand::History { seq } => print_json(&client.history(seq).await?)?,
        SchedulerCommand::Timeline { key } => print_json(&client.timeline(&key).await?)?,
        SchedulerCommand::Descriptors { json } => {
            let descriptors = client.descriptors().await?;
            if json {
                print_json(&descriptors)?
            } else {
                print!("{}", super::components::table(&descriptors))
            }
        }
        SchedulerCommand::Resync => outcome(client.resync().await?)?,
        SchedulerCommand::Notify { key, value } => {
            let value = value
                .map(|v| serde_json::from_str(&v))
                .transpose()
                .with_context(|| format!("the value notified for {key} is not JSON"))?;
            outcome(client.notify(&key, value).await?)?
        }
        SchedulerCommand::Txn {
            puts,
            deletes,
            revert,
        } => {
            let mut request = TxnRequest {
                revert,
                ..TxnRequest::default()
            };
            request
                .values
                .extend(puts.into_iter().map(|(k, v)| (k, Some(v))));
            request
                .values
                .extend(deletes.into_iter().map(|k| (k, None)));
            if request.values.is_empty() {
                anyhow::bail!("nothing to do: pass --put KEY=JSON or --delete KEY");
            }
            outcome(client.txn(&request).await?)?
        }
    }
    Ok(())
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// One line per operation; a failed transaction is the command's failure.
fn outcome(answer: TxnAnswer) -> anyhow::Result<()> {
    let record = &answer.record;
    println!(
        "transaction {} ({}): {} operations",
        record.seq,
        serde_json::to_value(record.txn_type)?
            .as_str()
            .unwrap_or_default(),
        record.executed.len()
    );
    for op in &record.executed {
        let error = op
            .error
            .as_deref()
            .map(|e| format!(" error: {e}"))
            .unwrap_or_default();
        println!(
            "  {} {}: {} -> {}{error}",
            serde_json::to_value(op.operation)?
                .as_str()
                .unwrap_or_default(),
            op.key,
            op.prev_state,
            op.new_state
        );
    }
    match answer.error {
        Some(error) => anyhow::bail!(error),
        None => Ok(()),
    }
}

fn status_table(statuses: &[ValueStatus]) -> String {
    let rows = statuses.iter().map(|s| {
        let details = if let Some(error) = &s.error {
            error.clone()
        } else if let Some(invalid) = &s.invalid {
            invalid.to_string()
        } else if !s.missing_dependencies.is_empty() {
            let waiting: Vec<String> = s
                .missing_dependencies
                .iter()
                .map(ToString::to_string)
                .collect();
            format!("waiting for {}", waiting.join(", "))
        } else {
            s.derived_from
                .as_ref()
                .map(|p| format!("derived from {p}"))
                .unwrap_or_default()
        };
        vec![s.key.clone(), s.state.to_string(), details]
    });
    super::table::render(&["KEY", "STATE", "DETAILS"], rows)
}
