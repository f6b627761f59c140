//! `reactor-host store verify`: checks a stopped server's embedded store file.

use crate::store::embedded::verify;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Check the whole store file of a stopped server: redb's page checksums, every record's
    /// checksum, the label index and the log. Prints one line per problem.
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The server's data folder (the file checked is `<data>/store.redb`).
    #[arg(long, default_value = "./data")]
    pub data: PathBuf,
}

pub async fn run(args: StoreArgs) -> anyhow::Result<()> {
    match args.command {
        StoreCommand::Verify(args) => verify_file(args).await,
    }
}

async fn verify_file(args: VerifyArgs) -> anyhow::Result<()> {
    let path = args.data.join("store.redb");
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
