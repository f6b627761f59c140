//! Each Kind's objects as a cluster-scoped resource (`/apis/{group}/{version}/{plural}`):
//! get, list, watch, create, replace, patch, delete, deletecollection and `/status`. Writes
//! are admitted and stored as `/v1`'s applies are; `resourceVersion` is the compare-and-swap.

use super::apply::{Manager, Part};
use super::reply::{Refusal, Refused, Reply, json};
use super::target::{Target, bad_query};
use crate::AppState;
use crate::path::Path;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use reactor_core::object::Object;
use reactor_kube::KubeError;
use reactor_kube::events::Shape;
use reactor_kube::mapping::{Incoming, MappingError, from_kube, to_list};
use reactor_kube::patch::{PatchError, PatchType};
use reactor_kube::query::Query as KubeQuery;
use reactor_kube::table::{IncludeObject, table, wants_table};
use reactor_kube::validation::{FieldValidation, unknown_fields};
use reactor_store::{CAS_ATTEMPTS, Write};
use serde_json::Value;

fn query_of(query: Result<Query<KubeQuery>, QueryRejection>) -> Result<KubeQuery, Refusal> {
    query
        .map(|Query(q)| q)
        .map_err(|e| KubeError::BadRequest(format!("invalid query: {}", e.body_text())).into())
}

fn accept(headers: &HeaderMap) -> &str {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// How a read answers: objects, or a table when the `Accept` header asks for one.
pub(super) fn shape(headers: &HeaderMap, query: &KubeQuery) -> Result<Shape, Refusal> {
    if !wants_table(accept(headers)) {
        return Ok(Shape::Object);
    }
    let include = IncludeObject::parse(query.include_object.as_deref())
        .map_err(|e| Refusal::from(KubeError::BadRequest(e.to_string())))?;
    Ok(Shape::Table(include))
}

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

/// A write's body as JSON (kubectl sends `application/json`).
fn body_json(headers: &HeaderMap, body: &Bytes) -> Result<Value, Refusal> {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if media != "application/json" {
        return Err(KubeError::UnsupportedMediaType(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json (not {media})"
        ))
        .into());
    }
    serde_json::from_slice(body).map_err(|e| {
        KubeError::BadRequest(format!("the body of the request is not JSON: {e}")).into()
    })
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
        .unwrap_or(fallback);
    Ok((object, warnings))
}

