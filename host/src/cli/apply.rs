//! `reactor-host apply -f FILE|-`.

use super::client_args::{ClientArgs, explain};
use crate::api::ClientError;
use crate::object::parse_documents;
use crate::store::ApplyOutcome;
use anyhow::Context;
use clap::Args;
use std::io::Read;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A YAML or JSON file with one or more documents, or `-` for standard input.
    #[arg(short = 'f', long = "filename")]
    pub file: PathBuf,
    #[command(flatten)]
    pub client: ClientArgs,
}

pub async fn run(args: ApplyArgs) -> anyhow::Result<()> {
    let is_stdin = args.file.as_os_str() == "-";
    let source = if is_stdin {
        "<stdin>".to_owned()
    } else {
        args.file.display().to_string()
    };
    let text = if is_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read standard input")?;
        text
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("cannot read {source}"))?
    };
    let requests = parse_documents(&text).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    let client = args.client.client()?;
    let applied = client.apply(requests).await.map_err(|e| match e {
        // The server names the document; say which file it is in.
        ClientError::Server { ref message, .. } if message.starts_with("document ") => {
            anyhow::anyhow!("{source}: {message}")
        }
        other => explain(other),
    })?;
    for item in applied {
        let what = match item.outcome {
            ApplyOutcome::Created => "created",
            ApplyOutcome::Updated => "updated",
            ApplyOutcome::Unchanged => "unchanged",
        };
        let object = &item.object;
        println!(
            "{}/{} {what} (revision {})",
            object.kind, object.name, object.meta.revision
        );
    }
    Ok(())
}
