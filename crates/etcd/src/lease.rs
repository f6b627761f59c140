//! A replica's lease and the liveness key bound to it: `<prefix>replicas/<id>`. etcd deletes
//! the key when the lease expires, so a write guarded by the key's `create_revision` lands only
//! while the lease that made it is alive — how a paused replica's stale writes are refused.

use super::EtcdStore;
use super::auth::renew_token;
use super::error::EtcdError;
use super::write::Guard;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::time::Duration;

/// One registration of a replica: its lease and the guard of its liveness key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub lease: i64,
    pub guard: Guard,
}

/// Grants a lease of `ttl` and creates the liveness key of `replica` bound to it.
pub async fn register(
    store: &EtcdStore,
    replica: &str,
    ttl: Duration,
) -> Result<Membership, EtcdError> {
    let mut client = store.client();
    let seconds = i64::try_from(ttl.as_secs().max(1)).unwrap_or(i64::MAX);
    let lease = client.lease_grant(seconds, None).await?.id();
    let key = store.keys().replica(replica);
    // Create only: a replica id still registered under a live lease is a second process
    // started with the same id, and must not share its fence.
    let txn = Txn::new()
        .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
        .and_then([TxnOp::put(
            key.as_str(),
            replica,
            Some(PutOptions::new().with_lease(lease)),
        )]);
    let response = client.txn(txn).await?;
    if !response.succeeded() {
        let _ = client.lease_revoke(lease).await;
        return Err(EtcdError::Unexpected(format!(
            "replica id {replica} is already registered by a live replica"
        )));
    }
    let created = response.header().ok_or(EtcdError::NoHeader)?.revision();
    Ok(Membership {
        lease,
        guard: Guard {
            key,
            create_revision: created,
        },
    })
}

/// Keeps `lease` alive, sending a keep-alive every third of `ttl`; returns when the lease is
/// lost (expired, revoked, or etcd unreachable for longer than the TTL).
pub async fn keep_alive(store: &EtcdStore, lease: i64, ttl: Duration) -> EtcdError {
    let every = (ttl / 3).max(Duration::from_millis(100));
    let mut client = store.client();
    let deadline = |from: tokio::time::Instant| from + ttl;
    let mut valid_until = deadline(tokio::time::Instant::now());
    loop {
        let started = tokio::time::Instant::now();
        let answer = tokio::time::timeout(every, async {
            let (mut keeper, mut stream) = client.lease_keep_alive(lease).await?;
            keeper.keep_alive().await?;
            stream.message().await
        })
        .await;
        match answer {
            Ok(Ok(Some(response))) if response.ttl() > 0 => valid_until = deadline(started),
            Ok(Ok(Some(_))) => return EtcdError::Unexpected("the lease expired".into()),
            Ok(Err(e)) => renew_token(&client, &e).await,
            Ok(Ok(None)) | Err(_) => {}
        }
        // Judged by our own clock: past the TTL since the last confirmed keep-alive, etcd may
        // have expired the lease, so this replica must behave as if it had.
        if tokio::time::Instant::now() >= valid_until {
            return EtcdError::Unexpected("the lease could not be renewed within its ttl".into());
        }
        tokio::time::sleep_until(started + every).await;
    }
}

/// Gives the lease back, deleting the liveness key and everything else bound to it.
pub async fn revoke(store: &EtcdStore, lease: i64) {
    let _ = store.client().lease_revoke(lease).await;
}
