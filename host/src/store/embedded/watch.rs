//! A watch: replay the log after a revision, then follow committed batches live. A watcher that
//! falls behind the live feed goes back to the log, so a slow reader loses nothing and holds
//! no more than one channel's worth of memory.

use super::live::Live;
use super::state::StoreState;
use super::tables::read_log;
use crate::object::Revision;
use crate::store::{StoreError, WatchEvent, WatchStream};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;

const LOG_CHUNK: usize = 1024;

pub fn start(shared: Arc<StoreState>, kind: Option<String>, from: Revision) -> WatchStream {
    let (tx, rx) = mpsc::channel(256);
    // Subscribe before replaying, so no batch committed during the replay is missed.
    let live = shared.events.subscribe();
    tokio::spawn(async move {
        let mut watch = Watch {
            shared,
            kind,
            position: from,
            tx,
        };
        if let Err(e) = watch.run(live).await {
            let _ = watch.tx.send(Err(e)).await;
        }
    });
    Box::pin(ReceiverStream::new(rx))
}

struct Watch {
    shared: Arc<StoreState>,
    kind: Option<String>,
    /// The last revision this watch has looked at (sent or filtered out).
    position: Revision,
    tx: mpsc::Sender<Result<WatchEvent, StoreError>>,
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
                read_log(&shared.db, after, LOG_CHUNK, kind.as_deref())
            })
            .await
            .map_err(|e| StoreError::Backend(format!("watch replay task failed: {e}")))??;
            for event in &chunk {
                if self.offer(event).await.is_err() {
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
                            if batch.first().is_some_and(|e| e.revision > self.position + 1) {
                                return Ok(FollowEnd::FellBehind);
                            }
                            for event in batch.iter() {
                                self.offer(event).await?;
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
    async fn offer(&mut self, event: &WatchEvent) -> Result<(), Gone> {
        if event.revision <= self.position {
            return Ok(());
        }
        self.position = event.revision;
        let wanted = match &self.kind {
            None => true,
            Some(kind) => event.kind() == Some(kind.as_str()),
        };
        if wanted {
            self.send(event.clone()).await
        } else {
            Ok(())
        }
    }

    async fn send(&self, event: WatchEvent) -> Result<(), Gone> {
        self.tx.send(Ok(event)).await.map_err(|_| Gone)
    }
}

enum FollowEnd {
    FellBehind,
    Closed,
}
