//! How a kind is named in the Kubernetes API: its group, version, plural and short names.

use reactor_core::object::{Column, KIND, KindSpec, Object};

/// The group a kind is served in when its Kind object names none (`serve --api-group`).
pub const DEFAULT_GROUP: &str = "reactor.dev";

/// The version a kind is served in when its Kind object names none.
pub const DEFAULT_VERSION: &str = "v1";

/// Why a Kind object cannot be served as a resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamingError {
    #[error("the object {0} is not a Kind object")]
    NotAKind(String),
    #[error("kind {kind}: {message}")]
    Spec { kind: String, message: String },
}

/// One kind as an API resource (cluster-scoped): where it is served and what `get` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The kind of its objects in the store, e.g. `Policy`.
    pub kind: String,
    pub group: String,
    pub version: String,
    /// The name in paths, e.g. `policies`.
    pub plural: String,
    /// The kind in lowercase, e.g. `policy`.
    pub singular: String,
    pub short_names: Vec<String>,
    /// The printer columns of its Kind object.
    pub columns: Vec<Column>,
    /// What the kind is for (its Kind object's description).
    pub description: Option<String>,
    /// The JSON Schema of the objects' spec (its Kind object's), for the OpenAPI documents.
    pub schema: Option<serde_json::Value>,
}

impl Resource {
    /// The resource a Kind object describes, in `default_group` unless it names its own.
    pub fn of(kind_object: &Object, default_group: &str) -> Result<Self, NamingError> {
        if kind_object.kind != KIND {
            return Err(NamingError::NotAKind(kind_object.key().to_string()));
        }
        let spec = KindSpec::parse(&kind_object.spec).map_err(|e| NamingError::Spec {
            kind: kind_object.name.clone(),
            message: e.to_string(),
        })?;
        Ok(Self::from_spec(&kind_object.name, &spec, default_group))
    }

    /// The resource of `kind` as `spec` names it.
    pub fn from_spec(kind: &str, spec: &KindSpec, default_group: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            group: spec
                .group
                .clone()
                .unwrap_or_else(|| default_group.to_owned()),
            version: spec
                .version
                .clone()
                .unwrap_or_else(|| DEFAULT_VERSION.to_owned()),
            plural: spec.plural.clone().unwrap_or_else(|| plural(kind)),
            singular: kind.to_ascii_lowercase(),
            short_names: spec.short_names.clone(),
            columns: spec.columns.clone(),
            description: spec.description.clone(),
            schema: spec.schema.clone(),
        }
    }

    /// `group/version`, what objects name as their `apiVersion`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// `plural.group`, as Kubernetes names a resource in its messages.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// Whether the resource is served at `group`/`version` under `plural`.
    pub fn serves(&self, group: &str, version: &str, plural: &str) -> bool {
        self.group == group && self.version == version && self.plural == plural
    }
}

/// A kind's default plural (Kubernetes' rules), the one the host's CLI also knows kinds by.
pub use reactor_core::object::plural;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind_object(name: &str, spec: serde_json::Value) -> Object {
        serde_json::from_value(json!({"kind": "Kind", "name": name, "spec": spec}))
            .expect("an object")
    }

    #[test]
    fn a_kind_object_names_its_resource() {
        let plain = Resource::of(&kind_object("Policy", json!({})), "reactor.dev").expect("ok");
        assert_eq!(plain.api_version(), "reactor.dev/v1");
        assert_eq!(plain.plural, "policies");
        assert_eq!(plain.singular, "policy");
        assert_eq!(plain.qualified(), "policies.reactor.dev");
        let named = kind_object(
            "Widget",
            json!({"group": "example.com", "version": "v1beta1", "plural": "widgetz", "shortNames": ["wd"]}),
        );
        let named = Resource::of(&named, "reactor.dev").expect("ok");
        assert!(named.serves("example.com", "v1beta1", "widgetz"));
        assert_eq!(named.short_names, ["wd"]);
        let policy: Object =
            serde_json::from_value(json!({"kind": "Policy", "name": "a"})).expect("object");
        assert!(matches!(
            Resource::of(&policy, "g"),
            Err(NamingError::NotAKind(_))
        ));
        let bad = kind_object("Bad", json!({"plural": "Not OK"}));
        let error = Resource::of(&bad, "g").expect_err("bad plural").to_string();
        assert!(error.starts_with("kind Bad: spec: plural"), "{error}");
    }
}
