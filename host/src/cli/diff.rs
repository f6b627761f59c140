//! `reactor-host diff -f FILE [-f FILE]...`: what `apply -f FILE` would change, as a unified diff of each
//! object's labels and spec (live → as the server's dry run of the file would leave it, so
//! with its kind's defaults). Exits 0 without differences, 1 with, 2 on error.

use super::client_args::{ClientArgs, explain};
use super::exit::Exit;
use crate::api::wire::ErrorCode;
use crate::object::{ApplyRequest, Object};
use clap::Args;
use serde_json::{Value, json};
use similar::TextDiff;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A YAML or JSON file with one or more documents, or `-` for standard input; repeat
    /// for several files, sent as one request (all or nothing).
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
}

pub async fn run(args: DiffArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let differs = compare(&args, global).await.map_err(|e| Exit {
        code: 2,
        message: Some(format!("{e:#}")),
    })?;
    if differs {
        return Err(Exit {
            code: 1,
            message: None,
        }
        .into());
    }
    Ok(())
}

/// Prints the differences; answers whether there were any.
async fn compare(args: &DiffArgs, global: &ClientArgs) -> anyhow::Result<bool> {
    let (sources, requests) = super::documents::Sources::read(&args.files)?;
    let client = global.client()?;
    // The objects as the apply would leave them: defaulted and admitted by the server.
    let planned = client
        .apply_with(requests.clone(), true)
        .await
        .map_err(|e| sources.refusal(e))?;
    let mut differs = false;
    for (request, planned) in requests.iter().zip(planned) {
        let live = match client.get(&request.kind, &request.name).await {
            Ok(object) => Some(object),
            Err(e) if e.code() == Some(ErrorCode::NotFound) => None,
            Err(e) => return Err(explain(e)),
        };
        let what = format!("{}/{}", request.kind, request.name);
        let before = live
            .as_ref()
            .map(live_view)
            .transpose()?
            .unwrap_or_default();
        let after = yaml(&file_view(request, &planned.object))?;
        if before != after {
            differs = true;
            let diff = TextDiff::from_lines(&before, &after);
            print!(
                "{}",
                diff.unified_diff()
                    .header(&format!("live {what}"), &format!("file {what}"))
            );
        }
    }
    Ok(differs)
}

fn yaml(value: &Value) -> anyhow::Result<String> {
    Ok(serde_yaml_ng::to_string(value)?)
}

/// What an apply sets of an object: kind, name, labels, spec (as the dry run planned it).
fn file_view(request: &ApplyRequest, planned: &Object) -> Value {
    json!({"kind": request.kind, "name": request.name, "labels": planned.labels,
        "spec": planned.spec})
}

fn live_view(object: &Object) -> anyhow::Result<String> {
    yaml(
        &json!({"kind": object.kind, "name": object.name, "labels": object.labels,
        "spec": object.spec}),
    )
}
