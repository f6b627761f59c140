//! Stage 3, serving: which version of each component serves, and how a new one earns it.
//!
//! Every component name has a slot ([`slots`]) holding the version in service
//! ([`serving`]) and the one it replaced. A new version is swapped in at once, or first held:
//! as a [`shadow`] whose writes are compared with the serving version's ([`shadow_tally`]),
//! or for an admin's [`approval`] of a wider declaration. A version rolled back
//! ([`rollback`], [`rollout_info`]) never serves again until cleared.

pub(crate) mod approval;
pub(crate) mod rollback;
pub(crate) mod rollout_info;
pub(crate) mod serving;
pub(crate) mod shadow;
pub(crate) mod shadow_tally;
pub(crate) mod slots;
