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

/// The documents of several `-f` files, in order, sent as one request: where each came from.
#[derive(Debug, Default)]
pub struct Sources(Vec<(String, usize)>);

impl Sources {
    /// Reads every file (nothing is sent if one cannot be read or parsed).
    pub fn read(files: &[std::path::PathBuf]) -> anyhow::Result<(Sources, Vec<ApplyRequest>)> {
        let mut sources = Sources::default();
        let mut all = Vec::new();
        for file in files {
            let (source, requests) = read(file)?;
            sources.0.push((source, requests.len()));
            all.extend(requests);
        }
        Ok((sources, all))
    }

    /// The file and the document within it of document `index` (from 1) of the request.
    fn locate(&self, mut index: usize) -> Option<(&str, usize)> {
        for (source, count) in &self.0 {
            if index <= *count {
                return Some((source, index));
            }
            index -= count;
        }
        None
    }

    /// The files, for messages about all of them.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|(s, _)| s.as_str()).collect();
        names.join(", ")
    }

    /// A server's answer to the documents: a refusal naming a document (`document N: ...`)
    /// is said of the file and the document within it; other errors get the client's hints.
    pub fn refusal(&self, error: ClientError) -> anyhow::Error {
        if let ClientError::Server { message, .. } = &error
            && let Some(rest) = message.strip_prefix("document ")
            && let Some((index, reason)) = rest.split_once(": ")
            && let Ok(index) = index.parse::<usize>()
            && let Some((source, within)) = self.locate(index)
        {
            return anyhow::anyhow!("{source}: document {within}: {reason}");
        }
        super::client_args::explain(error)
    }
}