/// The objects of a resource (`?watch=1`: their changes, see `watch.rs`).
#[utoipa::path(
    operation_id = "kubeList",
    get,
    path = "/apis/{group}/{version}/{plural}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group, e.g. `reactor.dev`"),
        ("version" = String, Path, description = "The version, e.g. `v1`"),
        ("plural" = String, Path, description = "The resource, e.g. `policies`"),
    ),
    responses((status = 200, description = "A list (`<Kind>List`), a `Table` when asked for, or with `watch=1` a stream of watch events", body = Object), Refused)
)]
pub async fn list(
    State(state): State<AppState>,
    Path((group, version, plural)): Path<(String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let shape = shape(&headers, &query)?;
    if query.is_watch() {
        return super::watch::serve(state, target, query, shape).await;
    }
    let (items, revision, next) = select(&state, &target, &query).await?;
    let answer = match shape {
        Shape::Table(include) => {
            let mut shown = table(
                &items,
                &target.resource,
                &target.catalog,
                Some(revision),
                include,
            );
            if let Some(next) = next {
                shown["metadata"]["continue"] = Value::String(next);
            }
            shown
        }
        Shape::Object => to_list(&items, &target.resource, &target.catalog, revision, next),
    };
    Ok(json(StatusCode::OK, answer, &[]))
}

/// The objects a list asks for (label and field selectors, one page of `limit` after
/// `continue`), by name, the revision they reflect, and the `continue` of the next page.
async fn select(
    state: &AppState,
    target: &Target,
    query: &KubeQuery,
) -> Result<(Vec<Object>, u64, Option<String>), Refusal> {
    let selector = query.selector().map_err(bad_query)?;
    let names = query.name_fields().map_err(bad_query)?;
    let limit = query.limit().map_err(bad_query)?;
    let listing = state
        .store
        .list(target.kind(), &selector)
        .await
        .map_err(|e| target.store_error(&e, ""))?;
    let after = query.continue_after();
    let mut items: Vec<Object> = listing
        .items
        .into_iter()
        .filter(|o| names.iter().all(|n| n.matches(&o.name)))
        .filter(|o| after.is_none_or(|after| o.name.as_str() > after))
        .collect();
    items.sort_by(|a, b| a.name.cmp(&b.name));
    let next = match limit {
        Some(limit) if items.len() > limit => {
            items.truncate(limit);
            items.last().map(|o| o.name.clone())
        }
        _ => None,
    };
    Ok((items, listing.revision, next))
}

/// Creates an object; 409 `AlreadyExists` if its name is taken.
#[utoipa::path(
    operation_id = "kubeCreate",
    post,
    path = "/apis/{group}/{version}/{plural}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
    ),
    request_body = Object,
    responses((status = 201, description = "The object as stored", body = Object), Refused)
)]
pub async fn create(
    State(state): State<AppState>,
    Path((group, version, plural)): Path<(String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let manager = Manager::of(&target, &headers, &query, Part::Main, false)?;
    let value = body_json(&headers, &body)?;
    let managed = manager.updated(&target, None, &value);
    let named = value["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut warnings = undeclared_fields(&target, &query, None, &value, &named)?;
    let mut incoming =
        from_kube(value, &target.resource, None).map_err(|e| mapping_refusal(&target, e, ""))?;
    let name = incoming.request.name.clone();
    if incoming.request.expected_revision.is_some() {
        return Err(target.refuse(
            KubeError::BadRequest(
                "resourceVersion should not be set on objects to be created".into(),
            ),
            &name,
        ));
    }
    incoming.request.expected_revision = Some(0);
    let (object, admitted) = write(&state, &target, incoming, Some(managed), dry_run).await?;
    warnings.extend(admitted);
    Ok(json(StatusCode::CREATED, target.show(&object), &warnings))
}

/// Deletes the objects a list would show (label and field selectors).
#[utoipa::path(
    operation_id = "kubeDeleteCollection",
    delete,
    path = "/apis/{group}/{version}/{plural}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
    ),
    responses((status = 200, description = "The objects deleted or left to their finalizers, as a list", body = Object), Refused)
)]
pub async fn delete_collection(
    State(state): State<AppState>,
    Path((group, version, plural)): Path<(String, String, String)>,
    query: Result<Query<KubeQuery>, QueryRejection>,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let (items, revision, _) = select(&state, &target, &query).await?;
    let mut deleted = Vec::with_capacity(items.len());
    for object in items {
        if dry_run {
            deleted.push(object);
            continue;
        }
        deleted.push(delete_one(&state, &target, &object.name, None).await?);
    }
    let shown = to_list(&deleted, &target.resource, &target.catalog, revision, None);
    Ok(json(StatusCode::OK, shown, &[]))
}

/// Deletes one object, or marks it deleting while finalizers hold it (retried while it
/// changes, unless `precondition` pins its revision): its last state.
async fn delete_one(
    state: &AppState,
    target: &Target,
    name: &str,
    precondition: Option<u64>,
) -> Result<Object, Refusal> {
    for _ in 0..CAS_ATTEMPTS {
        let current = target.current(state, name).await?;
        let expected = precondition.unwrap_or(current.meta.revision);
        match state
            .store
            .delete(target.kind(), name, Some(expected))
            .await
        {
            Ok(Some(held)) => {
                crate::events::deletion_held(state, &held);
                return Ok(held);
            }
            Ok(None) => return Ok(current),
            Err(e) if e.is_conflict() && precondition.is_none() => continue,
            Err(e) => return Err(target.store_error(&e, name)),
        }
    }
    Err(target.gave_up(name))
}

/// One object (a one-row `Table` when asked for).
#[utoipa::path(
    operation_id = "kubeGet",
    get,
    path = "/apis/{group}/{version}/{plural}/{name}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    responses((status = 200, description = "The object", body = Object), Refused)
)]
pub async fn get(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let shape = shape(&headers, &query)?;
    let object = target.current(&state, &name).await?;
    let shown = match shape {
        Shape::Table(include) => table(
            std::slice::from_ref(&object),
            &target.resource,
            &target.catalog,
            Some(object.meta.revision),
            include,
        ),
        Shape::Object => target.show(&object),
    };
    Ok(json(StatusCode::OK, shown, &[]))
}

