//! Reading fields of a JSON value: strict for `validate` (errors name the key and field),
//! lenient for dependencies and derived values (the value is already validated).

use crate::key::{Key, bad_part, check_path};
use serde_json::Value;

/// The text field `field`, if present; an error if it is present but not text.
pub fn optional_text<'v>(
    key: &Key,
    value: &'v Value,
    field: &str,
) -> Result<Option<&'v str>, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("{}: {field} must be text", key.full)),
    }
}

/// Checks that `text` can be one part of a key (a name: no `/`).
fn check_name(key: &Key, field: &str, text: &str) -> Result<(), String> {
    if text.contains('/') {
        return Err(format!("{}: {field} {text:?} contains `/`", key.full));
    }
    match bad_part(text) {
        Some(reason) => Err(format!("{}: {field} {text:?} has {reason}", key.full)),
        None => Ok(()),
    }
}

/// The text field `field` naming something that becomes one part of a key (an
/// interface), if present.
pub fn optional_name<'v>(
    key: &Key,
    value: &'v Value,
    field: &str,
) -> Result<Option<&'v str>, String> {
    let text = optional_text(key, value, field)?;
    if let Some(text) = text {
        check_name(key, field, text)?;
    }
    Ok(text)
}

fn list<'v>(
    key: &Key,
    value: &'v Value,
    field: &str,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<Vec<&'v str>, String> {
    let items = match value.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("{}: {field} must be a list of texts", key.full)),
    };
    let mut texts: Vec<&str> = Vec::with_capacity(items.len());
    for item in items {
        let Some(text) = item.as_str() else {
            return Err(format!("{}: {field} must be a list of texts", key.full));
        };
        check(text)?;
        if texts.contains(&text) {
            return Err(format!("{}: {field} lists {text:?} twice", key.full));
        }
        texts.push(text);
    }
    Ok(texts)
}

/// The list field `field` of names (each one part of a key), none twice; absent: empty.
pub fn name_list<'v>(key: &Key, value: &'v Value, field: &str) -> Result<Vec<&'v str>, String> {
    list(key, value, field, |text| check_name(key, field, text))
}

/// The list field `field` of `/`-separated paths that end keys (addresses `10.0.0.1/24`),
/// none twice; absent: empty.
pub fn path_list<'v>(key: &Key, value: &'v Value, field: &str) -> Result<Vec<&'v str>, String> {
    list(key, value, field, |text| check_path(&key.full, field, text))
}

/// The non-negative integer field `field`, if present.
pub fn optional_count(key: &Key, value: &Value, field: &str) -> Result<Option<u64>, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(number) => number
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{}: {field} must be a non-negative integer", key.full)),
    }
}

/// The text field `field`, or `None` (lenient).
pub fn text<'v>(value: &'v Value, field: &str) -> Option<&'v str> {
    value.get(field).and_then(Value::as_str)
}

/// The texts of list field `field` (lenient: anything else is skipped).
pub fn texts<'v>(value: &'v Value, field: &str) -> Vec<&'v str> {
    value
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Parts;
    use serde_json::json;

    fn key() -> Key {
        Key::parse(
            "vpp/interface/t",
            "vpp/interface/",
            Parts::Exactly(1),
            "form",
        )
        .expect("key")
    }

    #[test]
    fn fields_that_become_key_parts_are_checked_naming_the_key() {
        let value = json!({"host_if": "a/b", "addresses": ["10.0.0.1/24", "10.0.0.1/24"],
                           "interfaces": ["x", 3], "rx_ring": -1});
        let errors = [
            optional_name(&key(), &value, "host_if").expect_err("slash"),
            path_list(&key(), &value, "addresses").expect_err("twice"),
            name_list(&key(), &value, "interfaces").expect_err("not text"),
            optional_count(&key(), &value, "rx_ring").expect_err("negative"),
        ];
        assert_eq!(
            errors,
            [
                "vpp/interface/t: host_if \"a/b\" contains `/`",
                "vpp/interface/t: addresses lists \"10.0.0.1/24\" twice",
                "vpp/interface/t: interfaces must be a list of texts",
                "vpp/interface/t: rx_ring must be a non-negative integer",
            ]
        );
        assert_eq!(
            path_list(&key(), &json!({"a": ["10.0.0.1/24"]}), "a"),
            Ok(vec!["10.0.0.1/24"])
        );
        assert_eq!(optional_name(&key(), &json!({}), "host_if"), Ok(None));
    }
}
