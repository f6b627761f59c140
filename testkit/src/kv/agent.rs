//! The agent harness: a real `reactor-host agent` process whose descriptors are copies of
//! the mock descriptor component, configured by its `--config` file, driven through its
//! HTTP API (`/scheduler/...`) as a user would; the mock southbound is the guests' state
//! file, read and changed between steps.

use super::access::{FileSouthbound, SouthboundAccess};
use super::args::MockDescArgs;
use super::harness::{Harness, Outcome};
use super::scenario::{Action, Retry};
use super::wasm::{MOCK_COMPONENT, install_mock_descriptors, mock_settings, put_descriptor};
use crate::{Agent, Host};
use async_trait::async_trait;
use reactor_host::agent::SchedulerClient;
use reactor_host::agent::http::{ResyncRequest, RetryRequest, TxnAnswer, TxnRequest};
use reactor_host::kvscheduler::{Dump, Key, TimelineEntry, TxnRecord, TxnType, ValueStatus};
use std::time::{Duration, Instant};

/// How long a descriptor registered while running may take to serve.
const REGISTER_DEADLINE: Duration = Duration::from_secs(60);

pub struct AgentHarness {
    tmp: tempfile::TempDir,
    host: Option<Host>,
    agent: Option<Agent>,
    client: Option<SchedulerClient>,
    sb: Option<FileSouthbound>,
    descriptors: Vec<MockDescArgs>,
}

