//! What `components` shows of a rollout of a component's new version, and how it names a
//! version.

use serde::{Deserialize, Serialize};

/// How `components` shows a version: the first 12 hex digits of its sha256.
pub fn version_of(sha256: &str) -> String {
    sha256.chars().take(12).collect()
}

/// Where a rollout stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RolloutPhase {
    /// Only the canary fraction is being reconciled by the new version.
    Canary,
    /// Every watched object is being reconciled by the new version.
    Rolling,
    /// Every object was reconciled by it.
    Done,
    /// Given up: the canary did worse than the previous version, which serves again.
    RolledBack,
}

/// The rollout of one version: how many of the watched objects it has reconciled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutInfo {
    /// The version rolled out, as `components` shows it (12 hex digits of its sha256).
    pub version: String,
    pub phase: RolloutPhase,
    /// Objects reconciled by it so far.
    pub rolled: u64,
    /// Objects to reconcile.
    pub total: u64,
}

impl RolloutInfo {
    /// The table cell: `rolled N/M`, `canary N/M`, `rolled back`.
    pub fn cell(&self) -> String {
        let what = match self.phase {
            RolloutPhase::Canary => "canary",
            RolloutPhase::Rolling | RolloutPhase::Done => "rolled",
            RolloutPhase::RolledBack => "rolled back",
        };
        format!("{what} {}/{}", self.rolled, self.total)
    }
}
