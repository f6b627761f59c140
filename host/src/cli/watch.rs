//! `reactor-host watch KIND [--from REVISION]`: one JSON event per line.

use super::client_args::{ClientArgs, explain};
use crate::store::EventType;
use clap::Args;
use futures::StreamExt;
use std::io::Write;

#[derive(Debug, Args)]
pub struct WatchArgs {
    pub kind: String,
    /// Print the changes after this revision (0: the whole retained history).
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Also print bookmarks: progress markers carrying the revision seen so far.
    #[arg(long)]
    pub bookmarks: bool,
}

pub async fn run(mut args: WatchArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    args.kind = super::kinds::canonical(&client, &args.kind).await?;
    let mut events = Box::pin(
        client
            .watch(Some(&args.kind), args.from)
            .await
            .map_err(explain)?,
    );
    let mut last = args.from;
    let mut stdout = std::io::stdout().lock();
    while let Some(event) = events.next().await {
        let event = event.map_err(explain)?;
        last = event.revision;
        if event.event_type == EventType::Bookmark && !args.bookmarks {
            continue;
        }
        serde_json::to_writer(&mut stdout, &event)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
    anyhow::bail!("the server ended the watch; resume with --from {last}")
}
