//! Fields of an object by dot path (`spec.plan`): the names a reference field holds and the
//! selector a selector field holds.

use reactor_core::object::Object;
use serde_json::Value;
use std::collections::BTreeMap;

/// The value at `path` of the object's document (`kind`, `name`, `labels`, `spec`,
/// `status`), if any.
fn field<'a>(object: &'a Object, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut value = match parts.next()? {
        "spec" => &object.spec,
        "status" => &object.status,
        _ => return None,
    };
    for part in parts {
        value = value.get(part)?;
    }
    Some(value)
}

/// The names the field at `path` holds: a string, or a list of strings (others ignored).
pub fn names_at(object: &Object, path: &str) -> Vec<String> {
    match field(object, path) {
        Some(Value::String(name)) => vec![name.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The label selector the field at `path` holds: a map of label to value (string values
/// only). `None` when the field is missing or not a map: such an object selects nothing.
pub fn selector_at(object: &Object, path: &str) -> Option<BTreeMap<String, String>> {
    let Value::Object(map) = field(object, path)? else {
        return None;
    };
    Some(
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_selectors_by_path() {
        let object: Object = serde_json::from_value(json!({
            "kind": "Tenant", "name": "a",
            "spec": {"plan": "gold", "extra": ["x", "y", 3], "selector": {"team": "t"}}
        }))
        .expect("object");
        assert_eq!(names_at(&object, "spec.plan"), vec!["gold"]);
        assert_eq!(names_at(&object, "spec.extra"), vec!["x", "y"]);
        assert!(names_at(&object, "spec.missing").is_empty());
        assert!(names_at(&object, "meta.uid").is_empty());
        let selector = selector_at(&object, "spec.selector").expect("selector");
        assert_eq!(selector.get("team").map(String::as_str), Some("t"));
        assert_eq!(selector_at(&object, "spec.plan"), None);
    }
}
