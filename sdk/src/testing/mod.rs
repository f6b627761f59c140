//! An in-process fake host for unit tests of reactor logic with `cargo test` (every target
//! but wasm32, where the real host answers the imports).
//!
//! Outside wasm32 the SDK's [`store`](crate::store), [`nimbus`](crate::nimbus),
//! [`log`](crate::log) and [`config`](crate::config) functions call the [`FakeHost`]
//! installed on the calling thread while one of its callback helpers runs, so parallel
//! tests never share state. The fake applies the host's rules to what a callback does:
//! children it applies are owned by its primary object, an object it did not create is
//! refused, item keys belong to one object, `set_status` changes the primary object, and a
//! callback that fails leaves none of its writes.
//!
//! ```
//! use reactor_sdk::testing::{FakeHost, object};
//! use reactor_sdk::{Action, Error, Info, Object, Reactor, Target, nimbus, store};
//! use serde_json::json;
//!
//! struct Hello;
//! impl Reactor for Hello {
//!     fn describe() -> Info {
//!         Info::new("hello", ["Greeting"])
//!     }
//!     fn on_create(obj: Object) -> Result<Action, Error> {
//!         nimbus::publish(&format!("hello/{}", obj.name), &json!({"hi": true}), &Target::all())?;
//!         store::set_status(&json!({"greeted": true}))?;
//!         Ok(Action::Done)
//!     }
//! }
//!
//! let mut host = FakeHost::new("hello");
//! assert_eq!(host.on_create::<Hello>(object("Greeting", "world", json!({}))), Ok(Action::Done));
//! assert_eq!(host.item("hello/world").map(|i| i.value), Some(json!({"hi": true})));
//! assert_eq!(host.status("Greeting", "world"), Some(json!({"greeted": true})));
//!
//! host.fail_next_store(reactor_sdk::store::StoreError::Unavailable("down".into()));
//! let retried = host.on_create::<Hello>(object("Greeting", "again", json!({})));
//! assert!(matches!(retried, Err(Error::Retry(_))));
//! assert!(host.item("hello/again").is_none()); // a failed callback leaves nothing
//! ```

#[cfg(feature = "controller")]
mod callbacks;
pub(crate) mod current;
mod host;
pub(crate) mod imports;
#[cfg(feature = "controller")]
mod items;
#[cfg(feature = "controller")]
mod objects;
mod state;
#[cfg(all(test, feature = "controller"))]
mod tests;

pub use host::FakeHost;

use crate::log::Level;

/// One line a component logged.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub level: Level,
    pub message: String,
}

impl std::fmt::Display for LogLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:?}] {}", self.level, self.message)
    }
}

/// A Nimbus item as a callback published it.
#[cfg(feature = "controller")]
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    /// The value, parsed.
    pub value: serde_json::Value,
    /// The agents it is for.
    pub to: crate::Target,
    /// The primary object of the callback that published it (and the component).
    pub owner: crate::Owner,
    /// Grows each time the value changes (what agents' reports name).
    pub revision: u64,
}

/// A new object to apply or hand to a callback: `kind`, `name`, `spec` (any JSON), no
/// labels (set `.labels`), no status, no meta.
#[cfg(feature = "controller")]
pub fn object(kind: &str, name: &str, spec: serde_json::Value) -> crate::Object {
    crate::Object {
        kind: kind.to_owned(),
        name: name.to_owned(),
        labels: Vec::new(),
        spec: spec.to_string(),
        status: None,
        meta: None,
    }
}
