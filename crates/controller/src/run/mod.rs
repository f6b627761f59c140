//! Stage 3, a worker's run of one object: lock it, decide the one callback, call the
//! reactor with its writes held (pending) until the run ends; finalizers around deletes.

pub(crate) mod decide;
pub(crate) mod finalizers;
pub(crate) mod locks;
pub(crate) mod pending;
pub(crate) mod runner;
pub(crate) mod worker;
