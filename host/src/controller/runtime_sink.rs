//! A rollout's progress and rollbacks, handed to the runtime: `components` shows the one, the
//! other serves the previous version again.

use super::rollout::RolloutSink;
use crate::runtime::{RolloutInfo, Runtime};

/// The rollout sink of component `name` of `runtime`.
pub struct RuntimeSink {
    pub runtime: Runtime,
    pub name: String,
}

impl RolloutSink for RuntimeSink {
    fn progress(&self, info: RolloutInfo) {
        self.runtime.set_rollout(&self.name, Some(info));
    }

    fn roll_back(&self, version: &str, reason: String) {
        let (runtime, name, version) =
            (self.runtime.clone(), self.name.clone(), version.to_owned());
        tokio::spawn(async move {
            match runtime.rejection(&name, &version, &reason) {
                Ok(rejection) => runtime.reject(&name, rejection).await,
                Err(e) => tracing::warn!(component = %name, error = %e, "rollback failed"),
            }
        });
    }
}
