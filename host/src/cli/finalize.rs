//! `reactor-host finalize KIND NAME --remove FINALIZER`: removes a finalizer that holds an
//! object (a reactor gone for good), with a warning: the cleanup it stood for never runs.

use super::client_args::{ClientArgs, explain};
use crate::api::wire::ErrorCode;
use clap::Args;

#[derive(Debug, Args)]
pub struct FinalizeArgs {
    pub kind: String,
    pub name: String,
    /// The finalizer to remove; repeat for several.
    #[arg(long = "remove", required = true)]
    pub remove: Vec<String>,
}

/// How many times the removal is retried when the object changed meanwhile.
const ATTEMPTS: usize = 8;

pub async fn run(mut args: FinalizeArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    args.kind = super::kinds::canonical(&client, &args.kind).await?;
    let what = format!("{}/{}", args.kind, args.name);
    for _ in 0..ATTEMPTS {
        let object = client.get(&args.kind, &args.name).await.map_err(explain)?;
        let finalizers = &object.meta.finalizers;
        if let Some(missing) = args.remove.iter().find(|f| !finalizers.contains(f)) {
            let has = if finalizers.is_empty() {
                "none".to_owned()
            } else {
                finalizers.join(", ")
            };
            anyhow::bail!("{what} has no finalizer {missing} (it has: {has})");
        }
        let keep: Vec<String> = finalizers
            .iter()
            .filter(|f| !args.remove.contains(f))
            .cloned()
            .collect();
        match client
            .set_finalizers(&args.kind, &args.name, keep, Some(object.meta.revision))
            .await
        {
            Ok(left) => {
                for finalizer in &args.remove {
                    eprintln!(
                        "warning: {what}: finalizer {finalizer} removed by hand: the cleanup it \
                         held the object for (its reactor's on-delete) will not run"
                    );
                }
                match left {
                    None => println!("{what} deleted"),
                    Some(_) => println!("{what} finalized"),
                }
                return Ok(());
            }
            Err(e) if e.code() == Some(ErrorCode::Conflict) => continue,
            Err(e) => return Err(explain(e)),
        }
    }
    anyhow::bail!("{what} kept changing: gave up after {ATTEMPTS} attempts")
}
