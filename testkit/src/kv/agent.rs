//! The agent harness: a real `reactor-host agent` process whose descriptors are copies of
//! the mock descriptor component, configured by its `--config` file, driven through its
//! HTTP API (`/scheduler/...`) as a user would; the mock southbound is the guests' state
//! file, read and changed between steps.

use super::access::FileSouthbound;
use super::args::MockDescArgs;
use super::harness::Harness;
use super::native::{act_on_southbound, invalid_keys, pop_operations, southbound_contents};
use super::scenario::Action;
use super::southbound::MockOperation;
use super::wasm::{install_mock_descriptors, mock_settings};
use crate::{Agent, Host};
use async_trait::async_trait;
use reactor_host::agent::SchedulerClient;
use reactor_host::agent::http::{ResyncRequest, RetryRequest, TxnAnswer, TxnRequest};
use reactor_host::kvscheduler::{Key, TxnRecord, Value, ValueStatus};
use std::collections::BTreeMap;
use std::time::Duration;

pub struct AgentHarness {
    tmp: tempfile::TempDir,
    host: Option<Host>,
    agent: Option<Agent>,
    client: Option<SchedulerClient>,
    sb: Option<FileSouthbound>,
}

impl AgentHarness {
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            tmp: tempfile::tempdir()?,
            host: None,
            agent: None,
            client: None,
            sb: None,
        })
    }

    /// The client of the agent's API, once started.
    pub fn client(&self) -> anyhow::Result<&SchedulerClient> {
        self.client
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the agent was not started"))
    }

    /// The mock southbound's state file, once started.
    pub fn sb(&self) -> anyhow::Result<&FileSouthbound> {
        self.sb
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the agent was not started"))
    }

    /// The agent's API address and token, once started.
    pub fn api(&self) -> Option<(String, String)> {
        let agent = self.agent.as_ref()?;
        Some((agent.api_url(), agent.token.clone()))
    }

    /// The agent's log, to show beside a failure.
    pub fn log(&self) -> String {
        self.agent.as_ref().map(Agent::log).unwrap_or_default()
    }
}

/// A scenario's retries as the API takes them; `None` is no retry at all.
fn retry(retry: Option<(Duration, u32)>) -> Option<RetryRequest> {
    let (period, attempts) = retry.unwrap_or_default();
    Some(RetryRequest {
        period_ms: u64::try_from(period.as_millis()).unwrap_or(u64::MAX),
        attempts,
        backoff: false,
    })
}

fn failures(answer: TxnAnswer) -> Vec<Key> {
    answer
        .record
        .failures()
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

/// A transaction refused before it ran (a key owned by the other side) fails for the keys
/// its error names.
fn refused(error: &reactor_host::api::ClientError, keys: &[&Key]) -> anyhow::Result<Vec<Key>> {
    let message = error.to_string();
    let named: Vec<Key> = keys
        .iter()
        .filter(|k| message.contains(&format!("key {k} ")))
        .map(|k| (*k).clone())
        .collect();
    anyhow::ensure!(!named.is_empty(), "the agent's API failed: {message}");
    Ok(named)
}

#[async_trait]
impl Harness for AgentHarness {
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()> {
        let dir = self.tmp.path().to_owned();
        let folder = dir.join("mock");
        self.sb = Some(FileSouthbound::create(&folder)?);
        let components = dir.join("mock-descriptors");
        install_mock_descriptors(descriptors, &components)?;
        // JSON is YAML: the settings as the agent's --config file.
        let config = dir.join("descriptors.yaml");
        std::fs::write(
            &config,
            serde_json::to_vec(&mock_settings(descriptors, &folder))?,
        )?;
        let (host, agent) = tokio::task::block_in_place(|| {
            let host = Host::start(&dir.join("data"), &[]);
            let components = components.to_string_lossy().into_owned();
            let config = config.to_string_lossy().into_owned();
            let agent = Agent::start_with(
                &host,
                &dir,
                "mock-agent",
                &[],
                &[
                    "--descriptors",
                    components.as_str(),
                    "--config",
                    config.as_str(),
                    "--listen",
                    "127.0.0.1:0",
                    "--resync-period",
                    "0s",
                ],
            );
            (host, agent)
        });
        let url = tokio::task::block_in_place(|| agent.api_url());
        self.client = Some(SchedulerClient::new(&url, Some(agent.token.clone())));
        self.host = Some(host);
        self.agent = Some(agent);
        Ok(())
    }

    async fn act(&mut self, action: &Action) -> anyhow::Result<Vec<Key>> {
        if act_on_southbound(self.sb()?, action)? {
            return Ok(Vec::new());
        }
        let client = self.client()?;
        match action {
            Action::Txn {
                values,
                revert,
                retry: retries,
            } => {
                let request = TxnRequest {
                    values: values.iter().cloned().collect(),
                    revert: *revert,
                    retry: retry(*retries),
                    ..TxnRequest::default()
                };
                match client.txn(&request).await {
                    Ok(answer) => Ok(failures(answer)),
                    Err(error) => refused(&error, &request.values.keys().collect::<Vec<_>>()),
                }
            }
            Action::Resync {
                values,
                retry: retries,
            } => {
                let request = ResyncRequest {
                    values: Some(values.iter().cloned().collect()),
                    retry: retry(*retries),
                };
                Ok(failures(client.resync_with(&request).await?))
            }
            Action::DownstreamResync => Ok(failures(client.resync().await?)),
            Action::Notify(key, value) => match client.notify(key, value.clone()).await {
                Ok(answer) => Ok(failures(answer)),
                Err(error) => refused(&error, &[key]),
            },
            Action::Wait(duration) => {
                tokio::time::sleep(*duration).await;
                Ok(Vec::new())
            }
            Action::SbSet { .. } | Action::PlanError { .. } => Ok(Vec::new()),
        }
    }

    async fn status(&mut self, key: &str) -> anyhow::Result<ValueStatus> {
        self.client()?
            .status(Some(key))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("the agent answered no status for {key}"))
    }

    async fn southbound(&mut self) -> anyhow::Result<BTreeMap<Key, Value>> {
        southbound_contents(self.sb()?)
    }

    async fn pop_ops(&mut self) -> anyhow::Result<Vec<MockOperation>> {
        pop_operations(self.sb()?)
    }

    async fn invalid_keys(&mut self) -> anyhow::Result<Vec<Key>> {
        invalid_keys(self.sb()?)
    }

    async fn history(&mut self) -> anyhow::Result<Vec<TxnRecord>> {
        Ok(self.client()?.history(None).await?)
    }

    fn real_time(&self) -> bool {
        true
    }
}
