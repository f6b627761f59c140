//! Admission: before an apply is stored, each document is checked against its kind's Kind
//! object (schema, defaults) and validated by every reactor of its kind. Users' applies and
//! reactors' writes (`store.apply` in a callback) pass the same admission; a reactor's own
//! `validate` does not judge its own writes.

pub(crate) mod kinds;

use crate::admission::kinds::{Kinds, KindsError, Registered, is_host_kind};
use crate::engine::context::EngineContext;
use async_trait::async_trait;
use reactor_core::object::{ApplyRequest, KIND, Meta, Object};
use reactor_store::{Store, StoreError};
use std::collections::{HashMap, HashSet};

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
    /// The document breaks its kind's schema, or is a Kind object that is not well formed.
    #[error("document {document}: {kind}/{name}: {message}")]
    Invalid {
        document: usize,
        kind: String,
        name: String,
        message: String,
    },
    /// `serve --strict-kinds` refuses kinds without a Kind object.
    #[error(
        "document {document}: kind {kind} has no Kind object, and this server refuses such kinds (serve --strict-kinds); see reactor-host api-resources"
    )]
    Unregistered { document: usize, kind: String },
    /// The current object or a Kind object could not be read to validate against.
    #[error("document {document}: {source}")]
    Store {
        document: usize,
        #[source]
        source: StoreError,
    },
    /// A stored Kind object does not compile.
    #[error("document {document}: {message}")]
    Kind { document: usize, message: String },
}

/// Decides synchronously whether an apply may go ahead, and completes it (defaults).
#[async_trait]
pub trait Admission: Send + Sync + 'static {
    /// Fills in each document's defaults; `Err` refuses the whole apply, naming the
    /// document. `Ok` carries warnings for the client (one line each).
    async fn admit(&self, requests: &mut [ApplyRequest]) -> Result<Vec<String>, AdmissionError>;
}

/// Who writes what is admitted.
#[derive(Clone, Copy)]
pub enum Writer<'a> {
    /// An API client: every reactor of the kind validates.
    User,
    /// A callback of reactor `component`, reading through `store` (its pending writes):
    /// every other reactor of the kind validates. Its own `validate` does not: the reactor
    /// wrote the object by its own rules, and is busy in the callback that writes it.
    Reactor {
        component: &'a str,
        store: &'a dyn Store,
    },
}

/// The engine's admission: Kind objects, then the reactors' `validate`.
pub struct Admitter {
    context: EngineContext,
    kinds: Kinds,
    /// Refuse kinds without a Kind object (`serve --strict-kinds`).
    strict: bool,
}

impl Admitter {
    /// The admission of the engine on `context`; `strict` refuses kinds without a Kind.
    pub fn new(context: &EngineContext, strict: bool) -> Self {
        Self {
            kinds: Kinds::new(context.store.clone()),
            context: context.clone(),
            strict,
        }
    }

    /// Each Kind object of the apply, checked and compiled: they bind the other documents
    /// of the same apply (a file may hold a Kind and its first objects).
    async fn kinds_applied(
        &self,
        requests: &[ApplyRequest],
    ) -> Result<HashMap<String, Registered>, AdmissionError> {
        let mut applied = HashMap::new();
        let mut stored: Option<Vec<String>> = None;
        for (i, request) in requests.iter().enumerate() {
            if request.kind != KIND {
                continue;
            }
            let document = i + 1;
            let invalid = |message: String| AdmissionError::Invalid {
                document,
                kind: KIND.to_owned(),
                name: request.name.clone(),
                message,
            };
            if is_host_kind(&request.name) {
                return Err(invalid(format!(
                    "kind {} is the host's own: it takes no Kind object",
                    request.name
                )));
            }
            if stored.is_none() {
                stored = Some(
                    self.kinds
                        .names()
                        .await
                        .map_err(|e| kind_error(document, e))?,
                );
            }
            let others = stored.iter().flatten().chain(applied.keys());
            if let Some(other) = others
                .into_iter()
                .find(|o| *o != &request.name && o.eq_ignore_ascii_case(&request.name))
            {
                return Err(invalid(format!(
                    "Kind {other} exists: kinds are looked up without regard to case (get {}), so two may not differ only in case",
                    request.name.to_ascii_lowercase()
                )));
            }
            let registered = Registered::from_spec(&request.spec).map_err(invalid)?;
            applied.insert(request.name.clone(), registered);
        }
        Ok(applied)
    }

