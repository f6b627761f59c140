//! `reactor-host wait KIND NAME --for=delete|jsonpath='{.status.ready}'=true [--timeout 30s]`:
//! waits, following the object's changes, until the condition holds.

use super::client_args::{ClientArgs, explain};
use super::jsonpath::Template;
use crate::object::Object;
use crate::store::EventType;
use clap::Args;
use futures::StreamExt;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct WaitArgs {
    pub kind: String,
    pub name: String,
    /// `delete`, `create`, or `jsonpath=TEMPLATE=VALUE` (`jsonpath=TEMPLATE`: not empty).
    #[arg(long = "for", value_parser = parse_condition)]
    pub condition: Condition,
    /// How long to wait before giving up (exit 1).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub enum Condition {
    Delete,
    Create,
    JsonPath {
        template: Template,
        text: String,
        value: Option<String>,
    },
}

fn parse_condition(text: &str) -> Result<Condition, String> {
    match text {
        "delete" => return Ok(Condition::Delete),
        "create" => return Ok(Condition::Create),
        _ => {}
    }
    let Some(rest) = text.strip_prefix("jsonpath=") else {
        return Err(format!(
            "--for={text}: expected delete, create, or jsonpath='{{.path}}'=VALUE"
        ));
    };
    // `{.status.ready}=true`: the value follows the template's last brace.
    let (template, value) = match rest.rfind('}') {
        Some(close) => match rest[close + 1..].strip_prefix('=') {
            Some(value) => (&rest[..=close], Some(value.to_owned())),
            None if close + 1 == rest.len() => (rest, None),
            None => {
                return Err(format!(
                    "--for={text}: expected '=VALUE' after the template"
                ));
            }
        },
        None => match rest.split_once('=') {
            Some((template, value)) => (template, Some(value.to_owned())),
            None => (rest, None),
        },
    };
    Ok(Condition::JsonPath {
        template: template.parse()?,
        text: template.to_owned(),
        value,
    })
}

impl Condition {
    fn holds(&self, object: Option<&Object>) -> anyhow::Result<bool> {
        Ok(match (self, object) {
            (Condition::Delete, found) => found.is_none(),
            (Condition::Create, found) => found.is_some(),
            (Condition::JsonPath { .. }, None) => false,
            (
                Condition::JsonPath {
                    template, value, ..
                },
                Some(object),
            ) => {
                let found = template.render(&serde_json::to_value(object)?);
                match value {
                    Some(value) => found == *value,
                    None => !found.is_empty(),
                }
            }
        })
    }

    fn describe(&self) -> String {
        match self {
            Condition::Delete => "delete".into(),
            Condition::Create => "create".into(),
            Condition::JsonPath { text, value, .. } => match value {
                Some(value) => format!("{text}={value}"),
                None => text.clone(),
            },
        }
    }
}

pub async fn run(mut args: WaitArgs, global: &ClientArgs) -> anyhow::Result<()> {
    args.kind = super::kinds::canonical(&global.client()?, &args.kind).await?;
    let what = format!("{}/{}", args.kind, args.name);
    match tokio::time::timeout(args.timeout, wait(&args, global)).await {
        Ok(done) => done?,
        Err(_) => anyhow::bail!(
            "timed out after {} waiting for {what}: {}",
            humantime::format_duration(args.timeout),
            args.condition.describe()
        ),
    }
    match args.condition {
        Condition::Delete => println!("{what} deleted"),
        _ => println!("{what} condition met"),
    }
    Ok(())
}

async fn wait(args: &WaitArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    // The kind's listing gives the object (or its absence) and the revision to follow from.
    let listing = client
        .list(&args.kind, None::<&str>)
        .await
        .map_err(explain)?;
    let mut current = listing.items.into_iter().find(|o| o.name == args.name);
    if args.condition.holds(current.as_ref())? {
        return Ok(());
    }
    let mut events = Box::pin(
        client
            .watch(Some(&args.kind), listing.revision)
            .await
            .map_err(explain)?,
    );
    while let Some(event) = events.next().await {
        let event = event.map_err(explain)?;
        let Some(object) = event.object else {
            continue;
        };
        if object.name != args.name {
            continue;
        }
        current = (event.event_type != EventType::Deleted)
            .then(|| std::sync::Arc::unwrap_or_clone(object));
        if args.condition.holds(current.as_ref())? {
            return Ok(());
        }
    }
    anyhow::bail!("the server ended the watch")
}
