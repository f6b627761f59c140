//! Kind objects (`kind: Kind`, named after the kind they describe): a JSON Schema for the
//! spec of that kind's objects and the printer columns `get` shows.

use super::names::{NameError, validate_kind, validate_name};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json_path::JsonPath;

/// The kind of the objects that describe kinds.
pub const KIND: &str = "Kind";

/// Why a Kind object's spec is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    #[error("spec: {0}")]
    Spec(String),
    #[error("spec.columns[{index}]: {message}")]
    Column { index: usize, message: String },
}

/// What a Kind object says of its kind, read from its `spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindSpec {
    /// What the kind is for, shown by `explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema for the objects' `spec`; its `default`s are filled in on apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Columns `get` shows after NAME.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<Column>,
    /// The API group the Kubernetes API serves the kind in (default: the server's,
    /// `serve --api-group`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The API version the Kubernetes API serves the kind in (default `v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The resource's name in the Kubernetes API's paths (default: the kind in lowercase,
    /// pluralized as Kubernetes does, e.g. `policies`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plural: Option<String>,
    /// Other names kubectl knows the kind by, e.g. `pol`.
    #[serde(default, rename = "shortNames", skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
}

/// A printer column: a header and where its value is in the object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// The header, e.g. `READY`.
    pub name: String,
    /// A JSONPath into the whole object, e.g. `.status.ready` or `.spec.replicas`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The most columns one kind may have.
const MAX_COLUMNS: usize = 16;

impl KindSpec {
    /// Reads and checks a Kind object's spec (the schema itself is compiled elsewhere).
    pub fn parse(spec: &Value) -> Result<Self, KindError> {
        let spec = match spec {
            Value::Null => Self::default(),
            other => Self::deserialize(other).map_err(|e| KindError::Spec(e.to_string()))?,
        };
        if let Some(schema) = &spec.schema
            && !(schema.is_object() || schema.is_boolean())
        {
            return Err(KindError::Spec(
                "schema must be a JSON Schema: an object or a boolean".to_owned(),
            ));
        }
        if spec.columns.len() > MAX_COLUMNS {
            return Err(KindError::Spec(format!(
                "at most {MAX_COLUMNS} columns, not {}",
                spec.columns.len()
            )));
        }
        let dns_label = |what: &str, value: &str| {
            let ok = validate_name(value).is_ok();
            match ok {
                true => Ok(()),
                false => Err(KindError::Spec(format!(
                    "{what} {value:?} must be lowercase letters, digits and '-' (a DNS label)"
                ))),
            }
        };
        if let Some(group) = &spec.group
            && (group.is_empty()
                || group.len() > 253
                || group.split('.').any(|l| validate_name(l).is_err()))
        {
            return Err(KindError::Spec(format!(
                "group {group:?} must be a DNS subdomain, e.g. example.com"
            )));
        }
        if let Some(version) = &spec.version {
            dns_label("version", version)?;
        }
        if let Some(plural) = &spec.plural {
            dns_label("plural", plural)?;
        }
        for short in &spec.short_names {
            dns_label("short name", short)?;
        }
        for (index, column) in spec.columns.iter().enumerate() {
            let at = |message: String| KindError::Column { index, message };
            column.check().map_err(at)?;
            let twice = spec.columns[..index].iter().any(|c| c.name == column.name);
            if twice {
                return Err(at(format!("column {:?} appears twice", column.name)));
            }
        }
        Ok(spec)
    }
}

impl Column {
    fn check(&self) -> Result<(), String> {
        let header_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ' ';
        if self.name.trim().is_empty()
            || self.name.len() > 63
            || !self.name.chars().all(header_char)
        {
            return Err(format!(
                "name {:?} must be 1 to 63 letters, digits, '-', '_' or spaces",
                self.name
            ));
        }
        if ["NAME"].contains(&self.name.to_ascii_uppercase().as_str()) {
            return Err(format!("name {:?} is always shown", self.name));
        }
        self.query().map(|_| ())
    }

    /// The column's path as a query rooted at the object (`.status.ready` reads as
    /// `$.status.ready`, as kubectl's columns do).
    pub fn query(&self) -> Result<JsonPath, String> {
        let path = self.path.trim();
        if !path.starts_with('.') && !path.starts_with('$') {
            return Err(format!(
                "path {:?} must start with '.', e.g. .status.ready",
                self.path
            ));
        }
        let rooted = match path.starts_with('$') {
            true => path.to_owned(),
            false => format!("${path}"),
        };
        JsonPath::parse(&rooted).map_err(|e| format!("path {:?}: {e}", self.path))
    }
}

/// What a column's query finds in `object` (the object as JSON): strings as they are, other
/// values as JSON, several joined by commas, nothing as `<none>` (as kubectl prints it).
pub fn column_cell(query: Option<&JsonPath>, object: &Value) -> String {
    let found: Vec<String> = query
        .map(|q| q.query(object).all())
        .unwrap_or_default()
        .into_iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    if found.is_empty() {
        "<none>".to_owned()
    } else {
        found.join(",")
    }
}

/// An object's name rule: a Kind object is named after its kind (`Tenant`), every other
/// object by a DNS label (`web-allow`).
pub fn validate_object_name(kind: &str, name: &str) -> Result<(), NameError> {
    if kind != KIND {
        return validate_name(name);
    }
    validate_kind(name).map_err(|e| match e {
        NameError::BadKind(name) => NameError::BadKindName(name),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kind_names() {
        assert!(validate_object_name(KIND, "Tenant").is_ok());
        assert!(validate_object_name(KIND, "tenant").is_ok());
        assert!(validate_object_name("Policy", "Tenant").is_err());
        let bad = validate_object_name(KIND, "9x")
            .expect_err("9x")
            .to_string();
        assert!(bad.contains("the name of a Kind object"), "{bad}");
    }

    #[test]
    fn specs() {
        let ok = json!({"schema": {"type": "object"}, "columns": [{"name": "READY", "path": ".status.ready"}]});
        assert_eq!(KindSpec::parse(&ok).expect("ok").columns.len(), 1);
        assert!(KindSpec::parse(&Value::Null).is_ok());
        let named = json!({"group": "example.com", "version": "v1alpha1", "plural": "widgets", "shortNames": ["wd"]});
        let named = KindSpec::parse(&named).expect("named");
        assert_eq!(named.short_names, ["wd"]);
        let cases = [
            (json!({"schema": 3}), "spec: schema must be"),
            (
                json!({"group": "Bad_Group"}),
                "spec: group \"Bad_Group\" must be",
            ),
            (
                json!({"plural": "Widgets"}),
                "spec: plural \"Widgets\" must be",
            ),
            (
                json!({"shortNames": ["w x"]}),
                "spec: short name \"w x\" must be",
            ),
            (json!({"colums": []}), "spec: unknown field `colums`"),
            (
                json!({"columns": [{"name": "R", "path": "status"}]}),
                "spec.columns[0]: path",
            ),
            (
                json!({"columns": [{"name": "R", "path": ".a["}]}),
                "spec.columns[0]: path",
            ),
            (
                json!({"columns": [{"name": "", "path": ".a"}]}),
                "spec.columns[0]: name",
            ),
            (
                json!({"columns": [{"name": "A", "path": ".a"}, {"name": "A", "path": ".b"}]}),
                "spec.columns[1]: column \"A\" appears twice",
            ),
        ];
        for (spec, expected) in cases {
            let error = KindSpec::parse(&spec).expect_err(expected).to_string();
            assert!(error.starts_with(expected), "{error}");
        }
    }
}
