//! `-o table|json|yaml|jsonpath=TEMPLATE`: how a command prints what it got.

use super::jsonpath::Template;
use serde::Serialize;

#[derive(Debug, Clone)]
pub enum Output {
    Table,
    /// A table with more columns, where a command has them (`components`); else the table.
    Wide,
    Json,
    Yaml,
    JsonPath(Template),
}

/// Parses `-o`: `table`, `wide`, `json`, `yaml` or `jsonpath=TEMPLATE`.
pub fn parse_output(text: &str) -> Result<Output, String> {
    match text {
        "table" => Ok(Output::Table),
        "wide" => Ok(Output::Wide),
        "json" => Ok(Output::Json),
        "yaml" => Ok(Output::Yaml),
        _ => match text.strip_prefix("jsonpath=") {
            Some(template) => template.parse().map(Output::JsonPath),
            None => Err(format!(
                "{text:?} is not an output format: use table, wide, json, yaml or jsonpath=TEMPLATE"
            )),
        },
    }
}

impl Output {
    /// `value` as this format asks, or `None` for a table (the caller draws its own).
    pub fn render<T: Serialize>(&self, value: &T) -> anyhow::Result<Option<String>> {
        Ok(Some(match self {
            Output::Table | Output::Wide => return Ok(None),
            Output::Json => serde_json::to_string_pretty(value)? + "\n",
            Output::Yaml => serde_yaml_ng::to_string(value)?,
            Output::JsonPath(template) => template.render(&serde_json::to_value(value)?) + "\n",
        }))
    }
}
