//! Whether an engine has work left, for running reconciles to quiescence (`reactor-host test`).

use crate::engine::Engine;
use reactor_core::object::ObjectKey;
use reactor_store::StoreError;
use std::time::Duration;

/// What an engine is doing at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Activity {
    /// A change of the store is not yet seen by every controller, or keys are queued or
    /// being reconciled.
    pub busy: bool,
    /// Objects backing off after failures, with their consecutive failures.
    pub retrying: Vec<(ObjectKey, u32)>,
    /// Objects due to run again later without a failure (a requeue, a lock retry), with
    /// how soon.
    pub later: Vec<(ObjectKey, Duration)>,
}

impl Activity {
    /// Nothing runs, nothing waits to run now, and every change has been seen.
    pub fn is_idle(&self) -> bool {
        !self.busy
    }
}

impl Engine {
    /// What the engine is doing now. The reflectors count as caught up once they reflect the
    /// store's latest revision (an idle watch learns it from bookmarks) and every subscriber
    /// took their events.
    pub async fn activity(&self) -> Result<Activity, StoreError> {
        let latest = self.context().store.revision().await?;
        let mut activity = Activity::default();
        for reflector in self.context().reflectors.live() {
            let behind = reflector.revision().is_none_or(|seen| seen < latest);
            if behind || reflector.unread() > 0 {
                activity.busy = true;
            }
        }
        self.each_controller(|controller| {
            let queue = controller.activity();
            activity.busy |= queue.busy > 0;
            for delayed in queue.delayed {
                if delayed.failures > 0 {
                    activity.retrying.push((delayed.key, delayed.failures));
                } else {
                    activity.later.push((delayed.key, delayed.due_in));
                }
            }
        });
        activity.retrying.sort();
        activity.later.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(activity)
    }

    /// Runs `key` now where it waits for a backoff or a requeue (time skipped forward for it);
    /// false if it waits nowhere.
    pub fn run_now(&self, key: &ObjectKey) -> bool {
        let mut hurried = false;
        self.each_controller(|controller| hurried |= controller.run_now(key));
        hurried
    }

    /// Drops the run of `key` due later (a backoff or a requeue), as if its time never came:
    /// it runs again when it, or something its reactor watches, changes.
    pub fn cancel_delayed(&self, key: &ObjectKey) -> bool {
        let mut cancelled = false;
        self.each_controller(|controller| cancelled |= controller.cancel_delayed(key));
        cancelled
    }
}
