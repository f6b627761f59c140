//! Replicas agreeing on the digest a tag names: the replica that sees a tag move records the digest in the store, and every replica serves the one recorded.
//!
//! Each replica looks a tag up on its own interval, so without a record two replicas on one
//! store would serve two versions for as long as an interval (or for good, when one cannot
//! pull the newer one). The record is one `ComponentDigest` object per component, a host
//! kind no API client or guest may write; every replica follows it.

use parking_lot::Mutex;
use reactor_core::component::record_name;
use reactor_core::object::Object;
use reactor_store::{EventType, Follower, Listing, Store, StoreError, WatchEvent, write_record};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The host's own kind of the digest records.
pub const DIGEST_KIND: &str = "ComponentDigest";

/// What a record's name starts with when the component's name is not an object name.
const RECORD_PREFIX: &str = "digest";

/// Why a digest record could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum AgreementError {
    /// The store refused the write.
    #[error("cannot record digest {digest} of {component} in the store: {source}")]
    Store {
        /// The component.
        component: String,
        /// The digest it was to serve.
        digest: String,
        /// The store's refusal.
        source: StoreError,
    },
    /// A record in the store does not read as one.
    #[error("digest record {name}: {message}")]
    Invalid {
        /// The record's object name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// The spec of a digest record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RecordSpec {
    /// The component (its object name may be a hash of it: see [`record_name`]).
    component: String,
    /// The reference the config names it by, a tag.
    source: String,
    /// The manifest digest the tag named when recorded, `sha256:HEX`.
    digest: String,
}

/// The digests recorded in a store, followed as they are written.
pub struct Agreement {
    store: Arc<dyn Store>,
    /// By component.
    agreed: Mutex<BTreeMap<String, RecordSpec>>,
}

impl Agreement {
    /// Follows the digest records of `store` from now on.
    pub fn follow(store: Arc<dyn Store>) -> Arc<Self> {
        let agreement = Arc::new(Agreement {
            store: store.clone(),
            agreed: Mutex::new(BTreeMap::new()),
        });
        tokio::spawn(reactor_store::follow(
            Arc::downgrade(&agreement),
            store,
            DIGEST_KIND,
            "digest records",
        ));
        agreement
    }

    /// The digest recorded for `component` named by `source`, if one is (a record of another
    /// source, from before the config changed, is none).
    pub fn agreed(&self, component: &str, source: &str) -> Option<String> {
        let agreed = self.agreed.lock();
        let record = agreed.get(component)?;
        (record.source == source).then(|| record.digest.clone())
    }

    /// Records that `component`, named by `source`, serves `digest` on every replica.
    pub async fn record(
        &self,
        component: &str,
        source: &str,
        digest: &str,
    ) -> Result<(), AgreementError> {
        let spec = RecordSpec {
            component: component.to_owned(),
            source: source.to_owned(),
            digest: digest.to_owned(),
        };
        let name = record_name(RECORD_PREFIX, component);
        let value = serde_json::to_value(&spec).map_err(|e| AgreementError::Invalid {
            name: name.clone(),
            message: e.to_string(),
        })?;
        write_record(self.store.as_ref(), DIGEST_KIND, name, value)
            .await
            .map_err(|source| AgreementError::Store {
                component: component.to_owned(),
                digest: digest.to_owned(),
                source,
            })?;
        // Seen here at once; the store's watch brings the same.
        self.agreed.lock().insert(component.to_owned(), spec);
        Ok(())
    }
}

/// The record an object holds.
fn parse(object: &Object) -> Result<RecordSpec, AgreementError> {
    let invalid = |message: String| AgreementError::Invalid {
        name: object.name.clone(),
        message,
    };
    let spec: RecordSpec =
        serde_json::from_value(object.spec.clone()).map_err(|e| invalid(e.to_string()))?;
    if !crate::reference::is_sha256_digest(&spec.digest) {
        return Err(invalid(format!("{:?} is not a sha256 digest", spec.digest)));
    }
    Ok(spec)
}

impl Follower for Agreement {
    fn listed(&self, listing: Listing) {
        let records = (listing.items.iter())
            .filter_map(|object| match parse(object) {
                Ok(spec) => Some((spec.component.clone(), spec)),
                Err(e) => {
                    tracing::warn!("ignored: {e}");
                    None
                }
            })
            .collect();
        *self.agreed.lock() = records;
    }

    fn changed(&self, event: WatchEvent) {
        let Some(object) = &event.object else { return };
        let spec = match parse(object) {
            Ok(spec) => spec,
            Err(e) => {
                tracing::warn!("ignored: {e}");
                return;
            }
        };
        let mut agreed = self.agreed.lock();
        match event.event_type {
            EventType::Created | EventType::Updated => {
                agreed.insert(spec.component.clone(), spec);
            }
            EventType::Deleted => {
                agreed.remove(&spec.component);
            }
            EventType::Bookmark => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(spec: serde_json::Value) -> Object {
        serde_json::from_value(serde_json::json!({
            "kind": DIGEST_KIND, "name": "echo", "spec": spec,
        }))
        .expect("an object")
    }

    #[test]
    fn the_kind_is_the_host_s_own() {
        assert!(reactor_core::object::is_reserved(DIGEST_KIND));
    }

    #[test]
    fn a_record_reads_back_and_a_bad_digest_is_refused() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let good = object(serde_json::json!({
            "component": "echo", "source": "oci://r/x:1", "digest": digest,
        }));
        assert_eq!(parse(&good).expect("a record").digest, digest);
        let bad = object(serde_json::json!({
            "component": "echo", "source": "oci://r/x:1", "digest": "sha256:../x",
        }));
        let err = parse(&bad).expect_err("not a digest").to_string();
        assert!(err.contains("is not a sha256 digest"), "{err}");
    }
}
