//! The engine behind the guests' `store` and `nimbus` imports: reads come from the shared
//! reflector caches where a kind is watched, writes go to the store, and `set-status` keeps
//! the host-owned part of the primary object's status.

use super::context::EngineContext;
use super::status::{merge_reactor_status, update_status};
use super::wasm::report_to_guest;
use crate::nimbus::{self, ItemTarget, Owner};
use crate::object::{ApplyRequest, Object, Selector};
use crate::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use crate::runtime::bindings::reactor::host::store::StoreError as GuestStoreError;
use crate::runtime::{Caller, ControllerHost, InCallback, ItemStatus};
use crate::store::StoreError;
use async_trait::async_trait;
use serde_json::Value;

pub struct EngineHost {
    context: EngineContext,
}

impl EngineHost {
    pub fn new(context: EngineContext) -> Self {
        Self { context }
    }
}

fn guest_error(error: StoreError) -> GuestStoreError {
    match error.root() {
        StoreError::NotFound { .. } => GuestStoreError::NotFound,
        StoreError::Conflict { .. } | StoreError::ConflictMissing { .. } => {
            GuestStoreError::Conflict(error.to_string())
        }
        StoreError::Invalid(_) => GuestStoreError::Invalid(error.to_string()),
        _ => GuestStoreError::Unavailable(error.to_string()),
    }
}

#[async_trait]
impl ControllerHost for EngineHost {
    async fn get(
        &self,
        _: &Caller,
        kind: &str,
        name: &str,
    ) -> Result<Option<Object>, GuestStoreError> {
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            return Ok(reflector.get(name));
        }
        self.context
            .store
            .get(kind, name)
            .await
            .map_err(guest_error)
    }

    async fn list(
        &self,
        _: &Caller,
        kind: &str,
        selector: &Selector,
    ) -> Result<Vec<Object>, GuestStoreError> {
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            return Ok(reflector.list(selector));
        }
        let listing = self
            .context
            .store
            .list(kind, selector)
            .await
            .map_err(guest_error)?;
        Ok(listing.items)
    }

    async fn apply(&self, _: InCallback<'_>, object: Object) -> Result<Object, GuestStoreError> {
        let mut applied = self
            .context
            .store
            .apply(vec![ApplyRequest::from(object)])
            .await
            .map_err(guest_error)?;
        let applied = applied
            .pop()
            .ok_or_else(|| GuestStoreError::Unavailable("the store applied nothing".into()))?;
        Ok(applied.object)
    }

    async fn delete(
        &self,
        _: InCallback<'_>,
        kind: &str,
        name: &str,
    ) -> Result<bool, GuestStoreError> {
        match self.context.store.delete(kind, name, None).await {
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
        let store = self.context.store.as_ref();
        update_status(store, &primary.kind, &primary.name, |current| {
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
        nimbus::publish(self.context.store.as_ref(), &owner, key, value, target)
            .await
            .map_err(nimbus_error)
    }

    async fn unpublish(&self, caller: InCallback<'_>, key: &str) -> Result<(), NimbusError> {
        let owner = owner(caller);
        nimbus::unpublish(self.context.store.as_ref(), &owner, key)
            .await
            .map_err(nimbus_error)
    }

    async fn published(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
    ) -> Result<Vec<String>, NimbusError> {
        let owner = owner(caller);
        let items = nimbus::items_of(
            self.context.store.as_ref(),
            &owner.kind,
            &owner.name,
            prefix,
        )
        .await
        .map_err(nimbus_error)?;
        Ok(items.into_iter().map(|(_, item)| item.key).collect())
    }

    /// Agents' reports on the caller's items, from the `NimbusReport` sheets (one per owner
    /// and agent).
    async fn statuses(
        &self,
        caller: InCallback<'_>,
        prefix: &str,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        let owner = owner(caller);
        // Reports change all the time: read them from the engine's caches, which hold
        // every report that was handed to a reactor, without a store read per call.
        let selector = nimbus::owner_selector(&owner.kind, &owner.name);
        let reflectors = &self.context.reflectors;
        let sheets = match reflectors.acquire(nimbus::REPORT_KIND) {
            Some(cache) => {
                cache.synced().await;
                nimbus::by_agent(&cache.list(&selector))
            }
            None => nimbus::sheets_of(self.context.store.as_ref(), &owner.kind, &owner.name)
                .await
                .map_err(nimbus_error)?,
        };
        let statuses = sheets
            .values()
            .flat_map(|sheet| sheet.reports())
            .filter(|report| report.key.starts_with(prefix))
            .map(|report| report_to_guest(&report))
            .collect();
        Ok(statuses)
    }
}

/// The owner of what a callback publishes: its primary object.
fn owner(caller: InCallback<'_>) -> Owner {
    Owner {
        kind: caller.primary.kind.clone(),
        name: caller.primary.name.clone(),
        component: caller.component.to_owned(),
    }
}

fn nimbus_error(error: nimbus::NimbusError) -> NimbusError {
    match error {
        nimbus::NimbusError::Invalid(m) => NimbusError::Invalid(m),
        nimbus::NimbusError::Denied(m) => NimbusError::Denied(m),
        nimbus::NimbusError::Store(e) => NimbusError::Unavailable(e.to_string()),
    }
}
