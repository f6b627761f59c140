//! `reactor-host agent`: registers with the server, keeps its items in step with the server's
//! feed (snapshot, then changes resumed by revision, re-listed after compaction), applies
//! them, reports each item's state back, and sends heartbeats.

mod applier;
mod scheduler_applier;
mod session;
mod state;

pub use applier::{Applier, ApplyError, FolderApplier, Outcome};
pub use scheduler_applier::{SchedulerApplier, outcome_of};
pub use state::{AgentState, HeldItem, StateError};

use crate::api::{Client, ClientError};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the server at {server} refused the agent's token: pass --token or set REACTOR_TOKEN")]
    Refused { server: String },
    #[error(transparent)]
    State(#[from] StateError),
}

/// How an agent runs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub id: String,
    pub labels: BTreeMap<String, String>,
    pub server: String,
    pub token: String,
    pub data: PathBuf,
    /// Where the plain applier writes items; `None`: items are only held.
    pub southbound: Option<PathBuf>,
    /// How often the agent says it is alive; it counts as gone after three missed beats.
    pub heartbeat: Duration,
}

/// Runs the agent until it fails for good (a refused token, an unusable state file).
pub async fn run(config: AgentConfig) -> Result<(), AgentError> {
    let client = Client::new(&config.server, Some(config.token.clone()));
    let mut state = AgentState::load(&config.data)?;
    let mut applier = FolderApplier::new(config.southbound.clone());
    let beating = tokio::spawn(heartbeats(client.clone(), config.clone()));
    let mut backoff = Duration::from_millis(100);
    let result = loop {
        match session::run(&client, &config, &mut state, &mut applier).await {
            Ok(()) => backoff = Duration::from_millis(100),
            Err(session::SessionError::Client(e)) if refused(&e) => {
                break Err(AgentError::Refused {
                    server: config.server.clone(),
                });
            }
            Err(session::SessionError::State(e)) => break Err(e.into()),
            Err(e) => {
                tracing::warn!(agent = %config.id, error = %e, retry_in = ?backoff, "lost the server");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    };
    beating.abort();
    result
}

fn refused(error: &ClientError) -> bool {
    error.code() == Some(crate::api::wire::ErrorCode::Unauthorized)
}

/// Heartbeats; registers again if the server forgot the agent (e.g. its store was reset).
async fn heartbeats(client: Client, config: AgentConfig) {
    let ttl = config.heartbeat * 3;
    let mut ticker = tokio::time::interval(config.heartbeat);
    loop {
        ticker.tick().await;
        match client.heartbeat(&config.id, ttl).await {
            Ok(()) => {}
            Err(e) if e.code() == Some(crate::api::wire::ErrorCode::NotFound) => {
                // Not registered yet (or forgotten): register, then the beat counts.
                if client
                    .register_agent(&config.id, config.labels.clone())
                    .await
                    .is_ok()
                {
                    let _ = client.heartbeat(&config.id, ttl).await;
                }
            }
            Err(e) => tracing::debug!(agent = %config.id, error = %e, "heartbeat failed"),
        }
    }
}
