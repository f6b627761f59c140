//! The engine behind the guests' `store` and `nimbus` imports: reads come from the shared
//! reflector caches where a kind is watched, writes go to the store, and `set-status` keeps
//! the host-owned part of the primary object's status.

use super::context::EngineContext;
use super::status::{merge_reactor_status, update_status};
use super::wasm::{from_guest, report_to_guest, to_guest};
use crate::nimbus::{self, ItemTarget, Owner};
use crate::object::{ApplyRequest, Selector};
use crate::runtime::bindings::reactor::host::nimbus::{NimbusError, Target};
use crate::runtime::bindings::reactor::host::store::StoreError as GuestStoreError;
use crate::runtime::{Caller, ControllerHost, ItemStatus, Object as GuestObject};
use crate::store::StoreError;
use async_trait::async_trait;
use std::collections::BTreeMap;

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
    ) -> Result<Option<GuestObject>, GuestStoreError> {
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            return Ok(reflector.get(name).as_ref().map(to_guest));
        }
        let found = self
            .context
            .store
            .get(kind, name)
            .await
            .map_err(guest_error)?;
        Ok(found.as_ref().map(to_guest))
    }

    async fn list(
        &self,
        _: &Caller,
        kind: &str,
        selector: &[(String, String)],
    ) -> Result<Vec<GuestObject>, GuestStoreError> {
        let labels: BTreeMap<String, String> = selector.iter().cloned().collect();
        let selector = Selector::from_labels(&labels);
        if self.context.reflectors.kinds().iter().any(|k| k == kind)
            && let Some(reflector) = self.context.reflectors.acquire(kind)
        {
            return Ok(reflector.list(&selector).iter().map(to_guest).collect());
        }
        let listing = self
            .context
            .store
            .list(kind, &selector)
            .await
            .map_err(guest_error)?;
        Ok(listing.items.iter().map(to_guest).collect())
    }

    async fn apply(&self, _: &Caller, object: GuestObject) -> Result<GuestObject, GuestStoreError> {
        let object = from_guest(object).map_err(GuestStoreError::Invalid)?;
        let mut applied = self
            .context
            .store
            .apply(vec![ApplyRequest::from(object)])
            .await
            .map_err(guest_error)?;
        let applied = applied
            .pop()
            .ok_or_else(|| GuestStoreError::Unavailable("the store applied nothing".into()))?;
        Ok(to_guest(&applied.object))
    }

    async fn delete(&self, _: &Caller, kind: &str, name: &str) -> Result<bool, GuestStoreError> {
        match self.context.store.delete(kind, name, None).await {
            Ok(_) => Ok(true),
            Err(StoreError::NotFound { .. }) => Ok(false),
            Err(e) => Err(guest_error(e)),
        }
    }

    async fn set_status(&self, caller: &Caller, status: String) -> Result<(), GuestStoreError> {
        let primary = caller
            .primary
            .as_ref()
            .ok_or_else(|| GuestStoreError::Denied("set-status needs a primary object".into()))?;
        let status: serde_json::Value = serde_json::from_str(&status)
            .map_err(|e| GuestStoreError::Invalid(format!("status is not JSON: {e}")))?;
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
        caller: &Caller,
        key: &str,
        value: String,
        to: Target,
    ) -> Result<(), NimbusError> {
        let owner = owner(caller)?;
        let value = serde_json::from_str(&value)
            .map_err(|e| NimbusError::Invalid(format!("value of {key} is not JSON: {e}")))?;
        let target = match to {
            Target::Agents(ids) => ItemTarget::Agents(ids),
            Target::Labels(labels) => ItemTarget::Labels(labels.into_iter().collect()),
        };
        nimbus::publish(self.context.store.as_ref(), &owner, key, value, target)
            .await
            .map_err(nimbus_error)
    }

    async fn unpublish(&self, caller: &Caller, key: &str) -> Result<(), NimbusError> {
        let owner = owner(caller)?;
        nimbus::unpublish(self.context.store.as_ref(), &owner, key)
            .await
            .map_err(nimbus_error)
    }

    async fn published(&self, caller: &Caller, prefix: &str) -> Result<Vec<String>, NimbusError> {
        let owner = owner(caller)?;
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
        caller: &Caller,
        prefix: &str,
    ) -> Result<Vec<ItemStatus>, NimbusError> {
        let owner = owner(caller)?;
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
fn owner(caller: &Caller) -> Result<Owner, NimbusError> {
    let primary = caller.primary.as_ref().ok_or_else(|| {
        NimbusError::Denied(
            "nimbus calls need a primary object (not in describe or validate)".into(),
        )
    })?;
    Ok(Owner {
        kind: primary.kind.clone(),
        name: primary.name.clone(),
        component: caller.component.clone(),
    })
}

fn nimbus_error(error: nimbus::NimbusError) -> NimbusError {
    match error {
        nimbus::NimbusError::Invalid(m) => NimbusError::Invalid(m),
        nimbus::NimbusError::Denied(m) => NimbusError::Denied(m),
        nimbus::NimbusError::Store(e) => NimbusError::Unavailable(e.to_string()),
    }
}
