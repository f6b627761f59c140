//! Registered kinds: the Kind objects of the store, read through on every apply (so a Kind
//! stored through one replica binds all of them at once) and compiled once per revision.

mod defaults;
mod schema;

pub use schema::Schema;

use parking_lot::Mutex;
use reactor_core::object::{KIND, KindSpec, Object, Revision, is_reserved};
use reactor_store::{Store, StoreError};
use std::collections::HashMap;
use std::sync::Arc;

/// Why a kind's registration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KindsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored Kind object that does not compile (stored by an older host, say).
    #[error("Kind {kind} as stored is invalid: {message}")]
    Stored { kind: String, message: String },
}

/// What a kind's Kind object says for admission: its schema, if it has one.
#[derive(Clone)]
pub struct Registered {
    pub schema: Option<Arc<Schema>>,
}

impl Registered {
    /// Reads and compiles a Kind object's spec; the error is the one line for its author
    /// (`spec.columns[0]: ...`, `spec.schema.type: ...`).
    pub fn from_spec(spec: &serde_json::Value) -> Result<Self, String> {
        let spec = KindSpec::parse(spec).map_err(|e| e.to_string())?;
        let schema = match &spec.schema {
            Some(source) => Some(Arc::new(Schema::compile(source)?)),
            None => None,
        };
        Ok(Self { schema })
    }
}

/// The host's own kinds, which take no Kind object and never warn.
pub fn is_host_kind(kind: &str) -> bool {
    is_reserved(kind) || kind == KIND
}

struct Compiled {
    uid: String,
    revision: Revision,
    registered: Registered,
}

/// The Kind objects as the store holds them now, each compiled once per revision.
pub struct Kinds {
    store: Arc<dyn Store>,
    compiled: Mutex<HashMap<String, Compiled>>,
}

impl Kinds {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            compiled: Mutex::default(),
        }
    }

    /// `kind`'s registration as stored now (`None`: no Kind object).
    pub async fn lookup(&self, kind: &str) -> Result<Option<Registered>, KindsError> {
        let Some(object) = self.store.get(KIND, kind).await? else {
            self.compiled.lock().remove(kind);
            return Ok(None);
        };
        if let Some(hit) = self.compiled.lock().get(kind)
            && hit.uid == object.meta.uid
            && hit.revision == object.meta.revision
        {
            return Ok(Some(hit.registered.clone()));
        }
        let registered = compile(&object)?;
        self.compiled.lock().insert(
            kind.to_owned(),
            Compiled {
                uid: object.meta.uid,
                revision: object.meta.revision,
                registered: registered.clone(),
            },
        );
        Ok(Some(registered))
    }

    /// The names of every Kind object stored.
    pub async fn names(&self) -> Result<Vec<String>, KindsError> {
        let listing = self.store.list(KIND, &Default::default()).await?;
        Ok(listing.items.into_iter().map(|o| o.name).collect())
    }
}

fn compile(object: &Object) -> Result<Registered, KindsError> {
    Registered::from_spec(&object.spec).map_err(|message| KindsError::Stored {
        kind: object.name.clone(),
        message,
    })
}
