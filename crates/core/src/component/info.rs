//! One component as `reactor-host components` and `GET /v1/components` show it.

use super::described::Described;
use super::permissions::{Permissions, Waiting};
use super::rollout_info::RolloutInfo;
use super::shadow::ShadowInfo;
use super::usage::Usage;
use super::world::World;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Whether the component's last load succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentState {
    /// The file in the folder is the version serving calls.
    Ready,
    /// The last load failed (see `error`); an older version may still be serving.
    Failed,
    /// Found and being loaded for the first time: nothing serves it yet.
    Loading,
    /// A file in the folder that is not loaded, because of its name (see `error`).
    Ignored,
}

/// One component as `reactor-host components` and `GET /v1/components` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentInfo {
    /// Name: the file name without `.wasm`.
    pub name: String,
    /// The world expected of it (that of the folder it is in).
    pub world: World,
    /// The file it is loaded from.
    pub file: PathBuf,
    /// sha256 of the version serving calls, if one is.
    pub sha256: Option<String>,
    /// Revision of its config entry in force (0 without one).
    pub revision: u64,
    /// Whether the last load succeeded.
    pub state: ComponentState,
    /// Why the last load failed.
    pub error: Option<String>,
    /// Whether a version is serving calls (true also when a later load failed).
    pub serving: bool,
    /// When the serving version was loaded, RFC 3339.
    pub loaded_at: Option<String>,
    /// Calls made, all versions together.
    pub calls: u64,
    /// Calls that trapped, ran past their deadline or hit the memory cap.
    pub traps: u64,
    /// What the serving version said of itself.
    pub described: Option<Described>,
    /// The rollout of the last new version: how many watched objects it reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutInfo>,
    /// Why the file's version was rolled back (`<version>: <reason>`): it does not serve until
    /// another file arrives or the rollback is cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_back: Option<String>,
    /// Whether the serving version declares its permissions (`permissions`); an undeclared
    /// one keeps every power of a reactor.
    #[serde(default)]
    pub declared: bool,
    /// The serving version's declared permissions, when `declared`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A new version held because it declares more than the serving one: it loads once an
    /// admin runs `reactor-host component approve NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// sha256 of a new version being compiled (and then linked and described) now; the
    /// version serving, if any, serves meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiling: Option<String>,
    /// A new version run beside the serving one on the same events, committing nothing,
    /// until it is promoted or dropped (a component's `rollout: {shadow: ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowInfo>,
    /// What the serving version has cost since it loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}
