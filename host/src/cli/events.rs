//! `reactor-host events [KIND [NAME]]`: what happened to objects (reconcile errors, failures,
//! finalizer waits, agents' failed items), with counts, as a table.

use super::client_args::{ClientArgs, explain};
use super::output::{Output, parse_output};
use super::table::render;
use crate::controller::{Event, EventType};
use clap::Args;

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Only events of objects of this kind.
    pub kind: Option<String>,
    /// Only events of this object (of KIND).
    pub name: Option<String>,
    /// table, json, yaml, or jsonpath=TEMPLATE.
    #[arg(short = 'o', long, value_parser = parse_output, default_value = "table")]
    pub output: Output,
}

pub async fn run(mut args: EventsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    if let Some(kind) = &args.kind {
        args.kind = Some(super::kinds::canonical(&client, kind).await?);
    }
    let events = client
        .events(args.kind.as_deref(), args.name.as_deref())
        .await
        .map_err(explain)?;
    if let Some(text) = args.output.render(&events)? {
        print!("{text}");
        return Ok(());
    }
    print!("{}", table(&events));
    Ok(())
}

/// The events as `events` and `describe` print them.
pub fn table(events: &[Event]) -> String {
    let header = [
        "LAST SEEN",
        "TYPE",
        "REASON",
        "OBJECT",
        "SOURCE",
        "COUNT",
        "MESSAGE",
    ];
    let rows = events.iter().map(|e| {
        vec![
            e.last_seen.clone(),
            match e.event_type {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_owned(),
            e.reason.clone(),
            format!("{}/{}", e.kind, e.name),
            e.source.clone(),
            e.count.to_string(),
            e.message.clone(),
        ]
    });
    render(&header, rows)
}