/// Replaces an object (labels, annotations, finalizers and spec; its status is `/status`'s):
/// with `metadata.resourceVersion` only at that version (409 `Conflict` otherwise).
#[utoipa::path(
    operation_id = "kubeReplace",
    put,
    path = "/apis/{group}/{version}/{plural}/{name}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    request_body = Object,
    responses((status = 200, description = "The object as stored", body = Object), Refused)
)]
pub async fn replace(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let manager = Manager::of(&target, &headers, &query, Part::Main, false)?;
    let value = body_json(&headers, &body)?;
    let current = target.current(&state, &name).await?;
    let managed = manager.updated(&target, Some(&current), &value);
    let mut warnings =
        undeclared_fields(&target, &query, Some(&target.show(&current)), &value, &name)?;
    let mut incoming = from_kube(value, &target.resource, Some(&name))
        .map_err(|e| mapping_refusal(&target, e, &name))?;
    if incoming.request.expected_revision.is_none() {
        incoming.request.expected_revision = Some(current.meta.revision);
    }
    // A replace is the whole object: finalizers it does not name are gone.
    incoming.finalizers = Some(incoming.finalizers.unwrap_or_default());
    let (object, admitted) = write(&state, &target, incoming, Some(managed), dry_run).await?;
    warnings.extend(admitted);
    Ok(json(StatusCode::OK, target.show(&object), &warnings))
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

fn content_type(headers: &HeaderMap) -> &str {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// `current` as the API shows it, patched; whether the patch pinned a resourceVersion of
/// its own (a precondition, never retried).
fn patched(
    target: &Target,
    current: &Object,
    patch_type: PatchType,
    body: &Bytes,
) -> Result<(Value, bool), Refusal> {
    let shown = target.show(current);
    let patched = reactor_kube::patch::apply(patch_type, &shown, body)
        .map_err(|e| patch_refusal(target, e, &current.name))?;
    let pinned = patched["metadata"]["resourceVersion"] != shown["metadata"]["resourceVersion"];
    Ok((patched, pinned))
}

/// Patches an object: a JSON merge patch or a JSON patch of the object as shown.
#[utoipa::path(
    operation_id = "kubePatch",
    patch,
    path = "/apis/{group}/{version}/{plural}/{name}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    request_body(content = Object, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The object as stored", body = Object), Refused)
)]
pub async fn patch(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let patch_type =
        PatchType::of(content_type(&headers)).map_err(|e| patch_refusal(&target, e, &name))?;
    if patch_type == PatchType::Apply {
        return super::apply::apply(&state, &target, &name, &headers, &query, &body).await;
    }
    let manager = Manager::of(&target, &headers, &query, Part::Main, false)?;
    for _ in 0..CAS_ATTEMPTS {
        let current = target.current(&state, &name).await?;
        let (value, pinned) = patched(&target, &current, patch_type, &body)?;
        let managed = manager.updated(&target, Some(&current), &value);
        let mut warnings =
            undeclared_fields(&target, &query, Some(&target.show(&current)), &value, &name)?;
        let mut incoming = from_kube(value, &target.resource, Some(&name))
            .map_err(|e| mapping_refusal(&target, e, &name))?;
        if incoming.request.expected_revision.is_none() {
            incoming.request.expected_revision = Some(current.meta.revision);
        }
        incoming.finalizers = Some(incoming.finalizers.unwrap_or_default());
        match write(&state, &target, incoming, Some(managed), dry_run).await {
            Err(refusal) if matches!(refusal.error, KubeError::Conflict(_)) && !pinned => continue,
            Err(refusal) => return Err(refusal),
            Ok((object, admitted)) => {
                warnings.extend(admitted);
                return Ok(json(StatusCode::OK, target.show(&object), &warnings));
            }
        }
    }
    Err(target.gave_up(&name))
}

/// Deletes an object; finalizers keep it, with a `deletionTimestamp`, until they are gone.
#[utoipa::path(
    operation_id = "kubeDelete",
    delete,
    path = "/apis/{group}/{version}/{plural}/{name}",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    responses((status = 200, description = "The object as last stored (with a deletionTimestamp while finalizers hold it)", body = Object), Refused)
)]
pub async fn delete(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    // `DeleteOptions`: only `preconditions.resourceVersion` and `dryRun` are read.
    let options: Value = match body.iter().all(u8::is_ascii_whitespace) {
        true => Value::Null,
        false => serde_json::from_slice(&body).map_err(|e| {
            Refusal::from(KubeError::BadRequest(format!(
                "the DeleteOptions are not JSON: {e}"
            )))
        })?,
    };
    let precondition = match &options["preconditions"]["resourceVersion"] {
        Value::String(rv) => Some(rv.parse::<u64>().map_err(|_| {
            target.refuse(
                KubeError::BadRequest(format!(
                    "preconditions.resourceVersion {rv:?} is not a number"
                )),
                &name,
            )
        })?),
        _ => None,
    };
    let dry_run = dry_run
        || options["dryRun"]
            .as_array()
            .is_some_and(|d| d.iter().any(|v| v == "All"));
    let object = match dry_run {
        true => target.current(&state, &name).await?,
        false => delete_one(&state, &target, &name, precondition).await?,
    };
    Ok(json(StatusCode::OK, target.show(&object), &[]))
}

