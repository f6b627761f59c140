//! `reactor-host store verify`: checks a stopped server's embedded store file.

use super::client_args::ClientArgs;
use crate::store::embedded::verify;
use clap::{Args, Subcommand};
use std::path::Path;

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Check the whole store file of a stopped server: redb's page checksums, every record's
    /// checksum, the label index and the log. Prints one line per problem.
    /// The file checked is `<data>/store.redb` (the global --data, default ./data).
    Verify,
}

pub async fn run(args: StoreArgs, global: &ClientArgs) -> anyhow::Result<()> {
    global.refuse(
        "store",
        &[
            "--server",
            "--token",
            "--token-file",
            "--agent",
            "--kubeconfig",
            "--ca",
        ],
    )?;
    match args.command {
        StoreCommand::Verify => verify_file(&global.data_or("./data")).await,
    }
}

async fn verify_file(data: &Path) -> anyhow::Result<()> {
    let path = data.join("store.redb");
    let checked = path.clone();
    let report = tokio::task::spawn_blocking(move || verify(&checked)).await??;
    for finding in &report.findings {
        println!("{finding}");
    }
    if report.findings.is_empty() {
        println!(
            "{}: sound ({} objects, {} log entries)",
            path.display(),
            report.objects,
            report.log_entries
        );
        return Ok(());
    }
    anyhow::bail!(
        "{} has {} problem(s) (listed above)",
        path.display(),
        report.findings.len()
    )
}
