//! Label selectors as Kubernetes writes them: `app=web,tier!=db,canary,!legacy,env in (a,b),zone notin (x)`.

use std::collections::BTreeMap;
use std::str::FromStr;

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A conjunction of label requirements; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error(
        "label selector term {0:?} is invalid: expected key=value, key!=value, key, !key, key in (v1,v2) or key notin (v1,v2)"
    )]
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

    /// Whether `labels` include every pair of `wanted`: what `from_labels(wanted).matches`
    /// answers, without building the selector (a fan-out asks it per item and agent).
    pub fn includes(labels: &BTreeMap<String, String>, wanted: &BTreeMap<String, String>) -> bool {
        wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|req| match req {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::Absent(k) => !labels.contains_key(k),
            Requirement::In(k, values) => labels.get(k).is_some_and(|v| values.contains(v)),
            Requirement::NotIn(k, values) => !labels.get(k).is_some_and(|v| values.contains(v)),
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
        for term in terms(text)
            .into_iter()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            let bad = || SelectorError::BadTerm(term.to_owned());
            let requirement = if let Some(set) = set_based(term) {
                set.ok_or_else(bad)?
            } else if let Some((k, v)) = term.split_once("!=") {
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
                | Requirement::Absent(k)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _) => k,
            };
            if !valid_key(key) {
                return Err(bad());
            }
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }
}

/// `text` cut at the commas outside parentheses (those inside separate a set's values).
fn terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

/// `key in (v1,v2)` or `key notin (v1,v2)`: `None` when `term` is not of that form,
/// `Some(None)` when it is but its set is empty or a value is not a label value.
fn set_based(term: &str) -> Option<Option<Requirement>> {
    let (head, rest) = term.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let words: Vec<&str> = head.split_whitespace().collect();
    let [key, operator] = words.as_slice() else {
        return None;
    };
    if *operator != "in" && *operator != "notin" {
        return None;
    }
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_owned()).collect();
    let valid = |v: &String| {
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    if !values.iter().all(valid) {
        return Some(None);
    }
    let key = (*key).to_owned();
    Some(Some(match *operator {
        "in" => Requirement::In(key, values),
        _ => Requirement::NotIn(key, values),
    }))
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let terms: Vec<String> = self
            .0
            .iter()
            .map(|req| match req {
                // `k==v` reads as `k=v`: a value starting with `=` needs the long form.
                Requirement::Equals(k, v) if v.starts_with('=') => format!("{k}=={v}"),
                Requirement::Equals(k, v) => format!("{k}={v}"),
                Requirement::NotEquals(k, v) => format!("{k}!={v}"),
                Requirement::Exists(k) => k.clone(),
                Requirement::Absent(k) => format!("!{k}"),
                Requirement::In(k, values) => format!("{k} in ({})", values.join(",")),
                Requirement::NotIn(k, values) => format!("{k} notin ({})", values.join(",")),
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
        let sets: Selector = "env in (prod, staging),zone notin (eu-1),app=web"
            .parse()
            .expect("parses");
        assert!(sets.matches(&labels(&[("env", "prod"), ("app", "web")])));
        assert!(sets.matches(&labels(&[
            ("env", "staging"),
            ("zone", "us-1"),
            ("app", "web")
        ])));
        assert!(!sets.matches(&labels(&[("env", "dev"), ("app", "web")])));
        assert!(
            !sets.matches(&labels(&[("app", "web")])),
            "in needs the key"
        );
        assert!(!sets.matches(&labels(&[
            ("env", "prod"),
            ("zone", "eu-1"),
            ("app", "web")
        ])));
        assert_eq!(
            sets.to_string(),
            "env in (prod,staging),zone notin (eu-1),app=web"
        );
    }

    #[test]
    fn round_trip_and_errors() {
        let sel: Selector = "a=b,c!=d,e,!f".parse().expect("parses");
        assert_eq!(sel.to_string(), "a=b,c!=d,e,!f");
        let sel: Selector = "a===b".parse().expect("parses");
        assert_eq!(sel.to_string().parse::<Selector>(), Ok(sel));
        assert!("=x".parse::<Selector>().is_err());
        assert!("a b=c".parse::<Selector>().is_err());
        assert_eq!(
            "a in (),b=c".parse::<Selector>(),
            Err(SelectorError::BadTerm("a in ()".into()))
        );
        assert!("a in (x y)".parse::<Selector>().is_err());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn requirement() -> impl Strategy<Value = Requirement> {
            let key = "[a-z0-9][a-z0-9._/-]{0,12}";
            let value = "=?[A-Za-z0-9._-]{0,12}";
            prop_oneof![
                (key, value).prop_map(|(k, v)| Requirement::Equals(k, v)),
                (key, value).prop_map(|(k, v)| Requirement::NotEquals(k, v)),
                key.prop_map(Requirement::Exists),
                key.prop_map(Requirement::Absent),
                (key, proptest::collection::vec("[A-Za-z0-9._-]{1,8}", 1..4))
                    .prop_map(|(k, v)| Requirement::In(k, v)),
                (key, proptest::collection::vec("[A-Za-z0-9._-]{1,8}", 1..4))
                    .prop_map(|(k, v)| Requirement::NotIn(k, v)),
            ]
        }

        proptest! {
            #[test]
            fn any_text_parses_or_names_the_bad_term(text in "\\PC{0,64}") {
                match text.parse::<Selector>() {
                    Ok(selector) => {
                        let again: Selector = selector.to_string().parse().expect("reparses");
                        prop_assert_eq!(again, selector);
                    }
                    Err(SelectorError::BadTerm(term)) => {
                        prop_assert!(text.contains(term.as_str()));
                    }
                }
            }

            #[test]
            fn a_selector_survives_its_text(requirements in proptest::collection::vec(requirement(), 0..6)) {
                let selector = Selector(requirements);
                let parsed: Selector = selector.to_string().parse().expect("parses");
                prop_assert_eq!(parsed, selector);
            }

            #[test]
            fn includes_answers_as_the_selector_of_the_wanted_labels(
                labels in proptest::collection::btree_map("[a-c]", "[x-z]", 0..4),
                wanted in proptest::collection::btree_map("[a-c]", "[x-z]", 0..3),
            ) {
                prop_assert_eq!(
                    Selector::includes(&labels, &wanted),
                    Selector::from_labels(&wanted).matches(&labels)
                );
            }

            #[test]
            fn objects_match_the_selector_of_their_labels(
                labels in proptest::collection::btree_map("[a-z][a-z0-9-]{0,8}", "[a-z0-9]{0,8}", 0..6),
                other in "[a-z][a-z0-9-]{0,8}",
            ) {
                let selector = Selector::from_labels(&labels);
                prop_assert!(selector.matches(&labels));
                let absent: Selector = format!("!{other}").parse().expect("parses");
                prop_assert_eq!(absent.matches(&labels), !labels.contains_key(&other));
                let equalities = selector.equalities();
                prop_assert_eq!(equalities.len(), labels.len());
            }
        }
    }
}
