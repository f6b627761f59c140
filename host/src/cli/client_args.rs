//! The flags every command shares (where the server, the agent and the data folder are, which
//! token to present), accepted before and after the subcommand.

use crate::api::client::kubeconfig::{self, ClientFile};
use crate::api::token;
use crate::api::wire::ErrorCode;
use crate::api::{Client, ClientError};
use clap::Args;
use std::path::{Path, PathBuf};

/// The client address used when neither `--server`, `$REACTOR_SERVER` nor a client file
/// names one.
pub const DEFAULT_SERVER: &str = "https://127.0.0.1:7800";
/// The agent API address used when neither `--agent` nor `$REACTOR_AGENT` names one.
pub const DEFAULT_AGENT: &str = "https://127.0.0.1:7801";

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
    /// [default: https://127.0.0.1:7801].
    #[arg(long, global = true, value_name = "URL")]
    pub agent: Option<String>,
    /// The client file (a kubeconfig: server, CA, token) [env: REACTOR_KUBECONFIG]
    /// [default: DATA/kubeconfig, written by serve].
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The CA certificate (PEM) to check the server's and agents' certificates against
    /// [env: REACTOR_CA] [default: the client file's, else DATA/ca.crt].
    #[arg(long, global = true, value_name = "FILE")]
    pub ca: Option<PathBuf>,
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

    /// The client file: `--kubeconfig`, else `$REACTOR_KUBECONFIG`, else `<data>/kubeconfig`
    /// if there is one.
    pub fn client_file(&self) -> anyhow::Result<Option<ClientFile>> {
        let given = self
            .kubeconfig
            .clone()
            .or_else(|| env("REACTOR_KUBECONFIG").map(PathBuf::from));
        let path = match given {
            Some(path) => path,
            None => {
                let path = self.data_or("./data").join("kubeconfig");
                if !path.exists() {
                    return Ok(None);
                }
                path
            }
        };
        Ok(Some(kubeconfig::read(&path)?))
    }

    /// The CA to trust: `--ca`, else `$REACTOR_CA`, else the client file's, else
    /// `<data>/ca.crt` if there is one.
    pub fn ca_pem(&self, file: Option<&ClientFile>) -> anyhow::Result<Option<String>> {
        let given = self
            .ca
            .clone()
            .or_else(|| env("REACTOR_CA").map(PathBuf::from));
        if let Some(path) = given {
            let pem = std::fs::read_to_string(&path).map_err(|e| {
                anyhow::anyhow!("cannot read the CA certificate {}: {e}", path.display())
            })?;
            return Ok(Some(pem));
        }
        if let Some(pem) = file.and_then(|f| f.ca_pem.clone()) {
            return Ok(Some(pem));
        }
        let path = self.data_or("./data").join("ca.crt");
        if path.exists() {
            return Ok(Some(std::fs::read_to_string(&path).map_err(|e| {
                anyhow::anyhow!("cannot read the CA certificate {}: {e}", path.display())
            })?));
        }
        Ok(None)
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

    /// The server's address, CA and token this CLI uses: given by flag or environment, else
    /// the client file's, else the token in `<data>/token`.
    pub fn resolved(&self) -> anyhow::Result<ClientFile> {
        let file = self.client_file()?;
        let server = match (&self.server, env("REACTOR_SERVER"), &file) {
            (Some(server), _, _) => server.clone(),
            (None, Some(server), _) => server,
            (None, None, Some(file)) => file.server.clone(),
            (None, None, None) => DEFAULT_SERVER.to_owned(),
        };
        Ok(ClientFile {
            server,
            ca_pem: self.ca_pem(file.as_ref())?,
            token: self.token_for(file.as_ref())?,
        })
    }

    /// A client of the server (see [`ClientArgs::resolved`]).
    pub fn client(&self) -> anyhow::Result<Client> {
        let resolved = self.resolved()?;
        Ok(Client::with_ca(
            &resolved.server,
            resolved.token,
            resolved.ca_pem.as_deref(),
        )?)
    }

    /// A client of an agent's API (`--agent`), with the admin's token and the CA as
    /// [`ClientArgs::client`] finds them.
    pub fn agent_client(&self) -> anyhow::Result<Client> {
        let file = self.client_file()?;
        self.client_with(&self.agent(), file.as_ref())
    }

    fn client_with(&self, url: &str, file: Option<&ClientFile>) -> anyhow::Result<Client> {
        let token = self.token_for(file)?;
        let ca = self.ca_pem(file)?;
        Ok(Client::with_ca(url, token, ca.as_deref())?)
    }

    /// The token given by flag or environment, else `file`'s, else `<data>/token`'s.
    fn token_for(&self, file: Option<&ClientFile>) -> anyhow::Result<Option<String>> {
        Ok(match self.given_token()? {
            Some(token) => Some(token),
            None => match file.and_then(|f| f.token.clone()) {
                Some(token) => Some(token),
                None => {
                    let path = token::token_path(&self.data_or("./data"));
                    if path.exists() {
                        Some(token::read(&path)?)
                    } else {
                        None
                    }
                }
            },
        })
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
                "--kubeconfig" => self.kubeconfig.is_some(),
                "--ca" => self.ca.is_some(),
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
