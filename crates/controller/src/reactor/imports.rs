//! The engine behind the guests' `store` and `nimbus` imports: reads come from the shared
//! reflector caches where a kind is watched, writes go to the store, and `set-status` keeps
//! the host-owned part of the primary object's status.

use crate::admission::{AdmissionError, Admitter, Writer};
use crate::commit::status::{merge_reactor_status, update_status};
use crate::engine::context::EngineContext;
use crate::reactor::wasm::report_to_guest;
use crate::run::pending::Pending;
use async_trait::async_trait;
use reactor_core::object::{ApplyRequest, Object, ObjectKey, Owner, Selector, is_reserved};
use reactor_nimbus as nimbus;
use reactor_nimbus::ItemTarget;
use reactor_runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use reactor_runtime::bindings::reactor::host::store::StoreError as GuestStoreError;
use reactor_runtime::{Caller, ControllerHost, InCallback, ItemStatus};
use reactor_store::{Store, StoreError};
use serde_json::Value;
use std::sync::Arc;

pub struct EngineHost {
    context: EngineContext,
    /// A reactor's writes pass the admission users' applies pass: their Kind's schema and
    /// defaults, and the other reactors' `validate`.
    admitter: Arc<Admitter>,
}

impl EngineHost {
    /// The host of the engine on `context`, admitting as a server without `--strict-kinds`.
    pub fn new(context: EngineContext) -> Self {
        let admitter = Arc::new(Admitter::new(&context, false));
        Self::admitting(context, admitter)
    }

    /// The host of the engine on `context`, whose guests' writes pass `admitter` (the one
    /// the server's API admits users' applies with).
    pub fn admitting(context: EngineContext, admitter: Arc<Admitter>) -> Self {
        Self { context, admitter }
    }
}

/// Guests never touch the host's own kinds through the store (items and reports go through
/// the `nimbus` import).
fn check_kind(kind: &str) -> Result<(), GuestStoreError> {
    if is_reserved(kind) {
        return Err(GuestStoreError::Denied(format!(
            "kind {kind} is reserved to the host: use the nimbus import"
        )));
    }
    Ok(())
}

impl EngineHost {
    /// What a callback reads and writes through: its pending writes (see `pending`). A
    /// shadow's call never writes to the store: without its pending writes (a call outside
    /// the run the engine opened for it) it gets writes that hold nothing and land nowhere.
    fn store(&self, caller: InCallback<'_>) -> Arc<dyn Store> {
        let primary = caller.primary;
        let key = ObjectKey::new(&primary.kind, &primary.name);
        let name = callback_name(caller);
        match self.context.callbacks.find(&name, &key) {
            Some(pending) => pending,
            None if caller.shadow => Arc::new(Pending::new(self.context.store.clone(), 0)),
            None => self.context.store.clone(),
        }
    }

    /// The pending writes of the callback `caller` is in, if any.
    fn pending(&self, caller: &Caller) -> Option<Arc<Pending>> {
        let inside = caller.in_callback()?;
        let primary = inside.primary;
        self.context.callbacks.find(
            &callback_name(inside),
            &ObjectKey::new(&primary.kind, &primary.name),
        )
    }

    /// The owner of what a callback applies: its primary object, as it is now.
    fn owner(&self, caller: InCallback<'_>) -> Result<Owner, GuestStoreError> {
        let primary = caller.primary;
        let uid = self
            .context
            .reflectors
            .acquire(&primary.kind)
            .and_then(|reflector| reflector.uid(&primary.name))
            .ok_or_else(|| {
                GuestStoreError::Unavailable(format!(
                    "{}/{} is not in the cache: it may have just been deleted",
                    primary.kind, primary.name
                ))
            })?;
        Ok(Owner {
            kind: primary.kind.clone(),
            name: primary.name.clone(),
            uid,
            component: caller.component.to_owned(),
        })
    }
}

fn guest_error(error: StoreError) -> GuestStoreError {
    match error.root() {
        StoreError::NotOwned { .. } => GuestStoreError::Denied(error.to_string()),
        StoreError::NotFound { .. } => GuestStoreError::NotFound,
        StoreError::Conflict { .. } | StoreError::ConflictMissing { .. } => {
            GuestStoreError::Conflict(error.to_string())
        }
        StoreError::Invalid(_) | StoreError::TxnTooLarge(_) => {
            GuestStoreError::Invalid(error.to_string())
        }
        _ => GuestStoreError::Unavailable(error.to_string()),
    }
}

