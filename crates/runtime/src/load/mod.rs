//! Stage 2, loading: from a file's bytes to a version ready to serve.
//!
//! The [`loader`] reads and hashes a file (see [`crate::files`]), asks the [`admission`] hook
//! under a trust policy, reads the [`declaration`] of permissions, keeps the wasm among the
//! [`versions`], and hands it to the [`compiler`]: compiled on the one [`engine`] through the
//! on-disk [`cache`], its world checked, linked (see [`crate::host::linker`]) and `describe()`d
//! ([`described`]). What it makes is swapped in by [`crate::serve`]. When the trust in force
//! changes, what is loaded is [`readmit`]ted.

pub(crate) mod admission;
pub(crate) mod cache;
pub(crate) mod compiler;
pub mod declaration;
pub(crate) mod described;
pub(crate) mod engine;
pub(crate) mod loader;
pub(crate) mod readmit;
pub(crate) mod trust_seen;
pub(crate) mod versions;
