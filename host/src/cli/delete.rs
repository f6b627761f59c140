//! `reactor-host delete KIND NAME...`, `delete KIND -l SELECTOR`, `delete -f FILE`.

use super::client_args::{ClientArgs, explain};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The kind of the objects (not with -f).
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub kind: Option<String>,
    /// One or more names (or -l).
    #[arg(conflicts_with = "selector")]
    pub names: Vec<String>,
    /// Delete every object of KIND whose labels match, e.g. `app=web`.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Delete the objects named by the documents of a file (`-` for standard input).
    #[arg(short = 'f', long = "filename", conflicts_with = "selector")]
    pub file: Option<PathBuf>,
    /// Delete only if the object is still at this revision (one name only).
    #[arg(long)]
    pub revision: Option<u64>,
}

pub async fn run(mut args: DeleteArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    if let Some(kind) = &args.kind {
        args.kind = Some(super::kinds::canonical(&client, kind).await?);
    }
    let targets: Vec<(String, String)> = match (&args.file, &args.kind, &args.selector) {
        (Some(file), _, _) => super::documents::read(file)?
            .1
            .into_iter()
            .map(|r| (r.kind, r.name))
            .collect(),
        (None, Some(kind), Some(selector)) => client
            .list(kind, Some(selector))
            .await
            .map_err(explain)?
            .items
            .into_iter()
            .map(|o| (o.kind, o.name))
            .collect(),
        (None, Some(kind), None) if !args.names.is_empty() => args
            .names
            .iter()
            .map(|name| (kind.clone(), name.clone()))
            .collect(),
        _ => anyhow::bail!("delete what? give KIND NAME..., KIND -l SELECTOR, or -f FILE"),
    };
    if args.revision.is_some() && targets.len() != 1 {
        anyhow::bail!(
            "--revision applies to one object; {} were named",
            targets.len()
        );
    }
    if targets.is_empty() {
        println!("nothing to delete: no object matches");
        return Ok(());
    }
    let mut failed = 0;
    for (kind, name) in &targets {
        match client.delete(kind, name, args.revision).await {
            Ok(None) => println!("{kind}/{name} deleted"),
            Ok(Some(object)) => println!(
                "{kind}/{name} is being deleted: waiting for finalizers {}",
                object.meta.finalizers.join(", ")
            ),
            Err(e) if targets.len() == 1 => return Err(explain(e)),
            Err(e) => {
                failed += 1;
                let message = format!("{:#}", explain(e));
                if message.contains(&format!("{kind}/{name}")) {
                    eprintln!("error: {message}");
                } else {
                    eprintln!("error: {kind}/{name}: {message}");
                }
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} deletes failed", targets.len());
    }
    Ok(())
}