#[async_trait]
impl ControllerHost for EngineHost {
    async fn get(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<Option<Object>, GuestStoreError> {
        check_kind(kind)?;
        // Inside a callback, what it wrote, else the object as the callback first read it:
        // from a cache that shows this reactor's own last commit (or the store), and for a
        // shadow as the serving run beside it read it.
        if let Some(pending) = self.pending(caller) {
            return pending.get(kind, name).await.map_err(guest_error);
        }
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            reflector.synced().await;
            return Ok(reflector.get(name).map(Arc::unwrap_or_clone));
        }
        self.context
            .store
            .get(kind, name)
            .await
            .map_err(guest_error)
    }

    async fn list(
        &self,
        caller: &Caller,
        kind: &str,
        selector: &Selector,
    ) -> Result<Vec<Object>, GuestStoreError> {
        check_kind(kind)?;
        // Inside a callback, as its pending writes show the objects (see `get`).
        if let Some(pending) = self.pending(caller) {
            let listing = pending.list(kind, selector).await.map_err(guest_error)?;
            return Ok(listing.items);
        }
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            reflector.synced().await;
            let listed = reflector.list(selector);
            return Ok(listed.into_iter().map(Arc::unwrap_or_clone).collect());
        }
        let listing = self
            .context
            .store
            .list(kind, selector)
            .await
            .map_err(guest_error)?;
        Ok(listing.items)
    }

    /// The child is owned by the callback's primary object: new, or already its child.
    async fn apply(
        &self,
        caller: InCallback<'_>,
        object: Object,
    ) -> Result<Object, GuestStoreError> {
        check_kind(&object.kind)?;
        if object.kind == caller.primary.kind && object.name == caller.primary.name {
            return Err(GuestStoreError::Denied(format!(
                "{}/{} is the callback's own object: change its status with set-status",
                object.kind, object.name
            )));
        }
        let mut request = ApplyRequest::from(object);
        request.owner = Some(self.owner(caller)?);
        let store = self.store(caller);
        let writer = Writer::Reactor {
            component: caller.component,
            store: store.as_ref(),
        };
        let mut requests = [request];
        let admitted = self.admitter.admit_as(&mut requests, writer).await;
        admitted.map_err(|e| admission_error(&requests[0].kind, &requests[0].name, e))?;
        let mut applied = store
            .apply(Vec::from(requests))
            .await
            .map_err(guest_error)?;
        let applied = applied
            .pop()
            .ok_or_else(|| GuestStoreError::Unavailable("the store applied nothing".into()))?;
        Ok(applied.object)
    }

    /// Only a child of the callback's primary object (in any incarnation) may be deleted.
    async fn delete(
        &self,
        caller: InCallback<'_>,
        kind: &str,
        name: &str,
    ) -> Result<bool, GuestStoreError> {
        check_kind(kind)?;
        let store = self.store(caller);
        let Some(current) = store.get(kind, name).await.map_err(guest_error)? else {
            return Ok(false);
        };
        let mine = self.owner(caller)?;
        match &current.meta.owner {
            Some(owner) if owner.same_place(&mine) => {}
            Some(owner) => {
                return Err(GuestStoreError::Denied(format!(
                    "{kind}/{name} is owned by {owner}: a reactor deletes only its own children"
                )));
            }
            None => {
                return Err(GuestStoreError::Denied(format!(
                    "{kind}/{name} was not created by this reactor: a reactor deletes only its own children"
                )));
            }
        }
        match store.delete(kind, name, Some(current.meta.revision)).await {
            Ok(_) => Ok(true),
            Err(StoreError::NotFound { .. }) => Ok(false),
            Err(e) => Err(guest_error(e)),
        }
    }

    async fn set_status(
        &self,
        caller: InCallback<'_>,
        status: Value,
    ) -> Result<(), GuestStoreError> {
        let primary = caller.primary;
        let store = self.store(caller);
        update_status(store.as_ref(), &primary.kind, &primary.name, |current| {
            merge_reactor_status(current, status.clone())
        })
        .await
        .map_err(guest_error)?;
        Ok(())
    }

    async fn publish(
        &self,
        caller: InCallback<'_>,
        key: &str,
        value: Value,
        to: Target,
    ) -> Result<(), NimbusError> {
        let owner = owner(caller);
        let target = match to {
            Target::Agents(ids) => ItemTarget::Agents(ids),
            Target::Labels(labels) => ItemTarget::Labels(labels.into_iter().collect()),
        };
        nimbus::publish(self.store(caller).as_ref(), &owner, key, value, target)
            .await
            .map_err(nimbus_error)
    }

    async fn unpublish(&self, caller: InCallback<'_>, key: &str) -> Result<(), NimbusError> {
        let owner = owner(caller);
        let store = self.store(caller);
        let store = store.as_ref();
        nimbus::unpublish(store, &owner, key)
            .await
            .map_err(nimbus_error)?;
        // Withdrawn: no agent counts it any more, and the reactor hears `removed`.
        nimbus::forget_reports(store, &owner.kind, &owner.name, key)
            .await
            .map_err(nimbus_error)
    }

    async fn published(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
    ) -> Result<Vec<String>, NimbusError> {
        let owner = owner(caller);
        nimbus::keys_of(
            self.store(caller).as_ref(),
            &owner.kind,
            &owner.name,
            prefix,
        )
        .await
        .map_err(nimbus_error)
    }

    /// Agents' reports on the caller's items (of every agent, or of `agent`).
    async fn statuses(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
        agent: Option<&str>,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        let primary = ObjectKey::new(&caller.primary.kind, &caller.primary.name);
        // Reports change all the time: read them from the engine's report book, which
        // holds every report handed to a reactor, without a store read per call.
        let reports = &self.context.reports;
        reports.synced().await;
        let statuses = reports
            .reports_under(&primary, agent, prefix)
            .iter()
            .map(report_to_guest)
            .collect();
        Ok(statuses)
    }
}

