//! How replicas on one etcd split the shards: each registers under a lease, claims free shards
//! up to its fair share (`<prefix>owners/<shard>`, bound to its lease), and gives extra ones
//! back once their work here has drained. When a lease is lost, every shard is dropped, the
//! fence closes (so in-flight work cannot write) and the replica joins again with a new lease.

use super::auth::renew_token;
use super::lease::{Membership, keep_alive, register, revoke};
use super::{EtcdError, EtcdStore, Guard};
use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use reactor_store::Shards;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// A replica taking part in the campaign; leaving gives its shards back at once.
pub struct Replica {
    task: tokio::task::JoinHandle<()>,
    membership: watch::Receiver<Option<Membership>>,
    store: EtcdStore,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica").finish()
    }
}

impl Replica {
    /// Starts campaigning; the answer's fence is the guard every reconcile write must carry.
    pub fn start(
        store: EtcdStore,
        shards: Arc<Shards>,
        id: String,
        ttl: Duration,
    ) -> (Self, watch::Receiver<Option<Guard>>) {
        let (fence_tx, fence) = watch::channel(None);
        let (member_tx, membership) = watch::channel(None);
        let task = tokio::spawn(run(store.clone(), shards, id, ttl, fence_tx, member_tx));
        let replica = Self {
            task,
            membership,
            store,
        };
        (replica, fence)
    }

    /// Stops campaigning and revokes the lease, so other replicas take over without waiting.
    pub async fn leave(self) {
        self.task.abort();
        let lease = self.membership.borrow().as_ref().map(|m| m.lease);
        if let Some(lease) = lease {
            revoke(&self.store, lease).await;
        }
    }
}

async fn run(
    store: EtcdStore,
    shards: Arc<Shards>,
    id: String,
    ttl: Duration,
    fence: watch::Sender<Option<Guard>>,
    membership: watch::Sender<Option<Membership>>,
) {
    loop {
        let member = match register(&store, &id, ttl).await {
            Ok(member) => member,
            Err(e) => {
                if let EtcdError::Request(e) = &e {
                    renew_token(&store.client(), e).await;
                }
                tracing::warn!(replica = %id, error = %e, "cannot register with etcd; retrying");
                tokio::time::sleep(ttl / 4).await;
                continue;
            }
        };
        tracing::info!(replica = %id, lease = member.lease, "registered");
        fence.send_replace(Some(member.guard.clone()));
        membership.send_replace(Some(member.clone()));
        tokio::select! {
            lost = keep_alive(&store, member.lease, ttl) => {
                tracing::error!(replica = %id, error = %lost, "lease lost: dropping every shard");
                metrics::counter!(reactor_core::metrics::REPLICA_LEASES_LOST).increment(1);
            }
            _ = balance_forever(&store, &shards, &id, member.lease, ttl) => {}
        }
        // Close the fence first: work still running from the old lease cannot write.
        fence.send_replace(None);
        membership.send_replace(None);
        shards.release_all().await;
        revoke(&store, member.lease).await;
    }
}

async fn balance_forever(store: &EtcdStore, shards: &Shards, id: &str, lease: i64, ttl: Duration) {
    let every = (ttl / 4).max(Duration::from_millis(100));
    loop {
        if let Err(e) = balance(store, shards, id, lease).await {
            if let EtcdError::Request(e) = &e {
                renew_token(&store.client(), e).await;
            }
            tracing::warn!(replica = %id, error = %e, "cannot balance shards");
        }
        metrics::gauge!(reactor_core::metrics::REPLICA_SHARDS_OWNED)
            .set(shards.owned().len() as f64);
        tokio::time::sleep(every).await;
    }
}

/// One round: claim free shards up to the fair share, give back what is over it.
async fn balance(
    store: &EtcdStore,
    shards: &Shards,
    id: &str,
    lease: i64,
) -> Result<(), EtcdError> {
    let mut client = store.client();
    let keys = store.keys();
    let live = client
        .get(
            keys.replicas(),
            Some(GetOptions::new().with_prefix().with_count_only()),
        )
        .await?
        .count()
        .max(1);
    let share = usize::try_from((i64::from(shards.count()) + live - 1) / live).unwrap_or(1);
    let owners = client
        .get(keys.owners(), Some(GetOptions::new().with_prefix()))
        .await?;
    let held: HashMap<u32, i64> = owners
        .kvs()
        .iter()
        .filter_map(|kv| {
            let key = String::from_utf8_lossy(kv.key());
            let shard = key.strip_prefix(&keys.owners())?.parse().ok()?;
            Some((shard, kv.lease()))
        })
        .collect();
    let mut mine: Vec<u32> = held
        .iter()
        .filter(|(_, l)| **l == lease)
        .map(|(s, _)| *s)
        .collect();
    mine.sort_unstable();
    // etcd says they are ours (e.g. a claim whose answer was lost): work on them.
    shards.gain_all(mine.iter().copied());
    while mine.len() > share {
        let Some(shard) = mine.pop() else { break };
        shards.release(shard).await;
        let key = keys.owner(shard);
        let txn = Txn::new()
            .when([Compare::lease(key.as_str(), CompareOp::Equal, lease)])
            .and_then([TxnOp::delete(key.as_str(), None)]);
        client.txn(txn).await?;
        tracing::info!(replica = %id, shard, "shard given back");
    }
    // Start from a place of our own, so replicas starting together rarely race for one shard.
    let offset = id.bytes().map(u32::from).sum::<u32>();
    let free: Vec<u32> = (0..shards.count())
        .map(|i| (offset + i) % shards.count())
        .filter(|shard| !held.contains_key(shard))
        .take(share.saturating_sub(mine.len()))
        .collect();
    // A whole share in one transaction: one etcd revision and one round trip, instead of one
    // per shard. Only if another replica took one of them meanwhile are they claimed one by
    // one.
    for batch in free.chunks(CLAIMS_PER_TXN) {
        if claim(&mut client, store, batch, id, lease).await? {
            shards.gain_all(batch.iter().copied());
            for shard in batch {
                tracing::info!(replica = %id, shard, "shard claimed");
            }
            continue;
        }
        for shard in batch {
            if claim(&mut client, store, &[*shard], id, lease).await? {
                shards.gain(*shard);
                tracing::info!(replica = %id, shard, "shard claimed");
            }
        }
    }
    Ok(())
}

/// Claims per transaction, well within etcd's default `--max-txn-ops` (128 compares and 128
/// puts), so a large `--shards` is claimed in several transactions rather than refused.
const CLAIMS_PER_TXN: usize = 64;

/// Claims every one of `wanted` for `lease` if none is owned; answers whether it did.
async fn claim(
    client: &mut etcd_client::Client,
    store: &EtcdStore,
    wanted: &[u32],
    id: &str,
    lease: i64,
) -> Result<bool, EtcdError> {
    let keys: Vec<String> = wanted.iter().map(|s| store.keys().owner(*s)).collect();
    let txn = Txn::new()
        .when(
            keys.iter()
                .map(|key| Compare::create_revision(key.as_str(), CompareOp::Equal, 0))
                .collect::<Vec<_>>(),
        )
        .and_then(
            keys.iter()
                .map(|key| TxnOp::put(key.as_str(), id, Some(PutOptions::new().with_lease(lease))))
                .collect::<Vec<_>>(),
        );
    Ok(client.txn(txn).await?.succeeded())
}
