//! The read snapshots paged lists keep between their pages, so that a later page shows the
//! objects as the first page saw them (as etcd serves a revision until it is compacted). Few
//! and short-lived: an open snapshot keeps redb from reusing the pages written after it.

use reactor_core::object::Revision;
use redb::ReadTransaction;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most snapshots kept at once; the least recently used goes first.
pub const KEPT: usize = 8;

/// How long a snapshot no page has read is kept.
pub const IDLE: Duration = Duration::from_secs(60);

/// The snapshots kept, by the revision they were read at.
#[derive(Default)]
pub struct Snapshots {
    kept: Mutex<Vec<Kept>>,
}

struct Kept {
    revision: Revision,
    txn: Arc<ReadTransaction>,
    used: Instant,
}

impl Snapshots {
    /// The snapshot at `revision` if it is kept (it counts as used at `now`); snapshots idle for
    /// longer than [`IDLE`] at `now` are dropped first.
    pub fn get(&self, revision: Revision, now: Instant) -> Option<Arc<ReadTransaction>> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|k| now.saturating_duration_since(k.used) <= IDLE);
        let found = kept.iter_mut().find(|k| k.revision == revision)?;
        found.used = now;
        Some(found.txn.clone())
    }

    /// Keeps `txn`, read at `revision`, as used at `now`: at most [`KEPT`], the least recently
    /// used dropped.
    pub fn keep(&self, revision: Revision, txn: Arc<ReadTransaction>, now: Instant) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|k| now.saturating_duration_since(k.used) <= IDLE);
        if let Some(found) = kept.iter_mut().find(|k| k.revision == revision) {
            found.used = now;
            return;
        }
        if kept.len() >= KEPT
            && let Some(oldest) = (0..kept.len()).min_by_key(|&i| kept[i].used)
        {
            kept.swap_remove(oldest);
        }
        kept.push(Kept {
            revision,
            txn,
            used: now,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::ReadableDatabase;

    fn snapshot(db: &redb::Database) -> Arc<ReadTransaction> {
        Arc::new(db.begin_read().expect("read"))
    }

    #[test]
    fn a_snapshot_is_kept_while_used_and_dropped_when_idle_or_crowded_out() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .expect("db");
        let snapshots = Snapshots::default();
        let start = Instant::now();
        snapshots.keep(5, snapshot(&db), start);
        // Each read within IDLE of the last keeps it.
        assert!(snapshots.get(5, start + IDLE).is_some());
        assert!(snapshots.get(5, start + IDLE * 2).is_some());
        assert!(snapshots.get(6, start + IDLE * 2).is_none());
        // Unread for longer than IDLE: gone.
        assert!(
            snapshots
                .get(5, start + IDLE * 3 + Duration::from_millis(1))
                .is_none()
        );

        // Crowded out: the least recently used goes.
        for (i, revision) in (10..10 + KEPT as u64).enumerate() {
            snapshots.keep(
                revision,
                snapshot(&db),
                start + Duration::from_secs(i as u64),
            );
        }
        let later = start + Duration::from_secs(KEPT as u64);
        assert!(snapshots.get(10, later).is_some(), "10 read again");
        snapshots.keep(99, snapshot(&db), later);
        assert!(
            snapshots.get(11, later).is_none(),
            "11 was the least recently used"
        );
        assert!(snapshots.get(10, later).is_some());
        assert!(snapshots.get(99, later).is_some());
    }
}