/// One object, for its status.
#[utoipa::path(
    operation_id = "kubeGetStatus",
    get,
    path = "/apis/{group}/{version}/{plural}/{name}/status",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    responses((status = 200, description = "The object", body = Object), Refused)
)]
pub async fn get_status(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let object = target.current(&state, &name).await?;
    Ok(json(StatusCode::OK, target.show(&object), &[]))
}

/// Writes `status` (the host's own keys kept), at `expected` when pinned, recording the
/// status fields `manager` changed.
async fn write_status(
    state: &AppState,
    target: &Target,
    name: &str,
    status: Value,
    expected: Option<u64>,
    manager: &Manager,
    dry_run: bool,
) -> Result<Object, Refusal> {
    if dry_run {
        let mut object = target.current(state, name).await?;
        object.status = status;
        return Ok(object);
    }
    let managed = |current: &Object, status: &Value| {
        let mut after = target.show(current);
        after["status"] = status.clone();
        Some(manager.updated(target, Some(current), &after))
    };
    crate::status::write_managed(
        state.store.as_ref(),
        target.kind(),
        name,
        status,
        expected,
        &managed,
    )
    .await
    .map_err(|e| target.store_error(&e, name))
}

/// Replaces an object's status (its spec is left as it is).
#[utoipa::path(
    operation_id = "kubeReplaceStatus",
    put,
    path = "/apis/{group}/{version}/{plural}/{name}/status",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    request_body = Object,
    responses((status = 200, description = "The object with its new status", body = Object), Refused)
)]
pub async fn replace_status(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let manager = Manager::of(&target, &headers, &query, Part::Status, false)?;
    let value = body_json(&headers, &body)?;
    let incoming = from_kube(value, &target.resource, Some(&name))
        .map_err(|e| mapping_refusal(&target, e, &name))?;
    let expected = incoming.request.expected_revision;
    let status = incoming.status;
    let object = write_status(&state, &target, &name, status, expected, &manager, dry_run).await?;
    Ok(json(StatusCode::OK, target.show(&object), &[]))
}

/// Patches an object's status.
#[utoipa::path(
    operation_id = "kubePatchStatus",
    patch,
    path = "/apis/{group}/{version}/{plural}/{name}/status",
    tag = "kubernetes",
    params(
        ("group" = String, Path, description = "The API group"),
        ("version" = String, Path, description = "The version"),
        ("plural" = String, Path, description = "The resource"),
        ("name" = String, Path, description = "The object's name"),
    ),
    request_body(content = Object, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The object with its new status", body = Object), Refused)
)]
pub async fn patch_status(
    State(state): State<AppState>,
    Path((group, version, plural, name)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    query: Result<Query<KubeQuery>, QueryRejection>,
    body: Bytes,
) -> Reply {
    let target = Target::resolve(&state, &group, &version, &plural).await?;
    let query = query_of(query)?;
    let dry_run = query.dry_run().map_err(bad_query)?;
    let patch_type =
        PatchType::of(content_type(&headers)).map_err(|e| patch_refusal(&target, e, &name))?;
    if patch_type == PatchType::Apply {
        return super::apply::apply_status(&state, &target, &name, &headers, &query, &body).await;
    }
    let manager = Manager::of(&target, &headers, &query, Part::Status, false)?;
    let current = target.current(&state, &name).await?;
    let (value, _) = patched(&target, &current, patch_type, &body)?;
    let incoming = from_kube(value, &target.resource, Some(&name))
        .map_err(|e| mapping_refusal(&target, e, &name))?;
    let expected = incoming.request.expected_revision;
    let status = incoming.status;
    let object = write_status(&state, &target, &name, status, expected, &manager, dry_run).await?;
    Ok(json(StatusCode::OK, target.show(&object), &[]))
}
