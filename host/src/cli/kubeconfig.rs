//! `reactor-host kubeconfig`: a kubeconfig for the server and the credential this CLI uses
//! (with the CA it trusts), for kubectl and Kubernetes' client libraries.

use super::client_args::{ClientArgs, explain};
use crate::api::Client;
use crate::api::client::kubeconfig;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct KubeconfigArgs {
    /// Write it to FILE (mode 0600) instead of printing it: it holds the credential.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub async fn run(args: KubeconfigArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let file = global.resolved()?;
    if file.token.is_none() {
        anyhow::bail!(
            "no credential to put in a kubeconfig: give --token-file FILE (a token `user create` printed), or --data DIR of a server"
        );
    }
    // The server says whose credential it is (and so that it works) before it is written.
    let client = Client::with_ca(&file.server, file.token.clone(), file.ca_pem.as_deref())?;
    let me = client.whoami().await.map_err(explain)?;
    let user = me.identity.replace([':', '/'], "-");
    match args.output {
        Some(path) => {
            kubeconfig::write(&path, &file, &user)?;
            eprintln!(
                "kubeconfig for {} at {} written to {}",
                me.identity,
                file.server,
                path.display()
            );
        }
        None => print!("{}", kubeconfig::render(&file, &user)?),
    }
    Ok(())
}
