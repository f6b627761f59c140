//! Publishing, withdrawing and listing items, with the ownership rules.

use super::kinds::{ITEM_KIND, REPORT_KIND};
use reactor_core::object::{ApplyRequest, Object, Selector};
use reactor_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) const OWNER_KIND: &str = "nimbus.owner-kind";
/// The label naming the object that published an item (or whose items a report sheet is on).
pub const OWNER_NAME: &str = "nimbus.owner-name";

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NimbusError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Denied(String),
    #[error("nimbus store failed: {0}")]
    Store(#[from] StoreError),
}

/// The object an item belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
    /// The component that published it.
    pub component: String,
}

/// Which agents receive an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemTarget {
    Agents(Vec<String>),
    /// Every agent whose labels include all of these (empty: every agent).
    Labels(BTreeMap<String, String>),
}

impl ItemTarget {
    pub fn selects(&self, agent: &str, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Self::Agents(ids) => ids.iter().any(|id| id == agent),
            Self::Labels(wanted) => Selector::includes(labels, wanted),
        }
    }
}

/// An item as stored in the spec of its `NimbusItem` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub key: String,
    pub value: Value,
    pub target: ItemTarget,
    pub owner: Owner,
}

impl Item {
    /// Decoded from the object's spec in place (no copy of the spec first).
    pub fn from_object(object: &Object) -> Option<Item> {
        Item::deserialize(&object.spec).ok()
    }
}

/// The store name of the item `key`: keys are free-form paths, names are DNS labels.
pub(super) fn object_name(key: &str) -> String {
    hashed_name("item", key)
}

