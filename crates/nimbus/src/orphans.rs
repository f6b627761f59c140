//! Withdraws the items (and the agents' reports on them) of owners that are gone, however
//! they went: a finalizer removed by hand, the publishing reactor absent, a crash between an
//! owner's delete and its items'. A sweep runs at start and then at an interval.

use super::NimbusError;
use super::items::{Item, owner_selector};
use super::kinds::{ITEM_KIND, REPORT_KIND};
use reactor_core::object::{Object, ObjectKey, Selector};
use reactor_store::{Store, StoreError, Write};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Sweeps `store` now and then every `interval`, until the task is dropped with the runtime.
pub async fn sweep_every(store: Arc<dyn Store>, interval: Duration) {
    loop {
        match sweep(store.as_ref()).await {
            Ok(0) => {}
            Ok(withdrawn) => {
                tracing::info!(withdrawn, "withdrew the items of owners that are gone")
            }
            Err(error) => tracing::warn!(%error, "cannot sweep the items of owners that are gone"),
        }
        tokio::time::sleep(interval).await;
    }
}

/// Withdraws every item whose owner does not exist, and its owner's report sheets; answers
/// how many items went. Each delete holds only while the owner is still absent (one store
/// transaction with a check of the owner), so an owner created meanwhile keeps what it
/// publishes; any replica may sweep at the same time.
pub async fn sweep(store: &dyn Store) -> Result<usize, NimbusError> {
    let items = store.list(ITEM_KIND, &Selector::default()).await?;
    let mut by_owner: BTreeMap<ObjectKey, Vec<Object>> = BTreeMap::new();
    for object in items.items {
        if let Some(item) = Item::from_object(&object) {
            let owner = ObjectKey::new(&item.owner.kind, &item.owner.name);
            by_owner.entry(owner).or_default().push(object);
        }
    }
    let mut withdrawn = 0;
    for (owner, items) in by_owner {
        if store.get(owner.kind(), owner.name()).await?.is_some() {
            continue;
        }
        for item in items {
            if withdraw(store, &owner, ITEM_KIND, &item).await? {
                withdrawn += 1;
            }
        }
        let sheets = store
            .list(REPORT_KIND, &owner_selector(owner.kind(), owner.name()))
            .await?;
        for sheet in sheets.items {
            withdraw(store, &owner, REPORT_KIND, &sheet).await?;
        }
        tracing::info!(owner = %owner, "owner gone: its items withdrawn");
    }
    Ok(withdrawn)
}

/// Deletes `object` (of `kind`) as read, if `owner` is still absent; `false` when either
/// changed meanwhile (the next sweep judges again).
async fn withdraw(
    store: &dyn Store,
    owner: &ObjectKey,
    kind: &str,
    object: &Object,
) -> Result<bool, NimbusError> {
    let writes = vec![
        Write::Check {
            kind: owner.kind().to_owned(),
            name: owner.name().to_owned(),
            expected: None,
        },
        Write::Delete {
            kind: kind.to_owned(),
            name: object.name.clone(),
            expected: Some(object.meta.revision),
        },
    ];
    match store.commit(writes).await {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || matches!(e, StoreError::NotFound { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ItemTarget, Owner, publish};
    use reactor_core::object::ApplyRequest;
    use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
    use serde_json::json;

    fn owner(name: &str) -> Owner {
        Owner {
            kind: "Policy".into(),
            name: name.into(),
            component: "c".into(),
        }
    }

    fn object(name: &str) -> ApplyRequest {
        ApplyRequest {
            kind: "Policy".into(),
            name: name.into(),
            labels: BTreeMap::new(),
            annotations: Default::default(),
            spec: json!({}),
            expected_revision: None,
            owner: None,
        }
    }

    #[tokio::test]
    async fn items_of_an_owner_that_is_gone_are_withdrawn_and_the_others_stay() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        store.apply(vec![object("kept")]).await.expect("apply");
        let everyone = ItemTarget::Labels(BTreeMap::new());
        for (name, key) in [
            ("kept", "p/kept/a"),
            ("gone", "p/gone/a"),
            ("gone", "p/gone/b"),
        ] {
            publish(&store, &owner(name), key, json!(1), everyone.clone())
                .await
                .expect("publish");
        }
        assert_eq!(sweep(&store).await.expect("sweep"), 2);
        let left = store
            .list(ITEM_KIND, &Selector::default())
            .await
            .expect("list");
        let keys: Vec<String> = (left.items.iter())
            .filter_map(Item::from_object)
            .map(|item| item.key)
            .collect();
        assert_eq!(keys, vec!["p/kept/a"]);
        assert_eq!(sweep(&store).await.expect("sweep again"), 0);
    }

    #[tokio::test]
    async fn an_owner_created_after_the_sweep_read_keeps_its_items() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        let everyone = ItemTarget::Labels(BTreeMap::new());
        publish(&store, &owner("late"), "p/late/a", json!(1), everyone)
            .await
            .expect("publish");
        let item = store
            .list(ITEM_KIND, &Selector::default())
            .await
            .expect("list")
            .items
            .remove(0);
        // The owner appears between the sweep's read and its delete.
        store.apply(vec![object("late")]).await.expect("apply");
        let late = ObjectKey::new("Policy", "late");
        assert!(
            !withdraw(&store, &late, ITEM_KIND, &item)
                .await
                .expect("withdraw")
        );
        assert_eq!(
            store
                .list(ITEM_KIND, &Selector::default())
                .await
                .expect("list")
                .items
                .len(),
            1
        );
    }
}
