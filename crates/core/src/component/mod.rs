//! What the API tells of a component: its world, what it said of itself, its state, its
//! rollout.

pub mod described;
pub mod info;
pub mod permissions;
pub mod record;
pub mod rollout_info;
pub mod shadow;
pub mod usage;
pub mod world;

pub use described::{Described, DescriptorDescription, ReactorDescription, Watch};
pub use info::{ComponentInfo, ComponentState};
pub use permissions::{Approval, Permissions, Waiting};
pub use record::{is_sha256, record_name};
pub use rollout_info::{Rejection, RolloutInfo, RolloutPhase, version_of};
pub use shadow::{SHADOW_DIFFS_KEPT, ShadowDiff, ShadowInfo, ShadowOutcome};
pub use usage::Usage;
pub use world::World;
