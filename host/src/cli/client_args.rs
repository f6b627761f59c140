//! The flags every command shares (where the server, the agent and the data folder are, which
//! token to present), accepted before and after the subcommand.

use crate::api::token;
use crate::api::wire::ErrorCode;
use crate::api::{Client, ClientError};
use clap::Args;
use std::path::{Path, PathBuf};

/// The client address used when neither `--server` nor `$REACTOR_SERVER` names one.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:7800";
/// The agent API address used when neither `--agent` nor `$REACTOR_AGENT` names one.
pub const DEFAULT_AGENT: &str = "http://127.0.0.1:7801";

/// Global flags: clap accepts them anywhere on the line (`rh --token-file F get Policy`,
/// `rh scheduler status --agent URL`). They carry no defaults and no clap `env`, so that
/// `serve` and `agent`, which share some of them, can tell a flag given on the command line
/// from one inherited from the environment and apply their own defaults.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Global options")]
pub struct ClientArgs {
    /// The server's address [env: REACTOR_SERVER] [default: http://127.0.0.1:7800].
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,
    /// The API token [env: REACTOR_TOKEN]; prefer --token-file: other local users see
    /// command lines.
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// A file holding the API token [env: REACTOR_TOKEN_FILE].
    #[arg(long, global = true, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The data folder: the server's store and token (serve, store verify; default ./data),
    /// the agent's state (agent; default ./agent-data); clients look for the token in it.
    #[arg(long, global = true, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// An agent's API address (its --listen), for `scheduler` [env: REACTOR_AGENT]
    /// [default: http://127.0.0.1:7801].
    #[arg(long, global = true, value_name = "URL")]
    pub agent: Option<String>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl ClientArgs {
    /// `--server`, else `$REACTOR_SERVER`, else the default.
    pub fn server(&self) -> String {
        self.server
            .clone()
            .or_else(|| env("REACTOR_SERVER"))
            .unwrap_or_else(|| DEFAULT_SERVER.to_owned())
    }

    /// `--agent`, else `$REACTOR_AGENT`, else the default.
    pub fn agent(&self) -> String {
        self.agent
            .clone()
            .or_else(|| env("REACTOR_AGENT"))
            .unwrap_or_else(|| DEFAULT_AGENT.to_owned())
    }

    /// `--data`, else `default`.
    pub fn data_or(&self, default: &str) -> PathBuf {
        self.data.clone().unwrap_or_else(|| PathBuf::from(default))
    }

    /// The token given by flag or environment: `--token-file` / `$REACTOR_TOKEN_FILE` wins
    /// over `--token` / `$REACTOR_TOKEN`.
    pub fn given_token(&self) -> anyhow::Result<Option<String>> {
        let file = self
            .token_file
            .clone()
            .or_else(|| env("REACTOR_TOKEN_FILE").map(PathBuf::from));
        let token = self.token.clone().or_else(|| env("REACTOR_TOKEN"));
        given_token(token.as_deref(), file.as_deref())
    }

    /// A client of the server with the given token, or else the one in `<data>/token`.
    pub fn client(&self) -> anyhow::Result<Client> {
        let token = match self.given_token()? {
            Some(token) => Some(token),
            None => {
                let path = token::token_path(&self.data_or("./data"));
                if path.exists() {
                    Some(token::read(&path)?)
                } else {
                    None
                }
            }
        };
        Ok(Client::new(&self.server(), token))
    }

    /// Refuses the flags, given on the command line, that `command` does not take.
    pub fn refuse(&self, command: &str, flags: &[&str]) -> anyhow::Result<()> {
        for flag in flags {
            let given = match *flag {
                "--server" => self.server.is_some(),
                "--token" => self.token.is_some(),
                "--token-file" => self.token_file.is_some(),
                "--data" => self.data.is_some(),
                "--agent" => self.agent.is_some(),
                _ => false,
            };
            if given {
                anyhow::bail!("{command} does not take {flag} (it is a client flag)");
            }
        }
        Ok(())
    }
}

/// The token passed by `token_file` (which wins) or `token`, if any.
pub fn given_token(
    token: Option<&str>,
    token_file: Option<&Path>,
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
