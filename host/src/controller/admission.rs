//! Admission: before an apply is stored, every reactor watching a document's kind validates it.

use super::engine::Engine;
use crate::object::{ApplyRequest, Meta, Object};
use crate::store::StoreError;
use async_trait::async_trait;

/// Why an apply was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum AdmissionError {
    /// A reactor's `validate` refused document `document` (counted from 1).
    #[error("document {document}: refused by {reactor}: {message}")]
    Refused {
        document: usize,
        reactor: String,
        message: String,
    },
    /// The current object could not be read to validate against.
    #[error("document {document}: {source}")]
    Store {
        document: usize,
        #[source]
        source: StoreError,
    },
}

/// Decides synchronously whether an apply may go ahead (the reactors' `validate`).
#[async_trait]
pub trait Admission: Send + Sync + 'static {
    /// `Err` refuses the whole apply, naming the document.
    async fn admit(&self, requests: &[ApplyRequest]) -> Result<(), AdmissionError>;
}

#[async_trait]
impl Admission for Engine {
    /// Every reactor watching a document's kind validates it; the first refusal refuses the
    /// whole apply, naming the document and the reactor.
    async fn admit(&self, requests: &[ApplyRequest]) -> Result<(), AdmissionError> {
        for (i, request) in requests.iter().enumerate() {
            let document = i + 1;
            let reactors = self.reactors_for(&request.kind);
            if reactors.is_empty() {
                continue;
            }
            let current = self
                .context()
                .store
                .get(&request.kind, &request.name)
                .await
                .map_err(|source| AdmissionError::Store { document, source })?;
            let object = Object {
                kind: request.kind.clone(),
                name: request.name.clone(),
                labels: request.labels.clone(),
                spec: request.spec.clone(),
                status: current
                    .as_ref()
                    .map(|c| c.status.clone())
                    .unwrap_or_default(),
                meta: current.map(|c| c.meta).unwrap_or_else(Meta::default),
            };
            for (info, reactor) in reactors {
                if let Err(message) = reactor.validate(&object).await {
                    return Err(AdmissionError::Refused {
                        document,
                        reactor: info.name,
                        message,
                    });
                }
            }
        }
        Ok(())
    }
}
