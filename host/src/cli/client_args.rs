//! The flags every client command shares: where the server is and which token to present.

use crate::api::token;
use crate::api::wire::ErrorCode;
use crate::api::{Client, ClientError};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The server's address.
    #[arg(long, default_value = "http://127.0.0.1:7800", env = "REACTOR_SERVER")]
    pub server: String,
    /// The API token; by default $REACTOR_TOKEN, else `<data>/token`.
    #[arg(long, env = "REACTOR_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A file holding the API token (kept out of the command line, which other users see).
    #[arg(long, env = "REACTOR_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// The server's data folder, where the token file is looked for.
    #[arg(long, default_value = "./data")]
    pub data: PathBuf,
}

impl ClientArgs {
    pub fn client(&self) -> anyhow::Result<Client> {
        let token = match given_token(self.token.as_deref(), self.token_file.as_deref())? {
            Some(token) => Some(token),
            None => {
                let path = token::token_path(&self.data);
                if path.exists() {
                    Some(token::read(&path)?)
                } else {
                    None
                }
            }
        };
        Ok(Client::new(&self.server, token))
    }
}

/// The token passed by `--token-file` (which wins) or `--token` / `$REACTOR_TOKEN`, if any.
pub fn given_token(
    token: Option<&str>,
    token_file: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    match token_file {
        Some(path) => Ok(Some(token::read(path)?)),
        None => Ok(token.map(str::to_owned)),
    }
}

/// Adds the hint a user needs to a refused token.
pub fn explain(error: ClientError) -> anyhow::Error {
    if error.code() == Some(ErrorCode::Unauthorized) {
        anyhow::anyhow!(
            "{error} (pass --token-file, set REACTOR_TOKEN, or point --data at the server's data folder)"
        )
    } else {
        error.into()
    }
}
