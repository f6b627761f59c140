//! `reactor-host get KIND [NAME] [-l SELECTOR] [-o table|json|yaml|jsonpath=...] [-w]`.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::api::Client;
use crate::object::{KIND, KindSpec, Object, Selector, column_cell};
use crate::store::EventType;
use clap::Args;
use futures::StreamExt;
use serde_json_path::JsonPath;
use std::io::Write;

#[derive(Debug, Args)]
pub struct GetArgs {
    pub kind: String,
    pub name: Option<String>,
    /// table, json, yaml, or jsonpath=TEMPLATE (e.g. `jsonpath={.status.ready}`).
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
    /// Only objects whose labels match, e.g. `app=web,tier!=db`.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// After printing, keep printing each change (a table row or a document per change).
    #[arg(short = 'w', long)]
    pub watch: bool,
}

pub async fn run(mut args: GetArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    let resolved = super::kinds::resolve(&client, &args.kind).await?;
    args.kind = resolved.kind.clone();
    if let (KIND, Some(name)) = (args.kind.as_str(), &args.name) {
        args.name = Some(super::kinds::resolve_kind_name(&client, name).await?);
    }
    let columns = Columns::of(resolved.spec.as_ref());
    let from = match &args.name {
        Some(name) => {
            let object = client.get(&args.kind, name).await.map_err(explain)?;
            let text = match args.output.render(&object)? {
                Some(text) => text,
                None => columns.table(std::slice::from_ref(&object)),
            };
            print!("{text}");
            object.meta.revision
        }
        None => {
            let listing = client
                .list(&args.kind, args.selector.as_deref())
                .await
                .map_err(explain)?;
            // Objects of a kind nobody registered still list. An empty list of such a kind
            // is most likely a typo: a table says so as an error (as kubectl does for an
            // unknown resource type); JSON, YAML and JSONPath stay an empty list for
            // scripts, with a warning when a known kind is near.
            if listing.items.is_empty() && !resolved.known && args.selector.is_none() {
                if matches!(args.output, Output::Table) {
                    return Err(resolved.unknown());
                }
                if !resolved.nearest.is_empty() {
                    eprintln!("warning: {}", resolved.unknown());
                }
            }
            let text = match args.output.render(&listing)? {
                Some(text) => text,
                None => columns.table(&listing.items),
            };
            print!("{text}");
            listing.revision
        }
    };
    if args.watch {
        follow(&client, &args, &columns, from).await?;
    }
    Ok(())
}

/// Prints every change after `from` of the objects `args` selects, until the server ends.
async fn follow(
    client: &Client,
    args: &GetArgs,
    columns: &Columns,
    from: u64,
) -> anyhow::Result<()> {
    let selector: Selector = args
        .selector
        .as_deref()
        .unwrap_or_default()
        .parse()
        .map_err(|e: crate::object::SelectorError| anyhow::anyhow!("{e}"))?;
    let mut events = Box::pin(
        client
            .watch(Some(&args.kind), from)
            .await
            .map_err(explain)?,
    );
    let mut last = from;
    let mut stdout = std::io::stdout().lock();
    while let Some(event) = events.next().await {
        let event = event.map_err(explain)?;
        last = event.revision;
        let Some(object) = event.object else {
            continue;
        };
        if args.name.as_ref().is_some_and(|n| *n != object.name)
            || !selector.matches(&object.labels)
        {
            continue;
        }
        let text = match args.output.render(&object)? {
            Some(text) => text,
            None => {
                let state = if event.event_type == EventType::Deleted {
                    "deleted"
                } else {
                    state(&object)
                };
                rows_only(&columns.render([columns.row(&object, state)]))
            }
        };
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
    }
    anyhow::bail!("the server ended the watch; resume with get -w after revision {last}")
}

/// The table's columns: NAME, the kind's own (its Kind object's `columns`), then the
/// object's bookkeeping.
struct Columns {
    own: Vec<(String, Option<JsonPath>)>,
}

const AFTER: [&str; 5] = ["REVISION", "GENERATION", "STATE", "LABELS", "UPDATED"];

impl Columns {
    fn of(spec: Option<&KindSpec>) -> Self {
        let own = spec
            .map(|s| s.columns.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|c| (c.name.to_ascii_uppercase(), c.query().ok()))
            .collect();
        Self { own }
    }

    fn render(&self, rows: impl IntoIterator<Item = Vec<String>>) -> String {
        let mut header = vec!["NAME"];
        header.extend(self.own.iter().map(|(name, _)| name.as_str()));
        header.extend(AFTER);
        render(&header, rows)
    }

    fn table(&self, objects: &[Object]) -> String {
        self.render(objects.iter().map(|o| self.row(o, state(o))))
    }

    fn row(&self, o: &Object, state: &str) -> Vec<String> {
        let labels: Vec<String> = o.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row = vec![o.name.clone()];
        if !self.own.is_empty() {
            let value = serde_json::to_value(o).unwrap_or_default();
            row.extend(
                self.own
                    .iter()
                    .map(|(_, query)| column_cell(query.as_ref(), &value)),
            );
        }
        row.extend([
            o.meta.revision.to_string(),
            o.meta.generation.to_string(),
            state.to_owned(),
            if labels.is_empty() {
                "<none>".to_owned()
            } else {
                labels.join(",")
            },
            o.meta.updated.clone(),
        ]);
        row
    }
}

fn state(object: &Object) -> &'static str {
    if object.meta.deleting {
        "deleting"
    } else {
        "active"
    }
}

/// A rendered table without its header line.
fn rows_only(table: &str) -> String {
    table
        .split_once('\n')
        .map(|(_, rows)| rows.to_owned())
        .unwrap_or_default()
}
