//! Server-side field validation (`fieldValidation=Strict|Warn|Ignore`): the fields of a spec
//! its Kind's schema does not declare, refused, warned of, or let through.

use serde_json::Value;

/// What to do with undeclared fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Refuse the write (kubectl's default, `--validate=strict`).
    Strict,
    /// Write, with a warning per field (Kubernetes' default when the request names none).
    Warn,
    /// Write, say nothing.
    Ignore,
}

/// A `fieldValidation` value that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fieldValidation {0:?} is invalid: expected Strict, Warn or Ignore")]
pub struct UnknownValidation(pub String);

impl FieldValidation {
    pub fn parse(value: Option<&str>) -> Result<Self, UnknownValidation> {
        match value {
            None | Some("") | Some("Warn") => Ok(Self::Warn),
            Some("Strict") => Ok(Self::Strict),
            Some("Ignore") => Ok(Self::Ignore),
            Some(other) => Err(UnknownValidation(other.to_owned())),
        }
    }
}

/// The fields of `spec` (dotted from `spec.`) that `schema` does not declare: a key of an
/// object whose schema lists `properties` and allows no `additionalProperties` (and does not
/// say `x-kubernetes-preserve-unknown-fields`), searched through `properties`, `items` and
/// `additionalProperties`.
pub fn unknown_fields(schema: &Value, spec: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(schema, spec, "spec", &mut found);
    found
}

fn walk(schema: &Value, value: &Value, path: &str, found: &mut Vec<String>) {
    if schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return;
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                match (properties.and_then(|p| p.get(key)), additional) {
                    (Some(declared), _) => walk(declared, child, &child_path, found),
                    (None, Some(extra)) if extra.is_object() => {
                        walk(extra, child, &child_path, found)
                    }
                    (None, Some(Value::Bool(true))) => {}
                    (None, _) if properties.is_some() => found.push(child_path),
                    (None, _) => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), found);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn undeclared_fields_by_path() {
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "integer"},
            "rules": {"type": "array", "items": {"type": "object", "properties": {"port": {}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "open": {"type": "object"},
        }});
        let spec = json!({"size": 1, "color": "red", "rules": [{"port": 80, "proto": "tcp"}],
            "labels": {"a": "b"}, "free": {"x": 1}, "open": {"y": 2}});
        assert_eq!(
            unknown_fields(&schema, &spec),
            ["spec.color", "spec.rules[0].proto"]
        );
        assert!(unknown_fields(&json!({"type": "object"}), &spec).is_empty());
        assert_eq!(FieldValidation::parse(None), Ok(FieldValidation::Warn));
        assert_eq!(
            FieldValidation::parse(Some("Strict")),
            Ok(FieldValidation::Strict)
        );
        assert!(FieldValidation::parse(Some("strict")).is_err());
    }
}
