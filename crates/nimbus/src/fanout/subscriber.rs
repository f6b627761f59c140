//! One agent's feed over the shared log: the changes meant for it as the lines the fan-out
//! serialized once, a delete when an item stops being meant for it, a bookmark when the
//! store moved on with nothing for it. The lines of one read of the log go out as one chunk.

use super::Shared;
use super::entry::{Change, line};
use super::log::Read;
use crate::{FeedEvent, Recipient};
use bytes::{Bytes, BytesMut};
use futures::Stream;
use reactor_core::object::Revision;
use reactor_store::StoreError;
use std::collections::HashMap;
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
    /// What the agent said it held when it connected (key → version), for the keys that
    /// have not changed since: it only shrinks, so a feed holds nothing per item it sends.
    known: HashMap<String, u64>,
    position: watch::Receiver<Option<Revision>>,
    /// The store bookmark last answered with a bookmark line.
    bookmarked: Revision,
    ended: bool,
}

/// The feed of `recipient` after `from`: each item is one or more whole lines.
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
        bookmarked: 0,
        ended: false,
    };
    futures::stream::unfold(feed, |mut feed| async move {
        let line = feed.next().await?;
        Some((line, feed))
    })
}

impl Feed {
    /// The lines of the next read of the log that has any for this agent, together.
    async fn next(&mut self) -> Option<Result<Bytes, StoreError>> {
        loop {
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
                    self.cursor = upto;
                    let lines: Vec<&Bytes> = changes
                        .iter()
                        .filter_map(|change| translate(&self.recipient, &mut self.known, change))
                        .collect();
                    match lines.as_slice() {
                        [] if bookmark > self.bookmarked => {
                            self.bookmarked = bookmark;
                            return Some(Ok(line(&FeedEvent::Bookmark { revision: upto })));
                        }
                        [] => {}
                        [one] => return Some(Ok(Bytes::clone(one))),
                        many => {
                            let mut chunk =
                                BytesMut::with_capacity(many.iter().map(|l| l.len()).sum());
                            for line in many {
                                chunk.extend_from_slice(line);
                            }
                            return Some(Ok(chunk.freeze()));
                        }
                    }
                }
            }
        }
    }
}

/// The line `change` means for `recipient`, if any: a put if the item is meant for it now,
/// a delete if it was before (or the agent held it when it connected, as `known` says).
fn translate<'c>(
    recipient: &Recipient,
    known: &mut HashMap<String, u64>,
    change: &'c Change,
) -> Option<&'c Bytes> {
    // What the agent said it held is news only until the key's first change (a fresh agent
    // said nothing: no lookup).
    let held = if known.is_empty() {
        None
    } else {
        known.remove(&change.key)
    };
    match &change.now {
        Some(entry) if recipient.wants(&entry.target) => {
            // Not if the agent holds this version already.
            (held != Some(entry.version)).then_some(&entry.put_line)
        }
        _ => {
            let before = change.before.as_ref();
            let had = held.is_some() || before.is_some_and(|t| recipient.wants(t));
            had.then_some(&change.delete_line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ItemTarget;
    use crate::fanout::entry::Entry;
    use std::collections::BTreeMap;

    fn role(value: &str) -> ItemTarget {
        ItemTarget::Labels(BTreeMap::from([("role".into(), value.into())]))
    }

    fn entry(key: &str, target: ItemTarget, version: u64) -> Arc<Entry> {
        Arc::new(Entry::new(
            key.into(),
            serde_json::json!(1),
            target,
            version,
            1,
        ))
    }

    /// What `changes` send to a `web` agent that held `known` when it connected.
    fn sent(known: &[(&str, u64)], changes: &[Change]) -> (Vec<String>, usize) {
        let web = Recipient {
            id: "a1".into(),
            labels: BTreeMap::from([("role".into(), "web".into())]),
        };
        let mut known = known.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        let lines = changes
            .iter()
            .filter_map(|change| translate(&web, &mut known, change))
            .map(|line| {
                let event: FeedEvent = serde_json::from_slice(line).expect("a feed line");
                match event {
                    FeedEvent::Put { item, .. } => format!("put {} v{}", item.key, item.version),
                    FeedEvent::Delete { key, .. } => format!("delete {key}"),
                    FeedEvent::Bookmark { .. } => "bookmark".into(),
                }
            })
            .collect();
        (lines, known.len())
    }

    #[test]
    fn a_feed_sends_puts_and_deletes_by_the_targets_before_and_after_and_keeps_nothing_per_item() {
        let changes = [
            Change::put(2, entry("k/1", role("web"), 1), None),
            Change::put(3, entry("k/db", role("db"), 1), None),
            // Meant for web no longer: a delete; for db no longer: nothing for web.
            Change::put(4, entry("k/1", role("db"), 2), Some(role("web"))),
            Change::put(5, entry("k/db", role("web"), 2), Some(role("db"))),
            Change::delete(6, "k/db".into(), role("web")),
            Change::delete(7, "k/never".into(), role("db")),
        ];
        let (lines, known) = sent(&[], &changes);
        assert_eq!(
            lines,
            vec!["put k/1 v1", "delete k/1", "put k/db v2", "delete k/db"]
        );
        assert_eq!(known, 0);

        // An agent that said it held k/1 at v1 gets no put of it, and a delete of k/old
        // (which it held, though the item is no longer meant for it); what it said is
        // forgotten once each key changed.
        let changes = [
            Change::put(2, entry("k/1", role("web"), 1), None),
            Change::put(3, entry("k/old", role("db"), 4), Some(role("db"))),
            Change::put(4, entry("k/1", role("web"), 2), Some(role("web"))),
        ];
        let (lines, known) = sent(&[("k/1", 1), ("k/old", 3), ("k/still", 1)], &changes);
        assert_eq!(lines, vec!["delete k/old", "put k/1 v2"]);
        assert_eq!(known, 1, "k/still has not changed");
    }
}
