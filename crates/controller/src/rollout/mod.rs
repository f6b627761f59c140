//! Beside the stages, a new version's way in: the rollout's state and steps, the shadow
//! beside the serving version, approvals of wider declarations, rollbacks and their records.

pub(crate) mod approvals;
pub(crate) mod records;
pub(crate) mod rollbacks;
pub(crate) mod runtime_sink;
pub(crate) mod shadow;
pub(crate) mod shadow_runs;
pub(crate) mod state;
pub(crate) mod steps;
