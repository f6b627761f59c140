//! The embedded store: redb in the data folder, one group-committing writer, log-fed watches.

mod acked;
mod check;
mod finding;
mod health;
mod labels;
mod list;
mod live;
mod scrub;
mod snapshots;
mod state;
use state::StoreState;
mod record;
mod tables;
mod upgrade;
mod verify;
mod watch;
mod writer;

pub use check::{Area, Finding};
pub use verify::{Report, verify};

use crate::{
    Applied, Chunks, Listing, Page, PageQuery, Store, StoreError, StoreHealth, WatchStream, Write,
    Written,
};
use async_trait::async_trait;
use futures::stream::{self, StreamExt};
use health::{BY_READ, BY_START, Health};
use reactor_core::object::{ApplyRequest, Object, ObjectKey, Revision, Selector};
use redb::{ReadTransaction, ReadableDatabase};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};
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
    /// When every record is checked before the store serves.
    pub start_check: StartCheck,
    /// Records a second the background scrub checks; 0: no scrub.
    pub scrub_rate: u32,
}

/// When the store checks every record before it serves (see `embedded::check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartCheck {
    /// After an unclean shutdown (redb had to recover the file).
    #[default]
    Unclean,
    /// At every start.
    Always,
    /// Never (the scrub still checks the records in the background).
    Never,
}

impl std::str::FromStr for StartCheck {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "unclean" => Ok(Self::Unclean),
            "always" => Ok(Self::Always),
            "never" => Ok(Self::Never),
            _ => Err(format!("{text:?} is not one of unclean, always, never")),
        }
    }
}

/// The default of [`EmbeddedStoreOptions::scrub_rate`]: a pass over 100k objects and as many
/// log entries in a little over three minutes, for about 1% of one core.
pub const DEFAULT_SCRUB_RATE: u32 = 1000;

impl Default for EmbeddedStoreOptions {
    fn default() -> Self {
        Self {
            log_retention: 100_000,
            bookmark_interval: Duration::from_secs(10),
            max_batch: 1024,
            cache_bytes: 64 << 20,
            max_object_bytes: crate::DEFAULT_MAX_OBJECT_BYTES,
            start_check: StartCheck::default(),
            scrub_rate: DEFAULT_SCRUB_RATE,
        }
    }
}

/// A [`Store`] kept in one redb file.
pub struct EmbeddedStore {
    shared: Arc<StoreState>,
    writes: mpsc::Sender<WriteRequest>,
    writer: Option<std::thread::JoinHandle<()>>,
    scrub: Option<scrub::Scrub>,
    path: PathBuf,
}

/// What redb did when it opened the file: recovered it after an unclean shutdown, and whether
/// the last commit's pages failed their checksums then (redb rolls back to the commit before).
#[derive(Debug, Clone, Default)]
struct Recovery(Arc<AtomicU8>);

impl Recovery {
    const REPAIRED: u8 = 1;
    const ROLLED_BACK: u8 = 2;

    /// Watches the repair of `builder`'s opens.
    fn watch(&self, builder: &mut redb::Builder) {
        let flags = self.0.clone();
        builder.set_repair_callback(move |session| {
            flags.fetch_or(Self::REPAIRED, Ordering::SeqCst);
            // redb reports progress 0.3 only when the newest commit failed its page checksums
            // and it falls back to the commit before (`Database::do_repair`).
            if (0.25..0.35).contains(&session.progress()) {
                flags.fetch_or(Self::ROLLED_BACK, Ordering::SeqCst);
            }
        });
    }

    fn repaired(&self) -> bool {
        self.0.load(Ordering::SeqCst) & Self::REPAIRED != 0
    }

