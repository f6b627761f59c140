//! The host's records about components kept in the store (one object per component: a
//! rollback, an approval), written by one server and followed into every server's runtime,
//! so that they survive a restart and reach the other replicas.

use async_trait::async_trait;
use reactor_core::object::Object;
use reactor_runtime::Runtime;
use reactor_store::{EventType, Follower, Listing, Store, StoreError, WatchEvent};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// One kind of record: how an object reads, and how the runtime takes what changed.
#[async_trait]
pub trait RecordKind: Send + Sync + 'static {
    /// What a record holds for its component.
    type Value: Send + 'static;
    /// The host's own kind the records are objects of.
    const KIND: &'static str;
    /// How the log names them (`rollback records`).
    const WHAT: &'static str;
    /// The component and value `object` holds, or why it holds none.
    fn parse(object: &Object) -> Result<(String, Self::Value), String>;
    /// Every record as listed: the runtime's become these.
    async fn all(runtime: &Runtime, records: BTreeMap<String, Self::Value>);
    /// `component`'s record was written.
    async fn set(runtime: &Runtime, component: String, value: Self::Value);
    /// `component`'s record was removed.
    async fn removed(runtime: &Runtime, component: String);
}

/// What the follower hands the task that applies it to the runtime, in store order.
enum Change<V> {
    All(BTreeMap<String, V>),
    Set(String, V),
    Removed(String),
}

/// The records of kind `R` followed into a runtime, as long as this is held.
pub struct Followed<R: RecordKind> {
    changes: UnboundedSender<Change<R::Value>>,
    kind: PhantomData<R>,
}

impl<R: RecordKind> Followed<R> {
    /// Seeds `runtime` with every record in `store` (so call it before the components are
    /// loaded), then follows them: one written or removed by another server applies here too.
    /// A store that cannot list them now because it is damaged does not keep the server
    /// from starting: the follow lists them again until it can.
    pub async fn follow(store: Arc<dyn Store>, runtime: Runtime) -> Result<Arc<Self>, StoreError> {
        match store.list(R::KIND, &Default::default()).await {
            Ok(listing) => R::all(&runtime, parse_all::<R>(&listing.items)).await,
            Err(error @ (StoreError::Corrupt { .. } | StoreError::Damaged { .. })) => {
                tracing::error!(%error, "cannot read the {} at start; following them until they can be read", R::WHAT)
            }
            Err(error) => return Err(error),
        }
        let (changes, mut pending) = unbounded_channel();
        tokio::spawn(async move {
            while let Some(change) = pending.recv().await {
                match change {
                    Change::All(records) => R::all(&runtime, records).await,
                    Change::Set(component, value) => R::set(&runtime, component, value).await,
                    Change::Removed(component) => R::removed(&runtime, component).await,
                }
            }
        });
        let followed = Arc::new(Followed {
            changes,
            kind: PhantomData,
        });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&followed),
            store,
            R::KIND,
            R::WHAT,
        ));
        Ok(followed)
    }
}

/// The records of a listing, by component; bad ones are logged and left out.
fn parse_all<R: RecordKind>(items: &[Object]) -> BTreeMap<String, R::Value> {
    items
        .iter()
        .filter_map(|object| match R::parse(object) {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                tracing::warn!("ignored: {e}");
                None
            }
        })
        .collect()
}

impl<R: RecordKind> Follower for Followed<R> {
    fn listed(&self, listing: Listing) {
        let _ = self
            .changes
            .send(Change::All(parse_all::<R>(&listing.items)));
    }

    fn changed(&self, event: WatchEvent) {
        let Some(object) = &event.object else { return };
        let (component, value) = match R::parse(object) {
            Ok(parsed) => parsed,
            Err(e) => {
                tracing::warn!("ignored: {e}");
                return;
            }
        };
        let change = match event.event_type {
            EventType::Created | EventType::Updated => Change::Set(component, value),
            EventType::Deleted => Change::Removed(component),
            EventType::Bookmark => return,
        };
        let _ = self.changes.send(change);
    }
}
