//! `reactor-host agent`: runs an agent that receives its items from a server and applies them.

use super::client_args::ClientArgs;
use super::shutdown::Shutdown;
use crate::agent::{AgentConfig, SchedulerConfig, run as run_agent};
use crate::kvscheduler::RetryOptions;
use anyhow::Context;
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// This agent's id, unique among the server's agents (DNS-label-like).
    #[arg(long)]
    pub id: String,
    /// A label the server selects agents by, `KEY=VALUE`; repeat for several.
    #[arg(long = "label", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Where items are applied: without --descriptors each item is `<southbound>/<key>.json`;
    /// with them each descriptor gets `<southbound>/<descriptor-name>/` (default
    /// `<data>/southbound`).
    #[arg(long)]
    pub southbound: Option<PathBuf>,
    /// A folder of descriptor components (world `descriptor`): items are applied through the
    /// KV scheduler, in dependency order. Files added, changed or removed are followed.
    #[arg(long)]
    pub descriptors: Option<PathBuf>,
    /// The descriptors' config file (YAML, as `serve --config`): per descriptor its config,
    /// limits and WASI grants. Needs --descriptors.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where the agent's own API (`/scheduler/...`) listens, e.g. `127.0.0.1:7801`; it takes
    /// the same token as the server. Needs --descriptors.
    #[arg(long)]
    pub listen: Option<String>,
    /// How often the southbound is retrieved and drift repaired, e.g. `60s`; `0s`: only at
    /// start and on request.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub resync_period: Duration,
    /// Delay before the first retry of a failed operation (doubled at each attempt).
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub retry_period: Duration,
    /// Retries of a failed operation before it is left FAILED.
    #[arg(long, default_value_t = 5)]
    pub retries: u32,
    /// How often the agent tells the server it is alive, e.g. `5s`.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub heartbeat: Duration,
    /// A join token from `reactor-host token create --agent ID` [env: REACTOR_JOIN_TOKEN]:
    /// exchanged at the first start for the agent's own credential, kept in --data (later
    /// starts need no token).
    #[arg(long, value_name = "TOKEN")]
    pub join: Option<String>,
    /// Serve the agent's own API (--listen) as plain HTTP: for an agent that did not join.
    #[arg(long)]
    pub insecure_http: bool,
}

pub(super) fn parse_label(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("label {text:?} is not KEY=VALUE"))?;
    if key.is_empty() {
        return Err(format!("label {text:?} has an empty key"));
    }
    Ok((key.to_owned(), value.to_owned()))
}

pub async fn run(args: AgentArgs, global: &ClientArgs) -> anyhow::Result<()> {
    // From the start: a stop signal during the join is acted on once the credential is kept.
    let mut shutdown = Shutdown::listen()?;
    crate::object::validate_name(&args.id).with_context(|| format!("--id {}", args.id))?;
    global.refuse("agent", &["--agent", "--kubeconfig"])?;
    // Where the agent keeps what it holds, to resume after a restart.
    let data = global.data_or("./agent-data");
    let server = global.server();
    let join = args.join.clone().or_else(|| {
        std::env::var("REACTOR_JOIN_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
    });
    let credential = match crate::agent::join::kept(&data, &args.id)? {
        Some(kept) => Some(kept),
        None => match &join {
            Some(join) => {
                let joined = crate::agent::join::join(&data, &server, &args.id, join).await?;
                tracing::info!(agent = %args.id, "joined: the agent's credential is kept in its data folder");
                Some(joined)
            }
            None => None,
        },
    };
    let labels = args.labels.into_iter().collect::<BTreeMap<_, _>>();
    let (token, ca_pem, labels) = match credential {
        Some(credential) => {
            if !labels.is_empty() && labels != credential.labels {
                anyhow::bail!(
                    "--label: agent {} carries the labels given with its join token; a new join token changes them",
                    args.id
                );
            }
            let ca = match credential.ca_pem {
                Some(ca) => Some(ca),
                None => global.ca_pem(None)?,
            };
            (credential.token, ca, credential.labels)
        }
        None => {
            let token = global.given_token()?.context(
                "the agent needs a credential: --join TOKEN (from `reactor-host token create --agent ID`), or --token-file",
            )?;
            (token, global.ca_pem(None)?, labels)
        }
    };
    let api_files = crate::agent::join::api_cert_files(&data);
    let api_tls = if args.listen.is_none() || args.insecure_http {
        None
    } else if api_files.cert.exists() {
        Some(api_files)
    } else {
        anyhow::bail!(
            "--listen: the agent's API serves HTTPS with the certificate the agent gets when it joins (--join); without one pass --insecure-http"
        );
    };
    if args.heartbeat.is_zero() {
        anyhow::bail!("--heartbeat must be longer than zero");
    }
    if args.config.is_some() && args.descriptors.is_none() {
        anyhow::bail!("--config configures descriptors, which needs --descriptors");
    }
    if args.listen.is_some() && args.descriptors.is_none() {
        anyhow::bail!("--listen serves the KV scheduler's API, which needs --descriptors");
    }
    let scheduler = args.descriptors.map(|descriptors| SchedulerConfig {
        descriptors,
        config: args.config,
        southbound: args
            .southbound
            .clone()
            .unwrap_or_else(|| data.join("southbound")),
        listen: args.listen,
        resync_every: (!args.resync_period.is_zero()).then_some(args.resync_period),
        retry: RetryOptions {
            period: args.retry_period,
            max_attempts: args.retries,
            exponential_backoff: true,
        },
    });
    let config = AgentConfig {
        id: args.id,
        labels,
        server,
        token,
        ca_pem,
        api_tls,
        data,
        southbound: args.southbound,
        heartbeat: args.heartbeat,
        scheduler,
    };
    // What the agent applied and reported is committed as it goes (its state file is this
    // commit or the one before): on a stop signal the work in flight is abandoned, the
    // connections closed, and the state file closed cleanly.
    tokio::select! {
        result = run_agent(config) => Ok(result?),
        signal = shutdown.requested() => {
            tracing::info!(signal, "stopping");
            Ok(())
        }
    }
}
