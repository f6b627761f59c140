//! Equality-based label selectors: `app=web,tier!=db,canary,!legacy`.

use std::collections::BTreeMap;
use std::str::FromStr;

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

/// A conjunction of label requirements; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("label selector term {0:?} is invalid: expected key=value, key!=value, key or !key")]
    BadTerm(String),
}

impl Selector {
    /// Matches objects carrying every label in `labels` with the same value.
    pub fn from_labels(labels: &BTreeMap<String, String>) -> Self {
        Self(
            labels
                .iter()
                .map(|(k, v)| Requirement::Equals(k.clone(), v.clone()))
                .collect(),
        )
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|req| match req {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::Absent(k) => !labels.contains_key(k),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `key=value` terms of the selector: a store can look these labels up.
    pub fn equalities(&self) -> Vec<(&str, &str)> {
        self.0
            .iter()
            .filter_map(|req| match req {
                Requirement::Equals(k, v) => Some((k.as_str(), v.as_str())),
                _ => None,
            })
            .collect()
    }
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let valid_key = |k: &str| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        };
        let mut requirements = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let bad = || SelectorError::BadTerm(term.to_owned());
            let requirement = if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEquals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once('=') {
                let v = v.strip_prefix('=').unwrap_or(v);
                Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some(k) = term.strip_prefix('!') {
                Requirement::Absent(k.trim().to_owned())
            } else {
                Requirement::Exists(term.to_owned())
            };
            let key = match &requirement {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::Exists(k)
                | Requirement::Absent(k) => k,
            };
            if !valid_key(key) {
                return Err(bad());
            }
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let terms: Vec<String> = self
            .0
            .iter()
            .map(|req| match req {
                Requirement::Equals(k, v) => format!("{k}={v}"),
                Requirement::NotEquals(k, v) => format!("{k}!={v}"),
                Requirement::Exists(k) => k.clone(),
                Requirement::Absent(k) => format!("!{k}"),
            })
            .collect();
        f.write_str(&terms.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn matching() {
        let sel: Selector = "app=web, tier!=db, canary, !legacy"
            .parse()
            .expect("parses");
        assert!(sel.matches(&labels(&[("app", "web"), ("canary", "")])));
        assert!(!sel.matches(&labels(&[("app", "web")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("canary", "1"), ("tier", "db")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("canary", "1"), ("legacy", "y")])));
        assert!(Selector::default().matches(&labels(&[])));
    }

    #[test]
    fn round_trip_and_errors() {
        let sel: Selector = "a=b,c!=d,e,!f".parse().expect("parses");
        assert_eq!(sel.to_string(), "a=b,c!=d,e,!f");
        assert!("=x".parse::<Selector>().is_err());
        assert!("a b=c".parse::<Selector>().is_err());
    }
}
