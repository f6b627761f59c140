//! A rollout's progress and a rollback's record.
//!
//! Types of reactor-core, where the API's clients read them.

pub use reactor_core::component::rollout_info::*;
