//! A new version run as a shadow beside the serving one: how its would-be writes compared.

use serde::{Deserialize, Serialize};

/// The most differing objects a shadow keeps the diff of (the count goes on).
pub const SHADOW_DIFFS_KEPT: usize = 8;

/// A version held as a shadow: it runs on the serving version's events, commits nothing, and
/// is promoted once `needed` objects matched with none differing (or an admin approves it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowInfo {
    /// sha256 of the shadow version.
    pub sha256: String,
    /// Objects it must match on before it is promoted.
    pub needed: u64,
    /// Objects on which its writes matched the serving version's.
    pub matched: u64,
    /// Objects on which they differed.
    pub differed: u64,
    /// Whether it was dropped for differing (it is shown until another version comes).
    #[serde(default)]
    pub dropped: bool,
    /// The first differing objects, each with what differed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<ShadowDiff>,
}

impl ShadowInfo {
    /// The table cell: `shadow VERSION N/M matched, D differed` (`dropped` after it).
    pub fn cell(&self) -> String {
        format!(
            "shadow {}{} {}/{} matched, {} differed",
            super::version_of(&self.sha256),
            if self.dropped { " dropped" } else { "" },
            self.matched,
            self.needed,
            self.differed
        )
    }
}

/// How a shadow did on one object against the serving version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowOutcome {
    /// Its writes and result were the serving version's.
    Matched,
    /// They differed: each difference on one line.
    Differed(Vec<String>),
    /// Its callback failed (an error, a trap, its deadline): it is dropped at once.
    Failed(String),
}

/// What a shadow would have written differently on one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowDiff {
    /// The object reconciled (`Kind/name`).
    pub object: String,
    /// Each difference on one line: `Kind/name path: serving → shadow`.
    pub lines: Vec<String>,
}