    fn rolled_back(&self) -> bool {
        self.0.load(Ordering::SeqCst) & Self::ROLLED_BACK != 0
    }
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
        reactor_core::private::create_dir(dir).map_err(|e| {
            StoreError::Backend(format!("cannot create data folder {}: {e}", dir.display()))
        })?;
        let path = dir.join("store.redb");
        let recovery = Recovery::default();
        let db = open_db(&path, options.cache_bytes, &recovery)?;
        let mark = dir.join(acked::FILE_NAME);
        Self::start(db, path, options, &recovery, Some(&mark))
    }

    /// A store in memory only (redb's in-memory backend): the same code as on disk, nothing
    /// written to a file, gone when dropped. For `reactor-host test`.
    pub fn in_memory(options: EmbeddedStoreOptions) -> Result<Self, StoreError> {
        let db = redb::Builder::new()
            .set_cache_size(options.cache_bytes)
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| StoreError::Backend(format!("cannot make an in-memory store: {e}")))?;
        let options = EmbeddedStoreOptions {
            start_check: StartCheck::Never,
            scrub_rate: 0,
            ..options
        };
        Self::start(
            db,
            PathBuf::from("<memory>"),
            options,
            &Recovery::default(),
            None,
        )
    }

    /// Prepares the tables of `db`, checks its records if `options` say so, and starts its
    /// writer and its scrub; `mark` is the file of its acknowledged mark (none in memory).
    fn start(
        db: redb::Database,
        path: PathBuf,
        options: EmbeddedStoreOptions,
        recovery: &Recovery,
        mark: Option<&Path>,
    ) -> Result<Self, StoreError> {
        Self::init_tables(&db)?;
        let health = Health::default();
        let (latest, oldest) = tables::read_counters(&db)?;
        let ends = Ends {
            latest,
            acked: mark.and_then(acked::read),
            mark,
        };
        start_check(&db, &health, options.start_check, recovery, &ends);
        let acked = mark
            .map(|mark| acked::Acked::open(mark, latest))
            .transpose()?;
        let (events, _) = broadcast::channel(live::LIVE_BATCHES);
        let shared = Arc::new(StoreState {
            snapshots: Default::default(),
            db,
            latest: AtomicU64::new(latest),
            oldest: AtomicU64::new(oldest),
            events,
            bookmark_interval: options.bookmark_interval,
            health,
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
            .spawn(move || writer::run(writer_shared, requests, settings, acked))
            .map_err(|e| StoreError::Backend(format!("cannot start the writer thread: {e}")))?;
        let scrub = scrub::start(shared.clone(), options.scrub_rate)?;
        Ok(Self {
            shared,
            writes,
            writer: Some(writer),
            scrub,
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
        drop(self.scrub.take());
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

    /// Runs `read` on a blocking thread: a panic inside redb is a corruption error naming
    /// `what`, and any corruption met marks the store damaged (see [`Health::guard`]).
    async fn read<T: Send + 'static>(
        &self,
        what: String,
        read: impl FnOnce(&redb::Database) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || {
            shared
                .health
                .guard(Area::Objects, BY_READ, &|| what.clone(), || {
                    read(&shared.db)
                })
        })
        .await
        .map_err(|e| StoreError::Backend(format!("store read task failed: {e}")))?
    }

    /// Refuses a list of `kind` once the store knows itself damaged there: a corrupt record
    /// or page could hide objects the list would miss.
    fn listable(&self, kind: &str) -> Result<(), StoreError> {
        let health = &self.shared.health;
        if health.lists_damaged(kind) {
            return Err(health.unknown(format!("which objects of kind {kind} exist")));
        }
        Ok(())
    }
}

/// Opens the redb file (see [`crate::redb_file::open_redb`]), telling `recovery` what redb did.
fn open_db(
    path: &Path,
    cache_bytes: usize,
    recovery: &Recovery,
) -> Result<redb::Database, StoreError> {
    let mut builder = redb::Builder::new();
    builder.set_cache_size(cache_bytes);
    recovery.watch(&mut builder);
    crate::redb_file::open_redb_with(path, &builder)
        .map_err(|reason| StoreError::Backend(format!("cannot open {}: {reason}", path.display())))
}

/// Where the file ends and what was acknowledged before it was opened.
struct Ends<'a> {
    /// The newest revision in the file.
    latest: Revision,
    /// The acknowledged mark, if the store has one (see [`acked`]).
    acked: Option<Revision>,
    mark: Option<&'a Path>,
}

/// The start check: every record of `db` checked before the store serves, as `when` says
/// (after an unclean shutdown by default), and what redb's own recovery found, told apart by
/// the acknowledged mark: a rollback of the commit no writer was told of is the normal end of
/// a crash mid-commit; a file that ends before the mark has lost acknowledged changes.
fn start_check(
    db: &redb::Database,
    health: &Health,
    when: StartCheck,
    recovery: &Recovery,
    ends: &Ends,
) {
    let rolled_back = recovery.rolled_back();
    let recovering = "recovering from an unclean shutdown, redb found the last commit's pages \
                      damaged and rolled the file back to the commit before";
    match ends.acked {
        Some(acked) if acked > ends.latest => {
            let how = if rolled_back {
                format!("{recovering}, which")
            } else {
                "the file".to_owned()
            };
            let mark = ends
                .mark
                .map(|m| m.display().to_string())
                .unwrap_or_default();
            health.found(
                &Finding::new(
                    Area::File,
                    "the store file",
                    format!(
                        "{how} ends at revision {} but revision {acked} was acknowledged to \
                         its writer: the changes of {} acknowledged revision(s) are lost (if \
                         this file was put back from a copy on purpose, remove {mark} to \
                         serve it as it is)",
                        ends.latest,
                        acked - ends.latest,
                    ),
                ),
                BY_START,
            );
        }
        Some(_) if rolled_back => tracing::warn!(
            revision = ends.latest,
            "{recovering}: that commit was in flight, no writer was told it succeeded, and \
             every acknowledged revision is in the file"
        ),
        None if rolled_back => health.found(
            &Finding::new(
                Area::File,
                "the store file",
                format!(
                    "{recovering}: that commit's changes are lost, and the store has no \
                     acknowledged mark to tell whether a writer was told they succeeded"
                ),
            ),
            BY_START,
        ),
        _ => {}
    }
    let run = match when {
        StartCheck::Always => true,
        StartCheck::Unclean => recovery.repaired(),
        StartCheck::Never => false,
    };
    if !run {
        let why = match when {
            StartCheck::Never => "off (serve --store-start-check never)",
            _ => "not needed: the last shutdown was clean",
        };
        health.note(BY_START, why.into());
        return;
    }
    let began = Instant::now();
    let checked = health.guard(Area::File, BY_START, &|| "the store file".into(), || {
        check::check_all(db)
    });
    let Ok((findings, (objects, log))) = checked else {
        health.note(BY_START, "could not read the records".into());
        return;
    };
    for finding in &findings {
        health.found(finding, BY_START);
    }
    let after = if rolled_back && ends.acked.is_some_and(|acked| acked <= ends.latest) {
        "after an unclean shutdown (the commit in flight rolled back, nothing acknowledged lost)"
    } else if recovery.repaired() {
        "after an unclean shutdown"
    } else {
        "at start"
    };
    let took = began.elapsed().as_millis();
    tracing::info!(
        objects,
        log_entries = log,
        problems = findings.len(),
        took_ms = took as u64,
        "checked every record of the store {after}"
    );
    health.note(
        BY_START,
        format!(
            "{after}: {objects} objects and {log} log entries checked in {took} ms, {} problem(s)",
            findings.len()
        ),
    );
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
        let what = key.to_string();
        let health = &self.shared.health;
        let found = self
            .read(what.clone(), move |db| tables::get_object(db, &key))
            .await?;
        // Once the objects are known damaged, "absent" may be a present object out of reach.
        if found.is_none() && health.objects_damaged(kind) {
            return Err(health.unknown(format!("whether {what} exists")));
        }
        Ok(found)
    }

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError> {
        let (kind, selector) = (kind.to_owned(), selector.clone());
        let what = format!("the objects of kind {kind}");
        let listed = kind.clone();
        let (items, revision) = self
            .read(what, move |db| list::list_kind(db, &kind, &selector))
            .await?;
        self.listable(&listed)?;
        Ok(Listing { items, revision })
    }

    async fn list_page(
        &self,
        kind: &str,
        selector: &Selector,
        query: PageQuery<'_>,
    ) -> Result<Page, StoreError> {
        let (kind, selector) = (kind.to_owned(), selector.clone());
        let (after, limit, at) = (query.after.map(str::to_owned), query.limit, query.at);
        let what = format!("the objects of kind {kind}");
        let listed = kind.clone();
        let shared = self.shared.clone();
        let page = self
            .read(what, move |db| {
                let latest = shared.latest.load(Ordering::SeqCst);
                let query = PageQuery {
                    after: after.as_deref(),
                    limit,
                    at,
                };
                list::list_page(db, &shared.snapshots, latest, &kind, &selector, query)
            })
            .await?;
        self.listable(&listed)?;
        Ok(page)
    }

    /// Every page is read from one read transaction the list holds until its last page (not
    /// one of the snapshots kept for paged lists, so no other list can end it).
    fn list_chunks(self: Arc<Self>, kind: &str, selector: &Selector, chunk: usize) -> Chunks {
        let (kind, selector, chunk) = (kind.to_owned(), selector.clone(), chunk.max(1));
        // The read transaction once the first page took it, and the name the next page
        // starts after (`None`: the list is done).
        let first: (Option<Arc<ReadTransaction>>, Option<Option<String>>) = (None, Some(None));
        stream::unfold(first, move |(txn, after)| {
            let (store, kind, selector) = (self.clone(), kind.clone(), selector.clone());
            async move {
                let after = after?;
                let what = format!("the objects of kind {kind}");
                let listed = kind.clone();
                let read = store
                    .read(what, move |db| {
                        let txn = match txn {
                            Some(txn) => txn,
                            None => Arc::new(db.begin_read().map_err(tables::storage)?),
                        };
                        let page =
                            list::read_page(&txn, &kind, &selector, after.as_deref(), Some(chunk))?;
                        Ok((txn, page))
                    })
                    .await
                    .and_then(|read| store.listable(&listed).map(|()| read));
                Some(match read {
                    Ok((txn, page)) => {
                        let next = page.next_after().map(|name| Some(name.to_owned()));
                        (Ok(page), (Some(txn), next))
                    }
                    Err(e) => (Err(e), (None, None)),
                })
            }
        })
        .boxed()
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

    fn health(&self) -> StoreHealth {
        self.shared.health.snapshot()
    }
}
