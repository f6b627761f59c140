//! The Kubernetes API's shape over the store, with no HTTP in it: how kinds are named as
//! resources, the discovery documents, objects in Kubernetes' shape and back, `metav1.Status`
//! errors, tables, patches, list and watch parameters and watch events. The server mounts
//! it (`crates/server/src/kube/`).

pub mod catalog;
pub mod continuation;
pub mod discovery;
pub mod events;
pub mod fields;
pub mod managed;
pub mod mapping;
pub mod naming;
pub mod openapi;
pub mod patch;
pub mod query;
pub mod status;
pub mod table;
pub mod validation;

pub use catalog::Catalog;
pub use naming::{DEFAULT_GROUP, Resource, plural};
pub use status::{About, KubeError};