    /// Defaults and validates every document of a registered kind; a warning for each kind
    /// nothing knows of (or, strict, a refusal of each kind without a Kind object).
    async fn check_kinds(
        &self,
        requests: &mut [ApplyRequest],
        writer: Writer<'_>,
    ) -> Result<Vec<String>, AdmissionError> {
        let applied = self.kinds_applied(requests).await?;
        let mut looked_up: HashMap<String, Option<Registered>> = HashMap::new();
        let mut warned = HashSet::new();
        let mut warnings = Vec::new();
        for (i, request) in requests.iter_mut().enumerate() {
            let document = i + 1;
            if is_host_kind(&request.kind) {
                continue;
            }
            let registered = match applied.get(&request.kind) {
                Some(registered) => Some(registered.clone()),
                None => match looked_up.get(&request.kind) {
                    Some(found) => found.clone(),
                    None => {
                        let found = (self.kinds.lookup(&request.kind).await)
                            .map_err(|e| kind_error(document, e))?;
                        looked_up.insert(request.kind.clone(), found.clone());
                        found
                    }
                },
            };
            let Some(registered) = registered else {
                if self.strict {
                    return Err(AdmissionError::Unregistered {
                        document,
                        kind: request.kind.clone(),
                    });
                }
                // A reactor's writes carry no warnings back: nobody would read them.
                let warn = matches!(writer, Writer::User);
                if warn
                    && !self.context.expects_kind(&request.kind)
                    && warned.insert(request.kind.clone())
                {
                    warnings.push(format!(
                        "document {document}: kind {} has no Kind object and no reactor reconciles or watches it; see reactor-host api-resources",
                        request.kind
                    ));
                }
                continue;
            };
            if let Some(schema) = &registered.schema {
                schema
                    .admit(&mut request.spec)
                    .map_err(|message| AdmissionError::Invalid {
                        document,
                        kind: request.kind.clone(),
                        name: request.name.clone(),
                        message,
                    })?;
            }
        }
        Ok(warnings)
    }
}

fn kind_error(document: usize, error: KindsError) -> AdmissionError {
    match error {
        KindsError::Store(source) => AdmissionError::Store { document, source },
        stored => AdmissionError::Kind {
            document,
            message: stored.to_string(),
        },
    }
}

#[async_trait]
impl Admission for Admitter {
    async fn admit(&self, requests: &mut [ApplyRequest]) -> Result<Vec<String>, AdmissionError> {
        self.admit_as(requests, Writer::User).await
    }
}

impl Admitter {
    /// The kinds' schemas first (so reactors see the defaults), then every reactor of a
    /// document's kind (but the writer itself) validates it; the first refusal refuses the
    /// whole apply, naming the document.
    pub async fn admit_as(
        &self,
        requests: &mut [ApplyRequest],
        writer: Writer<'_>,
    ) -> Result<Vec<String>, AdmissionError> {
        let warnings = self.check_kinds(requests, writer).await?;
        let (except, store) = match writer {
            Writer::User => (None, self.context.store.as_ref()),
            Writer::Reactor { component, store } => (Some(component), store),
        };
        for (i, request) in requests.iter().enumerate() {
            let document = i + 1;
            let reactors = self.context.validators_of(&request.kind, except);
            if reactors.is_empty() {
                continue;
            }
            let current = store
                .get(&request.kind, &request.name)
                .await
                .map_err(|source| AdmissionError::Store { document, source })?;
            let object = Object {
                kind: request.kind.clone(),
                name: request.name.clone(),
                labels: request.labels.clone(),
                annotations: request.annotations.clone(),
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
        Ok(warnings)
    }
}
