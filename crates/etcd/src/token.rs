//! The API token every replica on one etcd accepts: the first replica to start stores its
//! token under the prefix, and every later one adopts it.

use super::EtcdStore;
use super::error::EtcdError;
use etcd_client::{Compare, CompareOp, Txn, TxnOp, TxnOpResponse};

/// Stores `candidate` as the shared token unless one is already stored; answers the shared one.
pub async fn share_token(store: &EtcdStore, candidate: &str) -> Result<String, EtcdError> {
    let key = store.keys().token();
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
    let stored = stored.ok_or_else(|| EtcdError::Unexpected("the token vanished".into()))?;
    String::from_utf8(stored)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map(|t| t.trim().to_owned())
        .ok_or_else(|| EtcdError::Corrupt {
            key,
            reason: "the stored token is not text".into(),
        })
}
