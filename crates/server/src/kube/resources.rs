//! Each Kind's objects as a cluster-scoped resource (`/apis/{group}/{version}/{plural}`):
//! get, list, watch, create, replace, patch, delete, deletecollection and `/status`. Writes
//! are admitted and stored as `/v1`'s applies are; `resourceVersion` is the compare-and-swap.

use super::apply::{Manager, Part};
use super::reply::{Refusal, Refused, Reply, json};
use super::target::{Target, bad_query};
use super::write::{mapping_refusal, patch_refusal, undeclared_fields, write};
use crate::AppState;
use crate::paged_list;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use reactor_core::object::Object;
use reactor_http::Path;
use reactor_kube::KubeError;
use reactor_kube::continuation::Continuation;
use reactor_kube::events::Shape;
use reactor_kube::mapping::{from_kube, to_kube, to_list};
use reactor_kube::patch::PatchType;
use reactor_kube::query::Query as KubeQuery;
use reactor_kube::table::{IncludeObject, table, wants_table};
use reactor_store::{CAS_ATTEMPTS, Listing, Page, PageQuery};
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
    if shape == Shape::Object
        && let Some(whole) = whole_list(&state, &target, &query).await?
    {
        return Ok(whole);
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

/// A list asked for whole (no `limit`, `continue` or field selector) as objects, as the
/// Kubernetes clients' own `list` asks: read and sent a page at a time, every page from the
/// first one's snapshot, so that the server holds one page of it ([`paged_list`]). `None`
/// for any other list.
async fn whole_list(
    state: &AppState,
    target: &Target,
    query: &KubeQuery,
) -> Result<Option<axum::response::Response>, Refusal> {
    if query.limit().map_err(bad_query)?.is_some()
        || query.continuation().map_err(bad_query)?.is_some()
        || !query.name_fields().map_err(bad_query)?.is_empty()
    {
        return Ok(None);
    }
    let selector = query.selector().map_err(bad_query)?;
    let (first, rest) = paged_list::first_page(&state.store, target.kind(), &selector)
        .await
        .map_err(|e| target.store_error(&e, ""))?;
    let (resource, catalog) = (target.resource.clone(), target.catalog.clone());
    if !first.more {
        let list = to_list(&first.items, &resource, &catalog, first.revision, None);
        return Ok(Some(json(StatusCode::OK, list, &[])));
    }
    // The list's own fields, then its items as they come.
    let mut list = to_list(&[], &resource, &catalog, first.revision, None);
    if let Some(fields) = list.as_object_mut() {
        fields.remove("items");
    }
    let mut head = serde_json::to_vec(&list)
        .map_err(|e| target.refuse(KubeError::InternalError(e.to_string()), ""))?;
    // Without its closing brace.
    head.pop();
    head.extend_from_slice(br#","items":["#);
    let envelope = paged_list::Envelope {
        head,
        tail: b"]}".to_vec(),
        item: move |object: &Object, out: &mut Vec<u8>| {
            serde_json::to_writer(out, &to_kube(object, &resource, &catalog))
        },
    };
    let kind = target.kind().to_owned();
    Ok(Some(paged_list::respond(kind, first, rest, envelope)))
}

/// The objects a list asks for (label and field selectors, one page of `limit` after
/// `continue`, read from the first page's snapshot), in name order, the revision they
/// reflect, and the `continue` of the next page.
async fn select(
    state: &AppState,
    target: &Target,
    query: &KubeQuery,
) -> Result<(Vec<Object>, u64, Option<String>), Refusal> {
    let selector = query.selector().map_err(bad_query)?;
    let names = query.name_fields().map_err(bad_query)?;
    let limit = query.limit().map_err(bad_query)?;
    let continuation = query.continuation().map_err(bad_query)?;
    let asked = PageQuery {
        after: continuation.as_ref().map(|c| c.after.as_str()),
        limit,
        at: continuation.as_ref().map(|c| c.revision),
    };
    let page = if names.is_empty() {
        state.store.list_page(target.kind(), &selector, asked).await
    } else {
        // The store selects by label only: read the rest of the list, keep the names asked
        // for, then take the page.
        let rest = PageQuery {
            limit: None,
            ..asked
        };
        state
            .store
            .list_page(target.kind(), &selector, rest)
            .await
            .map(|page| {
                let items = page
                    .items
                    .into_iter()
                    .filter(|o| names.iter().all(|n| n.matches(&o.name)))
                    .collect();
                let listing = Listing {
                    items,
                    revision: page.revision,
                };
                Page::of(
                    listing,
                    &PageQuery {
                        after: None,
                        ..asked
                    },
                )
            })
    }
    .map_err(|e| target.store_error(&e, ""))?;
    let next = page
        .next_after()
        .map(|after| Continuation::new(page.revision, after).encode());
    Ok((page.items, page.revision, next))
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
