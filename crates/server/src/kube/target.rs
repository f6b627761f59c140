//! The resource a request names: the catalog of Kind objects read now, and the refusals
//! worded for that resource.

use super::reply::Refusal;
use crate::AppState;
use reactor_core::object::{KIND, Object, Selector};
use reactor_kube::mapping::to_kube;
use reactor_kube::query::QueryError;
use reactor_kube::{About, Catalog, KubeError, Resource};
use reactor_store::StoreError;
use serde_json::Value;

/// The resources served now: one per Kind object, read at each request.
pub(super) async fn catalog(state: &AppState) -> Result<Catalog, Refusal> {
    let listing = state
        .store
        .list(KIND, &Selector::default())
        .await
        .map_err(|e| Refusal::from(KubeError::InternalError(e.to_string())))?;
    Ok(Catalog::new(&state.api_group, &listing.items))
}

/// The resource a request names, and the catalog it was found in.
pub(super) struct Target {
    pub catalog: Catalog,
    pub resource: Resource,
}

impl Target {
    pub async fn resolve(
        state: &AppState,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Self, Refusal> {
        let catalog = catalog(state).await?;
        let resource = catalog.find(group, version, plural).cloned().ok_or_else(|| {
            Refusal::from(KubeError::NotFound(format!(
                "the server could not find the requested resource ({plural}.{group}/{version} is not served)"
            )))
        })?;
        Ok(Self { catalog, resource })
    }

    pub fn kind(&self) -> &str {
        &self.resource.kind
    }

    pub fn refuse(&self, error: KubeError, name: &str) -> Refusal {
        Refusal::about(error, &self.resource.qualified(), name)
    }

    pub fn store_error(&self, error: &StoreError, name: &str) -> Refusal {
        let resource = self.resource.qualified();
        let about = About {
            resource: &resource,
            name,
        };
        self.refuse(KubeError::from_store(error, about), name)
    }

    /// A write retried while the object kept changing, given up.
    pub fn gave_up(&self, name: &str) -> Refusal {
        self.refuse(
            KubeError::Conflict(format!(
                "{name} kept changing: gave up after {} attempts",
                reactor_store::CAS_ATTEMPTS
            )),
            name,
        )
    }

    pub fn show(&self, object: &Object) -> Value {
        to_kube(object, &self.resource, &self.catalog)
    }

    pub async fn current(&self, state: &AppState, name: &str) -> Result<Object, Refusal> {
        match state.store.get(self.kind(), name).await {
            Ok(Some(object)) => Ok(object),
            Ok(None) => Err(self.store_error(
                &StoreError::NotFound {
                    kind: self.kind().to_owned(),
                    name: name.to_owned(),
                },
                name,
            )),
            Err(e) => Err(self.store_error(&e, name)),
        }
    }
}

pub(super) fn bad_query(error: QueryError) -> Refusal {
    KubeError::BadRequest(error.to_string()).into()
}
