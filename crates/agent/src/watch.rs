//! `GET /scheduler/status/watch`: value statuses as newline-delimited JSON, every value's
//! first, then each value a transaction touched as it completes (Ligato's status watch).

use super::scheduler_applier::touched;
use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use reactor_kvscheduler::{KvScheduler, TxnRecord, ValueStatus};
use std::collections::VecDeque;
use tokio::sync::broadcast;

struct Watch {
    scheduler: KvScheduler,
    records: broadcast::Receiver<TxnRecord>,
    ready: VecDeque<ValueStatus>,
}

impl Watch {
    /// The next status to send; `None` when the scheduler is gone.
    async fn next(&mut self) -> Option<ValueStatus> {
        loop {
            if let Some(status) = self.ready.pop_front() {
                return Some(status);
            }
            match self.records.recv().await {
                Ok(record) => {
                    for key in touched(&record) {
                        self.ready.push_back(self.scheduler.status(&key).await);
                    }
                }
                // Fell behind: every value again, so the watcher misses no state.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    self.ready.extend(self.scheduler.statuses().await);
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// One status per line, as each is known.
pub(super) async fn status_watch(scheduler: KvScheduler) -> Response {
    let records = scheduler.subscribe();
    let ready = scheduler.statuses().await.into();
    let watch = Watch {
        scheduler,
        records,
        ready,
    };
    let lines = futures::stream::unfold(watch, |mut watch| async move {
        let status = watch.next().await?;
        let mut line = match serde_json::to_vec(&status) {
            Ok(line) => line,
            Err(error) => return Some((Err(std::io::Error::other(error)), watch)),
        };
        line.push(b'\n');
        Some((Ok::<_, std::io::Error>(line), watch))
    });
    (
        [(CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response()
}
