//! Defaulting: the `default`s of a kind's schema filled into an object's spec, as Kubernetes
//! does for a CRD's structural schema.

use serde_json::{Map, Value};

/// Fills in `spec` every property its `schema` gives a `default` for and that is missing,
/// through `properties`, `additionalProperties`, `items` and `allOf` (not through `$ref`).
/// A default that is itself an object gets its own properties' defaults too. A missing spec
/// (`null`) of a schema with properties or a `default` is defaulted as an empty object.
pub fn apply(schema: &Value, spec: &mut Value) {
    if spec.is_null() {
        match schema.get("default") {
            Some(default) => *spec = default.clone(),
            None if schema.get("properties").is_some() => *spec = Value::Object(Map::new()),
            None => return,
        }
    }
    fill(schema, spec, 0);
}

/// Schemas nest at most this deep for defaulting (a deeper part is left as it is).
const MAX_DEPTH: usize = 64;

fn fill(schema: &Value, value: &mut Value, depth: usize) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for part in all {
            fill(part, value, depth + 1);
        }
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, sub) in properties.into_iter().flatten() {
                if !map.contains_key(key)
                    && let Some(default) = sub.get("default")
                {
                    map.insert(key.clone(), default.clone());
                }
                if let Some(child) = map.get_mut(key) {
                    fill(sub, child, depth + 1);
                }
            }
            if let Some(extra) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                for (key, child) in map.iter_mut() {
                    if !properties.is_some_and(|p| p.contains_key(key)) {
                        fill(extra, child, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|s| s.is_object()) {
                for child in items {
                    fill(item, child, depth + 1);
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
    fn fills_missing_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "replicas": {"type": "integer", "default": 1},
            "plan": {"type": "string", "default": "basic"},
            "limits": {"type": "object", "default": {}, "properties": {
                "cpu": {"type": "integer", "default": 2}}},
            "users": {"type": "array", "items": {"type": "object", "properties": {
                "role": {"type": "string", "default": "viewer"}}}},
            "quotas": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"max": {"default": 10}}}}
        }});
        let mut spec = json!({"plan": "gold", "users": [{"name": "a"}, {"name": "b", "role": "admin"}],
            "quotas": {"disk": {}}});
        apply(&schema, &mut spec);
        assert_eq!(
            spec,
            json!({"replicas": 1, "plan": "gold", "limits": {"cpu": 2},
                "users": [{"name": "a", "role": "viewer"}, {"name": "b", "role": "admin"}],
                "quotas": {"disk": {"max": 10}}})
        );
    }

    #[test]
    fn a_missing_spec_is_an_empty_object() {
        let schema = json!({"properties": {"replicas": {"default": 1}}});
        let mut spec = Value::Null;
        apply(&schema, &mut spec);
        assert_eq!(spec, json!({"replicas": 1}));
        let mut untouched = Value::Null;
        apply(&json!({"type": "string"}), &mut untouched);
        assert_eq!(untouched, Value::Null);
    }
}
