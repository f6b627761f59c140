//! `reactor-host label KIND NAME key=value... key-... [--overwrite]`: sets and removes an
//! object's labels, written with compare-and-swap so a concurrent change is never lost.

use super::client_args::{ClientArgs, explain};
use crate::api::wire::ErrorCode;
use crate::object::ApplyRequest;
use clap::Args;
use std::collections::BTreeMap;

#[derive(Debug, Args)]
pub struct LabelArgs {
    pub kind: String,
    pub name: String,
    /// `key=value` to set, `key-` to remove.
    #[arg(required = true, value_parser = parse_change)]
    pub changes: Vec<Change>,
    /// Allow changing a label that already has another value.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Debug, Clone)]
pub enum Change {
    Set(String, String),
    Remove(String),
}

fn parse_change(text: &str) -> Result<Change, String> {
    let change = match (text.split_once('='), text.strip_suffix('-')) {
        (Some((key, value)), _) => Change::Set(key.to_owned(), value.to_owned()),
        (None, Some(key)) => Change::Remove(key.to_owned()),
        (None, None) => return Err(format!("{text:?} is neither key=value nor key-")),
    };
    match &change {
        Change::Set(key, _) | Change::Remove(key) if key.is_empty() => {
            Err(format!("{text:?} has an empty key"))
        }
        _ => Ok(change),
    }
}

/// How many times a label change is retried when the object changed meanwhile.
const ATTEMPTS: usize = 8;

pub async fn run(mut args: LabelArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    args.kind = super::kinds::canonical(&client, &args.kind).await?;
    let what = format!("{}/{}", args.kind, args.name);
    for _ in 0..ATTEMPTS {
        let object = client.get(&args.kind, &args.name).await.map_err(explain)?;
        let labels = changed(&object.labels, &args.changes, args.overwrite)
            .map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
        if labels == object.labels {
            println!("{what} unchanged");
            return Ok(());
        }
        let request = ApplyRequest {
            kind: object.kind,
            name: object.name,
            labels,
            annotations: Default::default(),
            spec: object.spec,
            expected_revision: Some(object.meta.revision),
            owner: None,
        };
        match client.apply(vec![request]).await {
            Ok(applied) => {
                let revision = applied.first().map_or(0, |a| a.object.meta.revision);
                println!("{what} labeled (revision {revision})");
                return Ok(());
            }
            Err(e) if e.code() == Some(ErrorCode::Conflict) => continue,
            Err(e) => return Err(explain(e)),
        }
    }
    anyhow::bail!("{what} kept changing: gave up after {ATTEMPTS} attempts")
}

fn changed(
    labels: &BTreeMap<String, String>,
    changes: &[Change],
    overwrite: bool,
) -> Result<BTreeMap<String, String>, String> {
    let mut labels = labels.clone();
    for change in changes {
        match change {
            Change::Set(key, value) => {
                if let Some(old) = labels.get(key).filter(|old| *old != value && !overwrite) {
                    return Err(format!(
                        "label {key} is already {old}; pass --overwrite to change it"
                    ));
                }
                labels.insert(key.clone(), value.clone());
            }
            Change::Remove(key) => {
                labels.remove(key);
            }
        }
    }
    Ok(labels)
}
