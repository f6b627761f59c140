//! Writes: read every touched object in one snapshot, decide with the shared rules in
//! `store::plan`, and commit in one transaction that compares the `mod_revision` of every key
//! read, so the decision still holds when it lands. If another writer got in between, the
//! transaction changes nothing and the write is decided again from the new state.

use super::error::{EtcdError, revision};
use super::keys::{decode, encode};
use crate::object::Object;
use crate::store::{Change, EventType, StoreError};
use etcd_client::{Client, Compare, CompareOp, Txn, TxnOp, TxnOpResponse};

/// How often a write is decided again after losing a race before it gives up.
const MAX_ATTEMPTS: usize = 64;

/// A key that must still exist with this `create_revision` for a write to land: how a replica's
/// writes are fenced by the ownership it holds through its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub key: String,
    pub create_revision: i64,
}

/// One object a write touched: its state after the commit (`None`: removed) and the change
/// made (`None`: it already was as asked).
#[derive(Debug)]
pub struct Written {
    pub object: Option<Object>,
    pub change: Option<EventType>,
}

/// The rule deciding the changes of every target from their current states.
pub type PlanAll<'a> =
    dyn Fn(&[Option<Object>]) -> Result<Vec<Option<Change>>, StoreError> + Send + Sync + 'a;

/// Reads `targets` (etcd keys), plans, and commits all or nothing.
pub async fn write(
    client: &Client,
    targets: &[String],
    guards: &[Guard],
    plan: &PlanAll<'_>,
) -> Result<Vec<Written>, StoreError> {
    for _ in 0..MAX_ATTEMPTS {
        let (current, read_at) = snapshot(client, targets).await?;
        let changes = plan(&current)?;
        if changes.iter().all(Option::is_none) {
            // Nothing to write; but a fenced writer must still own what it acts for.
            check_guards(client, guards).await?;
            return Ok(current
                .into_iter()
                .map(|object| Written {
                    object,
                    change: None,
                })
                .collect());
        }
        let mut compares: Vec<Compare> = targets
            .iter()
            .zip(&read_at)
            .map(|(key, rev)| Compare::mod_revision(key.as_str(), CompareOp::Equal, *rev))
            .collect();
        compares.extend(guards.iter().map(|g| {
            Compare::create_revision(g.key.as_str(), CompareOp::Equal, g.create_revision)
        }));
        let mut ops = Vec::new();
        for (key, change) in targets.iter().zip(&changes) {
            match change {
                Some(c) if c.event_type == EventType::Deleted => {
                    ops.push(TxnOp::delete(key.as_str(), None));
                }
                Some(c) => ops.push(TxnOp::put(key.as_str(), encode(&c.object)?, None)),
                None => {}
            }
        }
        let otherwise: Vec<TxnOp> = guards
            .iter()
            .map(|g| TxnOp::get(g.key.as_str(), None))
            .collect();
        let txn = Txn::new().when(compares).and_then(ops).or_else(otherwise);
        let response = client.clone().txn(txn).await.map_err(EtcdError::from)?;
        if response.succeeded() {
            let header = response.header().ok_or(EtcdError::NoHeader)?;
            let committed = revision(header.revision())?;
            return Ok(current
                .into_iter()
                .zip(changes)
                .map(|(object, change)| match change {
                    None => Written {
                        object,
                        change: None,
                    },
                    Some(c) if c.event_type == EventType::Deleted => Written {
                        object: None,
                        change: Some(EventType::Deleted),
                    },
                    Some(mut c) => {
                        c.object.meta.revision = committed;
                        Written {
                            object: Some(c.object),
                            change: Some(c.event_type),
                        }
                    }
                })
                .collect());
        }
        guards_hold(guards, &response.op_responses())?;
        metrics::counter!("store_etcd_write_retries_total").increment(1);
    }
    Err(EtcdError::Contention {
        key: targets.first().cloned().unwrap_or_default(),
        attempts: MAX_ATTEMPTS,
    }
    .into())
}

/// The current objects at `targets` and their `mod_revision`s (0: absent), all as of one
/// revision.
async fn snapshot(
    client: &Client,
    targets: &[String],
) -> Result<(Vec<Option<Object>>, Vec<i64>), StoreError> {
    let reads: Vec<TxnOp> = targets
        .iter()
        .map(|key| TxnOp::get(key.as_str(), None))
        .collect();
    let response = client
        .clone()
        .txn(Txn::new().and_then(reads))
        .await
        .map_err(EtcdError::from)?;
    let mut objects = Vec::with_capacity(targets.len());
    let mut revisions = Vec::with_capacity(targets.len());
    for answer in response.op_responses() {
        let TxnOpResponse::Get(get) = answer else {
            return Err(EtcdError::Unexpected("a read answered as a write".into()).into());
        };
        match get.kvs().first() {
            Some(kv) => {
                objects.push(Some(decode(kv)?));
                revisions.push(kv.mod_revision());
            }
            None => {
                objects.push(None);
                revisions.push(0);
            }
        }
    }
    if objects.len() != targets.len() {
        return Err(EtcdError::Unexpected("fewer reads answered than asked".into()).into());
    }
    Ok((objects, revisions))
}

/// Fails with `NotOwner` if a guard key is gone or was re-created, judged from the reads of a
/// failed transaction's other branch (one per guard, in order).
fn guards_hold(guards: &[Guard], answers: &[TxnOpResponse]) -> Result<(), StoreError> {
    for (guard, answer) in guards.iter().zip(answers) {
        let held = match answer {
            TxnOpResponse::Get(get) => get
                .kvs()
                .first()
                .is_some_and(|kv| kv.create_revision() == guard.create_revision),
            _ => false,
        };
        if !held {
            return Err(EtcdError::NotOwner {
                key: guard.key.clone(),
            }
            .into());
        }
    }
    Ok(())
}

async fn check_guards(client: &Client, guards: &[Guard]) -> Result<(), StoreError> {
    if guards.is_empty() {
        return Ok(());
    }
    let reads: Vec<TxnOp> = guards
        .iter()
        .map(|g| TxnOp::get(g.key.as_str(), None))
        .collect();
    let response = client
        .clone()
        .txn(Txn::new().and_then(reads))
        .await
        .map_err(EtcdError::from)?;
    guards_hold(guards, &response.op_responses())
}
