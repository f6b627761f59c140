//! What a mock descriptor does, as data (Ligato's `MockDescArgs`): the same JSON configures
//! the native mock descriptor and its WASM twin (`guests/mock-descriptor`, which compiles
//! this file by path, so it uses nothing of the host).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A key of the mock southbound.
pub type Key = String;

/// What a dependency waits for (the host's `DependencyTarget`, same JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// This exact key.
    Key(Key),
    /// Any key with this prefix.
    AnyOf(String),
}

/// A dependency of a mock value (the host's `Dependency`, same JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependency {
    pub label: String,
    pub target: Target,
}

/// The configuration of one mock descriptor.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockDescArgs {
    pub name: String,
    /// Keys starting with this prefix belong to the descriptor.
    pub prefix: String,
    /// Values `{"items": [..], "suffix"?: ".."}` derive `KEY/ITEM` = `"ITEM" + suffix`
    /// (Ligato's `ArrayValueDerBuilder`).
    #[serde(default)]
    pub derived: bool,
    /// Dependencies by key of the dependant.
    #[serde(default)]
    pub dependencies: BTreeMap<Key, Vec<Dependency>>,
    /// Keys whose updates are done by delete and re-create.
    #[serde(default)]
    pub recreate: Vec<Key>,
    /// Values refused by `validate`, by key.
    #[serde(default)]
    pub invalid: BTreeMap<Key, Value>,
    /// Created base values get metadata: an index counting up from `first_index`.
    #[serde(default)]
    pub with_metadata: bool,
    #[serde(default)]
    pub first_index: u64,
    #[serde(default)]
    pub retrieve_dependencies: Vec<String>,
    /// The descriptor cannot retrieve (Ligato's `WithoutRetrieve`).
    #[serde(default)]
    pub without_retrieve: bool,
    /// Retrieve also returns derived values, as `@0.1.0` descriptors may.
    #[serde(default)]
    pub retrieve_derived: bool,
    /// Error messages that are not worth a retry.
    #[serde(default)]
    pub non_retriable: Vec<String>,
    /// The version of the descriptor, shown with its operations when above 0; a new
    /// version of a registered descriptor has a higher one (also its config revision).
    #[serde(default)]
    pub version: u32,
}

impl MockDescArgs {
    pub fn new(name: &str, prefix: &str) -> Self {
        Self {
            name: name.to_owned(),
            prefix: prefix.to_owned(),
            ..Self::default()
        }
    }

    pub fn derived(mut self) -> Self {
        self.derived = true;
        self
    }

    pub fn with_metadata(mut self) -> Self {
        self.with_metadata = true;
        self
    }

    pub fn first_index(mut self, index: u64) -> Self {
        self.first_index = index;
        self
    }

    pub fn without_retrieve(mut self) -> Self {
        self.without_retrieve = true;
        self
    }

    pub fn retrieve_derived(mut self) -> Self {
        self.retrieve_derived = true;
        self
    }

    pub fn depends(mut self, key: &str, on: &[&str]) -> Self {
        self.dependencies.insert(
            key.to_owned(),
            on.iter()
                .map(|k| Dependency {
                    label: (*k).to_owned(),
                    target: Target::Key((*k).to_owned()),
                })
                .collect(),
        );
        self
    }

    pub fn depends_any_of(mut self, key: &str, label: &str, prefix: &str) -> Self {
        self.dependencies
            .entry(key.to_owned())
            .or_default()
            .push(Dependency {
                label: label.to_owned(),
                target: Target::AnyOf(prefix.to_owned()),
            });
        self
    }

    pub fn recreate(mut self, key: &str) -> Self {
        self.recreate.push(key.to_owned());
        self
    }

    pub fn invalid(mut self, key: &str, value: Value) -> Self {
        self.invalid.insert(key.to_owned(), value);
        self
    }

    pub fn retrieve_after(mut self, descriptor: &str) -> Self {
        self.retrieve_dependencies.push(descriptor.to_owned());
        self
    }

    pub fn non_retriable(mut self, error: &str) -> Self {
        self.non_retriable.push(error.to_owned());
        self
    }

    pub fn version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    /// Whether `key` is a derived value of this descriptor: `BASE/ITEM` under its prefix
    /// (the keys `derived_values` makes).
    pub fn is_derived_key(&self, key: &str) -> bool {
        self.derived
            && key
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.contains('/'))
    }

    /// Values derived from `value` of `key` (Ligato's `ArrayValueDerBuilder`).
    pub fn derived_values(&self, key: &str, value: &Value) -> Vec<(Key, Value)> {
        if !self.derived {
            return Vec::new();
        }
        let suffix = value.get("suffix").and_then(Value::as_str).unwrap_or("");
        value
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|item| {
                (
                    format!("{key}/{item}"),
                    Value::from(format!("{item}{suffix}")),
                )
            })
            .collect()
    }
}

/// Ligato's `ArrayValue`: `{"items": [..]}`.
pub fn array(items: &[&str]) -> Value {
    serde_json::json!({ "items": items })
}

/// Ligato's `ArrayValue` with an item suffix.
pub fn array_with_suffix(suffix: &str, items: &[&str]) -> Value {
    serde_json::json!({ "items": items, "suffix": suffix })
}

/// Ligato's `StringValue`: a JSON string.
pub fn string(text: &str) -> Value {
    Value::from(text)
}
