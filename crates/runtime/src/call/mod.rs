//! Stage 4, calls: a component's exports called on an instance of the version serving.
//!
//! A [`handle`] resolves the version in service at each call; its [`instance`] pool gives
//! a warm instance (or a fresh one, its store made in [`host_state`]) and runs the call within
//! the component's concurrency, deadline and memory cap ([`limits`]). What the guest imports
//! while it runs is in [`crate::host`].

pub(crate) mod handle;
pub(crate) mod host_state;
pub(crate) mod instance;
pub(crate) mod limits;
