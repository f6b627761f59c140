//! Follows one kind of a store for an in-memory view: lists it, then watches from the
//! listing's revision, and lists again whenever the watch ends (after a pause that grows
//! while listing fails), until the view is dropped.

use super::{Listing, Store, StoreError, WatchEvent};
use futures::{FutureExt, StreamExt};
use reactor_core::backoff::Backoff;
use reactor_core::object::Selector;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// An in-memory view of one kind, kept by [`follow`].
pub trait Follower: Send + Sync + 'static {
    /// The kind as it is now: the view starts over from it.
    fn listed(&self, listing: Listing);
    /// One change after the listing, in store order.
    fn changed(&self, event: WatchEvent);

    /// Changes that arrived together, in store order: at least all the changes of one
    /// store revision (an etcd transaction gives all its writes one revision). A view that
    /// readers see between changes takes them in one step, so no reader sees part of a
    /// revision.
    fn changed_together(&self, events: Vec<WatchEvent>) {
        for event in events {
            self.changed(event);
        }
    }
}

/// Keeps `follower` in step with `kind` of `store` until the follower is dropped; `what`
/// names the view in the warnings about the store.
pub async fn follow<F: Follower>(follower: Weak<F>, store: Arc<dyn Store>, kind: &str, what: &str) {
    let mut retries = Backoff::new(Duration::from_millis(50), Duration::from_secs(5)).retries();
    loop {
        let pause = match list_and_watch(&follower, store.as_ref(), kind).await {
            Ok(Ended::Dropped) => return,
            Ok(Ended::Watch(e)) => {
                tracing::warn!("{what}: the store watch ended ({e}); listing again");
                retries.succeeded();
                retries.failed()
            }
            Err(e) => {
                tracing::warn!("{what}: listing failed ({e}); trying again");
                retries.failed()
            }
        };
        if follower.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(pause).await;
    }
}

enum Ended {
    Dropped,
    Watch(StoreError),
}

async fn list_and_watch<F: Follower>(
    follower: &Weak<F>,
    store: &dyn Store,
    kind: &str,
) -> Result<Ended, StoreError> {
    let listing = store.list(kind, &Selector::default()).await?;
    let mut events = store.watch(Some(kind), listing.revision).await?;
    match follower.upgrade() {
        Some(follower) => follower.listed(listing),
        None => return Ok(Ended::Dropped),
    }
    while let Some(event) = events.next().await {
        let Some(follower) = follower.upgrade() else {
            return Ok(Ended::Dropped);
        };
        // With every event that is ready too: a store sends one revision's events at once.
        let mut together = Vec::new();
        let mut ended = None;
        let mut next = Some(event);
        while let Some(event) = next.take() {
            match event {
                Ok(event) => together.push(event),
                Err(e) => {
                    ended = Some(e);
                    break;
                }
            }
            next = events.next().now_or_never().flatten();
        }
        follower.changed_together(together);
        if let Some(e) = ended {
            return Ok(Ended::Watch(e));
        }
    }
    Ok(Ended::Watch(StoreError::Backend("the watch closed".into())))
}
