//! What the replicas on one etcd share, the API token and the cluster's CA: the first replica
//! to start stores its own under the prefix, and every later one adopts it.

use super::EtcdStore;
use super::error::EtcdError;
use etcd_client::{Compare, CompareOp, Txn, TxnOp, TxnOpResponse};

/// Stores `candidate` as the shared token unless one is already stored; answers the shared one.
pub async fn share_token(store: &EtcdStore, candidate: &str) -> Result<String, EtcdError> {
    share(store, store.keys().token(), candidate).await
}

/// Stores `candidate` (the CA certificate and key in PEM, one after the other) as the shared
/// CA unless one is already stored; answers the shared one.
pub async fn share_ca(store: &EtcdStore, candidate: &str) -> Result<String, EtcdError> {
    share(store, store.keys().ca(), candidate).await
}

async fn share(store: &EtcdStore, key: String, candidate: &str) -> Result<String, EtcdError> {
    let txn = Txn::new()
        .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(key.as_str(), candidate, None)])
        .or_else([TxnOp::get(key.as_str(), None)]);
    let response = store.client().txn(txn).await?;
    if response.succeeded() {
        return Ok(candidate.to_owned());
    }
    let stored = response
        .op_responses()
        .into_iter()
        .find_map(|answer| match answer {
            TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.value().to_vec()),
            _ => None,
        });
    let stored = stored.ok_or_else(|| EtcdError::Unexpected(format!("{key} vanished")))?;
    String::from_utf8(stored)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().to_owned())
        .ok_or_else(|| EtcdError::Corrupt {
            key,
            reason: "the stored value is not text".into(),
        })
}
