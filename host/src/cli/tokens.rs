//! `reactor-host token create`: a join token for one agent id and the labels it will carry.

use super::agent::parse_label;
use super::client_args::{ClientArgs, explain};
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// A join token for `agent --id ID --join TOKEN`, printed on the last line: used once,
    /// within its time to live; it pins the server's CA.
    Create {
        /// The agent id the token is for.
        #[arg(long)]
        agent: String,
        /// A label the agent will carry, `KEY=VALUE` (repeat); only a new token changes them.
        #[arg(long = "label", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        /// How long the token can be used, e.g. `1h` (at most a week).
        #[arg(long, default_value = "1h", value_parser = humantime::parse_duration)]
        ttl: Duration,
        /// A host name or address the agent's API is reached at (repeat): its certificate is
        /// valid for these, the agent's id and the loopback addresses.
        #[arg(long = "api-name")]
        api_names: Vec<String>,
    },
}

pub async fn run(args: TokenArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    match args.command {
        TokenCommand::Create {
            agent,
            labels,
            ttl,
            api_names,
        } => {
            let labels: BTreeMap<_, _> = labels.into_iter().collect();
            let created = client
                .create_join_token(&agent, labels, Some(ttl), api_names)
                .await
                .map_err(explain)?;
            eprintln!(
                "join token for agent {} (valid until {}, once):",
                created.agent, created.expires
            );
            println!("{}", created.token);
        }
    }
    Ok(())
}
