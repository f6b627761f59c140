//! The host imports as the SDK calls them outside wasm32: the same signatures as the
//! generated bindings, answered by the fake installed on this thread.

#[cfg(feature = "controller")]
pub(crate) mod store {
    use crate::Object;
    use crate::store::StoreError;
    use crate::testing::current::with;

    pub fn get(kind: &str, name: &str) -> Result<Option<Object>, StoreError> {
        with("store::get", |s| s.store_get(kind, name))
    }

    pub fn list(kind: &str, selector: &[(String, String)]) -> Result<Vec<Object>, StoreError> {
        with("store::list", |s| s.store_list(kind, selector))
    }

    pub fn apply(obj: &Object) -> Result<Object, StoreError> {
        with("store::apply", |s| s.store_apply(obj))
    }

    pub fn delete(kind: &str, name: &str) -> Result<bool, StoreError> {
        with("store::delete", |s| s.store_delete(kind, name))
    }

    pub fn set_status(status: &str) -> Result<(), StoreError> {
        with("store::set_status", |s| s.set_status(status))
    }
}

#[cfg(feature = "controller")]
pub(crate) mod nimbus {
    use crate::nimbus::NimbusError;
    use crate::testing::current::with;
    use crate::{ItemStatus, Target};

    pub fn publish(key: &str, value: &str, to: &Target) -> Result<(), NimbusError> {
        with("nimbus::publish", |s| s.publish(key, value, to))
    }

    pub fn unpublish(key: &str) -> Result<(), NimbusError> {
        with("nimbus::unpublish", |s| s.unpublish(key))
    }

    pub fn published(prefix: &str) -> Result<Vec<String>, NimbusError> {
        with("nimbus::published", |s| s.published(prefix))
    }

    pub fn statuses(prefix: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        with("nimbus::statuses", |s| s.statuses(prefix, None))
    }

    pub fn agent_statuses(prefix: &str, agent: &str) -> Result<Vec<ItemStatus>, NimbusError> {
        with("nimbus::agent_statuses", |s| {
            s.statuses(prefix, Some(agent))
        })
    }
}

pub(crate) mod log {
    use crate::log::Level;
    use crate::testing::LogLine;
    use crate::testing::current::installed;

    /// Captured by the installed fake; with none (a helper called directly in a test) the
    /// line goes to stderr, where the test harness shows it for a failed test.
    pub fn log(level: Level, message: &str) {
        let line = LogLine {
            level,
            message: message.to_owned(),
        };
        match installed() {
            Some(state) => state.borrow_mut().logs.push(line),
            None => eprintln!("{line}"),
        }
    }
}

pub(crate) mod config {
    use crate::testing::current::with;

    pub fn get() -> Option<String> {
        with("config::get", |s| s.config.clone())
    }

    pub fn revision() -> u64 {
        with("config::revision", |s| s.config_revision)
    }
}
