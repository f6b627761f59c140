//! A watch over etcd: every change after a revision, resumed transparently from the last
//! revision delivered when the gRPC stream breaks (etcd-client does not resume by itself).
//!
//! One etcd transaction gives all its keys the same revision, and etcd sends all events of one
//! revision in one response (we never ask for fragmented responses). The position therefore
//! moves only after a whole response has been delivered, and a resume asks for the events
//! after it: none of a transaction is lost or sent twice. A response's events also cross to the
//! reader as one message, so a reader that takes every event ready has whole transactions.

use super::auth::renew_token;
use super::error::{EtcdError, revision};
use super::keys::{Keys, decode, decode_value, from_key};
use etcd_client::{Client, Event, WatchOptions, WatchResponse};
use futures::StreamExt;
use reactor_core::object::Revision;
use reactor_store::{EventType, StoreError, WatchEvent, WatchStream};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// How a watch paces itself.
#[derive(Debug, Clone, Copy)]
pub struct WatchSettings {
    /// How often an idle watch is sent a bookmark.
    pub bookmark_interval: Duration,
    /// The pause before a broken stream is opened again.
    pub retry: Duration,
}

pub fn start(
    client: Client,
    keys: Keys,
    kind: Option<String>,
    from: Revision,
    settings: WatchSettings,
) -> WatchStream {
    // Messages are whole responses (or a bookmark, or the error that ends the stream).
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut watch = Watch {
            client,
            prefix: keys.objects(kind.as_deref()),
            keys,
            position: from,
            settings,
            tx,
        };
        if let Err(e) = watch.run().await {
            let _ = watch.tx.send(vec![Err(e)]).await;
        }
    });
    Box::pin(ReceiverStream::new(rx).flat_map(futures::stream::iter))
}

struct Watch {
    client: Client,
    keys: Keys,
    prefix: String,
    /// The revision of the last whole response delivered: every event up to it has been sent.
    position: Revision,
    settings: WatchSettings,
    tx: mpsc::Sender<Vec<Result<WatchEvent, StoreError>>>,
}

/// Why one etcd stream ended.
enum End {
    /// The receiver went away: stop quietly.
    Gone,
    /// The connection or the stream failed: open it again from `position`.
    Broken(String),
}

impl Watch {
    async fn run(&mut self) -> Result<(), StoreError> {
        loop {
            match self.follow().await? {
                End::Gone => return Ok(()),
                End::Broken(reason) => {
                    tracing::warn!(%reason, position = self.position, "etcd watch broke; resuming");
                    metrics::counter!(reactor_core::metrics::STORE_ETCD_WATCH_RESUMES).increment(1);
                    tokio::select! {
                        _ = tokio::time::sleep(self.settings.retry) => {}
                        _ = self.tx.closed() => return Ok(()),
                    }
                }
            }
        }
    }

    /// Follows one etcd stream until it ends; `Err` only for what a resume cannot fix.
    async fn follow(&mut self) -> Result<End, StoreError> {
        let start = i64::try_from(self.position.saturating_add(1))
            .map_err(|_| StoreError::Invalid(format!("revision {} is too large", self.position)))?;
        let options = WatchOptions::new()
            .with_prefix()
            .with_prev_key()
            .with_start_revision(start);
        let mut stream = match self
            .client
            .clone()
            .watch(self.prefix.as_str(), Some(options))
            .await
        {
            Ok(stream) => stream,
            Err(e) => {
                renew_token(&self.client, &e).await;
                return Ok(End::Broken(e.to_string()));
            }
        };
        let mut ticker = tokio::time::interval(self.settings.bookmark_interval);
        ticker.tick().await;
        loop {
            tokio::select! {
                message = stream.message() => match message {
                    Ok(Some(response)) => {
                        if let Some(end) = self.deliver(response).await? {
                            return Ok(end);
                        }
                    }
                    Ok(None) => return Ok(End::Broken("etcd closed the watch stream".into())),
                    Err(e) => {
                        renew_token(&self.client, &e).await;
                        return Ok(End::Broken(e.to_string()));
                    }
                },
                // etcd 3.4's progress notifications can overtake events of an unsynced
                // watcher, so bookmarks carry only what this watch has itself delivered.
                _ = ticker.tick() => {
                    if self.send(WatchEvent::bookmark(self.position)).await.is_err() {
                        return Ok(End::Gone);
                    }
                }
                _ = self.tx.closed() => return Ok(End::Gone),
            }
        }
    }

    /// Sends the events of one response; `Some` when the stream is over.
    async fn deliver(&mut self, response: WatchResponse) -> Result<Option<End>, StoreError> {
        if response.compact_revision() != 0 {
            return Err(StoreError::Compacted {
                requested: self.position,
                oldest: revision(response.compact_revision())?,
            });
        }
        if response.canceled() {
            let reason = EtcdError::WatchCancelled(response.cancel_reason().to_owned());
            return Ok(Some(End::Broken(reason.to_string())));
        }
        let mut last = self.position;
        let mut events = Vec::with_capacity(response.events().len());
        for event in response.events() {
            let event = self.convert(event)?;
            // Only after a resume that etcd answered from an older revision than asked.
            if event.revision <= self.position {
                continue;
            }
            last = last.max(event.revision);
            events.push(Ok(event));
        }
        if !events.is_empty() && self.tx.send(events).await.is_err() {
            return Ok(Some(End::Gone));
        }
        self.position = last;
        Ok(None)
    }

    fn convert(&self, event: &Event) -> Result<WatchEvent, StoreError> {
        let kv = event
            .kv()
            .ok_or_else(|| EtcdError::Unexpected("a watch event without its key".into()))?;
        let at = revision(kv.mod_revision())?;
        let (event_type, object) = match event.event_type() {
            etcd_client::EventType::Put => {
                let created = kv.create_revision() == kv.mod_revision();
                let kind = if created {
                    EventType::Created
                } else {
                    EventType::Updated
                };
                (kind, decode(kv)?)
            }
            etcd_client::EventType::Delete => {
                let mut last = match event.prev_kv() {
                    Some(prev) => decode_value(prev)?,
                    None => from_key(&self.keys, kv.key())?,
                };
                last.meta.revision = at;
                (EventType::Deleted, last)
            }
        };
        Ok(WatchEvent {
            event_type,
            revision: at,
            object: Some(std::sync::Arc::new(object)),
        })
    }

    async fn send(&self, event: WatchEvent) -> Result<(), End> {
        self.tx.send(vec![Ok(event)]).await.map_err(|_| End::Gone)
    }
}
