//! `reactor-host api-resources`: the kinds this server knows of, who reconciles them and
//! who watches them — the kinds of its Kind objects, those its reactors reconcile, own or
//! watch, and the host's own.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::nimbus::{AGENT_KIND, ITEM_KIND, REPORT_KIND};
use crate::object::{KIND, KindSpec};
use crate::runtime::{Described, Watch};
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Args)]
pub struct ApiResourcesArgs {
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
}

/// One kind and what handles it.
#[derive(Debug, Serialize)]
struct Resource {
    kind: String,
    /// Whether a Kind object describes it, and whether that has a schema.
    registered: bool,
    schema: bool,
    /// `host` for the reserved kinds, else the reactors that watch it.
    #[serde(rename = "reconciledBy")]
    reconciled_by: Vec<String>,
    /// The reactors that own objects of the kind (`NAME (owns)`) or watch them to map their
    /// changes to their own objects (`NAME (references)`, `NAME (selects)`).
    #[serde(rename = "watchedBy")]
    watched_by: Vec<String>,
}

pub async fn run(args: ApiResourcesArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    let components = client.components().await.map_err(explain)?;
    let registered: BTreeMap<String, bool> = super::kinds::kind_objects(&client)
        .await?
        .into_iter()
        .map(|o| {
            let schema = KindSpec::parse(&o.spec).is_ok_and(|s| s.schema.is_some());
            (o.name, schema)
        })
        .collect();
    let mut kinds: BTreeMap<String, Vec<String>> = [KIND, AGENT_KIND, ITEM_KIND, REPORT_KIND]
        .into_iter()
        .map(|kind| (kind.to_owned(), vec!["host".to_owned()]))
        .collect();
    for kind in registered.keys() {
        kinds.entry(kind.clone()).or_default();
    }
    let mut watched: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for component in &components {
        if let Some(Described::Controller(reactor)) = &component.described {
            for kind in &reactor.kinds {
                kinds
                    .entry(kind.clone())
                    .or_default()
                    .push(component.name.clone());
            }
            for watch in &reactor.watches {
                let (kind, how) = match watch {
                    Watch::Owns { kind } => (kind, "owns"),
                    Watch::References { kind, .. } => (kind, "references"),
                    Watch::Selects { kind, .. } => (kind, "selects"),
                };
                kinds.entry(kind.clone()).or_default();
                watched
                    .entry(kind.clone())
                    .or_default()
                    .push(format!("{} ({how})", component.name));
            }
        }
    }
    let resources: Vec<Resource> = kinds
        .into_iter()
        .map(|(kind, reconciled_by)| Resource {
            registered: registered.contains_key(&kind),
            schema: registered.get(&kind).copied().unwrap_or(false),
            watched_by: watched.remove(&kind).unwrap_or_default(),
            kind,
            reconciled_by,
        })
        .collect();
    let text = match args.output.render(&resources)? {
        Some(text) => text,
        None => render(
            &["KIND", "SCHEMA", "RECONCILED BY", "WATCHED BY"],
            resources.iter().map(|r| {
                let schema = match (r.registered, r.schema) {
                    (false, _) => "-",
                    (true, true) => "yes",
                    (true, false) => "no",
                };
                let list = |names: &[String]| match names.is_empty() {
                    true => "-".to_owned(),
                    false => names.join(","),
                };
                vec![
                    r.kind.clone(),
                    schema.to_owned(),
                    list(&r.reconciled_by),
                    list(&r.watched_by),
                ]
            }),
        ),
    };
    print!("{text}");
    Ok(())
}
