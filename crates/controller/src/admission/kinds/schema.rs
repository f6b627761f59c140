//! A kind's JSON Schema, compiled once per version of its Kind object, and the one-line
//! messages of what an object's spec breaks.

use jsonschema::Validator;
use jsonschema::paths::{Location, LocationSegment};
use serde_json::Value;

/// Messages longer than this are cut (they quote the offending value).
const MAX_MESSAGE: usize = 300;

/// A compiled schema for the `spec` of one kind's objects.
pub struct Schema {
    source: Value,
    validator: Validator,
}

impl Schema {
    /// Compiles `source` (checked against its draft's meta-schema; no remote `$ref`s are
    /// fetched). The error names the place in the schema, as `spec.schema.<path>: ...`.
    pub fn compile(source: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(source).map_err(|e| {
            let at = dotted("spec.schema", source, e.instance_path());
            cut(&format!("{at}: {e}"))
        })?;
        Ok(Self {
            source: source.clone(),
            validator,
        })
    }

    /// Fills in the schema's defaults, then validates; the error is the first problem, as
    /// `spec.<field>: <what is wrong>`, with how many more there are.
    pub fn admit(&self, spec: &mut Value) -> Result<(), String> {
        super::defaults::apply(&self.source, spec);
        let mut errors = self.validator.iter_errors(spec);
        let Some(first) = errors.next() else {
            return Ok(());
        };
        let more = errors.count();
        let at = dotted("spec", spec, first.instance_path());
        let mut message = cut(&format!("{at}: {first}"));
        if more > 0 {
            message.push_str(&format!(" (and {more} more)"));
        }
        Err(message)
    }
}

/// `root.a.b[0].c` for the JSON Pointer `/a/b/0/c` into `value` (an index only where the
/// value there is a list, so a property named `0` stays `.0`).
fn dotted(root: &str, value: &Value, location: &Location) -> String {
    let mut out = root.to_owned();
    let mut at = Some(value);
    for segment in location.segments() {
        let text = match &segment {
            LocationSegment::Property(name) => name.to_string(),
            LocationSegment::Index(index) => index.to_string(),
        };
        match at {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{text}]"));
                at = text.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            _ => {
                out.push('.');
                out.push_str(&text);
                at = at.and_then(|v| v.get(&text));
            }
        }
    }
    out
}

/// One line of at most [`MAX_MESSAGE`] characters.
fn cut(message: &str) -> String {
    let line = message.replace(['\n', '\r'], " ");
    match line.char_indices().nth(MAX_MESSAGE) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tenant() -> Schema {
        Schema::compile(
            &json!({"type": "object", "required": ["plan"], "properties": {
                "plan": {"type": "string"},
                "replicas": {"type": "integer", "minimum": 1, "default": 1},
                "users": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}}}}
            }}),
        )
        .expect("compiles")
    }

    #[test]
    fn names_the_field() {
        let schema = tenant();
        let mut spec = json!({"plan": "gold", "replicas": "x"});
        let error = schema.admit(&mut spec).expect_err("refused");
        assert_eq!(error, r#"spec.replicas: "x" is not of type "integer""#);
        let mut spec = json!({"plan": "gold", "users": [{"name": "a"}, {"name": 3}]});
        let error = schema.admit(&mut spec).expect_err("refused");
        assert!(
            error.starts_with("spec.users[1].name: 3 is not of type"),
            "{error}"
        );
        let mut spec = json!({"replicas": 0});
        let error = schema.admit(&mut spec).expect_err("refused");
        assert!(error.starts_with("spec: "), "{error}");
        assert!(error.ends_with("(and 1 more)"), "{error}");
    }

    #[test]
    fn defaults_then_validates() {
        let mut spec = json!({"plan": "gold"});
        tenant().admit(&mut spec).expect("admitted");
        assert_eq!(spec, json!({"plan": "gold", "replicas": 1}));
    }

    #[test]
    fn a_bad_schema_is_refused_where_it_is_bad() {
        let error = Schema::compile(&json!({"properties": {"replicas": {"type": "integr"}}}))
            .err()
            .expect("refused");
        assert!(
            error.starts_with("spec.schema.properties.replicas.type: "),
            "{error}"
        );
        let remote = json!({"$ref": "https://example.com/schema.json"});
        assert!(Schema::compile(&remote).is_err());
    }
}
