//! `reactor-host api-resources`: the kinds this server knows of, and who reconciles them —
//! the kinds its reactors said they watch, and the host's own reserved kinds.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::nimbus::{AGENT_KIND, ITEM_KIND, REPORT_KIND};
use crate::runtime::Described;
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
    /// `host` for the reserved kinds, else the reactors that watch it.
    #[serde(rename = "reconciledBy")]
    reconciled_by: Vec<String>,
}

pub async fn run(args: ApiResourcesArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let components = global.client()?.components().await.map_err(explain)?;
    let mut kinds: BTreeMap<String, Vec<String>> = [AGENT_KIND, ITEM_KIND, REPORT_KIND]
        .into_iter()
        .map(|kind| (kind.to_owned(), vec!["host".to_owned()]))
        .collect();
    for component in &components {
        if let Some(Described::Controller(reactor)) = &component.described {
            for kind in &reactor.kinds {
                kinds
                    .entry(kind.clone())
                    .or_default()
                    .push(component.name.clone());
            }
        }
    }
    let resources: Vec<Resource> = kinds
        .into_iter()
        .map(|(kind, reconciled_by)| Resource {
            kind,
            reconciled_by,
        })
        .collect();
    let text = match args.output.render(&resources)? {
        Some(text) => text,
        None => render(
            &["KIND", "RECONCILED BY"],
            resources
                .iter()
                .map(|r| vec![r.kind.clone(), r.reconciled_by.join(",")]),
        ),
    };
    print!("{text}");
    Ok(())
}
