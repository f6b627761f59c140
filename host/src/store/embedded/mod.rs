//! The embedded store: redb in the data folder, one group-committing writer, log-fed watches.

mod labels;
mod list;
mod live;
mod state;
use state::StoreState;
mod record;
mod tables;
mod upgrade;
mod verify;
mod watch;
mod writer;

pub use verify::{Finding, Report, verify};

use crate::object::{ApplyRequest, Object, ObjectKey, Revision, Selector};
use crate::store::{Applied, Listing, Store, StoreError, WatchStream, Write, Written};
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot};
use writer::{Op, WriteRequest, WriterSettings};

/// Tuning of the embedded store.
#[derive(Debug, Clone)]
pub struct EmbeddedStoreOptions {
    /// How many of the newest changes the log keeps for watches to resume from.
    pub log_retention: u64,
    /// How often an idle watch is sent a bookmark.
    pub bookmark_interval: Duration,
    /// The most writes gathered into one transaction.
    pub max_batch: usize,
    /// Memory redb may keep for pages of the file (its own default is 1 GiB).
    pub cache_bytes: usize,
    /// The largest object (spec, status and all, as JSON) a write may store.
    pub max_object_bytes: usize,
}

impl Default for EmbeddedStoreOptions {
    fn default() -> Self {
        Self {
            log_retention: 100_000,
            bookmark_interval: Duration::from_secs(10),
            max_batch: 1024,
            cache_bytes: 256 << 20,
            max_object_bytes: crate::store::DEFAULT_MAX_OBJECT_BYTES,
        }
    }
}

/// A [`Store`] kept in one redb file.
pub struct EmbeddedStore {
    shared: Arc<StoreState>,
    writes: mpsc::Sender<WriteRequest>,
    writer: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("path", &self.path)
            .finish()
    }
}

impl EmbeddedStore {
    /// Opens (or creates) `<dir>/store.redb`, readable by its owner only.
    pub fn open(dir: &Path, options: EmbeddedStoreOptions) -> Result<Self, StoreError> {
        crate::private::create_dir(dir).map_err(|e| {
            StoreError::Backend(format!("cannot create data folder {}: {e}", dir.display()))
        })?;
        let path = dir.join("store.redb");
        let db = open_db(&path, options.cache_bytes)?;
        Self::start(db, path, options)
    }

    /// A store in memory only (redb's in-memory backend): the same code as on disk, nothing
    /// written to a file, gone when dropped. For `reactor-host test`.
    pub fn in_memory(options: EmbeddedStoreOptions) -> Result<Self, StoreError> {
        let db = redb::Builder::new()
            .set_cache_size(options.cache_bytes)
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| StoreError::Backend(format!("cannot make an in-memory store: {e}")))?;
        Self::start(db, PathBuf::from("<memory>"), options)
    }

    /// Prepares the tables of `db` and starts its writer.
    fn start(
        db: redb::Database,
        path: PathBuf,
        options: EmbeddedStoreOptions,
    ) -> Result<Self, StoreError> {
        Self::init_tables(&db)?;
        let (latest, oldest) = tables::read_counters(&db)?;
        let (events, _) = broadcast::channel(live::LIVE_BATCHES);
        let shared = Arc::new(StoreState {
            db,
            latest: AtomicU64::new(latest),
            oldest: AtomicU64::new(oldest),
            events,
            bookmark_interval: options.bookmark_interval,
        });
        let (writes, requests) = mpsc::channel(options.max_batch * 4);
        let settings = WriterSettings {
            retention: options.log_retention.max(1),
            max_batch: options.max_batch.max(1),
            max_object_bytes: options.max_object_bytes,
        };
        let writer_shared = shared.clone();
        let writer = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || writer::run(writer_shared, requests, settings))
            .map_err(|e| StoreError::Backend(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            shared,
            writes,
            writer: Some(writer),
            path,
        })
    }

    fn init_tables(db: &redb::Database) -> Result<(), StoreError> {
        let txn = db.begin_write().map_err(tables::backend)?;
        txn.open_table(tables::OBJECTS).map_err(tables::backend)?;
        txn.open_table(tables::LOG).map_err(tables::backend)?;
        txn.open_table(tables::LOG_KINDS).map_err(tables::backend)?;
        txn.open_table(tables::COUNTERS).map_err(tables::backend)?;
        txn.open_table(labels::LABELS).map_err(tables::backend)?;
        txn.commit().map_err(tables::backend)?;
        upgrade::frame_records(db)?;
        labels::build_if_missing(db)
    }

    /// Stops the writer after the writes already sent, so the file can be opened again.
    pub fn close(self) {
        drop(self);
    }

    fn stop_writer(&mut self) {
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.writes, closed));
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }

    async fn write(&self, op: Op) -> Result<Vec<Written>, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.writes
            .send(WriteRequest { op, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&redb::Database) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || read(&shared.db))
            .await
            .map_err(|e| StoreError::Backend(format!("store read task failed: {e}")))?
    }
}

/// Opens the redb file (see [`crate::private::open_redb`]).
fn open_db(path: &Path, cache_bytes: usize) -> Result<redb::Database, StoreError> {
    crate::private::open_redb(path, cache_bytes)
        .map_err(|reason| StoreError::Backend(format!("cannot open {}: {reason}", path.display())))
}

/// Dropping the store (as `serve` does when it stops) finishes the writes sent and lets redb
/// close the file cleanly once the last watch is gone, so the next start needs no repair.
impl Drop for EmbeddedStore {
    fn drop(&mut self) {
        self.stop_writer();
    }
}

#[async_trait]
impl Store for EmbeddedStore {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        let key = ObjectKey::new(kind, name);
        self.read(move |db| tables::get_object(db, &key)).await
    }

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        let (kind, selector) = (kind.to_owned(), selector.clone());
        let (items, revision) = self
            .read(move |db| list::list_kind(db, &kind, &selector))
            .await?;
        Ok(Listing { items, revision })
    }

    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let states = self.write(Op::Apply(requests)).await?;
        states.into_iter().map(Applied::try_from).collect()
    }

    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        self.write(Op::Commit(writes)).await
    }

    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError> {
        let latest = self.shared.latest.load(Ordering::SeqCst);
        if from > latest {
            return Err(StoreError::Future {
                requested: from,
                latest,
            });
        }
        let oldest = self.shared.oldest.load(Ordering::SeqCst);
        if from < oldest {
            return Err(StoreError::Compacted {
                requested: from,
                oldest,
            });
        }
        Ok(watch::start(
            self.shared.clone(),
            kind.map(str::to_owned),
            from,
        ))
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self.shared.latest.load(Ordering::SeqCst))
    }
}
