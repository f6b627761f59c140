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
    /// `{range QUERY}…{end}`: the parts inside, once per result, rooted at it.
    Range(JsonPath, Vec<Part>),
}

/// kubectl's path (`.status.reconcile.policy-rust`, `items[*].name`, `@.name`) as RFC 9535
/// JSONPath: rooted at `$`, and member names that the shorthand cannot spell (dashes,
/// slashes, dots of a label key written `['a.b/c']` already) in brackets.
fn rfc9535(expression: &str) -> String {
    let body = expression
        .strip_prefix('$')
        .or_else(|| expression.strip_prefix('@'))
        .unwrap_or(expression);
    let mut out = String::from("$");
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    if chars.first().is_some_and(|c| *c != '.' && *c != '[') {
        out.push('.');
    }
    while i < chars.len() {
        match chars[i] {
            '[' => {
                // Copied as it is, up to its closing bracket (quotes and nesting respected).
                let (mut depth, mut quote) = (0usize, None::<char>);
                while i < chars.len() {
                    let c = chars[i];
                    out.push(c);
                    i += 1;
                    match (quote, c) {
                        (Some(q), c) if c == q => quote = None,
                        (Some(_), _) => {}
                        (None, '\'' | '"') => quote = Some(c),
                        (None, '[') => depth += 1,
                        (None, ']') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '.' if chars.get(i + 1) == Some(&'.') => {
                out.push_str("..");
                i += 2;
            }
            '.' => i += 1,
            _ => {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let shorthand = name == "*"
                    || (name
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_'));
                if out.ends_with("..") {
                    // `..name` keeps the descendant form.
                } else if shorthand {
                    out.push('.');
                }
                if shorthand {
                    out.push_str(&name);
                } else {
                    out.push_str(&format!("['{}']", name.replace('\'', "\\'")));
                }
            }
        }
    }
    out
}

fn query(expression: &str) -> Result<JsonPath, String> {
    let trimmed = expression.trim();
    JsonPath::parse(&rfc9535(trimmed)).map_err(|e| format!("jsonpath {{{trimmed}}}: {e}"))
}

/// A `{"…"}` literal's text, with `\n`, `\t` and `\"` read as kubectl reads them.
fn literal(quoted: &str) -> String {
    let inner = &quoted[1..quoted.len() - 1];
    inner
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\\"", "\"")
}

/// Parses parts up to `{end}` (when `nested`) or the end of `rest`.
fn parse_parts(text: &str, rest: &mut &str, nested: bool) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Text(rest[..open].to_owned()));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("jsonpath {text:?}: a {{ is not closed"))?;
        let inside = rest[open + 1..open + close].trim();
        *rest = &rest[open + close + 1..];
        if inside == "end" {
            if nested {
                return Ok(parts);
            }
            return Err(format!("jsonpath {text:?}: {{end}} without {{range}}"));
        }
        if let Some(over) = inside.strip_prefix("range ") {
            let inner = parse_parts(text, rest, true)?;
            parts.push(Part::Range(query(over)?, inner));
        } else if inside.len() >= 2 && inside.starts_with('"') && inside.ends_with('"') {
            parts.push(Part::Text(literal(inside)));
        } else {
            parts.push(Part::Query(query(inside)?));
        }
    }
    if nested {
        return Err(format!("jsonpath {text:?}: {{range}} without {{end}}"));
    }
    if !rest.is_empty() {
        parts.push(Part::Text((*rest).to_owned()));
        *rest = "";
    }
    Ok(parts)
}

impl FromStr for Template {
    type Err = String;

    /// `{.a.b}` parts with text around them, `{"…"}` literals and `{range …}…{end}`;
    /// without braces the whole is one query.
    fn from_str(text: &str) -> Result<Self, String> {
        if !text.contains('{') {
            return Ok(Self(vec![Part::Query(query(text)?)]));
        }
        let mut rest = text;
        Ok(Self(parse_parts(text, &mut rest, false)?))
    }
}

fn render_parts(parts: &[Part], value: &Value, out: &mut String) {
    for part in parts {
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
            Part::Range(path, inner) => {
                for each in path.query(value).all() {
                    render_parts(inner, each, out);
                }
            }
        }
    }
}

impl Template {
    /// The template with each query replaced by what it finds in `value`: strings as they
    /// are, other values as JSON, several results separated by spaces.
    pub fn render(&self, value: &Value) -> String {
        let mut out = String::new();
        render_parts(&self.0, value, &mut out);
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
        assert!("{range .items[*]}{.name}".parse::<Template>().is_err());
        assert!("{.a}{end}".parse::<Template>().is_err());
        assert!("{.a[}".parse::<Template>().is_err());
    }

    /// `{range}…{end}` (nested too), quoted literals, and keys kubectl writes with dashes.
    #[test]
    fn ranges_literals_and_dashed_keys() {
        let object = json!({
        "status": {"reconcile": {"policy-rust": {"observedGeneration": 2}}},
        "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
        "items": [
            {"name": "x", "rules": [{"name": "r1"}, {"name": "r2"}]},
            {"name": "y", "rules": []}
        ]});
        let render = |t: &str| t.parse::<Template>().expect(t).render(&object);
        assert_eq!(
            render("{.status.reconcile.policy-rust.observedGeneration}"),
            "2"
        );
        assert_eq!(
            render("{.metadata.labels['app.kubernetes.io/name']}"),
            "web"
        );
        assert_eq!(render(r#"{range .items[*]}{.name}{"\n"}{end}"#), "x\ny\n");
        assert_eq!(
            render(r#"{range .items[*]}{.name}:{range .rules[*]} {@.name}{end};{end}"#),
            "x: r1 r2;y:;"
        );
        assert_eq!(render(r#"{"a\tb"}"#), "a\tb");
        assert_eq!(render("{..observedGeneration}"), "2");
    }
}
