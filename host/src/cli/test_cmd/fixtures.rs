//! The fixture files of a test: read and parsed up front as `apply -f` reads them, then each
//! applied as one apply (all or nothing) through the same admission as the API's.

use crate::controller::{Admission, Admitter};
use crate::object::{ApplyRequest, is_reserved};
use crate::store::{ApplyOutcome, Store};
use std::path::PathBuf;

/// One file's documents.
pub struct Fixture {
    /// The file as messages name it.
    pub source: String,
    requests: Vec<ApplyRequest>,
}

/// Every file parsed (a bad document is an error naming file and document) before any runs.
pub fn read_all(files: &[PathBuf]) -> anyhow::Result<Vec<Fixture>> {
    files
        .iter()
        .map(|file| {
            let (source, requests) = super::super::documents::read(file)?;
            for (i, request) in requests.iter().enumerate() {
                if is_reserved(&request.kind) {
                    anyhow::bail!(
                        "{source}: document {}: kind {} is reserved to the host: it is written only by the host itself",
                        i + 1,
                        request.kind
                    );
                }
            }
            Ok(Fixture { source, requests })
        })
        .collect()
}

impl Fixture {
    /// Admits (Kind schemas and defaults, the reactor's `validate`) and stores the documents;
    /// a refusal is the one line `apply` prints, and nothing of the file is stored.
    pub async fn apply(&self, admitter: &Admitter, store: &dyn Store) -> anyhow::Result<()> {
        let source = &self.source;
        let mut requests = self.requests.clone();
        let warnings = admitter
            .admit(&mut requests)
            .await
            .map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        for warning in warnings {
            eprintln!("warning: {source}: {warning}");
        }
        let applied = store
            .apply(requests)
            .await
            .map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        for item in applied {
            let what = match item.outcome {
                ApplyOutcome::Created => "created",
                ApplyOutcome::Updated => "updated",
                ApplyOutcome::Unchanged => "unchanged",
            };
            let object = &item.object;
            eprintln!("{source}: {}/{} {what}", object.kind, object.name);
        }
        Ok(())
    }
}
