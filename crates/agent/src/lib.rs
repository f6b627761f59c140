//! `reactor-host agent`: registers with the server, keeps its items in step with the server's
//! feed (snapshot, then changes resumed by revision, re-listed after compaction), applies
//! them (as files, or through the KV scheduler and its WASM descriptors), reports each
//! item's state back, and sends heartbeats.

mod applier;
mod client;
mod descriptors;
pub mod http;
pub mod join;
mod local;
mod resync;
mod review;
mod scheduler_applier;
mod session;
mod state;
mod uplink;
mod wasm_descriptor;
mod watch;

pub use applier::{Applier, ApplyError, Changed, FolderApplier, Outcome};
pub use client::SchedulerClient;
pub use local::{LocalError, LocalValues};
pub use scheduler_applier::{SchedulerApplier, outcome_of};
pub use state::{AgentState, HeldItem, StateError};
pub use wasm_descriptor::WasmDescriptor;

use reactor_client::{Client, ClientError};
use reactor_core::backoff::Backoff;
use reactor_kvscheduler::{KvScheduler, RetryOptions, TxnOptions};
use reactor_runtime::{Runtime, RuntimeConfig, RuntimeError};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the server at {server} refused the agent's credential: {reason}")]
    Refused { server: String, reason: String },
    #[error(
        "the server at {server} presents a certificate this agent does not trust ({reason}): give its CA with --ca, or join with a token that pins it"
    )]
    Untrusted { server: String, reason: String },
    #[error("the server's CA: {0}")]
    Client(#[from] ClientError),
    #[error("the agent API's certificate: {0}")]
    Tls(#[from] reactor_trust::PkiError),
    #[error("the agent API's TLS settings: {0}")]
    Rustls(#[from] rustls::Error),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Local(#[from] LocalError),
    #[error("descriptors: {0}")]
    Runtime(#[from] RuntimeError),
    #[error("cannot create the agent's data folder {path}: {source}")]
    Data {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
}

/// The KV scheduler side of an agent: descriptors applying items to the southbound.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// The folder of descriptor components, followed for new versions.
    pub descriptors: PathBuf,
    /// The descriptors' config file (config, limits and grants per descriptor, as
    /// `serve --config`), followed for changes.
    pub config: Option<PathBuf>,
    /// Each descriptor gets `<southbound>/<descriptor-name>/` as its root.
    pub southbound: PathBuf,
    /// Where the agent's own API listens, if anywhere.
    pub listen: Option<String>,
    /// How often the southbound is retrieved and repaired; `None`: only at start and on demand.
    pub resync_every: Option<Duration>,
    /// Retries of failed operations in best-effort transactions.
    pub retry: RetryOptions,
}

/// How an agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub server: String,
    pub token: String,
    /// The CA the server's certificate (and the agent API's) is checked against.
    pub ca_pem: Option<String>,
    /// The agent API's certificate; `None`: it serves plain HTTP.
    pub api_tls: Option<reactor_trust::CertFiles>,
    pub data: PathBuf,
    /// Where the plain applier writes items; `None`: items are only held.
    pub southbound: Option<PathBuf>,
    /// How often the agent says it is alive; it counts as gone after three missed beats.
    pub heartbeat: Duration,
    /// Apply through the KV scheduler and these descriptors instead of writing files.
    pub scheduler: Option<SchedulerConfig>,
}

/// Runs the agent until it fails for good (a refused token, an unusable state file).
pub async fn run(config: AgentConfig) -> Result<(), AgentError> {
    let client = Client::with_ca(
        &config.server,
        Some(config.token.clone()),
        config.ca_pem.as_deref(),
    )?;
    reactor_core::private::create_dir(&config.data).map_err(|source| AgentError::Data {
        path: config.data.clone(),
        source,
    })?;
    let mut state = AgentState::load(&config.data)?;
    let mut applier: Box<dyn Applier> = match &config.scheduler {
        Some(scheduler) => Box::new(start_scheduler(&config, scheduler, &state).await?),
        None => Box::new(FolderApplier::new(config.southbound.clone())),
    };
    let uplink = uplink::Uplink::start(client.clone(), config.id.clone());
    let beating = tokio::spawn(heartbeats(client.clone(), config.clone()));
    let mut retries = Backoff::new(Duration::from_millis(100), Duration::from_secs(5)).retries();
    let result = loop {
        let span = tracing::info_span!("feed", agent = %config.id, server = %config.server);
        let ran = session::run(&client, &uplink, &config, &mut state, applier.as_mut())
            .instrument(span)
            .await;
        match ran {
            Ok(()) => retries.succeeded(),
            Err(session::SessionError::Client(e)) if refused(&e) => {
                break Err(AgentError::Refused {
                    server: config.server.clone(),
                    reason: e.to_string(),
                });
            }
            Err(session::SessionError::Client(e)) if e.untrusted() => {
                let reason = match e {
                    ClientError::Unreachable { reason, .. } => reason,
                    other => other.to_string(),
                };
                break Err(AgentError::Untrusted {
                    server: config.server.clone(),
                    reason,
                });
            }
            Err(session::SessionError::State(e)) => break Err(e.into()),
            Err(e) => {
                let backoff = retries.failed();
                tracing::warn!(agent = %config.id, error = %e, retry_in = ?backoff, "lost the server");
                tokio::time::sleep(backoff).await;
            }
        }
    };
    beating.abort();
    result
}

/// Loads the descriptors, configures what the agent held before it stopped (the items and
/// the local values, with a full resync: stray values in the southbound go, missing ones
/// are created), starts the agent's API and the periodic resync.
async fn start_scheduler(
    config: &AgentConfig,
    settings: &SchedulerConfig,
    state: &AgentState,
) -> Result<SchedulerApplier, AgentError> {
    let scheduler = KvScheduler::new();
    let mut runtime_config = RuntimeConfig::new(config.data.join("runtime"));
    runtime_config.southbound = Some(settings.southbound.clone());
    let runtime = Runtime::new(runtime_config)?;
    if let Some(path) = &settings.config {
        runtime.watch_config(path).await?;
    }
    descriptors::follow(&runtime, &scheduler, &settings.descriptors).await?;
    let local = Arc::new(LocalValues::load(&config.data)?);
    resync::at_start(&scheduler, state, &local).await;
    let best_effort = TxnOptions::best_effort(Some(settings.retry));
    if let Some(addr) = &settings.listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| AgentError::Listen {
                addr: addr.clone(),
                source,
            })?;
        let bound = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| addr.clone());
        let router = http::router(
            scheduler.clone(),
            local,
            runtime,
            best_effort.clone(),
            review::Reviewer::new(&config.server, config.ca_pem.as_deref()),
        );
        match &config.api_tls {
            Some(files) => {
                let cert =
                    reactor_trust::ReloadingCert::watch(files.clone(), Duration::from_secs(5))?;
                let tls = Arc::new(reactor_trust::server_config(cert)?);
                let listener = reactor_http::TlsListener::new(listener, tls).map_err(|source| {
                    AgentError::Listen {
                        addr: addr.clone(),
                        source,
                    }
                })?;
                tracing::info!(agent = %config.id, addr = %bound, "agent API listening (https)");
                tokio::spawn(async move {
                    if let Err(error) = axum::serve(listener, router).await {
                        tracing::error!(%error, "the agent API stopped");
                    }
                });
            }
            None => {
                tracing::info!(agent = %config.id, addr = %bound, "agent API listening (http)");
                tokio::spawn(async move {
                    if let Err(error) = axum::serve(listener, router).await {
                        tracing::error!(%error, "the agent API stopped");
                    }
                });
            }
        }
    }
    if let Some(period) = settings.resync_every {
        tokio::spawn(resync::every(scheduler.clone(), period));
    }
    Ok(SchedulerApplier::new(scheduler, best_effort))
}

