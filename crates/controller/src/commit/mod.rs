//! Stage 4, what a run's result writes: its held writes and `status.reconcile` in one
//! transaction (or the failure), the failure's text, and owned children collected.

pub(crate) mod collector;
pub(crate) mod failure_text;
pub(crate) mod outcome;
pub mod status;