/// `<prefix>-<128-bit hash of text>`, a DNS label for any text.
pub(super) fn hashed_name(prefix: &str, text: &str) -> String {
    // FNV-1a, 128 bits as two lanes: stable across versions and platforms, no dependency.
    let mut lanes = [0xcbf2_9ce4_8422_2325u64, 0x8422_2325_cbf2_9ce4u64];
    for (i, byte) in text.bytes().enumerate() {
        let lane = &mut lanes[i % 2];
        *lane ^= u64::from(byte);
        *lane = lane.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{prefix}-{:016x}{:016x}", lanes[0], lanes[1])
}

fn check_key(key: &str) -> Result<(), NimbusError> {
    let ok = !key.is_empty()
        && key.len() <= 512
        && !key.starts_with('/')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:".contains(c));
    if ok {
        Ok(())
    } else {
        Err(NimbusError::Invalid(format!(
            "item key {key:?} is invalid: use letters, digits and -_./: (at most 512, not starting with /)"
        )))
    }
}

async fn current(store: &dyn Store, key: &str) -> Result<Option<(Object, Item)>, NimbusError> {
    let found = store.get(ITEM_KIND, &object_name(key)).await?;
    Ok(found.and_then(|o| Item::from_object(&o).map(|i| (o, i))))
}

fn owned_by(item: &Item, owner: &Owner) -> Result<(), NimbusError> {
    if item.owner.kind == owner.kind && item.owner.name == owner.name {
        return Ok(());
    }
    Err(NimbusError::Denied(format!(
        "item {} belongs to {}/{}",
        item.key, item.owner.kind, item.owner.name
    )))
}

/// Publishes (or replaces) `key` for `target`, owned by `owner`.
pub async fn publish(
    store: &dyn Store,
    owner: &Owner,
    key: &str,
    value: Value,
    target: ItemTarget,
) -> Result<(), NimbusError> {
    check_key(key)?;
    let existing = current(store, key).await?;
    if let Some((_, item)) = &existing {
        owned_by(item, owner)?;
    }
    let mut request = item_request(owner, key, value, target)?;
    // Compare-and-swap against the state the ownership check saw (0: absent), which may come
    // from a cache: another owner's item it did not show yet is never overwritten.
    request.expected_revision = Some(existing.map_or(0, |(o, _)| o.meta.revision));
    store.apply(vec![request]).await?;
    Ok(())
}

/// The store write that publishes `key` (unconditionally; [`publish`] adds the ownership
/// check). Benchmarks and tools use it to publish many items in one apply.
pub fn item_request(
    owner: &Owner,
    key: &str,
    value: Value,
    target: ItemTarget,
) -> Result<ApplyRequest, NimbusError> {
    check_key(key)?;
    let item = Item {
        key: key.to_owned(),
        value,
        target,
        owner: owner.clone(),
    };
    let labels = BTreeMap::from([
        (OWNER_KIND.to_owned(), owner.kind.clone()),
        (OWNER_NAME.to_owned(), owner.name.clone()),
    ]);
    Ok(ApplyRequest {
        kind: ITEM_KIND.to_owned(),
        name: object_name(key),
        labels,
        annotations: Default::default(),
        spec: serde_json::to_value(&item).map_err(|e| NimbusError::Invalid(e.to_string()))?,
        expected_revision: None,
        owner: None,
    })
}

/// Withdraws `key`; withdrawing a missing key succeeds.
pub async fn unpublish(store: &dyn Store, owner: &Owner, key: &str) -> Result<(), NimbusError> {
    check_key(key)?;
    let Some((object, item)) = current(store, key).await? else {
        return Ok(());
    };
    owned_by(&item, owner)?;
    match store
        .delete(ITEM_KIND, &object.name, Some(object.meta.revision))
        .await
    {
        Ok(_) | Err(StoreError::NotFound { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Selects the items `owner_kind/owner_name` published.
pub fn owner_selector(owner_kind: &str, owner_name: &str) -> Selector {
    Selector::from_labels(&BTreeMap::from([
        (OWNER_KIND.to_owned(), owner_kind.to_owned()),
        (OWNER_NAME.to_owned(), owner_name.to_owned()),
    ]))
}

/// The items `owner_kind/owner_name` has published under `prefix`.
pub async fn items_of(
    store: &dyn Store,
    owner_kind: &str,
    owner_name: &str,
    prefix: &str,
) -> Result<Vec<(Object, Item)>, NimbusError> {
    let listing = store
        .list(ITEM_KIND, &owner_selector(owner_kind, owner_name))
        .await?;
    let mut items: Vec<(Object, Item)> = listing
        .items
        .into_iter()
        .filter_map(|o| Item::from_object(&o).map(|i| (o, i)))
        .filter(|(_, i)| i.key.starts_with(prefix))
        .collect();
    items.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    Ok(items)
}

/// The keys of the items `owner_kind`/`owner_name` published under `prefix`, sorted: read
/// from each item's spec, without decoding the rest of it.
pub async fn keys_of(
    store: &dyn Store,
    owner_kind: &str,
    owner_name: &str,
    prefix: &str,
) -> Result<Vec<String>, NimbusError> {
    let listing = store
        .list(ITEM_KIND, &owner_selector(owner_kind, owner_name))
        .await?;
    let mut keys: Vec<String> = listing
        .items
        .iter()
        .filter_map(|o| o.spec.get("key")?.as_str())
        .filter(|key| key.starts_with(prefix))
        .map(str::to_owned)
        .collect();
    keys.sort();
    Ok(keys)
}

/// Withdraws everything an object published, and the agents' reports on it (its delete
/// took its items with it).
pub async fn unpublish_all(
    store: &dyn Store,
    owner_kind: &str,
    owner_name: &str,
) -> Result<usize, NimbusError> {
    let items = items_of(store, owner_kind, owner_name, "").await?;
    let count = items.len();
    for (object, _) in items {
        match store.delete(ITEM_KIND, &object.name, None).await {
            Ok(_) | Err(StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // The agents' reports on them go too.
    let sheets = store
        .list(REPORT_KIND, &owner_selector(owner_kind, owner_name))
        .await?;
    for sheet in sheets.items {
        match store.delete(REPORT_KIND, &sheet.name, None).await {
            Ok(_) | Err(StoreError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reactor_store::{EmbeddedStore, EmbeddedStoreOptions};
    use serde_json::json;

    fn owner(name: &str) -> Owner {
        Owner {
            kind: "Policy".into(),
            name: name.into(),
            component: "policy-rust".into(),
        }
    }

    #[test]
    fn names_are_stable_dns_labels() {
        let name = object_name("policy/web-allow/http");
        assert_eq!(name, object_name("policy/web-allow/http"));
        assert_ne!(name, object_name("policy/web-allow/https"));
        assert!(reactor_core::object::validate_name(&name).is_ok(), "{name}");
    }

    #[tokio::test]
    async fn owned_items_publish_list_and_go_with_their_owner() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::open(dir.path(), EmbeddedStoreOptions::default()).expect("open");
        let everyone = ItemTarget::Labels(BTreeMap::new());
        publish(
            &store,
            &owner("a"),
            "policy/a/x",
            json!({"n": 1}),
            everyone.clone(),
        )
        .await
        .expect("publish");
        publish(
            &store,
            &owner("a"),
            "policy/a/y",
            json!({"n": 2}),
            everyone.clone(),
        )
        .await
        .expect("publish");
        publish(
            &store,
            &owner("b"),
            "policy/b/x",
            json!({"n": 3}),
            everyone.clone(),
        )
        .await
        .expect("publish");
        let denied = publish(
            &store,
            &owner("b"),
            "policy/a/x",
            json!(0),
            everyone.clone(),
        )
        .await;
        assert!(matches!(denied, Err(NimbusError::Denied(_))), "{denied:?}");
        assert!(matches!(
            publish(&store, &owner("a"), "/abs", json!(0), everyone).await,
            Err(NimbusError::Invalid(_))
        ));
        let keys = keys_of(&store, "Policy", "a", "policy/a/")
            .await
            .expect("keys");
        assert_eq!(keys, vec!["policy/a/x", "policy/a/y"]);
        unpublish(&store, &owner("a"), "policy/a/x")
            .await
            .expect("unpublish");
        unpublish(&store, &owner("a"), "policy/a/x")
            .await
            .expect("again: no error");
        assert_eq!(unpublish_all(&store, "Policy", "a").await.expect("gc"), 1);
        assert!(
            items_of(&store, "Policy", "a", "")
                .await
                .expect("items")
                .is_empty()
        );
        assert_eq!(
            items_of(&store, "Policy", "b", "")
                .await
                .expect("items")
                .len(),
            1
        );
    }
}
