//! Server-side apply (`PATCH` with `application/apply-patch+yaml`): the fields a manager sends
//! merged over the object (which it creates when absent), the fields it stopped sending
//! removed, a field another manager set to another value a conflict unless `force=true`; and
//! the `managedFields` every other write through this API records.

use super::reply::{Refusal, Reply, json};
use super::target::{Target, bad_query};
use super::write::{mapping_refusal, patch_refusal, undeclared_fields, write};
use crate::AppState;
use axum::body::Bytes;
use axum::http::header::USER_AGENT;
use axum::http::{HeaderMap, StatusCode};
use reactor_core::clock::now_ms;
use reactor_core::object::Object;
use reactor_kube::KubeError;
use reactor_kube::fields::{MAIN, STATUS};
use reactor_kube::managed::{Managers, Writer};
use reactor_kube::mapping::from_kube;
use reactor_kube::patch::applied_config;
use reactor_kube::query::Query as KubeQuery;
use reactor_store::CAS_ATTEMPTS;
use serde_json::{Value, json};

/// The subresource of a write: the object itself, or its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    Main,
    Status,
}

impl Part {
    fn subresource(self) -> &'static str {
        match self {
            Self::Main => "",
            Self::Status => "status",
        }
    }

    fn roots(self) -> &'static [&'static [&'static str]] {
        match self {
            Self::Main => MAIN,
            Self::Status => STATUS,
        }
    }
}

/// Who writes: the request's field manager (required for an apply), through `part`.
pub(super) struct Manager {
    name: String,
    part: Part,
    api_version: String,
}

impl Manager {
    pub fn of(
        target: &Target,
        headers: &HeaderMap,
        query: &KubeQuery,
        part: Part,
        apply: bool,
    ) -> Result<Self, Refusal> {
        let agent = headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let name = query
            .manager(agent, apply)
            .map_err(|e| Refusal::from(KubeError::Invalid(e.to_string())))?;
        Ok(Self {
            name,
            part,
            api_version: target.resource.api_version(),
        })
    }

    fn writer(&self) -> Writer<'_> {
        Writer {
            manager: &self.name,
            subresource: self.part.subresource(),
            api_version: &self.api_version,
            now_ms: now_ms(),
        }
    }

    /// The `managedFields` after this manager's update of `current` (`None`: a create) to
    /// `after`, as the API shows objects.
    pub fn updated(&self, target: &Target, current: Option<&Object>, after: &Value) -> Value {
        let (mut managers, before) = match current {
            Some(object) => (
                Managers::read(&object.meta.managed_fields),
                target.show(object),
            ),
            None => (Managers::default(), Value::Null),
        };
        managers.update(&self.writer(), &before, after, self.part.roots());
        managers.to_value()
    }
}

/// What an apply request asks: a dry run or not, who applies, the configuration, and the
/// `resourceVersion` it pins, if any.
struct Asked {
    dry_run: bool,
    manager: Manager,
    applied: Value,
    pinned: Option<u64>,
}

impl Asked {
    fn read(
        target: &Target,
        name: &str,
        headers: &HeaderMap,
        query: &KubeQuery,
        body: &Bytes,
        part: Part,
    ) -> Result<Self, Refusal> {
        let dry_run = query.dry_run().map_err(bad_query)?;
        let manager = Manager::of(target, headers, query, part, true)?;
        let applied = applied_config(body).map_err(|e| patch_refusal(target, e, name))?;
        // Read as any write's body is (unknown fields, names, labels), and for its
        // precondition.
        let pinned = from_kube(applied.clone(), &target.resource, Some(name))
            .map_err(|e| mapping_refusal(target, e, name))?
            .request
            .expected_revision;
        Ok(Self {
            dry_run,
            manager,
            applied,
            pinned,
        })
    }
}

/// The object an apply starts from when there is none yet.
fn absent(target: &Target, name: &str) -> Value {
    json!({
        "apiVersion": target.resource.api_version(),
        "kind": target.resource.kind,
        "metadata": {"name": name},
    })
}

