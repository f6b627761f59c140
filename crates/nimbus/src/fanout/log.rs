//! The shared log of item changes every feed reads at its own pace: bounded in changes and
//! bytes, so a slow agent never makes the server hold more; a feed that falls behind its
//! start is told to re-list.

use super::entry::Change;
use reactor_core::object::Revision;
use std::collections::VecDeque;
use std::sync::Arc;

/// Changes after `base`, oldest first, and how far the log has looked.
pub(crate) struct Log {
    changes: VecDeque<Arc<Change>>,
    /// Revisions up to here are not in the log (dropped, or before it started).
    base: Revision,
    /// The last revision the log has looked at (changes and the revisions between them).
    position: Revision,
    bytes: usize,
    max_changes: usize,
    max_bytes: usize,
}

/// What a reader after `from` gets.
#[derive(Debug)]
pub(crate) enum Read {
    /// The next changes (at most the number asked for) and the revision read up to.
    Changes(Vec<Arc<Change>>, Revision),
    /// Nothing after `from` yet: wait.
    Nothing,
    /// `from` is before what the log holds: the reader re-lists.
    Compacted { oldest: Revision },
}

impl Log {
    pub(crate) fn new(base: Revision, max_changes: usize, max_bytes: usize) -> Self {
        Log {
            changes: VecDeque::new(),
            base,
            position: base,
            bytes: 0,
            max_changes: max_changes.max(1),
            max_bytes,
        }
    }

    /// Readers from before here re-list.
    pub(crate) fn oldest(&self) -> Revision {
        self.base
    }

    /// The revision the log has looked at up to.
    pub(crate) fn position(&self) -> Revision {
        self.position
    }

    /// Appends `change`, dropping the oldest changes beyond the bounds.
    pub(crate) fn push(&mut self, change: Arc<Change>) {
        self.position = self.position.max(change.revision);
        self.bytes += change.size();
        self.changes.push_back(change);
        while self.changes.len() > self.max_changes
            || (self.bytes > self.max_bytes && self.changes.len() > 1)
        {
            if let Some(old) = self.changes.pop_front() {
                self.bytes -= old.size();
                self.base = old.revision;
            }
        }
    }

    /// Everything up to `revision` has been looked at (a bookmark, or changes of no news).
    pub(crate) fn advance(&mut self, revision: Revision) {
        self.position = self.position.max(revision);
    }

    /// Forgets every change and starts again after `base` (a re-list of the store).
    pub(crate) fn restart(&mut self, base: Revision) {
        self.changes.clear();
        self.bytes = 0;
        self.base = base;
        self.position = base;
    }

    /// The changes after `from`, at most `max`.
    pub(crate) fn read(&self, from: Revision, max: usize) -> Read {
        if from < self.base {
            return Read::Compacted { oldest: self.base };
        }
        if from >= self.position {
            return Read::Nothing;
        }
        let start = self.changes.partition_point(|c| c.revision <= from);
        let mut end = (start + max).min(self.changes.len());
        // Never part of a revision (an etcd transaction gives all its writes one): the
        // reader goes on from the revision it read up to.
        if let Some(last) = end.checked_sub(1).filter(|last| *last >= start) {
            let revision = self.changes[last].revision;
            while self
                .changes
                .get(end)
                .is_some_and(|c| c.revision == revision)
            {
                end += 1;
            }
        }
        let changes: Vec<Arc<Change>> = self.changes.range(start..end).cloned().collect();
        let upto = match changes.last() {
            Some(last) if end < self.changes.len() => last.revision,
            _ => self.position,
        };
        Read::Changes(changes, upto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ItemTarget;
    use crate::fanout::entry::Entry;

    fn change(revision: Revision, bytes: usize) -> Arc<Change> {
        let entry = Entry::new(
            "k".into(),
            serde_json::Value::String("x".repeat(bytes)),
            ItemTarget::Agents(vec![]),
            1,
            revision,
        );
        Arc::new(Change::put(revision, Arc::new(entry), None))
    }

    fn revisions(read: Read) -> (Vec<Revision>, Revision) {
        match read {
            Read::Changes(changes, upto) => (changes.iter().map(|c| c.revision).collect(), upto),
            other => panic!("expected changes, got {other:?}"),
        }
    }

    #[test]
    fn a_read_never_ends_inside_a_revision() {
        let mut log = Log::new(10, 100, 1 << 20);
        for _ in 0..3 {
            log.push(change(12, 1));
        }
        log.push(change(15, 1));
        assert_eq!(revisions(log.read(10, 2)), (vec![12, 12, 12], 12));
        assert_eq!(revisions(log.read(12, 2)), (vec![15], 15));
        assert_eq!(revisions(log.read(10, 4)), (vec![12, 12, 12, 15], 15));
    }

    #[test]
    fn a_reader_gets_the_changes_after_its_revision_and_the_revision_read_up_to() {
        let mut log = Log::new(10, 100, 1 << 20);
        log.push(change(12, 1));
        log.push(change(15, 1));
        log.advance(20);
        assert_eq!(revisions(log.read(10, 100)), (vec![12, 15], 20));
        assert_eq!(revisions(log.read(12, 100)), (vec![15], 20));
        assert_eq!(revisions(log.read(15, 100)), (vec![], 20));
        assert!(matches!(log.read(20, 100), Read::Nothing));
        // At most `max`: the reader goes on from the last change it got.
        assert_eq!(revisions(log.read(10, 1)), (vec![12], 12));
    }

    #[test]
    fn the_log_is_bounded_and_a_reader_behind_it_re_lists() {
        let mut log = Log::new(0, 3, 1 << 20);
        for revision in 1..=5 {
            log.push(change(revision, 1));
        }
        assert!(matches!(log.read(1, 100), Read::Compacted { oldest: 2 }));
        assert_eq!(revisions(log.read(2, 100)), (vec![3, 4, 5], 5));
        // Bytes bound it too, keeping at least the newest change.
        let mut log = Log::new(0, 100, 1000);
        log.push(change(1, 600));
        log.push(change(2, 600));
        assert!(matches!(log.read(0, 100), Read::Compacted { oldest: 1 }));
        assert_eq!(revisions(log.read(1, 100)), (vec![2], 2));
    }

    #[test]
    fn a_restart_sends_every_reader_back_to_a_listing() {
        let mut log = Log::new(0, 100, 1 << 20);
        log.push(change(1, 1));
        log.restart(50);
        assert!(matches!(log.read(1, 100), Read::Compacted { oldest: 50 }));
        assert!(matches!(log.read(50, 100), Read::Nothing));
    }
}
