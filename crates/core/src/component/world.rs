//! The two worlds of the WIT package a component can target.

use serde::{Deserialize, Serialize};

/// The world a component targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum World {
    /// Reactor logic run by `serve`.
    Controller,
    /// A KV descriptor run by `agent`.
    Descriptor,
}

impl std::fmt::Display for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            World::Controller => "controller",
            World::Descriptor => "descriptor",
        })
    }
}