impl AgentHarness {
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            tmp: tempfile::tempdir()?,
            host: None,
            agent: None,
            client: None,
            sb: None,
            descriptors: Vec::new(),
        })
    }

    fn config_path(&self) -> std::path::PathBuf {
        self.tmp.path().join("descriptors.yaml")
    }

    fn components_dir(&self) -> std::path::PathBuf {
        self.tmp.path().join("mock-descriptors")
    }

    /// Writes the agent's `--config` file for the descriptors (JSON is YAML), by a rename.
    fn write_config(&self) -> anyhow::Result<()> {
        let settings = mock_settings(&self.descriptors, &self.tmp.path().join("mock"));
        let partial = self.config_path().with_extension("partial");
        std::fs::write(&partial, serde_json::to_vec(&settings)?)?;
        std::fs::rename(&partial, self.config_path())?;
        Ok(())
    }

    /// A new descriptor is a new file in the descriptors folder (its config entry written
    /// first): the agent registers it and resyncs, and this waits for that resync's record.
    /// A new version is a config entry with a higher revision: the agent reloads the
    /// component, and this waits until the descriptor serves with that revision.
    async fn register(&mut self, args: &MockDescArgs) -> anyhow::Result<Outcome> {
        let new = put_descriptor(&mut self.descriptors, args);
        let client = self.client()?.clone();
        let last = client.history(None).await?.iter().map(|r| r.seq).max();
        self.write_config()?;
        if new {
            install_mock_descriptors(std::slice::from_ref(args), &self.components_dir())?;
        }
        let deadline = Instant::now() + REGISTER_DEADLINE;
        loop {
            let done = if new {
                let history = client.history(None).await?;
                history.iter().find_map(|r| {
                    (Some(r.seq) > last && r.txn_type == TxnType::DownstreamResync)
                        .then(|| failures(r.clone()))
                })
            } else {
                let serving = client.descriptors().await?.into_iter().any(|d| {
                    d.name == args.name && d.serving && d.revision == u64::from(args.version)
                });
                serving.then(Outcome::default)
            };
            if let Some(outcome) = done {
                return Ok(outcome);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "descriptor {} (v{}, a copy of {MOCK_COMPONENT}) not serving after {REGISTER_DEADLINE:?}",
                args.name,
                args.version
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The client of the agent's API, once started.
    pub fn client(&self) -> anyhow::Result<&SchedulerClient> {
        self.client
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the agent was not started"))
    }

    /// The agent's API address, an admin's token of its server and the CA, once started.
    pub fn api(&self) -> Option<(String, String, Option<String>)> {
        let (agent, host) = (self.agent.as_ref()?, self.host.as_ref()?);
        Some((agent.api_url(), host.token(), host.ca_pem()))
    }

    /// The agent's log, to show beside a failure.
    pub fn log(&self) -> String {
        self.agent.as_ref().map(Agent::log).unwrap_or_default()
    }
}

/// A scenario's retries as the API takes them; `None` is no retry at all.
fn retry(retry: Option<Retry>) -> Option<RetryRequest> {
    let Some(retry) = retry else {
        return Some(RetryRequest {
            period_ms: 0,
            attempts: 0,
            backoff: false,
        });
    };
    Some(RetryRequest {
        period_ms: u64::try_from(retry.period.as_millis()).unwrap_or(u64::MAX),
        attempts: retry.attempts,
        backoff: retry.backoff,
    })
}

fn failures(record: TxnRecord) -> Outcome {
    Outcome {
        failed: record.failures().into_iter().map(|(k, _)| k).collect(),
        ..Outcome::default()
    }
}

fn answered(answer: TxnAnswer) -> Outcome {
    Outcome {
        reverted: answer.reverted,
        ..failures(answer.record)
    }
}

/// A notification refused before it ran (a key the scheduler manages) is refused for its
/// key, if its error names it.
fn refused(error: &reactor_host::api::ClientError, key: &Key) -> anyhow::Result<Outcome> {
    let message = error.to_string();
    anyhow::ensure!(
        message.contains(&format!("key {key} ")),
        "the agent's API failed: {message}"
    );
    Ok(Outcome {
        refused: vec![key.clone()],
        ..Outcome::default()
    })
}

#[async_trait]
impl Harness for AgentHarness {
    async fn start(&mut self, descriptors: &[MockDescArgs]) -> anyhow::Result<()> {
        let dir = self.tmp.path().to_owned();
        self.sb = Some(FileSouthbound::create(&dir.join("mock"))?);
        let components = self.components_dir();
        install_mock_descriptors(descriptors, &components)?;
        self.descriptors = descriptors.to_vec();
        self.write_config()?;
        let config = self.config_path();
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
        let client =
            reactor_host::api::Client::with_ca(&url, Some(host.token()), host.ca_pem().as_deref())
                .map_err(|e| anyhow::anyhow!("a client of the agent's API: {e}"))?;
        self.client = Some(SchedulerClient::with_client(client));
        self.host = Some(host);
        self.agent = Some(agent);
        Ok(())
    }

    async fn act(&mut self, action: &Action) -> anyhow::Result<Outcome> {
        if let Action::Register(args) = action {
            return self.register(args).await;
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
                // A value the southbound owns is one of the answer's failures.
                Ok(answered(client.txn(&request).await?))
            }
            Action::Resync {
                values,
                retry: retries,
            } => {
                let request = ResyncRequest {
                    values: Some(values.iter().cloned().collect()),
                    retry: retry(*retries),
                };
                Ok(answered(client.resync_with(&request).await?))
            }
            Action::DownstreamResync => Ok(answered(client.resync().await?)),
            Action::Notify(key, value) => match client.notify(key, value.clone()).await {
                Ok(answer) => Ok(answered(answer)),
                Err(error) => refused(&error, key),
            },
            Action::Wait(duration) => {
                tokio::time::sleep(*duration).await;
                Ok(Outcome::default())
            }
            Action::SbSet { .. } | Action::PlanError { .. } | Action::Register(_) => {
                Ok(Outcome::default())
            }
        }
    }

    async fn dump(&mut self) -> anyhow::Result<Dump> {
        Ok(self.client()?.dump().await?)
    }

    async fn timeline(&mut self, key: &str) -> anyhow::Result<Vec<TimelineEntry>> {
        Ok(self.client()?.timeline(key).await?)
    }

    async fn status(&mut self, key: &str) -> anyhow::Result<ValueStatus> {
        self.client()?
            .status(Some(key))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("the agent answered no status for {key}"))
    }

    fn sb(&self) -> anyhow::Result<&dyn SouthboundAccess> {
        self.sb
            .as_ref()
            .map(|sb| sb as &dyn SouthboundAccess)
            .ok_or_else(|| anyhow::anyhow!("the agent was not started"))
    }

    async fn history(&mut self) -> anyhow::Result<Vec<TxnRecord>> {
        Ok(self.client()?.history(None).await?)
    }

    fn real_time(&self) -> bool {
        true
    }
}
