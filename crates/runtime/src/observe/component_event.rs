//! What the runtime announces about a component: loaded, failed to load, detached.

use crate::load::described::Described;
use crate::world::World;
use serde::{Deserialize, Serialize};

/// Something that happened to a component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum ComponentEvent {
    /// A version was swapped in.
    Loaded {
        /// Component name.
        name: String,
        /// Its world.
        world: World,
        /// sha256 of the new version.
        sha256: String,
        /// What it said of itself.
        described: Described,
    },
    /// A load failed; any previous version keeps serving.
    Failed {
        /// Component name.
        name: String,
        /// Why.
        error: String,
    },
    /// A new version runs as a shadow beside the serving one (which serves on).
    Shadowing {
        /// Component name.
        name: String,
        /// sha256 of the shadow version.
        sha256: String,
    },
    /// The component was detached.
    Unloaded {
        /// Component name.
        name: String,
    },
}
