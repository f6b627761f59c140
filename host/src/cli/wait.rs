//! `reactor-host wait KIND NAME --for=delete|create|condition=Ready[=False]|jsonpath='{.status.ready}'=true
//! [--timeout 30s]`: waits, following the object's changes, until the condition holds.

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
    /// `delete`, `create`, `condition=TYPE[=STATUS]` (an entry of `status.conditions` of
    /// that type whose status is STATUS, `True` if not given, as kubectl's), or
    /// `jsonpath=TEMPLATE=VALUE` (`jsonpath=TEMPLATE`: not empty).
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
    /// An entry of `status.conditions` with this type and status (compared ignoring case),
    /// not older than the object's generation when it says what it observed.
    Status {
        type_: String,
        status: String,
    },
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
    if let Some(rest) = text.strip_prefix("condition=") {
        let (type_, status) = rest.split_once('=').unwrap_or((rest, "True"));
        if type_.is_empty() || status.is_empty() {
            return Err(format!(
                "--for={text}: expected condition=TYPE or condition=TYPE=STATUS"
            ));
        }
        return Ok(Condition::Status {
            type_: type_.to_owned(),
            status: status.to_owned(),
        });
    }
    let Some(rest) = text.strip_prefix("jsonpath=") else {
        return Err(format!(
            "--for={text}: expected delete, create, condition=TYPE[=STATUS], or jsonpath='{{.path}}'=VALUE"
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
            (Condition::JsonPath { .. } | Condition::Status { .. }, None) => false,
            (Condition::Status { type_, status }, Some(object)) => {
                let conditions = object.status["conditions"].as_array();
                conditions.into_iter().flatten().any(|c| {
                    c["type"].as_str() == Some(type_.as_str())
                        && c["status"]
                            .as_str()
                            .is_some_and(|s| s.eq_ignore_ascii_case(status))
                        && c["observedGeneration"]
                            .as_u64()
                            .is_none_or(|seen| seen >= object.meta.generation)
                })
            }
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
            Condition::Status { type_, status } => format!("condition={type_}={status}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(generation: u64, conditions: serde_json::Value) -> Object {
        let mut object: Object =
            serde_json::from_value(json!({"kind": "Policy", "name": "a"})).expect("object");
        object.meta.generation = generation;
        object.status = json!({ "conditions": conditions });
        object
    }

    /// kubectl's `--for=condition=`: the type's status, `True` by default, and a condition
    /// observed at an older generation does not count.
    #[test]
    fn conditions_hold_by_type_status_and_generation() {
        let ready = parse_condition("condition=Ready").expect("parsed");
        let not_ready = parse_condition("condition=Ready=false").expect("parsed");
        let object = with(
            2,
            json!([{"type": "Ready", "status": "True", "observedGeneration": 2}]),
        );
        assert!(ready.holds(Some(&object)).expect("holds"));
        assert!(!not_ready.holds(Some(&object)).expect("holds"));
        let stale = with(
            3,
            json!([{"type": "Ready", "status": "True", "observedGeneration": 2}]),
        );
        assert!(!ready.holds(Some(&stale)).expect("holds"));
        let unsaid = with(3, json!([{"type": "Ready", "status": "True"}]));
        assert!(ready.holds(Some(&unsaid)).expect("holds"));
        let other = with(1, json!([{"type": "Synced", "status": "True"}]));
        assert!(!ready.holds(Some(&other)).expect("holds"));
        assert!(!ready.holds(None).expect("holds"));
        assert!(parse_condition("condition=").is_err());
    }
}
