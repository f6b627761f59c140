//! `reactor-host logs COMPONENT [-f] [--tail N]`: the lines a component logged or printed, as
//! the server keeps them; `-f` keeps printing new ones.

use super::client_args::{ClientArgs, explain};
use crate::runtime::log_ring::LogLine;
use clap::Args;
use std::io::Write;
use std::time::Duration;

/// How often `-f` asks for new lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The component's name (its file name without `.wasm`).
    pub component: String,
    /// Keep printing new lines until interrupted.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Only the newest N lines kept.
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
}

pub async fn run(args: LogsArgs, global: &ClientArgs) -> anyhow::Result<()> {
    crate::object::validate_name(&args.component)
        .map_err(|e| anyhow::anyhow!("component {:?}: {e}", args.component))?;
    let client = global.client()?;
    let mut after = 0;
    let mut tail = args.tail;
    loop {
        let lines = client
            .logs(&args.component, after, tail)
            .await
            .map_err(explain)?;
        let mut stdout = std::io::stdout().lock();
        for line in &lines {
            stdout.write_all(format_line(line).as_bytes())?;
        }
        stdout.flush()?;
        if let Some(last) = lines.last() {
            after = last.seq;
        }
        if !args.follow {
            return Ok(());
        }
        tail = None;
        tokio::time::sleep(FOLLOW_EVERY).await;
    }
}

fn format_line(line: &LogLine) -> String {
    format!("{} {:<6} {}\n", line.time, line.level, line.message)
}
