//! Storing what a client sent through the Kubernetes API: admitted as `/v1`'s applies are,
//! with its managed fields and finalizers, in one transaction; and the refusals of a body that
//! cannot be read, patched or validated against its Kind's schema.

use super::reply::Refusal;
use super::target::Target;
use crate::AppState;
use reactor_core::object::Object;
use reactor_kube::KubeError;
use reactor_kube::mapping::{Incoming, MappingError};
use reactor_kube::patch::PatchError;
use reactor_kube::query::Query as KubeQuery;
use reactor_kube::validation::{FieldValidation, unknown_fields};
use reactor_store::Write;
use serde_json::Value;

pub(super) fn mapping_refusal(target: &Target, error: MappingError, name: &str) -> Refusal {
    let resource = target.resource.qualified();
    let error = match error {
        MappingError::NotAnObject | MappingError::UnknownField(_) => {
            KubeError::BadRequest(error.to_string())
        }
        MappingError::ApiVersion { .. }
        | MappingError::Kind { .. }
        | MappingError::NameMismatch { .. } => KubeError::BadRequest(error.to_string()),
        other => KubeError::Invalid(format!("{resource} \"{name}\" is invalid: {other}")),
    };
    target.refuse(error, name)
}

/// The fields of the spec the Kind's schema does not declare that `after` adds to `before`
/// (both as the API shows objects), under the request's `fieldValidation`: refused when
/// `Strict`, else the warnings to send (none when `Ignore`).
pub(super) fn undeclared_fields(
    target: &Target,
    query: &KubeQuery,
    before: Option<&Value>,
    after: &Value,
    name: &str,
) -> Result<Vec<String>, Refusal> {
    let mode = FieldValidation::parse(query.field_validation.as_deref())
        .map_err(|e| Refusal::from(KubeError::BadRequest(e.to_string())))?;
    let Some(schema) = target.resource.schema.as_ref() else {
        return Ok(Vec::new());
    };
    if mode == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let spec = |object: &Value| object.get("spec").cloned().unwrap_or(Value::Null);
    let had = before
        .map(|b| unknown_fields(schema, &spec(b)))
        .unwrap_or_default();
    let added: Vec<String> = unknown_fields(schema, &spec(after))
        .into_iter()
        .filter(|f| !had.contains(f))
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    match mode {
        FieldValidation::Strict if !added.is_empty() => {
            let kind = &target.resource.kind;
            Err(target.refuse(
                KubeError::BadRequest(format!(
                    "{kind} in version \"{}\" cannot be handled as a {kind}: strict decoding error: {}",
                    target.resource.version,
                    added.join(", ")
                )),
                name,
            ))
        }
        _ => Ok(added),
    }
}

fn admission_refusal(
    target: &Target,
    name: &str,
    error: reactor_controller::AdmissionError,
) -> Refusal {
    use reactor_controller::AdmissionError;
    let resource = target.resource.qualified();
    match error {
        AdmissionError::Store { source, .. } => target.store_error(&source, name),
        AdmissionError::Refused {
            reactor, message, ..
        } => target.refuse(
            KubeError::Invalid(format!(
                "{resource} \"{name}\" is invalid: refused by {reactor}: {message}"
            )),
            name,
        ),
        AdmissionError::Invalid { message, .. } | AdmissionError::Kind { message, .. } => target
            .refuse(
                KubeError::Invalid(format!("{resource} \"{name}\" is invalid: {message}")),
                name,
            ),
        other @ AdmissionError::Unregistered { .. } => {
            target.refuse(KubeError::Invalid(other.to_string()), name)
        }
    }
}

/// Admits and stores what a client sent (or, on a dry run, decides it and stores nothing):
/// the apply, the managed fields and, when the body names them, the finalizers, in one
/// transaction. The object
/// as stored, and the admission's warnings.
pub(super) async fn write(
    state: &AppState,
    target: &Target,
    incoming: Incoming,
    managed_fields: Option<Value>,
    dry_run: bool,
) -> Result<(Object, Vec<String>), Refusal> {
    let Incoming {
        request,
        finalizers,
        ..
    } = incoming;
    let name = request.name.clone();
    let resource = target.resource.qualified();
    request.validate().map_err(|e| {
        target.refuse(
            KubeError::Invalid(format!("{resource} \"{name}\" is invalid: {e}")),
            &name,
        )
    })?;
    let mut requests = vec![request];
    let warnings = match &state.admission {
        Some(admission) => admission
            .admit(&mut requests)
            .await
            .map_err(|e| admission_refusal(target, &name, e))?,
        None => Vec::new(),
    };
    let Some(request) = requests.pop() else {
        return Err(KubeError::InternalError("the admission dropped the object".into()).into());
    };
    if dry_run {
        let planned = crate::dry_run::plan(&state.store, std::slice::from_ref(&request))
            .await
            .map_err(|e| target.store_error(&e, &name))?;
        let mut object = planned
            .into_iter()
            .next()
            .map(|applied| applied.object)
            .ok_or_else(|| Refusal::from(KubeError::InternalError("nothing was planned".into())))?;
        if let Some(finalizers) = finalizers {
            object.meta.finalizers = finalizers;
        }
        if let Some(managed_fields) = managed_fields {
            object.meta.managed_fields = managed_fields;
        }
        return Ok((object, warnings));
    }
    let fallback = Object {
        kind: request.kind.clone(),
        name: request.name.clone(),
        labels: request.labels.clone(),
        annotations: request.annotations.clone(),
        spec: request.spec.clone(),
        status: Value::Null,
        meta: Default::default(),
    };
    let mut writes = vec![Write::Apply(request)];
    if let Some(managed_fields) = managed_fields {
        writes.push(Write::SetManagedFields {
            kind: target.kind().to_owned(),
            name: name.clone(),
            managed_fields,
        });
    }
    if let Some(finalizers) = finalizers {
        writes.push(Write::SetFinalizers {
            kind: target.kind().to_owned(),
            name: name.clone(),
            finalizers,
            expected: None,
        });
    }
    let written = state
        .store
        .commit(writes)
        .await
        .map_err(|e| target.store_error(&e, &name))?;
    // `None`: the write removed the last finalizer of an object being deleted, so it went.
    let object = written
        .into_iter()
        .next()
        .and_then(|w| w.object)
        .map(std::sync::Arc::unwrap_or_clone)
        .unwrap_or(fallback);
    Ok((object, warnings))
}

pub(super) fn patch_refusal(target: &Target, error: PatchError, name: &str) -> Refusal {
    let kube = match error {
        PatchError::Unsupported(_) | PatchError::ServerSideApply => {
            KubeError::UnsupportedMediaType(error.to_string())
        }
        PatchError::NotJson(_)
        | PatchError::NotYaml(_)
        | PatchError::Unset(_)
        | PatchError::BadJsonPatch(_) => KubeError::BadRequest(error.to_string()),
        PatchError::Failed(_) => KubeError::Invalid(error.to_string()),
    };
    target.refuse(kube, name)
}
