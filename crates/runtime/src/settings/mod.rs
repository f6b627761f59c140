//! The runtime's config file (`--config`, YAML).
//!
//! Per component its config, limits, WASI grants and a revision.
//!
//! ```yaml
//! defaults:               # limits of components without an entry (optional)
//!   memory_bytes: 67108864
//!   deadline_ms: 5000
//!   concurrency: 4
//! components:
//!   policy-rust:          # the file name without `.wasm`
//!     revision: 2         # a changed entry applies only with a higher revision
//!     config: {team: web} # any JSON, handed to the guest by the `config` import
//!     limits: {memory_bytes: 33554432, deadline_ms: 1000, concurrency: 2}
//!     grants:
//!       dirs:
//!         - {host: /var/lib/policy, guest: /data, mode: ro}
//!     rollout:            # how its new versions earn service (optional)
//!       shadow: {objects: 20}  # run beside the serving one first, committing nothing
//!   policy-oci:           # a component pulled from an OCI registry (see `supply.rs`)
//!     source: oci://registry.example:5000/policies/policy:v1   # or …@sha256:HEX
//! supply:                 # registries: pace, timeout, plain HTTP, CA, credentials file
//!   interval: 5m
//!   registries: {"registry.example:5000": {ca: /etc/reactor/ca.pem}}
//! trust:                  # with it, only components signed by one of these keys load
//!   keys: [/etc/reactor/release.pub]
//! rollout:                # how a component's new version reaches existing objects
//!   rate: 200             # re-reconciles per second (default: serve --rollout-rate)
//!   canary: 0.1           # reconcile this fraction first; roll back if it does worse
//! ```
//!
//! Unknown fields are an error.

mod supply;

use crate::RuntimeError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
pub use supply::{RegistrySettings, SupplySettings, TrustSettings};

/// The whole config file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeSettings {
    /// Limits of components that have no entry, and of entries that set none.
    #[serde(default)]
    pub defaults: Limits,
    /// Entries by component name.
    #[serde(default)]
    pub components: BTreeMap<String, ComponentSettings>,
    /// How a new version of a component re-reconciles the objects its reactor watches.
    #[serde(default)]
    pub rollout: RolloutSettings,
    /// Where components named by an OCI reference come from.
    #[serde(default)]
    pub supply: SupplySettings,
    /// The keys whose signature a component needs to load; none: no signature needed.
    #[serde(default)]
    pub trust: Option<TrustSettings>,
}

/// The `rollout` section: its pace and an optional canary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutSettings {
    /// Re-reconciles per second (none: `serve --rollout-rate`, 200 by default).
    #[serde(default)]
    pub rate: Option<f64>,
    /// The fraction of the objects (above 0, at most 1) reconciled first; if the new
    /// version's error rate over them is above the previous version's, it is rolled back.
    #[serde(default)]
    pub canary: Option<f64>,
}

impl RolloutSettings {
    fn check(&self) -> Result<(), String> {
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(format!("rollout.rate: must be above 0, got {rate}"));
        }
        if let Some(canary) = self.canary
            && !(canary > 0.0 && canary <= 1.0)
        {
            return Err(format!(
                "rollout.canary: must be above 0 and at most 1, got {canary}"
            ));
        }
        Ok(())
    }
}

/// One component's entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentSettings {
    /// Revision of the entry: a changed entry is applied only if this is higher than the
    /// revision in force (latest revision wins).
    #[serde(default)]
    pub revision: u64,
    /// The component's config, any JSON; handed to the guest by the `config` import.
    #[serde(default)]
    pub config: Option<serde_json::Value>,
    /// Limits; fields left out take the file's `defaults`.
    #[serde(default)]
    pub limits: Option<PartialLimits>,
    /// WASI capabilities granted; none by default.
    #[serde(default)]
    pub grants: Grants,
    /// `oci://HOST[:PORT]/REPO:TAG` or `…@sha256:HEX`: the component is pulled from a
    /// registry rather than read from the components folder.
    #[serde(default)]
    pub source: Option<String>,
    /// How a new version of this component earns service.
    #[serde(default)]
    pub rollout: Option<ComponentRollout>,
}

/// A component's own `rollout` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentRollout {
    /// Run a new version as a shadow first: beside the serving one, on the same events,
    /// committing nothing, its would-be writes compared with the serving version's.
    #[serde(default)]
    pub shadow: Option<ShadowSettings>,
}

/// How long a shadow runs before it is promoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowSettings {
    /// Objects on which the shadow's writes must match the serving version's (and none
    /// differ) before it is promoted; at least 1.
    #[serde(default = "ShadowSettings::default_objects")]
    pub objects: u64,
}

impl ShadowSettings {
    fn default_objects() -> u64 {
        10
    }
}

/// Limits of one component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Cap on each linear memory of an instance, in bytes.
    pub memory_bytes: u64,
    /// Deadline of one call, in milliseconds.
    pub deadline_ms: u64,
    /// Calls running at once; also the number of warm instances kept.
    pub concurrency: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            deadline_ms: 5_000,
            concurrency: 4,
        }
    }
}

