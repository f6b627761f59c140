//! The query parameters of the resource routes (list, watch, writes), as kubectl sends them.

use crate::continuation::{Continuation, ContinuationError};
use reactor_core::object::{Revision, Selector};
use serde::Deserialize;

/// Why a query cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("unable to parse requirement: {0}")]
    LabelSelector(String),
    #[error(
        "field label not supported: {0:?} (only metadata.name=, metadata.name== and metadata.name!= are)"
    )]
    FieldSelector(String),
    #[error("{name} {value:?} is invalid: {problem}")]
    Parameter {
        name: &'static str,
        value: String,
        problem: &'static str,
    },
    #[error("dryRun {0:?} is invalid: the only dry run is All")]
    DryRun(String),
    #[error(transparent)]
    Continue(#[from] ContinuationError),
}

/// Every query parameter the routes read; the rest (`pretty`, `propagationPolicy`, ...) are
/// accepted and ignored, as a Kubernetes server ignores what does not apply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Query {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<String>,
    #[serde(rename = "continue")]
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub watch: Option<String>,
    pub allow_watch_bookmarks: Option<String>,
    pub timeout_seconds: Option<String>,
    pub send_initial_events: Option<String>,
    pub dry_run: Option<String>,
    pub include_object: Option<String>,
    pub field_manager: Option<String>,
    pub force: Option<String>,
    pub field_validation: Option<String>,
}

/// `metadata.name` as a field selector asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameField {
    Is(String),
    IsNot(String),
}

impl NameField {
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Is(wanted) => wanted == name,
            Self::IsNot(unwanted) => unwanted != name,
        }
    }
}

fn flag(value: Option<&str>) -> bool {
    matches!(value, Some("1" | "true" | "True"))
}

impl Query {
    pub fn selector(&self) -> Result<Selector, QueryError> {
        let text = self.label_selector.as_deref().unwrap_or_default();
        text.parse()
            .map_err(|e: reactor_core::object::SelectorError| {
                QueryError::LabelSelector(e.to_string())
            })
    }

    /// The name requirements of `fieldSelector` (all of them must hold).
    pub fn name_fields(&self) -> Result<Vec<NameField>, QueryError> {
        let text = self.field_selector.as_deref().unwrap_or_default();
        let mut fields = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let bad = || QueryError::FieldSelector(term.to_owned());
            let field = if let Some((key, value)) = term.split_once("!=") {
                (key.trim() == "metadata.name").then(|| NameField::IsNot(value.trim().to_owned()))
            } else if let Some((key, value)) = term.split_once('=') {
                let value = value.strip_prefix('=').unwrap_or(value);
                (key.trim() == "metadata.name").then(|| NameField::Is(value.trim().to_owned()))
            } else {
                None
            };
            fields.push(field.ok_or_else(bad)?);
        }
        Ok(fields)
    }

    pub fn is_watch(&self) -> bool {
        flag(self.watch.as_deref())
    }

    pub fn bookmarks(&self) -> bool {
        flag(self.allow_watch_bookmarks.as_deref())
    }

    pub fn send_initial_events(&self) -> bool {
        flag(self.send_initial_events.as_deref())
    }

    /// `dryRun=All`: decide, answer, store nothing.
    pub fn dry_run(&self) -> Result<bool, QueryError> {
        match self.dry_run.as_deref() {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(QueryError::DryRun(other.to_owned())),
        }
    }

    /// Who a write is recorded as in `managedFields`: `fieldManager`, or when a write names
    /// none, the client's `User-Agent` up to its first `/` (as Kubernetes names it). A
    /// server-side apply must name one.
    pub fn manager(&self, user_agent: &str, apply: bool) -> Result<String, QueryError> {
        let invalid = |value: &str, problem| QueryError::Parameter {
            name: "fieldManager",
            value: value.to_owned(),
            problem,
        };
        match self.field_manager.as_deref() {
            Some(manager) if manager.chars().count() > 128 => {
                Err(invalid(manager, "must be at most 128 characters"))
            }
            Some(manager) if manager.chars().any(char::is_control) => {
                Err(invalid(manager, "must be printable"))
            }
            Some(manager) if !manager.is_empty() => Ok(manager.to_owned()),
            _ if apply => Err(invalid("", "is required for apply patch")),
            _ => {
                let agent: String = user_agent
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(128)
                    .collect();
                Ok(if agent.is_empty() {
                    "unknown".into()
                } else {
                    agent
                })
            }
        }
    }

    /// `force=true`: a server-side apply takes the fields it conflicts on.
    pub fn force(&self) -> bool {
        flag(self.force.as_deref())
    }

    /// `limit`: at most this many objects in a page (0 or none: all).
    pub fn limit(&self) -> Result<Option<usize>, QueryError> {
        number(self.limit.as_deref(), "limit").map(|n| n.filter(|n| *n > 0))
    }

    pub fn timeout_seconds(&self) -> Result<Option<u64>, QueryError> {
        number(self.timeout_seconds.as_deref(), "timeoutSeconds")
    }

    /// `resourceVersion` as a revision (`""` and `"0"`: none, i.e. the latest).
    pub fn revision(&self) -> Result<Option<Revision>, QueryError> {
        number(self.resource_version.as_deref(), "resourceVersion").map(|r| r.filter(|r| *r > 0))
    }

    /// Where a page continues (`continue`, as the page before answered it).
    pub fn continuation(&self) -> Result<Option<Continuation>, QueryError> {
        match self.continue_token.as_deref().filter(|t| !t.is_empty()) {
            Some(token) => Ok(Some(Continuation::decode(token)?)),
            None => Ok(None),
        }
    }
}

