//! `reactor-host delete KIND NAME`.

use super::client_args::{ClientArgs, explain};
use clap::Args;

#[derive(Debug, Args)]
pub struct DeleteArgs {
    pub kind: String,
    pub name: String,
    /// Delete only if the object is still at this revision.
    #[arg(long)]
    pub revision: Option<u64>,
    #[command(flatten)]
    pub client: ClientArgs,
}

pub async fn run(args: DeleteArgs) -> anyhow::Result<()> {
    let client = args.client.client()?;
    let held = client
        .delete(&args.kind, &args.name, args.revision)
        .await
        .map_err(explain)?;
    match held {
        None => println!("{}/{} deleted", args.kind, args.name),
        Some(object) => println!(
            "{}/{} is being deleted: waiting for finalizers {}",
            args.kind,
            args.name,
            object.meta.finalizers.join(", ")
        ),
    }
    Ok(())
}
