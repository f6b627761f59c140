//! The live feed: what the writer hands the watches after each commit, bounded in memory.

use crate::WatchEvent;
use reactor_core::object::Revision;

/// Committed batches kept for watches that are behind; one further back replays from the
/// log.
pub const LIVE_BATCHES: usize = 64;
/// A committed batch larger than this (serialized) is not kept in memory for the watches:
/// they read it back from the log, so the live feed holds at most
/// `LIVE_BATCHES × LIVE_BATCH_BYTES` whatever the size of the objects.
pub const LIVE_BATCH_BYTES: usize = 1 << 20;

/// What the writer hands the watches after a commit.
pub enum Live {
    /// The events and the size of each as logged.
    Batch(Vec<(WatchEvent, usize)>),
    /// Changes up to `to` are in the log only.
    Skipped { to: Revision },
}
