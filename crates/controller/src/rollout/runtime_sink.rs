//! A rollout's progress and rollbacks, handed to the runtime: `components` shows the one; the
//! other is recorded in the store (so no restart and no other replica serves the version
//! again) and the previous version serves again.

use crate::rollout::rollbacks::record_rollback;
use crate::rollout::state::RolloutSink;
use reactor_runtime::{RolloutInfo, Runtime, version_of};
use reactor_store::Store;
use std::sync::Arc;

/// The rollout sink of component `name` of `runtime`, recording rollbacks in `store`.
pub struct RuntimeSink {
    pub runtime: Runtime,
    pub name: String,
    pub store: Arc<dyn Store>,
}

impl RolloutSink for RuntimeSink {
    fn progress(&self, info: RolloutInfo) {
        self.runtime.set_rollout(&self.name, Some(info));
    }

    fn roll_back(&self, version: &str, reason: String) {
        let (runtime, name, store) = (self.runtime.clone(), self.name.clone(), self.store.clone());
        let version = version.to_owned();
        tokio::spawn(async move {
            let rejection = match runtime.rejection(&name, &version, &reason) {
                Ok(rejection) => rejection,
                // Rolled back already, by another replica's record.
                Err(_)
                    if runtime
                        .rejections()
                        .get(&name)
                        .is_some_and(|r| version_of(&r.sha256) == version) =>
                {
                    return;
                }
                Err(e) => {
                    tracing::warn!(component = %name, error = %e, "rollback failed");
                    return;
                }
            };
            // Recorded first, so that a crash right after the rollback cannot forget it; a
            // store that refuses only costs the record, the rollback is made all the same.
            if let Err(e) = record_rollback(store.as_ref(), &name, &rejection).await {
                tracing::warn!(component = %name, error = %e, "rollback not recorded: a restart would serve {version} again");
            }
            runtime.reject(&name, rejection).await;
        });
    }
}
