//! One agent's feed over the shared log: the changes meant for it as the lines the fan-out
//! serialized once, a delete when an item stops being meant for it, a bookmark when the
//! store moved on with nothing for it.

use super::Shared;
use super::entry::{Change, line};
use super::log::Read;
use crate::nimbus::{FeedEvent, Recipient};
use crate::object::Revision;
use crate::store::StoreError;
use bytes::Bytes;
use futures::Stream;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::watch;

/// Changes taken from the log at once: what a feed holds beyond the log is at most this
/// many lines.
const READ_MAX: usize = 256;

struct Feed {
    shared: Arc<Shared>,
    recipient: Recipient,
    /// The revision read up to.
    cursor: Revision,
    /// What the agent holds: key → version.
    known: HashMap<String, u64>,
    position: watch::Receiver<Option<Revision>>,
    pending: VecDeque<Bytes>,
    /// The store bookmark last answered with a bookmark line.
    bookmarked: Revision,
    ended: bool,
}

/// The feed of `recipient` after `from`.
pub(super) fn lines(
    shared: Arc<Shared>,
    recipient: Recipient,
    from: Revision,
    known: HashMap<String, u64>,
) -> impl Stream<Item = Result<Bytes, StoreError>> + Send + use<> {
    let feed = Feed {
        position: shared.position.subscribe(),
        shared,
        recipient,
        cursor: from,
        known,
        pending: VecDeque::new(),
        bookmarked: 0,
        ended: false,
    };
    futures::stream::unfold(feed, |mut feed| async move {
        let line = feed.next().await?;
        Some((line, feed))
    })
}

impl Feed {
    async fn next(&mut self) -> Option<Result<Bytes, StoreError>> {
        loop {
            if let Some(line) = self.pending.pop_front() {
                return Some(Ok(line));
            }
            if self.ended {
                return None;
            }
            // Seen before reading, so a change after the read wakes the wait below.
            self.position.borrow_and_update();
            let (read, bookmark) = {
                let state = self.shared.state.read();
                (state.log.read(self.cursor, READ_MAX), state.bookmark)
            };
            match read {
                Read::Compacted { oldest } => {
                    self.ended = true;
                    return Some(Err(StoreError::Compacted {
                        requested: self.cursor,
                        oldest,
                    }));
                }
                Read::Nothing => {
                    if self.position.changed().await.is_err() {
                        // The fan-out stopped: the agent reconnects.
                        return None;
                    }
                }
                Read::Changes(changes, upto) => {
                    for change in &changes {
                        if let Some(line) = self.translate(change) {
                            self.pending.push_back(line);
                        }
                    }
                    self.cursor = upto;
                    if self.pending.is_empty() && bookmark > self.bookmarked {
                        self.bookmarked = bookmark;
                        self.pending
                            .push_back(line(&FeedEvent::Bookmark { revision: upto }));
                    }
                }
            }
        }
    }

    /// The line `change` means for this agent, if any.
    fn translate(&mut self, change: &Change) -> Option<Bytes> {
        match &change.now {
            Some(entry) if self.recipient.wants(&entry.target) => {
                if self.known.get(&entry.key) == Some(&entry.version) {
                    // The agent holds this version already (it said so when it connected).
                    return None;
                }
                self.known.insert(entry.key.clone(), entry.version);
                Some(entry.put_line.clone())
            }
            _ => self
                .known
                .remove(&change.key)
                .map(|_| change.delete_line.clone()),
        }
    }
}
