//! A watch: replay the log after a revision, then follow committed batches live. A watcher that
//! falls behind the live feed goes back to the log, so a slow reader loses nothing and holds
//! no more than [`BUFFER_BYTES`] of events waiting for it, whatever their size.

use super::check::Area;
use super::health::BY_READ;
use super::live::Live;
use super::state::StoreState;
use super::tables::read_log;
use crate::{StoreError, WatchEvent, WatchStream};
use futures::StreamExt;
use reactor_core::object::Revision;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

/// The most log entries decoded at once by a replay.
const LOG_CHUNK: usize = 1024;
/// The most bytes of log entries decoded at once by a replay (at least one entry is).
const LOG_CHUNK_BYTES: usize = 4 << 20;
/// The bytes of events a watch holds for its reader at most; when the reader does not take
/// them, the watch waits, and goes back to the log once it falls behind the live feed.
pub const BUFFER_BYTES: usize = 8 << 20;
type Sent = (Result<WatchEvent, StoreError>, Option<OwnedSemaphorePermit>);

pub fn start(shared: Arc<StoreState>, kind: Option<String>, from: Revision) -> WatchStream {
    let (tx, rx) = mpsc::channel::<Sent>(256);
    let budget = Arc::new(Semaphore::new(BUFFER_BYTES));
    // Subscribe before replaying, so no batch committed during the replay is missed.
    let live = shared.events.subscribe();
    tokio::spawn(async move {
        let mut watch = Watch {
            shared,
            kind,
            position: from,
            tx,
            budget,
        };
        if let Err(e) = watch.run(live).await {
            let _ = watch.tx.send((Err(e), None)).await;
        }
    });
    // An event's share of the budget is given back as the reader takes it.
    Box::pin(ReceiverStream::new(rx).map(|(event, _permit)| event))
}

struct Watch {
    shared: Arc<StoreState>,
    kind: Option<String>,
    /// The last revision this watch has looked at (sent or filtered out).
    position: Revision,
    tx: mpsc::Sender<Sent>,
    /// Bytes of events sent and not yet taken by the reader.
    budget: Arc<Semaphore>,
}

/// The receiver went away: stop quietly.
struct Gone;

impl Watch {
    async fn run(&mut self, mut live: broadcast::Receiver<Arc<Live>>) -> Result<(), StoreError> {
        let mut ticker = tokio::time::interval(self.shared.bookmark_interval);
        ticker.tick().await;
        loop {
            if self.replay().await?.is_err() {
                return Ok(());
            }
            if self
                .send(WatchEvent::bookmark(self.position))
                .await
                .is_err()
            {
                return Ok(());
            }
            match self.follow(&mut live, &mut ticker).await {
                Ok(FollowEnd::FellBehind) => continue,
                Ok(FollowEnd::Closed) | Err(Gone) => return Ok(()),
            }
        }
    }

    /// Sends every logged change after `position` until the log is exhausted.
    async fn replay(&mut self) -> Result<Result<(), Gone>, StoreError> {
        loop {
            let shared = self.shared.clone();
            let (after, kind) = (self.position, self.kind.clone());
            let (chunk, last) = tokio::task::spawn_blocking(move || {
                shared.health.guard(
                    Area::Log,
                    BY_READ,
                    &|| format!("the log after revision {after}"),
                    || {
                        read_log(
                            &shared.db,
                            after,
                            LOG_CHUNK,
                            LOG_CHUNK_BYTES,
                            kind.as_deref(),
                        )
                    },
                )
            })
            .await
            .map_err(|e| StoreError::Backend(format!("watch replay task failed: {e}")))??;
            for (event, size) in &chunk {
                if self.offer(event, *size).await.is_err() {
                    return Ok(Err(Gone));
                }
            }
            let Some(last) = last else {
                return Ok(Ok(()));
            };
            // Entries of other kinds were skipped unread: the watch has still looked at them.
            self.position = self.position.max(last);
        }
    }

    async fn follow(
        &mut self,
        live: &mut broadcast::Receiver<Arc<Live>>,
        ticker: &mut tokio::time::Interval,
    ) -> Result<FollowEnd, Gone> {
        loop {
            tokio::select! {
                batch = live.recv() => match batch {
                    Ok(live) => match live.as_ref() {
                        Live::Batch(batch) => {
                            if batch
                                .first()
                                .is_some_and(|(e, _)| e.revision > self.position.saturating_add(1))
                            {
                                return Ok(FollowEnd::FellBehind);
                            }
                            for (event, size) in batch.iter() {
                                self.offer(event, *size).await?;
                            }
                        }
                        Live::Skipped { to } if *to > self.position => {
                            return Ok(FollowEnd::FellBehind);
                        }
                        Live::Skipped { .. } => {}
                    },
                    Err(broadcast::error::RecvError::Lagged(_)) => return Ok(FollowEnd::FellBehind),
                    Err(broadcast::error::RecvError::Closed) => return Ok(FollowEnd::Closed),
                },
                _ = ticker.tick() => self.send(WatchEvent::bookmark(self.position)).await?,
                _ = self.tx.closed() => return Err(Gone),
            }
        }
    }

    /// Advances past `event`, sending it if it is new and of the watched kind. Only what is
    /// sent is cloned: every watch sees every committed batch, and most of it is not theirs.
    async fn offer(&mut self, event: &WatchEvent, size: usize) -> Result<(), Gone> {
        if event.revision <= self.position {
            return Ok(());
        }
        self.position = event.revision;
        let wanted = match &self.kind {
            None => true,
            Some(kind) => event.kind() == Some(kind.as_str()),
        };
        if !wanted {
            return Ok(());
        }
        let share = u32::try_from(size.clamp(1, BUFFER_BYTES)).unwrap_or(u32::MAX);
        let permit = tokio::select! {
            permit = self.budget.clone().acquire_many_owned(share) => permit.map_err(|_| Gone)?,
            _ = self.tx.closed() => return Err(Gone),
        };
        self.tx
            .send((Ok(event.clone()), Some(permit)))
            .await
            .map_err(|_| Gone)
    }

    async fn send(&self, event: WatchEvent) -> Result<(), Gone> {
        self.tx.send((Ok(event), None)).await.map_err(|_| Gone)
    }
}

enum FollowEnd {
    FellBehind,
    Closed,
}
