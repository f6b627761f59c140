//! A family of keys ([`Family`]: name, prefix, shape, dependencies, derived values) and the
//! descriptor that applies it as files ([`Files`]).

use crate::device::{Device, FAIL_DIR, Injected};
use crate::key::{Key, Parts};
use reactor_sdk::{Dependency, DependencyTarget, Descriptor, Info, Kv, Origin, Retrieved};
use serde_json::Value;
use std::marker::PhantomData;

/// Who owns the values of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The agent configures them (create, update, delete); retrieve reports them as
    /// from-northbound, so resync repairs and removes them.
    Agent,
    /// The southbound does (an administrator, another process): retrieve reports them as
    /// from-southbound (DISCOVERED) and create, update and delete refuse.
    Southbound,
}

/// What makes one descriptor: its keys and what its values need and derive. Everything
/// about files is done by [`Files`].
pub trait Family {
    /// Descriptor name, also the name of its southbound folder, e.g. `vpp-route`.
    const NAME: &'static str;
    /// Key prefix, e.g. `vpp/route/`.
    const PREFIX: &'static str;
    /// The form of a key, shown in errors, e.g. `vpp/route/<name>`.
    const FORM: &'static str;
    /// How many parts a key has after the prefix.
    const PARTS: Parts;
    /// Descriptors whose values are retrieved before this one's.
    const RETRIEVE_AFTER: &'static [&'static str] = &[];
    /// Who owns the values.
    const OWNER: Owner = Owner::Agent;

    /// Refuses a value (the key is already checked, the value is a JSON object); the
    /// message names the key.
    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        let _ = (key, value);
        Ok(())
    }

    /// What the value waits for.
    fn dependencies(key: &Key, value: &Value) -> Vec<Dependency> {
        let _ = (key, value);
        Vec::new()
    }

    /// Values derived from the value, as (key, value).
    fn derived_values(key: &Key, value: &Value) -> Vec<(String, Value)> {
        let _ = (key, value);
        Vec::new()
    }

    /// Whether changing `old` to `new` needs delete and re-create.
    fn update_with_recreate(key: &Key, old: &Value, new: &Value) -> bool {
        let _ = (key, old, new);
        false
    }
}

/// A dependency on one key.
pub fn on_key(label: &str, key: String) -> Dependency {
    Dependency {
        label: label.to_owned(),
        target: DependencyTarget::Key(key),
    }
}

/// A dependency on any key with a prefix (Ligato's `AnyOf`).
pub fn any_of(label: &str, prefix: String) -> Dependency {
    Dependency {
        label: label.to_owned(),
        target: DependencyTarget::AnyOf(prefix),
    }
}

/// The descriptor of family `F`: each value is the file `/<parts>.json` in the folder the
/// agent preopened as `/`. Export it with `reactor_sdk::export_descriptor!(Files<MyFamily>)`.
pub struct Files<F>(PhantomData<F>);

/// Errors that a retry cannot cure start with this; every other error is retriable.
pub const FATAL: &str = "fatal: ";

fn fatal(message: impl std::fmt::Display) -> String {
    format!("{FATAL}{message}")
}

impl<F: Family> Files<F> {
    fn key(key: &str) -> Result<Key, String> {
        Key::parse(key, F::PREFIX, F::PARTS, F::FORM)
    }

    fn value(key: &str, text: &str) -> Result<Value, String> {
        match serde_json::from_str::<Value>(text) {
            Ok(value) if value.is_object() => Ok(value),
            Ok(_) => Err(format!("{key}: value is not a JSON object")),
            Err(e) => Err(format!("{key}: value is not JSON: {e}")),
        }
    }

    fn owned_by_southbound(key: &str) -> String {
        format!(
            "{key}: {} values are owned by the southbound; the agent is notified of them and never configures them",
            F::NAME
        )
    }