/// The name a callback's pending writes are kept under: the component's, or for a shadow
/// version's call [`shadow_callback_name`] of it.
fn callback_name(caller: InCallback<'_>) -> std::borrow::Cow<'_, str> {
    match caller.shadow {
        true => shadow_callback_name(caller.component).into(),
        false => caller.component.into(),
    }
}

/// Where the shadow version of `component` keeps a callback's writes, beside the serving
/// version's: a name no component has (a file name cannot hold `/`).
pub fn shadow_callback_name(component: &str) -> String {
    format!("{component}/shadow")
}

/// The owner of what a callback publishes: its primary object.
fn owner(caller: InCallback<'_>) -> nimbus::Owner {
    nimbus::Owner {
        kind: caller.primary.kind.clone(),
        name: caller.primary.name.clone(),
        component: caller.component.to_owned(),
    }
}

/// A write the admission refused, as the guest hears it: the object named, the document not.
fn admission_error(kind: &str, name: &str, error: AdmissionError) -> GuestStoreError {
    match error {
        AdmissionError::Refused {
            reactor, message, ..
        } => GuestStoreError::Invalid(format!("{kind}/{name}: refused by {reactor}: {message}")),
        AdmissionError::Invalid { message, .. } => {
            GuestStoreError::Invalid(format!("{kind}/{name}: {message}"))
        }
        AdmissionError::Unregistered { .. } => GuestStoreError::Invalid(format!(
            "{kind}/{name}: kind {kind} has no Kind object, and this server refuses such kinds (serve --strict-kinds)"
        )),
        AdmissionError::Store { source, .. } => guest_error(source),
        AdmissionError::Kind { message, .. } => {
            GuestStoreError::Unavailable(format!("the Kind of {kind}: {message}"))
        }
    }
}

fn nimbus_error(error: nimbus::NimbusError) -> NimbusError {
    match error {
        nimbus::NimbusError::Invalid(m) => NimbusError::Invalid(m),
        nimbus::NimbusError::Denied(m) => NimbusError::Denied(m),
        // Over the callback's limit of writes: retrying within the callback cannot help.
        nimbus::NimbusError::Store(e @ StoreError::TxnTooLarge(_)) => {
            NimbusError::Invalid(e.to_string())
        }
        nimbus::NimbusError::Store(e) => NimbusError::Unavailable(e.to_string()),
    }
}
