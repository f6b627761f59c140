//! Components from OCI registries and the signatures checked before they load.
//!
//! - [`reference`](mod@reference): `oci://HOST[:PORT]/REPO:TAG` or `…@sha256:HEX`.
//! - [`access`]: how a registry is reached (HTTPS with a CA, or plain HTTP; basic auth).
//! - [`artifact`]: the CNCF Wasm OCI layout and the signature artifact beside it.
//! - [`pull`] and [`push`]: the registry calls, each bounded in time and size.
//! - [`cache`]: pulled components kept by digest under `<data>/supply/`.
//! - [`signature`] and [`policy`]: minisign signatures and the `trust` section's check.
//! - [`follow`]: what `serve` runs: components named by `source` in the config, pulled,
//!   kept, followed by tag and handed to the runtime as a changed folder file would be.
//! - [`agreement`]: the digest a tag names, recorded in the store so replicas serve one.

pub mod access;
pub mod agreement;
pub mod artifact;
pub mod cache;
pub mod follow;
pub mod policy;
pub mod pull;
pub mod push;
pub mod reference;
pub mod signature;

pub use access::Access;
pub use policy::TrustPolicy;
pub use reference::ComponentRef;
