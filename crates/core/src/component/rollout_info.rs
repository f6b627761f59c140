//! What `components` shows of a rollout of a component's new version, how it names a
//! version, and a version rolled back.

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

/// A version of a component rolled back: it does not serve again until the rejection is
/// cleared; a different file serves meanwhile, else the version it was rolled back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// sha256 of the version rolled back.
    pub sha256: String,
    /// Why it was rolled back.
    pub reason: String,
    /// sha256 of the version it was rolled back to, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

impl Rejection {
    /// As `components` shows it: `<version>: <reason>`.
    pub fn cell(&self) -> String {
        format!("{}: {}", version_of(&self.sha256), self.reason)
    }
}