/// Limits of an entry, each falling back to the file's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLimits {
    /// Cap on each linear memory, in bytes.
    pub memory_bytes: Option<u64>,
    /// Deadline of one call, in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Calls running at once.
    pub concurrency: Option<usize>,
}

/// WASI capabilities granted to a component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Host folders preopened in the guest.
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
}

/// A host folder preopened in the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// The folder on the host.
    pub host: PathBuf,
    /// Where the guest sees it, e.g. `/data`.
    pub guest: String,
    /// Read-only (the default) or read-write.
    #[serde(default)]
    pub mode: Access,
}

/// Access to a granted folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Access {
    /// Read-only.
    #[default]
    #[serde(rename = "ro")]
    ReadOnly,
    /// Read-write.
    #[serde(rename = "rw")]
    ReadWrite,
}

/// What is in force for one component: its entry resolved against the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// Revision of the entry (0 without one).
    pub revision: u64,
    /// The config JSON text, if any.
    pub config: Option<String>,
    /// Resolved limits.
    pub limits: Limits,
    /// Granted folders.
    pub grants: Grants,
}

impl RuntimeSettings {
    /// Parses a config file's text; unknown fields are an error.
    pub fn from_yaml(path: &Path, text: &str) -> Result<Self, RuntimeError> {
        let error = |message: String| RuntimeError::Config {
            path: path.to_owned(),
            message,
        };
        let settings: Self = serde_yaml_ng::from_str(text).map_err(|e| error(e.to_string()))?;
        settings.rollout.check().map_err(error)?;
        for (name, entry) in &settings.components {
            if let Some(shadow) = entry.rollout.and_then(|r| r.shadow)
                && shadow.objects == 0
            {
                return Err(error(format!(
                    "components.{name}.rollout.shadow.objects: must be at least 1, got 0"
                )));
            }
        }
        Ok(settings)
    }

