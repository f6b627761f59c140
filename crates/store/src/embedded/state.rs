//! What the store handle, its writer thread, its watches and its scrub share: the database,
//! the revision counters, the live feed of committed batches and what is known damaged.

use super::health::Health;
use super::live::Live;
use super::snapshots::Snapshots;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use tokio::sync::broadcast;

/// State shared by the store handle, its writer thread and its watches.
pub(crate) struct StoreState {
    /// Declared before `db`: the snapshots paged lists keep are dropped before the database.
    pub(super) snapshots: Snapshots,
    pub(super) db: redb::Database,
    pub(super) latest: AtomicU64,
    pub(super) oldest: AtomicU64,
    pub(super) events: broadcast::Sender<Arc<Live>>,
    pub(super) bookmark_interval: Duration,
    pub(super) health: Health,
}
