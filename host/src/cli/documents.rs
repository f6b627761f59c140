//! Object documents read from `-f FILE`, or from standard input with `-f -`.

use crate::api::ClientError;
use crate::object::{ApplyRequest, parse_documents};
use anyhow::Context;
use std::io::Read;
use std::path::Path;

/// The name to give `file` in messages (`<stdin>` for `-`) and the documents it holds.
pub fn read(file: &Path) -> anyhow::Result<(String, Vec<ApplyRequest>)> {
    let is_stdin = file.as_os_str() == "-";
    let source = if is_stdin {
        "<stdin>".to_owned()
    } else {
        file.display().to_string()
    };
    let text = if is_stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read standard input")?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {source}"))?
    };
    let requests = parse_documents(&text).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    Ok((source, requests))
}

/// A server's answer to documents of `source`: a refusal naming a document (`document N:
/// ...`) is said to be in `source`; other errors get the client's hints.
pub fn refusal(source: &str, error: ClientError) -> anyhow::Error {
    match error {
        ClientError::Server { ref message, .. } if message.starts_with("document ") => {
            anyhow::anyhow!("{source}: {message}")
        }
        other => super::client_args::explain(other),
    }
}