fn number<T: std::str::FromStr>(
    value: Option<&str>,
    name: &'static str,
) -> Result<Option<T>, QueryError> {
    match value {
        None | Some("") => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| QueryError::Parameter {
            name,
            value: text.to_owned(),
            problem: "expected a non-negative integer",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Query {
        let pairs: Vec<(String, String)> = text
            .split('&')
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.replace("%3D", "=").replace("%2C", ",")))
            .collect();
        let map: serde_json::Map<String, serde_json::Value> =
            pairs.into_iter().map(|(k, v)| (k, v.into())).collect();
        serde_json::from_value(serde_json::Value::Object(map)).expect("query")
    }

    #[test]
    fn parameters() {
        let q = query(
            "labelSelector=app%3Dweb&fieldSelector=metadata.name%3D%3Da&limit=2&continue=b&watch=1&allowWatchBookmarks=true&resourceVersion=0&dryRun=All&timeoutSeconds=5",
        );
        assert!(q.selector().is_ok());
        assert_eq!(q.name_fields(), Ok(vec![NameField::Is("a".into())]));
        assert_eq!(q.limit(), Ok(Some(2)));
        assert!(
            q.continuation().is_err(),
            "a bare name is not a continue key"
        );
        let token = Continuation::new(9, "b").encode();
        let paged = query(&format!("continue={token}"));
        assert_eq!(paged.continuation(), Ok(Some(Continuation::new(9, "b"))));
        assert!(q.is_watch() && q.bookmarks());
        assert_eq!(q.revision(), Ok(None));
        assert_eq!(q.dry_run(), Ok(true));
        assert_eq!(q.timeout_seconds(), Ok(Some(5)));
        assert!(query("fieldSelector=spec.x%3D1").name_fields().is_err());
        assert_eq!(
            query("fieldSelector=metadata.name!%3Da").name_fields(),
            Ok(vec![NameField::IsNot("a".into())])
        );
        assert!(query("limit=x").limit().is_err());
        assert!(query("dryRun=Some").dry_run().is_err());
        assert!(query("labelSelector=a b").selector().is_err());
        assert!(!query("watch=false").is_watch());
    }

    #[test]
    fn the_field_manager() {
        let named = query("fieldManager=alice&force=true");
        assert_eq!(named.manager("kubectl/v1.32.0", true), Ok("alice".into()));
        assert!(named.force());
        let unnamed = query("dryRun=All");
        assert_eq!(
            unnamed.manager("kubectl/v1.32.0 (linux/amd64)", false),
            Ok("kubectl".into())
        );
        assert_eq!(unnamed.manager("", false), Ok("unknown".into()));
        assert!(!unnamed.force());
        assert_eq!(
            unnamed
                .manager("kubectl/v1.32.0", true)
                .map_err(|e| e.to_string()),
            Err("fieldManager \"\" is invalid: is required for apply patch".into())
        );
        let long = query(&format!("fieldManager={}", "m".repeat(129)));
        assert!(long.manager("", false).is_err());
    }
}
