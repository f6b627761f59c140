//! `reactor-host describe KIND NAME`: one object for a person (`describe component NAME`: see
//! `describe_component`) — its metadata, owner, spec and
//! status, how each reactor last reconciled it, its children, the Nimbus items it published
//! with each agent's state, and its recent events.

use super::client_args::{ClientArgs, explain};
use super::table::render;
use crate::api::Client;
use crate::controller::status::{PROPAGATION, RECONCILE};
use crate::nimbus::{ITEM_KIND, Item, REPORT_KIND, Sheet, owner_selector};
use crate::object::Object;
use crate::runtime::Described;
use clap::Args;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write;

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The object's kind, or `component` for a component the server runs.
    pub kind: String,
    pub name: String,
}

pub async fn run(mut args: DescribeArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    if args.kind == "component" {
        return super::describe_component::run(&client, &args.name).await;
    }
    args.kind = super::kinds::canonical(&client, &args.kind).await?;
    let object = client.get(&args.kind, &args.name).await.map_err(explain)?;
    let mut out = String::new();
    header(&mut out, &object)?;
    reconcile(&mut out, &object)?;
    children(&mut out, &client, &object).await?;
    items(&mut out, &client, &object).await?;
    let events = client
        .events(Some(&object.kind), Some(&object.name))
        .await
        .map_err(explain)?;
    section(
        &mut out,
        "Events",
        &(!events.is_empty()).then(|| super::events::table(&events)),
    )?;
    print!("{out}");
    Ok(())
}

/// A titled block, its body indented; `<none>` when there is nothing.
fn section(out: &mut String, title: &str, body: &Option<String>) -> std::fmt::Result {
    match body {
        None => writeln!(out, "{title}:  <none>"),
        Some(body) => {
            writeln!(out, "{title}:")?;
            for line in body.lines() {
                writeln!(out, "  {line}")?;
            }
            Ok(())
        }
    }
}

fn yaml(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Object(map) if map.is_empty() => None,
        other => serde_yaml_ng::to_string(other).ok(),
    }
}

fn header(out: &mut String, o: &Object) -> anyhow::Result<()> {
    let labels: Vec<String> = o.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let or_none = |v: String| if v.is_empty() { "<none>".to_owned() } else { v };
    let meta = &o.meta;
    writeln!(out, "Kind:         {}", o.kind)?;
    writeln!(out, "Name:         {}", o.name)?;
    writeln!(out, "Labels:       {}", or_none(labels.join(",")))?;
    writeln!(out, "UID:          {}", meta.uid)?;
    writeln!(out, "Revision:     {}", meta.revision)?;
    writeln!(out, "Generation:   {}", meta.generation)?;
    writeln!(out, "Created:      {}", meta.created)?;
    writeln!(out, "Updated:      {}", meta.updated)?;
    writeln!(
        out,
        "State:        {}",
        if meta.deleting { "deleting" } else { "active" }
    )?;
    writeln!(out, "Finalizers:   {}", or_none(meta.finalizers.join(",")))?;
    let owner = meta
        .owner
        .as_ref()
        .map(|w| format!("{}/{} (component {})", w.kind, w.name, w.component))
        .unwrap_or_default();
    writeln!(out, "Owner:        {}", or_none(owner))?;
    section(out, "Spec", &yaml(&o.spec))?;
    // The host's keys have sections of their own.
    let mut status = o.status.clone();
    if let Value::Object(map) = &mut status {
        map.remove(RECONCILE);
        map.remove(PROPAGATION);
    }
    section(out, "Status", &yaml(&status))?;
    Ok(())
}

fn reconcile(out: &mut String, o: &Object) -> anyhow::Result<()> {
    let Some(Value::Object(reactors)) = o.status.get(RECONCILE) else {
        section(out, "Reconcile", &None)?;
        return Ok(());
    };
    let text = |v: &Value, key: &str| match v.get(key) {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let rows = reactors.iter().map(|(reactor, entry)| {
        vec![
            reactor.clone(),
            text(entry, "observedGeneration"),
            text(entry, "version"),
            text(entry, "attempts"),
            if entry.get("permanent") == Some(&Value::Bool(true)) {
                "yes"
            } else {
                "no"
            }
            .to_owned(),
            text(entry, "nextRetry"),
            text(entry, "lastError"),
        ]
    });
    let header = [
        "REACTOR",
        "OBSERVED GENERATION",
        "VERSION",
        "ATTEMPTS",
        "PERMANENT",
        "NEXT RETRY",
        "LAST ERROR",
    ];
    section(out, "Reconcile", &Some(render(&header, rows)))?;
    if let Some(propagation) = o.status.get(PROPAGATION) {
        section(out, "Propagation", &yaml(propagation))?;
    }
    Ok(())
}

/// The kinds a child of `o` may have: those the components reconcile or own.
async fn child_kinds(client: &Client) -> anyhow::Result<BTreeSet<String>> {
    let components = client.components().await.map_err(explain)?;
    let mut kinds = BTreeSet::new();
    for component in components {
        if let Some(Described::Controller(reactor)) = component.described {
            kinds.extend(reactor.kinds);
            kinds.extend(reactor.watches.iter().map(|w| w.kind().to_owned()));
        }
    }
    Ok(kinds)
}

async fn children(out: &mut String, client: &Client, o: &Object) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for kind in child_kinds(client).await? {
        let listing = client.list(&kind, None).await.map_err(explain)?;
        for child in listing.items {
            let Some(owner) = &child.meta.owner else {
                continue;
            };
            if owner.kind == o.kind && owner.name == o.name && owner.uid == o.meta.uid {
                rows.push(vec![
                    format!("{}/{}", child.kind, child.name),
                    owner.component.clone(),
                    child.meta.revision.to_string(),
                ]);
            }
        }
    }
    let body = (!rows.is_empty()).then(|| render(&["OBJECT", "BY", "REVISION"], rows));
    Ok(section(out, "Children", &body)?)
}

async fn items(out: &mut String, client: &Client, o: &Object) -> anyhow::Result<()> {
    let selector = owner_selector(&o.kind, &o.name).to_string();
    let items = client
        .list(ITEM_KIND, Some(&selector))
        .await
        .map_err(explain)?;
    let sheets: Vec<Sheet> = client
        .list(REPORT_KIND, Some(&selector))
        .await
        .map_err(explain)?
        .items
        .iter()
        .filter_map(Sheet::from_object)
        .collect();
    let mut rows = Vec::new();
    for object in &items.items {
        let Some(item) = Item::from_object(object) else {
            continue;
        };
        let version = object.meta.generation.to_string();
        let mut reported = false;
        for sheet in &sheets {
            if let Some(entry) = sheet.items.get(&item.key) {
                reported = true;
                let state = serde_json::to_value(entry.state)?;
                rows.push(vec![
                    item.key.clone(),
                    version.clone(),
                    sheet.agent.clone(),
                    state.as_str().unwrap_or_default().to_owned(),
                    entry.revision.to_string(),
                    entry.message.clone().unwrap_or_else(|| "-".to_owned()),
                ]);
            }
        }
        if !reported {
            rows.push(vec![
                item.key.clone(),
                version,
                "-".into(),
                "not reported".into(),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    let header = ["KEY", "VERSION", "AGENT", "STATE", "AT VERSION", "MESSAGE"];
    let body = (!rows.is_empty()).then(|| render(&header, rows));
    Ok(section(out, "Items", &body)?)
}