/// A server-side apply of the object itself: 201 when it created the object, else 200.
pub(super) async fn apply(
    state: &AppState,
    target: &Target,
    name: &str,
    headers: &HeaderMap,
    query: &KubeQuery,
    body: &Bytes,
) -> Reply {
    let Asked {
        dry_run,
        manager,
        applied,
        pinned,
    } = Asked::read(target, name, headers, query, body, Part::Main)?;
    for _ in 0..CAS_ATTEMPTS {
        let current = state
            .store
            .get(target.kind(), name)
            .await
            .map_err(|e| target.store_error(&e, name))?;
        let (live, mut managers) = match &current {
            Some(object) => (
                target.show(object),
                Managers::read(&object.meta.managed_fields),
            ),
            None => (absent(target, name), Managers::default()),
        };
        let merged = managers
            .apply(
                &manager.writer(),
                &live,
                &applied,
                Part::Main.roots(),
                query.force(),
            )
            .map_err(|conflicts| target.refuse(KubeError::Conflict(conflicts.to_string()), name))?;
        let mut warnings = undeclared_fields(target, query, Some(&live), &merged, name)?;
        let mut incoming = from_kube(merged, &target.resource, Some(name))
            .map_err(|e| mapping_refusal(target, e, name))?;
        incoming.request.expected_revision =
            Some(pinned.unwrap_or(current.as_ref().map_or(0, |c| c.meta.revision)));
        incoming.finalizers = Some(incoming.finalizers.unwrap_or_default());
        match write(state, target, incoming, Some(managers.to_value()), dry_run).await {
            Err(refusal)
                if pinned.is_none()
                    && matches!(
                        refusal.error,
                        KubeError::Conflict(_) | KubeError::AlreadyExists(_)
                    ) =>
            {
                continue;
            }
            Err(refusal) => return Err(refusal),
            Ok((object, admitted)) => {
                warnings.extend(admitted);
                let code = match current {
                    None => StatusCode::CREATED,
                    Some(_) => StatusCode::OK,
                };
                return Ok(json(code, target.show(&object), &warnings));
            }
        }
    }
    Err(target.gave_up(name))
}

/// A server-side apply of an object's status.
pub(super) async fn apply_status(
    state: &AppState,
    target: &Target,
    name: &str,
    headers: &HeaderMap,
    query: &KubeQuery,
    body: &Bytes,
) -> Reply {
    let Asked {
        dry_run,
        manager,
        applied,
        pinned,
    } = Asked::read(target, name, headers, query, body, Part::Status)?;
    for _ in 0..CAS_ATTEMPTS {
        let current = target.current(state, name).await?;
        let mut managers = Managers::read(&current.meta.managed_fields);
        let merged = managers
            .apply(
                &manager.writer(),
                &target.show(&current),
                &applied,
                Part::Status.roots(),
                query.force(),
            )
            .map_err(|conflicts| target.refuse(KubeError::Conflict(conflicts.to_string()), name))?;
        let status = merged.get("status").cloned().unwrap_or(Value::Null);
        if dry_run {
            let mut object = current;
            object.status = status;
            object.meta.managed_fields = managers.to_value();
            return Ok(json(StatusCode::OK, target.show(&object), &[]));
        }
        let managed = managers.to_value();
        let expected = pinned.unwrap_or(current.meta.revision);
        match crate::status::write_managed(
            state.store.as_ref(),
            target.kind(),
            name,
            status,
            Some(expected),
            &|_, _| Some(managed.clone()),
        )
        .await
        {
            Err(e) if e.is_conflict() && pinned.is_none() => continue,
            Err(e) => return Err(target.store_error(&e, name)),
            Ok(object) => return Ok(json(StatusCode::OK, target.show(&object), &[])),
        }
    }
    Err(target.gave_up(name))
}
