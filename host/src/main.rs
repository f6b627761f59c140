//! The `reactor-host` binary: parses the command line and reports failure as one line.

use clap::Parser;
use reactor_host::cli::{Cli, Exit, run};
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Servers and agents churn many short-lived JSON trees across threads; glibc's allocator
/// kept gigabytes of freed memory in per-thread arenas under the fan-out bench.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    let filter = EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| EnvFilter::new(cli.command.default_log_filter()));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    if let Err(error) = run(cli).await {
        if let Some(exit) = error.downcast_ref::<Exit>() {
            if let Some(message) = &exit.message {
                eprintln!("error: {}", message.replace('\n', " "));
            }
            std::process::exit(exit.code);
        }
        let message = format!("{error:#}").replace('\n', " ");
        eprintln!("error: {message}");
        std::process::exit(1);
    }
}
