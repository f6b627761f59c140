//! Reports on their way to the server, sent by a task of their own so that applying the
//! feed never waits for the server to store them: reports queued while one is in flight
//! are merged (the newest per item wins) and sent together; a failed send is retried.

use crate::api::Client;
use crate::nimbus::AgentReport;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::mpsc;

/// The sending end; cheap to clone.
#[derive(Debug, Clone)]
pub struct Uplink {
    queue: mpsc::UnboundedSender<Vec<AgentReport>>,
}

impl Uplink {
    /// Starts the task sending `agent`'s reports through `client`.
    pub fn start(client: Client, agent: String) -> Self {
        let (queue, pending) = mpsc::unbounded_channel();
        tokio::spawn(send_all(client, agent, pending));
        Self { queue }
    }

    /// Queues reports; they replace any queued, unsent report on the same item.
    pub fn send(&self, reports: Vec<AgentReport>) {
        if !reports.is_empty() {
            // The task ends only with the agent.
            let _ = self.queue.send(reports);
        }
    }
}

async fn send_all(
    client: Client,
    agent: String,
    mut pending: mpsc::UnboundedReceiver<Vec<AgentReport>>,
) {
    let mut queued: BTreeMap<String, AgentReport> = BTreeMap::new();
    let mut backoff = Duration::from_millis(100);
    loop {
        if queued.is_empty() {
            let Some(reports) = pending.recv().await else {
                return;
            };
            merge(&mut queued, reports);
        }
        while let Ok(reports) = pending.try_recv() {
            merge(&mut queued, reports);
        }
        let batch: Vec<AgentReport> = queued.values().cloned().collect();
        match client.report(&agent, batch).await {
            Ok(_) => {
                queued.clear();
                backoff = Duration::from_millis(100);
            }
            Err(error) => {
                tracing::debug!(%agent, %error, retry_in = ?backoff, "cannot send reports");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

fn merge(queued: &mut BTreeMap<String, AgentReport>, reports: Vec<AgentReport>) {
    for report in reports {
        queued.insert(report.key.clone(), report);
    }
}
