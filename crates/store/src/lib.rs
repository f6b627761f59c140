//! The desired-state store: objects with revisions, finalizers and a watchable change log.

mod cas;
pub mod chunks;
pub mod embedded;
mod error;
mod follow;
mod page;
mod plan;
mod record;
pub mod redb_file;
mod shards;
mod writes;

pub use cas::{CAS_ATTEMPTS, retry_on_conflict, update_status};
pub use chunks::Chunks;
pub use embedded::{EmbeddedStore, EmbeddedStoreOptions};
pub use error::{StoreError, StoreHealth};
pub use follow::{Follower, follow};
pub use page::{Page, PageQuery};
pub use plan::{Change, plan_apply};
pub use reactor_core::applied::{Applied, ApplyOutcome};
pub use reactor_core::listing::Listing;
pub use reactor_core::watch_event::{EventType, WatchEvent};
pub use record::write_record;
pub use shards::{Permit, Shards};
pub use writes::{Write, Written, plan_writes, targets};

/// The largest object a store accepts by default (spec, status and all, as JSON): etcd's own
/// default request limit.
pub const DEFAULT_MAX_OBJECT_BYTES: usize = 1536 << 10;

use async_trait::async_trait;
use futures::stream::BoxStream;
use reactor_core::object::{ApplyRequest, Object, Revision, Selector};
use serde_json::Value;
use std::sync::Arc;

/// A stream of watch events; it ends with an error if the store can no longer serve it.
pub type WatchStream = BoxStream<'static, Result<WatchEvent, StoreError>>;

impl TryFrom<Written> for Applied {
    type Error = StoreError;

    /// What an apply did to one object, from what its commit wrote.
    fn try_from(written: Written) -> Result<Self, StoreError> {
        let object = written
            .object
            .map(Arc::unwrap_or_clone)
            .ok_or_else(|| StoreError::Backend("an apply removed an object".into()))?;
        let outcome = match written.change {
            None => ApplyOutcome::Unchanged,
            Some(EventType::Created) => ApplyOutcome::Created,
            Some(_) => ApplyOutcome::Updated,
        };
        Ok(Applied { outcome, object })
    }
}

/// The state of the one object `write` touches, after it commits alone.
async fn single<S: Store + ?Sized>(store: &S, write: Write) -> Result<Option<Object>, StoreError> {
    let mut written = store.commit(vec![write]).await?;
    Ok(written
        .pop()
        .and_then(|w| w.object)
        .map(Arc::unwrap_or_clone))
}

/// A store of objects. Every change gets a new store-wide revision that is never reused.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    async fn get(&self, kind: &str, name: &str) -> Result<Option<Object>, StoreError>;

    async fn list(&self, kind: &str, selector: &Selector) -> Result<Listing, StoreError>;

    /// One page of the objects of `kind` that `selector` matches, in name order (see
    /// [`PageQuery`]). A backend that keeps snapshots reads a later page from the first's; this
    /// default lists everything at the latest state and keeps the page.
    async fn list_page(
        &self,
        kind: &str,
        selector: &Selector,
        query: PageQuery<'_>,
    ) -> Result<Page, StoreError> {
        Ok(Page::of(self.list(kind, selector).await?, &query))
    }

    /// The objects of `kind` that `selector` matches, in name order, as pages of at most
    /// `chunk` objects, every page at the first one's revision. At least one page comes; the
    /// last has `more` false. This default hands out one whole [`Store::list`]; a backend that
    /// reads a later page at an earlier revision reads each page as it is asked for
    /// ([`chunks::through_pages`]), so that a list is never whole in memory.
    fn list_chunks(self: Arc<Self>, kind: &str, selector: &Selector, chunk: usize) -> Chunks {
        chunks::of_whole_list(self, kind, selector, chunk)
    }

    /// Creates or updates every object, all or nothing. Unchanged objects keep their revision.
    async fn apply(&self, requests: Vec<ApplyRequest>) -> Result<Vec<Applied>, StoreError>;

    /// Replaces the status of an object; spec, labels and generation are left as they are.
    async fn set_status(
        &self,
        kind: &str,
        name: &str,
        status: Value,
        expected_revision: Option<Revision>,
    ) -> Result<Object, StoreError> {
        let write = Write::SetStatus {
            kind: kind.to_owned(),
            name: name.to_owned(),
            status,
            expected: expected_revision,
        };
        single(self, write)
            .await?
            .ok_or_else(|| StoreError::Backend("a status write removed the object".into()))
    }

    /// Replaces the finalizers; a deleting object whose last finalizer goes is removed (`None`).
    async fn set_finalizers(
        &self,
        kind: &str,
        name: &str,
        finalizers: Vec<String>,
        expected_revision: Option<Revision>,
    ) -> Result<Option<Object>, StoreError> {
        let write = Write::SetFinalizers {
            kind: kind.to_owned(),
            name: name.to_owned(),
            finalizers,
            expected: expected_revision,
        };
        single(self, write).await
    }

    /// Removes an object, or marks it deleting while finalizers remain (then returns it).
    async fn delete(
        &self,
        kind: &str,
        name: &str,
        expected_revision: Option<Revision>,
    ) -> Result<Option<Object>, StoreError> {
        let write = Write::Delete {
            kind: kind.to_owned(),
            name: name.to_owned(),
            expected: expected_revision,
        };
        single(self, write).await
    }

    /// Commits `writes` all or nothing, each decided on the state the ones before it left
    /// (see [`Write`]): one [`Written`] per object touched, in the order first touched.
    async fn commit(&self, writes: Vec<Write>) -> Result<Vec<Written>, StoreError>;

    /// Every change after revision `from`, of one kind or all, in order, exactly once, then
    /// bookmarks while idle. Fails with [`StoreError::Compacted`] if `from` is too old.
    async fn watch(&self, kind: Option<&str>, from: Revision) -> Result<WatchStream, StoreError>;

    /// The revision of the latest committed change.
    async fn revision(&self) -> Result<Revision, StoreError>;

    /// What the store found wrong with itself so far (`/healthz` shows it).
    fn health(&self) -> StoreHealth {
        StoreHealth::default()
    }
}
