//! The finalizer a reactor that handles deletes holds on the objects it watches, added before
//! its first callback and removed once its `on-delete` succeeded.

use reactor_core::object::Object;
use reactor_store::{Store, StoreError, retry_on_conflict};

/// The finalizer `reactor` holds.
pub fn finalizer_of(reactor: &str) -> String {
    format!("reactor-host/{reactor}")
}

/// Adds `reactor`'s finalizer to `object` unless it is there.
pub async fn add(store: &dyn Store, object: &Object, reactor: &str) -> Result<(), StoreError> {
    let mine = finalizer_of(reactor);
    edit(store, object, |list| {
        if !list.contains(&mine) {
            list.push(mine.clone());
        }
    })
    .await
}

/// Removes `reactor`'s finalizer; a deleting object without finalizers leaves the store.
pub async fn remove(store: &dyn Store, object: &Object, reactor: &str) -> Result<(), StoreError> {
    let mine = finalizer_of(reactor);
    edit(store, object, |list| list.retain(|f| *f != mine)).await
}

/// Changes the finalizer list with compare-and-swap, re-reading on conflict.
async fn edit(
    store: &dyn Store,
    object: &Object,
    edit: impl Fn(&mut Vec<String>),
) -> Result<(), StoreError> {
    let edit = &edit;
    retry_on_conflict(
        || format!("finalizers of {}", object.key()),
        || async move {
            let Some(current) = store.get(&object.kind, &object.name).await? else {
                return Ok(());
            };
            let mut list = current.meta.finalizers.clone();
            edit(&mut list);
            if list == current.meta.finalizers && !(current.meta.deleting && list.is_empty()) {
                return Ok(());
            }
            match store
                .set_finalizers(
                    &object.kind,
                    &object.name,
                    list,
                    Some(current.meta.revision),
                )
                .await
            {
                Ok(_) | Err(StoreError::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        },
    )
    .await
}
