//! Reports on their way to the server, sent by a task of their own so that applying the
//! feed never waits for the server to store them: reports queued while one is in flight
//! are merged (the newest per item wins) and sent together; a failed send is retried.

use reactor_client::Client;
use reactor_core::backoff::Backoff;
use reactor_core::report::AgentReport;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::Instrument;

/// Reports to send; `true`: they are on every item the agent holds.
type Queued = (Vec<AgentReport>, bool);

/// The sending end; cheap to clone.
#[derive(Debug, Clone)]
pub struct Uplink {
    queue: mpsc::UnboundedSender<Queued>,
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
            let _ = self.queue.send((reports, false));
        }
    }

    /// Queues the reports on every item the agent holds (none, if it holds none): they
    /// replace everything queued, and the server drops the agent's reports on any other
    /// item, so what a crash kept from being sent (a `removed`) cannot count for good.
    pub fn send_all(&self, reports: Vec<AgentReport>) {
        let _ = self.queue.send((reports, true));
    }
}

async fn send_all(client: Client, agent: String, mut pending: mpsc::UnboundedReceiver<Queued>) {
    let mut queued: BTreeMap<String, AgentReport> = BTreeMap::new();
    // Whether `queued` is on every item held: a complete set with later changes merged in
    // still is.
    let mut complete = false;
    let mut retries = Backoff::new(Duration::from_millis(100), Duration::from_secs(5)).retries();
    loop {
        if queued.is_empty() && !complete {
            let Some(next) = pending.recv().await else {
                return;
            };
            merge(&mut queued, &mut complete, next);
        }
        while let Ok(next) = pending.try_recv() {
            merge(&mut queued, &mut complete, next);
        }
        let batch: Vec<AgentReport> = queued.values().cloned().collect();
        let span = tracing::debug_span!("report", agent = %agent, reports = batch.len(), complete);
        match client
            .report(&agent, batch, complete)
            .instrument(span)
            .await
        {
            Ok(_) => {
                queued.clear();
                complete = false;
                retries.succeeded();
            }
            Err(error) => {
                let backoff = retries.failed();
                tracing::debug!(%agent, %error, retry_in = ?backoff, "cannot send reports");
                tokio::time::sleep(backoff).await;
            }
        }
    }
}

fn merge(queued: &mut BTreeMap<String, AgentReport>, complete: &mut bool, next: Queued) {
    let (reports, all) = next;
    if all {
        queued.clear();
        *complete = true;
    }
    for report in reports {
        queued.insert(report.key.clone(), report);
    }
}