fn refused(error: &ClientError) -> bool {
    error.code() == Some(reactor_core::wire::ErrorCode::Unauthorized)
}

/// Heartbeats; registers again if the server forgot the agent (e.g. its store was reset). A
/// beat that fails is tried again soon (backing off up to the interval), not an interval later:
/// an agent must not show as gone for a whole interval because its first beat raced its
/// registration.
async fn heartbeats(client: Client, config: AgentConfig) {
    let ttl = (config.heartbeat * 3).min(reactor_nimbus::MAX_HEARTBEAT_TTL);
    let mut ticker = tokio::time::interval(config.heartbeat);
    let mut retries = Backoff::new(Duration::from_millis(50), config.heartbeat).retries();
    loop {
        ticker.tick().await;
        loop {
            match beat(&client, &config, ttl).await {
                Ok(()) => {
                    retries.succeeded();
                    break;
                }
                Err(e) => {
                    tracing::debug!(agent = %config.id, error = %e, "heartbeat failed");
                    let delay = retries.failed();
                    if delay.saturating_mul(2) > config.heartbeat {
                        break;
                    }
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }
}

/// One heartbeat; an agent the server does not know (not registered yet, or forgotten) is
/// registered first. A registration that lost a race with the session's own still lets the
/// beat count.
async fn beat(client: &Client, config: &AgentConfig, ttl: Duration) -> Result<(), ClientError> {
    match client.heartbeat(&config.id, ttl).await {
        Err(e) if e.code() == Some(reactor_core::wire::ErrorCode::NotFound) => {
            if let Err(e) = client
                .register_agent(&config.id, config.labels.clone())
                .await
            {
                tracing::debug!(agent = %config.id, error = %e, "registration by heartbeat failed");
            }
            client.heartbeat(&config.id, ttl).await
        }
        beat => beat,
    }
}
