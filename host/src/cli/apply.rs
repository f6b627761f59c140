//! `reactor-host apply -f FILE|- [-f FILE]... [--dry-run]`.

use super::client_args::ClientArgs;
use crate::store::ApplyOutcome;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A YAML or JSON file with one or more documents, or `-` for standard input; repeat
    /// for several files, sent as one request (all or nothing).
    #[arg(short = 'f', long = "filename", required = true)]
    pub files: Vec<PathBuf>,
    /// Validate and admit on the server and print what would be created, updated or left
    /// unchanged, storing nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub async fn run(args: ApplyArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let (sources, requests) = super::documents::Sources::read(&args.files)?;
    let client = global.client()?;
    let answer = client
        .apply_answer(requests, args.dry_run)
        .await
        .map_err(|e| sources.refusal(e))?;
    for warning in &answer.warnings {
        eprintln!("warning: {}: {warning}", sources.names());
    }
    for item in answer.items {
        let what = match item.outcome {
            ApplyOutcome::Created => "created",
            ApplyOutcome::Updated => "updated",
            ApplyOutcome::Unchanged => "unchanged",
        };
        let object = &item.object;
        if args.dry_run {
            println!("{}/{} {what} (dry run)", object.kind, object.name);
        } else {
            println!(
                "{}/{} {what} (revision {})",
                object.kind, object.name, object.meta.revision
            );
        }
    }
    Ok(())
}
