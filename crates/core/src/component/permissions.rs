//! What a component declares it touches (kinds read, written, watched; publishing to agents;
//! WASI folders), how one declaration widens another, and a version held until an admin
//! approves it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A component's declared permissions, as its `reactor-permissions` custom section holds them
/// (JSON). A component without one is *undeclared*: it keeps every power a reactor has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Permissions {
    /// Kinds it may `get` and `list`, besides the kinds it reconciles.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub reads: BTreeSet<String>,
    /// Kinds it may `apply` and `delete` (its children). `set-status` of the object in hand
    /// is always allowed.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub writes: BTreeSet<String>,
    /// Kinds its `describe` may name as secondary watches.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub watches: BTreeSet<String>,
    /// Whether it may use the `nimbus` import (publish items to agents, read their reports).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub publishes: bool,
    /// The guest folders it expects the config to grant (WASI preopens); a grant of any
    /// other folder is withheld.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub wasi: BTreeSet<String>,
}

/// What an undeclared component is shown as.
pub const UNDECLARED: &str = "undeclared";

impl Permissions {
    /// Every permission of `self` or `other`.
    pub fn union(&self, other: &Permissions) -> Permissions {
        let join = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.union(b).cloned().collect();
        Permissions {
            reads: join(&self.reads, &other.reads),
            writes: join(&self.writes, &other.writes),
            watches: join(&self.watches, &other.watches),
            publishes: self.publishes || other.publishes,
            wasi: join(&self.wasi, &other.wasi),
        }
    }

    /// Each permission of `self` that `granted` lacks, as `reads Secret`, `publishes`, ...
    fn beyond(&self, granted: &Permissions) -> Vec<String> {
        let mut added = Vec::new();
        for (verb, mine, theirs) in [
            ("reads", &self.reads, &granted.reads),
            ("writes", &self.writes, &granted.writes),
            ("watches", &self.watches, &granted.watches),
            ("wasi", &self.wasi, &granted.wasi),
        ] {
            added.extend(mine.difference(theirs).map(|k| format!("{verb} {k}")));
        }
        if self.publishes && !granted.publishes {
            added.push("publishes".into());
        }
        added
    }

    /// One line: `reads A,B; writes C; watches D; publishes; wasi /data` (`nothing` when
    /// it declares no permission at all).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (verb, kinds) in [
            ("reads", &self.reads),
            ("writes", &self.writes),
            ("watches", &self.watches),
        ] {
            if !kinds.is_empty() {
                parts.push(format!("{verb} {}", list(kinds)));
            }
        }
        if self.publishes {
            parts.push("publishes".into());
        }
        if !self.wasi.is_empty() {
            parts.push(format!("wasi {}", list(&self.wasi)));
        }
        if parts.is_empty() {
            return "nothing".into();
        }
        parts.join("; ")
    }
}

fn list(items: &BTreeSet<String>) -> String {
    items.iter().cloned().collect::<Vec<_>>().join(",")
}

/// What `new` may do that `granted` does not allow (`None` is undeclared: everything); empty
/// when `new` is no wider.
pub fn widening(new: Option<&Permissions>, granted: Option<&Permissions>) -> Vec<String> {
    match (new, granted) {
        (_, None) => Vec::new(),
        (None, Some(_)) => vec![format!("{UNDECLARED} (every power of a reactor)")],
        (Some(new), Some(granted)) => new.beyond(granted),
    }
}

/// The declaration as `components` shows it.
pub fn summary(permissions: Option<&Permissions>) -> String {
    permissions.map_or_else(|| UNDECLARED.to_owned(), Permissions::summary)
}

/// A new version not loaded because it declares more than the version serving (or the last
/// approved) may do: it waits for `reactor-host component approve NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    /// sha256 of the waiting version.
    pub sha256: String,
    /// Its declaration (`None`: undeclared).
    pub permissions: Option<Permissions>,
    /// What it adds, as `writes Secret`, `publishes`, ...
    pub added: Vec<String>,
}

/// A version an admin approved: it, and any version declaring no more than it, may load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// sha256 of the version approved.
    pub sha256: String,
    /// Its declaration (`None`: undeclared).
    pub permissions: Option<Permissions>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_declaration_widens_by_each_permission_it_adds() {
        let old = Permissions {
            reads: set(&["Plan"]),
            writes: set(&["Note"]),
            ..Permissions::default()
        };
        let new = Permissions {
            reads: set(&["Plan"]),
            writes: set(&["Note", "Secret"]),
            publishes: true,
            ..Permissions::default()
        };
        assert_eq!(
            widening(Some(&new), Some(&old)),
            ["writes Secret", "publishes"]
        );
        assert!(widening(Some(&old), Some(&new)).is_empty(), "narrower");
        assert!(
            widening(Some(&new), None).is_empty(),
            "undeclared allows all"
        );
        assert_eq!(widening(None, Some(&old)).len(), 1, "undeclared is wider");
        assert!(widening(Some(&new), Some(&old.union(&new))).is_empty());
    }

    #[test]
    fn the_summary_names_every_permission() {
        let p = Permissions {
            reads: set(&["A", "B"]),
            watches: set(&["C"]),
            publishes: true,
            wasi: set(&["/data"]),
            ..Permissions::default()
        };
        assert_eq!(p.summary(), "reads A,B; watches C; publishes; wasi /data");
        assert_eq!(Permissions::default().summary(), "nothing");
        assert_eq!(summary(None), "undeclared");
    }

    #[test]
    fn an_unknown_field_is_refused() {
        let err = serde_json::from_str::<Permissions>(r#"{"raeds": ["A"]}"#)
            .expect_err("a typo")
            .to_string();
        assert!(err.contains("raeds"), "{err}");
    }
}