    /// Reads and parses a config file.
    pub fn read(path: &Path) -> Result<Self, RuntimeError> {
        let text = std::fs::read_to_string(path).map_err(|e| RuntimeError::Config {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        Self::from_yaml(path, &text)
    }

    /// What is in force for component `name`.
    pub fn effective(&self, name: &str) -> Effective {
        let entry = self.components.get(name);
        let partial = entry.and_then(|e| e.limits).unwrap_or_default();
        Effective {
            revision: entry.map_or(0, |e| e.revision),
            config: entry.and_then(|e| e.config.as_ref()).map(|v| v.to_string()),
            limits: Limits {
                memory_bytes: partial.memory_bytes.unwrap_or(self.defaults.memory_bytes),
                deadline_ms: partial.deadline_ms.unwrap_or(self.defaults.deadline_ms),
                concurrency: partial
                    .concurrency
                    .unwrap_or(self.defaults.concurrency)
                    .max(1),
            },
            grants: entry.map(|e| e.grants.clone()).unwrap_or_default(),
        }
    }

    /// Whether and how component `name`'s new versions run as a shadow first.
    pub fn shadow(&self, name: &str) -> Option<ShadowSettings> {
        self.components.get(name)?.rollout?.shadow
    }

    /// Merges `newer` into `self` the way a config set does: an entry replaces the one in
    /// force only with a higher revision; a removed entry is dropped. Returns the names of
    /// the components whose entry changed, and those refused for a stale revision.
    pub fn merge(&mut self, newer: RuntimeSettings) -> Merge {
        let mut merge = Merge::default();
        let defaults_changed = self.defaults != newer.defaults;
        let old = std::mem::take(&mut self.components);
        for (name, entry) in newer.components {
            match old.get(&name) {
                Some(current) if *current == entry => {
                    self.components.insert(name, entry);
                }
                Some(current) if entry.revision <= current.revision => {
                    merge.stale.push(name.clone());
                    self.components.insert(name, current.clone());
                }
                _ => {
                    merge.changed.push(name.clone());
                    self.components.insert(name, entry);
                }
            }
        }
        for name in old.keys() {
            if !self.components.contains_key(name) {
                merge.changed.push(name.clone());
            }
        }
        self.defaults = newer.defaults;
        self.rollout = newer.rollout;
        self.supply = newer.supply;
        self.trust = newer.trust;
        merge.defaults_changed = defaults_changed;
        merge
    }
}

/// What a [`RuntimeSettings::merge`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merge {
    /// Components whose entry was added, replaced or removed.
    pub changed: Vec<String>,
    /// Components whose entry changed without a higher revision: kept as they were.
    pub stale: Vec<String>,
    /// Whether the defaults changed (every component without limits of its own is
    /// affected).
    pub defaults_changed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RuntimeSettings, RuntimeError> {
        RuntimeSettings::from_yaml(Path::new("test.yaml"), text)
    }

    #[test]
    fn a_components_shadow_is_read_with_its_default_and_zero_objects_is_refused() {
        let settings =
            parse("components:\n  a:\n    rollout: {shadow: {}}\n  b: {}\n").expect("valid config");
        assert_eq!(settings.shadow("a"), Some(ShadowSettings { objects: 10 }));
        assert_eq!(settings.shadow("b"), None);
        let err = parse("components:\n  a:\n    rollout: {shadow: {objects: 0}}\n")
            .expect_err("no objects");
        assert_eq!(
            err.to_string(),
            "config test.yaml: components.a.rollout.shadow.objects: must be at least 1, got 0"
        );
    }

    #[test]
    fn parses_a_full_entry_and_resolves_limits_against_defaults() {
        let settings = parse(
            "defaults: {deadline_ms: 100}\ncomponents:\n  a:\n    revision: 3\n    config: {x: 1}\n    limits: {memory_bytes: 1024}\n    grants:\n      dirs: [{host: /tmp, guest: /t, mode: rw}]\n",
        )
        .expect("valid config");
        let a = settings.effective("a");
        assert_eq!(a.revision, 3);
        assert_eq!(a.config.as_deref(), Some(r#"{"x":1}"#));
        assert_eq!(
            a.limits,
            Limits {
                memory_bytes: 1024,
                deadline_ms: 100,
                concurrency: 4
            }
        );
        assert_eq!(a.grants.dirs[0].mode, Access::ReadWrite);
        let b = settings.effective("b");
        assert_eq!(b.revision, 0);
        assert_eq!(b.config, None);
        assert!(b.grants.dirs.is_empty());
    }

    #[test]
    fn unknown_fields_are_an_error() {
        let err = parse("components:\n  a:\n    revison: 3\n").expect_err("typo must be refused");
        assert!(err.to_string().contains("revison"), "{err}");
        assert!(parse("component: {}\n").is_err());
        assert!(parse("components:\n  a:\n    limits: {memory: 1}\n").is_err());
        assert!(parse("rollout: {rat: 1}\n").is_err());
    }

    #[test]
    fn the_rollout_section_is_checked() {
        let settings = parse("rollout: {rate: 50, canary: 0.25}\n").expect("valid");
        assert_eq!(settings.rollout.rate, Some(50.0));
        assert_eq!(settings.rollout.canary, Some(0.25));
        assert_eq!(
            parse("{}").expect("valid").rollout,
            RolloutSettings::default()
        );
        let err = parse("rollout: {canary: 1.5}\n").expect_err("out of range");
        assert_eq!(
            err.to_string(),
            "config test.yaml: rollout.canary: must be above 0 and at most 1, got 1.5"
        );
        assert!(parse("rollout: {rate: 0}\n").is_err());
    }

    #[test]
    fn the_supply_and_trust_sections_are_checked() {
        let settings = parse(
            "supply:\n  interval: 30s\n  registries: {\"127.0.0.1:5000\": {plain_http: true, credentials: /c}}\ntrust: {keys: [/k.pub]}\ncomponents:\n  a: {source: \"oci://127.0.0.1:5000/r/a:v1\"}\n",
        )
        .expect("valid");
        assert_eq!(settings.supply.interval, std::time::Duration::from_secs(30));
        assert_eq!(settings.supply.timeout, std::time::Duration::from_secs(10));
        assert!(settings.supply.registries["127.0.0.1:5000"].plain_http);
        assert_eq!(
            settings.trust.map(|t| t.keys),
            Some(vec![PathBuf::from("/k.pub")])
        );
        assert_eq!(
            settings.components["a"].source.as_deref(),
            Some("oci://127.0.0.1:5000/r/a:v1")
        );
        let err = parse("supply: {interval: soon}\n").expect_err("no duration");
        assert!(
            err.to_string()
                .contains("\"soon\" is not a duration like 30s"),
            "{err}"
        );
        assert!(parse("supply: {timeout: 0s}\n").is_err());
        assert!(parse("supply: {registries: {r: {password: x}}}\n").is_err());
        assert!(parse("trust: {key: [/k]}\n").is_err());
    }

    #[test]
    fn merge_applies_only_higher_revisions() {
        let mut current = parse("components:\n  a: {revision: 2, config: 1}\n  b: {revision: 1}\n")
            .expect("valid");
        let newer = parse("components:\n  a: {revision: 2, config: 2}\n  c: {revision: 1}\n")
            .expect("valid");
        let merge = current.merge(newer);
        assert_eq!(merge.stale, vec!["a".to_owned()]);
        assert_eq!(current.effective("a").config.as_deref(), Some("1"));
        let mut changed = merge.changed.clone();
        changed.sort();
        assert_eq!(changed, vec!["b".to_owned(), "c".to_owned()]);
        assert!(!current.components.contains_key("b"));

        let newer = parse("components:\n  a: {revision: 3, config: 3}\n  c: {revision: 1}\n")
            .expect("valid");
        let merge = current.merge(newer);
        assert_eq!(merge.changed, vec!["a".to_owned()]);
        assert_eq!(current.effective("a").config.as_deref(), Some("3"));
    }
}
