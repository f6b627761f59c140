//! `reactor-host explain KIND[.spec.FIELD...]`: a kind's schema for people, as kubectl
//! explain prints a resource's: each field with its type, whether it is required, its
//! default and its description, nested fields indented under theirs.

use super::client_args::ClientArgs;
use clap::Args;
use serde_json::Value;
use std::fmt::Write;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A kind (`Tenant`, or `tenant`), or a field of its spec (`tenant.spec.limits`).
    pub what: String,
}

pub async fn run(args: ExplainArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    let (typed, field) = match args.what.split_once('.') {
        Some((kind, field)) => (kind, Some(field)),
        None => (args.what.as_str(), None),
    };
    let resolved = super::kinds::resolve(&client, typed).await?;
    let kind = &resolved.kind;
    let Some(spec) = resolved.spec else {
        anyhow::bail!(
            "kind {kind} has no Kind object, so no schema to explain; see reactor-host api-resources"
        );
    };
    let Some(schema) = spec.schema else {
        anyhow::bail!("Kind {kind} has no schema (spec.schema) to explain");
    };
    let mut out = format!("KIND:     {kind}\n");
    let (title, node) = match field {
        None => ("spec".to_owned(), &schema),
        Some(path) => {
            let mut parts = path.split('.');
            if parts.next() != Some("spec") {
                anyhow::bail!("{path}: only the spec has a schema: explain {kind}.spec[.FIELD...]");
            }
            let mut node = &schema;
            let mut title = "spec".to_owned();
            for part in parts {
                node = child(node, part).ok_or_else(|| {
                    anyhow::anyhow!("{title} of kind {kind} has no field {part:?}")
                })?;
                title = format!("{title}.{part}");
            }
            (title, node)
        }
    };
    let description = match (field, &spec.description) {
        (None, Some(description)) => Some(description.as_str()),
        _ => node.get("description").and_then(Value::as_str),
    };
    let _ = writeln!(out, "FIELD:    {title} <{}>\n", type_of(node));
    out.push_str("DESCRIPTION:\n");
    let _ = writeln!(out, "    {}", description.unwrap_or("<empty>"));
    let facts = facts(node);
    if !facts.is_empty() {
        let _ = writeln!(out, "    {facts}");
    }
    if properties(node).next().is_some() {
        out.push_str("\nFIELDS:\n");
        fields(node, 1, &mut out);
    }
    print!("{out}");
    Ok(())
}

/// The schema of field `name` inside `node` (of a list: of its items).
fn child<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    let node = node.get("items").filter(|i| i.is_object()).unwrap_or(node);
    properties(node)
        .find(|(key, _)| *key == name)
        .map(|(_, v)| v)
}

fn properties(node: &Value) -> impl Iterator<Item = (&str, &Value)> {
    let node = node.get("items").filter(|i| i.is_object()).unwrap_or(node);
    node.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v))
}

/// `string`, `integer`, `[]string`, `object`, `map[string]integer`, `string|null`, ...
fn type_of(node: &Value) -> String {
    let named = match node.get("type") {
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(ts)) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("|"),
        ),
        _ => None,
    };
    match named.as_deref() {
        Some("array") => match node.get("items") {
            Some(items) if items.is_object() => format!("[]{}", type_of(items)),
            _ => "[]any".to_owned(),
        },
        Some("object") | None if node.get("properties").is_some() => "object".to_owned(),
        Some("object") => match node.get("additionalProperties") {
            Some(values) if values.is_object() => format!("map[string]{}", type_of(values)),
            _ => "object".to_owned(),
        },
        Some(named) => named.to_owned(),
        None if node.get("$ref").is_some() => "$ref".to_owned(),
        None => "any".to_owned(),
    }
}

/// The default, allowed values and bounds, in one line.
fn facts(node: &Value) -> String {
    let mut facts = Vec::new();
    if let Some(default) = node.get("default") {
        facts.push(format!("Default: {default}."));
    }
    if let Some(Value::Array(values)) = node.get("enum") {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        facts.push(format!("One of: {}.", values.join(", ")));
    }
    for (key, what) in [
        ("minimum", "Minimum"),
        ("maximum", "Maximum"),
        ("minLength", "Minimum length"),
        ("maxLength", "Maximum length"),
        ("minItems", "Minimum items"),
        ("maxItems", "Maximum items"),
        ("pattern", "Pattern"),
        ("format", "Format"),
    ] {
        if let Some(value) = node.get(key) {
            facts.push(format!("{what}: {value}."));
        }
    }
    facts.join(" ")
}

/// Nested fields of `node`, two spaces deeper per level (at most 8 levels).
fn fields(node: &Value, depth: usize, out: &mut String) {
    let required: Vec<&str> = (node.get("items").filter(|i| i.is_object()).unwrap_or(node))
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let indent = "  ".repeat(depth);
    for (name, field) in properties(node) {
        let mark = if required.contains(&name) {
            " -required-"
        } else {
            ""
        };
        let _ = writeln!(out, "{indent}{name}\t<{}>{mark}", type_of(field));
        let mut text = Vec::new();
        if let Some(description) = field.get("description").and_then(Value::as_str) {
            text.push(description.replace('\n', " "));
        }
        let facts = facts(field);
        if !facts.is_empty() {
            text.push(facts);
        }
        if !text.is_empty() {
            let _ = writeln!(out, "{indent}  {}", text.join(" "));
        }
        if depth < 8 {
            fields(field, depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_with_types_defaults_and_nesting() {
        let schema = json!({"type": "object", "required": ["plan"], "properties": {
            "plan": {"type": "string", "enum": ["basic", "gold"], "description": "What they pay for."},
            "replicas": {"type": "integer", "default": 1},
            "users": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}}}}}});
        let mut out = String::new();
        fields(&schema, 1, &mut out);
        assert_eq!(
            out,
            "  plan\t<string> -required-\n    What they pay for. One of: \"basic\", \"gold\".\n  replicas\t<integer>\n    Default: 1.\n  users\t<[]object>\n    name\t<string>\n"
        );
        assert_eq!(
            type_of(&json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            "map[string]integer"
        );
        assert_eq!(
            child(&schema, "users").and_then(|u| child(u, "name")),
            Some(&json!({"type": "string"}))
        );
    }
}
