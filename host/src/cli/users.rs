//! `reactor-host user`: users with their own tokens and roles (admin, edit, view), made,
//! listed and revoked by an admin; `reactor-host whoami`.

use super::client_args::{ClientArgs, explain};
use super::table::render;
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct UserArgs {
    #[command(subcommand)]
    pub command: UserCommand,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Make a user; its token is printed on the last line, once (the server keeps a hash).
    Create {
        name: String,
        /// admin (everything), edit (objects), or view (read only).
        #[arg(long)]
        role: String,
    },
    /// Every user: name, role, credential id.
    List,
    /// Revoke a user's tokens: refused from now on, its open watches end.
    Revoke { name: String },
}

pub async fn run(args: UserArgs, global: &ClientArgs) -> anyhow::Result<()> {
    let client = global.client()?;
    match args.command {
        UserCommand::Create { name, role } => {
            let created = client.create_user(&name, &role).await.map_err(explain)?;
            eprintln!(
                "user {} (role {}) made; its token follows, shown this once:",
                created.name, created.role
            );
            println!("{}", created.token);
        }
        UserCommand::List => {
            let users = client.users().await.map_err(explain)?;
            let rows = users
                .iter()
                .map(|u| vec![u.name.clone(), u.role.clone(), u.id.clone()]);
            print!("{}", render(&["NAME", "ROLE", "ID"], rows));
        }
        UserCommand::Revoke { name } => {
            client.revoke_user(&name).await.map_err(explain)?;
            println!("user {name} revoked");
        }
    }
    Ok(())
}

/// `reactor-host whoami`: who the credential this CLI presents is.
pub async fn whoami(global: &ClientArgs) -> anyhow::Result<()> {
    let me = global.client()?.whoami().await.map_err(explain)?;
    match me.role {
        Some(role) => println!("{} (role {role})", me.identity),
        None => println!("{}", me.identity),
    }
    Ok(())
}
