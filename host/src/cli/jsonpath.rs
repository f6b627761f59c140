//! kubectl's JSONPath templates (`{.status.ready}`, `{.items[*].name}`, text around them),
//! for `-o jsonpath=...` and `wait --for=jsonpath=...`; each `{...}` is read as an RFC 9535
//! JSONPath query (serde_json_path) rooted at the object.

use serde_json::Value;
use serde_json_path::JsonPath;
use std::str::FromStr;

/// A template: text, and queries whose results replace them.
#[derive(Debug, Clone)]
pub struct Template(Vec<Part>);

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Query(JsonPath),
}

fn query(expression: &str) -> Result<JsonPath, String> {
    let trimmed = expression.trim();
    let rooted = if trimmed.starts_with('$') {
        trimmed.to_owned()
    } else {
        format!("${trimmed}")
    };
    JsonPath::parse(&rooted).map_err(|e| format!("jsonpath {{{trimmed}}}: {e}"))
}

impl FromStr for Template {
    type Err = String;

    /// `{.a.b}` parts with text around them; without braces the whole is one query.
    fn from_str(text: &str) -> Result<Self, String> {
        if !text.contains('{') {
            return Ok(Self(vec![Part::Query(query(text)?)]));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_owned()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("jsonpath {text:?}: a {{ is not closed"))?;
            parts.push(Part::Query(query(&rest[open + 1..open + close])?));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Self(parts))
    }
}

impl Template {
    /// The template with each query replaced by what it finds in `value`: strings as they
    /// are, other values as JSON, several results separated by spaces.
    pub fn render(&self, value: &Value) -> String {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Query(path) => {
                    let found: Vec<String> = path
                        .query(value)
                        .all()
                        .into_iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect();
                    out.push_str(&found.join(" "));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_templates() {
        let object = json!({"name": "a", "status": {"ready": true, "n": 3},
            "items": [{"name": "x"}, {"name": "y"}]});
        let render = |t: &str| t.parse::<Template>().expect(t).render(&object);
        assert_eq!(render("{.status.ready}"), "true");
        assert_eq!(render(".status.n"), "3");
        assert_eq!(render("{.name}={.status.n}\n"), "a=3\n");
        assert_eq!(render("{.items[*].name}"), "x y");
        assert_eq!(render("{.missing}"), "");
        assert!("{.a".parse::<Template>().is_err());
        assert!("{.a[}".parse::<Template>().is_err());
    }
}