    /// Create and update: one injected failure if any, else the file is (re)written.
    fn write(key: &str, text: &str, done: &str) -> Result<Option<String>, String> {
        if F::OWNER == Owner::Southbound {
            return Err(fatal(Self::owned_by_southbound(key)));
        }
        let parsed = Self::key(key).map_err(fatal)?;
        let value = Self::value(key, text).map_err(fatal)?;
        let file = parsed.file();
        let device = Device::root();
        let injected = device
            .take_failure(&file)
            .map_err(|e| fatal(format!("{key}: {e}")))?;
        let from = Device::shown(&format!("{FAIL_DIR}/{file}"));
        match injected {
            Some(Injected::Busy { left }) => {
                return Err(format!(
                    "busy: {key}: injected failure from {from}, {left} more to come"
                ));
            }
            Some(Injected::Fatal { left }) => {
                return Err(fatal(format!(
                    "{key}: injected failure from {from}, {left} more to come"
                )));
            }
            None => {}
        }
        let mut pretty =
            serde_json::to_string_pretty(&value).map_err(|e| fatal(format!("{key}: {e}")))?;
        pretty.push('\n');
        device
            .write(&file, &pretty)
            .map_err(|e| format!("{key}: {e}"))?;
        let shown = Device::shown(&file);
        reactor_sdk::info!("{done} {key} as {shown}");
        Ok(Some(shown))
    }
}

impl<F: Family> Descriptor for Files<F> {
    fn describe() -> Info {
        let mut info = Info::new(F::NAME, F::PREFIX);
        info.retrieve_dependencies = F::RETRIEVE_AFTER.iter().map(|s| (*s).to_owned()).collect();
        info
    }

    fn validate(key: String, value: String) -> Result<(), String> {
        let parsed = Self::key(&key)?;
        if F::OWNER == Owner::Southbound {
            return Err(Self::owned_by_southbound(&key));
        }
        F::validate(&parsed, &Self::value(&key, &value)?)
    }

    fn create(key: String, value: String) -> Result<Option<String>, String> {
        Self::write(&key, &value, "created")
    }

    fn update(
        key: String,
        _old_value: String,
        new_value: String,
        _metadata: Option<String>,
    ) -> Result<Option<String>, String> {
        Self::write(&key, &new_value, "updated")
    }

    fn update_with_recreate(
        key: String,
        old_value: String,
        new_value: String,
        _metadata: Option<String>,
    ) -> bool {
        let (Ok(parsed), Ok(old), Ok(new)) = (
            Self::key(&key),
            serde_json::from_str::<Value>(&old_value),
            serde_json::from_str::<Value>(&new_value),
        ) else {
            return false;
        };
        F::update_with_recreate(&parsed, &old, &new)
    }

    /// Idempotent: a file already gone (drift) is not an error.
    fn delete(key: String, _value: String, _metadata: Option<String>) -> Result<(), String> {
        if F::OWNER == Owner::Southbound {
            return Err(fatal(Self::owned_by_southbound(&key)));
        }
        let file = Self::key(&key).map_err(fatal)?.file();
        let shown = Device::shown(&file);
        if Device::root()
            .remove(&file)
            .map_err(|e| format!("{key}: {e}"))?
        {
            reactor_sdk::info!("deleted {key}: removed {shown}");
        } else {
            reactor_sdk::warn!("deleted {key}: {shown} was already gone");
        }
        Ok(())
    }

    /// Every value file; content that is not JSON is reported as a JSON string, so that it
    /// differs from any wanted value and resync rewrites it. Files whose path is not a key
    /// of the family are skipped.
    fn retrieve(_correlate: Vec<Kv>) -> Result<Vec<Retrieved>, String> {
        let files = Device::root()
            .list()
            .map_err(|e| format!("retrieve {}: {e}", F::NAME))?;
        let origin = match F::OWNER {
            Owner::Agent => Origin::FromNorthbound,
            Owner::Southbound => Origin::FromSouthbound,
        };
        let mut found = Vec::with_capacity(files.len());
        for (stem, text) in files {
            let key = format!("{}{stem}", F::PREFIX);
            if let Err(error) = Self::key(&key) {
                reactor_sdk::debug!("retrieve skips /{stem}.json: {error}");
                continue;
            }
            let value = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
            found.push(Retrieved {
                key,
                value: value.to_string(),
                metadata: Some(format!("/{stem}.json")),
                origin,
            });
        }
        Ok(found)
    }

    fn dependencies(key: String, value: String) -> Vec<Dependency> {
        match (Self::key(&key), Self::value(&key, &value)) {
            (Ok(key), Ok(value)) => F::dependencies(&key, &value),
            _ => Vec::new(),
        }
    }

    fn derived_values(key: String, value: String) -> Vec<Kv> {
        match (Self::key(&key), Self::value(&key, &value)) {
            (Ok(key), Ok(value)) => F::derived_values(&key, &value)
                .into_iter()
                .map(|(key, value)| Kv {
                    key,
                    value: value.to_string(),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn is_retriable(error: String) -> bool {
        !error.starts_with(FATAL)
    }
}
