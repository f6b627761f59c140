//! Write reactor-host components in Rust: implement a trait, export it with one macro.
//!
//! A component targets one of the two worlds of the `reactor:host@0.2.1` WIT package:
//!
//! - `controller` (the default feature): implement [`Reactor`] and export it with
//!   [`export_reactor!`]. The host calls it when objects of the kinds it watches change.
//! - `descriptor` (`default-features = false, features = ["descriptor"]`): implement
//!   `Descriptor` and export it with `export_descriptor!`. An agent calls it to apply
//!   keys to its southbound.
//!
//! Every callback has a default, so a component implements only what it needs. Specs,
//! statuses, Nimbus values and the component's config are JSON documents that the SDK
//! reads and writes as serde types. [`info!`], [`warn!`] and friends write to the host's
//! `tracing` under the component's name.
//!
//! Unit-test the logic natively with `cargo test`: outside wasm32 the host imports are
//! answered by the in-process fake host of [`testing`].
//!
//! Build with `cargo build --target wasm32-wasip2 --release`; the `.wasm` in
//! `target/wasm32-wasip2/release/` is the component to drop into the host's components
//! folder.
//!
//! # Example: a controller
//!
//! ```no_run
//! use reactor_sdk::{Action, Error, Info, Object, Reactor, Target, export_reactor, nimbus, store};
//! use serde::{Deserialize, Serialize};
//! use std::collections::BTreeMap;
//!
//! #[derive(Deserialize)]
//! struct Rule { name: String, action: String }
//!
//! #[derive(Deserialize)]
//! struct PolicySpec { selector: BTreeMap<String, String>, rules: Vec<Rule> }
//!
//! #[derive(Serialize)]
//! #[serde(rename_all = "camelCase")]
//! struct PolicyStatus { rule_count: usize, reactor: &'static str }
//!
//! struct Policy;
//!
//! impl Reactor for Policy {
//!     fn describe() -> Info {
//!         Info::new("policy-rust", ["Policy"]).resync_every_ms(60_000).handles_delete()
//!     }
//!
//!     fn validate(obj: Object) -> Result<(), String> {
//!         let spec: PolicySpec = obj.spec().map_err(|e| e.to_string())?;
//!         if spec.rules.is_empty() {
//!             return Err("policy has no rules".into());
//!         }
//!         Ok(())
//!     }
//!
//!     fn on_create(obj: Object) -> Result<Action, Error> {
//!         let spec: PolicySpec = obj.spec()?;
//!         let prefix = format!("policy/{}/", obj.name);
//!         let to = Target::labels(&spec.selector);
//!         let mut keep = Vec::new();
//!         for rule in &spec.rules {
//!             let key = format!("{prefix}{}", rule.name);
//!             let value = serde_json::json!({"name": rule.name, "action": rule.action});
//!             nimbus::publish(&key, &value, &to)?;
//!             keep.push(key);
//!         }
//!         for key in nimbus::published(&prefix)? {
//!             if !keep.contains(&key) {
//!                 nimbus::unpublish(&key)?;
//!             }
//!         }
//!         reactor_sdk::info!("published {} rules of {}", keep.len(), obj.name);
//!         store::set_status(&PolicyStatus { rule_count: keep.len(), reactor: "policy-rust" })?;
//!         Ok(Action::Done)
//!     }
//!
//!     // on_update defaults to on_create(new): the reactor is level-triggered.
//!
//!     fn on_delete(obj: Object) -> Result<Action, Error> {
//!         for key in nimbus::published(&format!("policy/{}/", obj.name))? {
//!             nimbus::unpublish(&key)?;
//!         }
//!         Ok(Action::Done)
//!     }
//! }
//!
//! export_reactor!(Policy);
//! ```
//!
//! The example needs `serde` (with `derive`) and `serde_json` beside `reactor-sdk`, and a
//! `[lib] crate-type = ["cdylib"]` section in the guest's `Cargo.toml`.
//!
//! # Example: a descriptor
//!
//! With `reactor-sdk = { ..., default-features = false, features = ["descriptor"] }`; the
//! agent preopens the descriptor's own southbound folder as `/`.
//!
//! ```ignore
//! use reactor_sdk::{Descriptor, Info, export_descriptor};
//!
//! struct Rules;
//!
//! impl Descriptor for Rules {
//!     fn describe() -> Info {
//!         Info::new("policy-rule", "policy/")
//!     }
//!
//!     fn create(key: String, value: String) -> Result<Option<String>, String> {
//!         let path = format!("/{}.json", key.trim_start_matches("policy/"));
//!         std::fs::write(&path, value).map_err(|e| format!("write {path}: {e}"))?;
//!         Ok(Some(path))
//!     }
//!
//!     fn delete(_key: String, _value: String, metadata: Option<String>) -> Result<(), String> {
//!         let path = metadata.ok_or("no file recorded")?;
//!         std::fs::remove_file(&path).map_err(|e| format!("remove {path}: {e}"))
//!     }
//! }
//!
//! export_descriptor!(Rules);
//! ```

#[cfg(all(feature = "controller", feature = "descriptor"))]
compile_error!("reactor-sdk: enable exactly one of the features `controller` and `descriptor`");

#[cfg(not(any(feature = "controller", feature = "descriptor")))]
compile_error!("reactor-sdk: enable one of the features `controller` and `descriptor`");

// The generated bindings name this crate by its path, as a guest sees it.
extern crate self as reactor_sdk;

pub mod bindings;
pub mod conditions;
pub mod config;
mod json;
pub mod log;

#[cfg(feature = "controller")]
mod controller;
#[cfg(feature = "controller")]
pub mod nimbus;
#[cfg(feature = "controller")]
pub mod store;

#[cfg(feature = "descriptor")]
mod descriptor;

#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

#[cfg(feature = "controller")]
pub use controller::{
    Action, Error, Info, ItemState, ItemStatus, Meta, Object, Owner, Reactor, Reference, Selection,
    Target, Watch,
};
#[cfg(feature = "descriptor")]
pub use descriptor::{Dependency, DependencyTarget, Descriptor, Info, Kv, Origin, Retrieved};
pub use json::JsonError;

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

/// Items the export macros name; not part of the API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "controller")]
    pub use crate::controller::Adapter;
    #[cfg(feature = "descriptor")]
    pub use crate::descriptor::Adapter as DescriptorAdapter;
}
