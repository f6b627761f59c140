//! Writes: decide with the shared rules in `store::plan` from the touched objects' states,
//! and commit in one transaction that compares the `mod_revision` of every key, so the
//! decision still holds when it lands. The states planned from are first a guess (what this
//! process last wrote at each key, else absent), so a create or an update of the process's own
//! last write takes one round trip. If the guess was wrong or another writer got in between,
//! the transaction changes nothing, its other branch reads the current states, and the write
//! is decided again from them; a guess that plans an error or no change is checked with a
//! snapshot read first.

use super::error::{EtcdError, revision};
use super::keys::{decode, encode};
use etcd_client::{Client, Compare, CompareOp, Txn, TxnOp, TxnOpResponse};
use parking_lot::Mutex;
use reactor_core::object::Object;
use reactor_store::{Change, EventType, StoreError, Written};
use std::collections::HashMap;
use std::sync::Arc;

/// How often a write is decided again after losing a race before it gives up.
const MAX_ATTEMPTS: usize = 64;
/// Keys whose last written state [`Recent`] keeps; past that it starts over.
const RECENT_KEYS: usize = 4096;

/// States as of one revision: the object at each key (`None`: absent) and its `mod_revision`
/// (0: absent).
type States = (Vec<Option<Object>>, Vec<i64>);

/// What this process last wrote at each key: a guess of the current state that the write's
/// own compare checks, so a wrong guess costs a round trip and never a wrong write.
#[derive(Debug, Default)]
pub struct Recent {
    states: Mutex<HashMap<String, Remembered>>,
}

/// A key's state as this process last wrote it, and its `mod_revision`.
type Remembered = (Option<Arc<Object>>, i64);

impl Recent {
    fn states(&self) -> parking_lot::MutexGuard<'_, HashMap<String, Remembered>> {
        self.states.lock()
    }

    /// The states of `targets` as this process last wrote them, absent where it wrote
    /// nothing: a create then lands in one round trip, and a wrong guess costs what a read
    /// would have.
    fn guess(&self, targets: &[String]) -> States {
        let states = self.states();
        targets
            .iter()
            .map(|key| match states.get(key) {
                Some((object, revision)) => (object.as_deref().cloned(), *revision),
                None => (None, 0),
            })
            .unzip()
    }

    fn remember(&self, key: &str, object: Option<Arc<Object>>, revision: i64) {
        let mut states = self.states();
        if states.len() >= RECENT_KEYS && !states.contains_key(key) {
            states.clear();
        }
        states.insert(key.to_owned(), (object, revision));
    }

    fn forget(&self, targets: &[String]) {
        let mut states = self.states();
        for key in targets {
            states.remove(key);
        }
    }
}

/// A key that must still exist with this `create_revision` for a write to land: how a replica's
/// writes are fenced by the ownership it holds through its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub key: String,
    pub create_revision: i64,
}

/// What one transaction may hold: etcd refuses more operations or a larger request than its
/// server was started with, so the store refuses them first with an error naming the limit.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_object_bytes: usize,
    pub max_txn_ops: usize,
    pub max_request_bytes: usize,
}

impl Limits {
    /// Refuses a transaction of `keys` objects and `guards` guards before it is sent.
    fn check_count(&self, keys: usize, guards: usize) -> Result<(), StoreError> {
        // Each key is compared, and read back if a compare fails; a guard is compared too.
        let ops = keys + guards;
        if ops > self.max_txn_ops {
            return Err(StoreError::TxnTooLarge(format!(
                "{keys} objects in one transaction, over the limit of {} operations (etcd --max-txn-ops {}; the guard of a replica counts too)",
                self.max_txn_ops.saturating_sub(guards),
                self.max_txn_ops
            )));
        }
        Ok(())
    }

    fn check_bytes(&self, bytes: usize) -> Result<(), StoreError> {
        if bytes > self.max_request_bytes {
            return Err(StoreError::TxnTooLarge(format!(
                "{bytes} bytes in one transaction, over the limit of {} bytes (etcd --max-request-bytes)",
                self.max_request_bytes
            )));
        }
        Ok(())
    }
}

/// The rule deciding the changes of every target from their current states.
pub type PlanAll<'a> =
    dyn Fn(&[Option<Object>]) -> Result<Vec<Option<Change>>, StoreError> + Send + Sync + 'a;

/// Plans the writes to `targets` (etcd keys) and commits them all or nothing.
pub async fn write(
    client: &Client,
    recent: &Recent,
    limits: &Limits,
    targets: &[String],
    guards: &[Guard],
    plan: &PlanAll<'_>,
) -> Result<Vec<Written>, StoreError> {
    limits.check_count(targets.len(), guards.len())?;
    let mut known = Some(recent.guess(targets));
    for _ in 0..MAX_ATTEMPTS {
        // A guess is checked by the transaction's compares; anything decided without
        // writing (an error, nothing to change) needs the real states first.
        let (guessed, (current, read_at)) = match known.take() {
            Some(states) => (true, states),
            None => (false, snapshot(client, targets).await?),
        };
        let changes = match plan(&current) {
            Ok(changes) if !(guessed && changes.iter().all(Option::is_none)) => changes,
            Err(e) if !guessed => return Err(e),
            _ => continue,
        };
        if changes.iter().all(Option::is_none) {
            // Nothing to write; but a fenced writer must still own what it acts for.
            check_guards(client, guards).await?;
            return Ok(current
                .into_iter()
                .map(|object| Written {
                    revision: object.as_ref().map_or(0, |o| o.meta.revision),
                    object: object.map(Arc::new),
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
        let mut bytes = 0;
        for (key, change) in targets.iter().zip(&changes) {
            match change {
                Some(c) if c.event_type == EventType::Deleted => {
                    ops.push(TxnOp::delete(key.as_str(), None));
                }
                Some(c) => {
                    let value = encode(&c.object)?;
                    if value.len() > limits.max_object_bytes {
                        return Err(StoreError::TooLarge {
                            key: c.object.key().to_string(),
                            size: value.len(),
                            limit: limits.max_object_bytes,
                        });
                    }
                    bytes += value.len() + key.len();
                    ops.push(TxnOp::put(key.as_str(), value, None));
                }
                None => {}
            }
        }
        limits.check_bytes(bytes)?;
        // If a compare fails: the current states, then the guards, in one go.
        let otherwise: Vec<TxnOp> = targets
            .iter()
            .map(|key| TxnOp::get(key.as_str(), None))
            .chain(guards.iter().map(|g| TxnOp::get(g.key.as_str(), None)))
            .collect();
        let txn = Txn::new().when(compares).and_then(ops).or_else(otherwise);
        let response = match client.clone().txn(txn).await {
            Ok(response) => response,
            Err(e) => {
                // Whether it landed is unknown: guess nothing next time.
                recent.forget(targets);
                return Err(EtcdError::from(e).into());
            }
        };
        if response.succeeded() {
            let header = response.header().ok_or(EtcdError::NoHeader)?;
            let committed = revision(header.revision())?;
            let written: Vec<Written> = current
                .into_iter()
                .zip(changes)
                .map(|(object, change)| match change {
                    None => Written {
                        revision: object.as_ref().map_or(0, |o| o.meta.revision),
                        object: object.map(Arc::new),
                        change: None,
                    },
                    Some(c) if c.event_type == EventType::Deleted => Written {
                        object: None,
                        change: Some(EventType::Deleted),
                        revision: committed,
                    },
                    Some(mut c) => {
                        c.object.meta.revision = committed;
                        Written {
                            object: Some(Arc::new(c.object)),
                            change: Some(c.event_type),
                            revision: committed,
                        }
                    }
                })
                .collect();
            for ((key, state), before) in targets.iter().zip(&written).zip(&read_at) {
                let revision = match (&state.object, state.change) {
                    (None, _) => 0,
                    (Some(_), None) => *before,
                    (Some(_), Some(_)) => header.revision(),
                };
                recent.remember(key, state.object.clone(), revision);
            }
            return Ok(written);
        }
        let answers = response.op_responses();
        let (reads, guard_reads) = answers.split_at(targets.len().min(answers.len()));
        guards_hold(guards, guard_reads)?;
        known = Some(read_states(reads, targets.len())?);
        metrics::counter!(reactor_core::metrics::STORE_ETCD_WRITE_RETRIES).increment(1);
    }
    recent.forget(targets);
    Err(EtcdError::Contention {
        key: targets.first().cloned().unwrap_or_default(),
        attempts: MAX_ATTEMPTS,
    }
    .into())
}

/// The current objects at `targets` and their `mod_revision`s (0: absent), all as of one
/// revision.
async fn snapshot(client: &Client, targets: &[String]) -> Result<States, StoreError> {
    let answers = read(client, targets.iter().map(String::as_str)).await?;
    read_states(&answers, targets.len())
}

/// The answers of one read-only transaction getting `keys`.
async fn read(
    client: &Client,
    keys: impl Iterator<Item = &str>,
) -> Result<Vec<TxnOpResponse>, StoreError> {
    let reads: Vec<TxnOp> = keys.map(|key| TxnOp::get(key, None)).collect();
    let response = client
        .clone()
        .txn(Txn::new().and_then(reads))
        .await
        .map_err(EtcdError::from)?;
    Ok(response.op_responses())
}

/// The states answered by `expected` reads of one transaction.
fn read_states(answers: &[TxnOpResponse], expected: usize) -> Result<States, StoreError> {
    let mut objects = Vec::with_capacity(expected);
    let mut revisions = Vec::with_capacity(expected);
    for answer in answers {
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
    if objects.len() != expected {
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
    let answers = read(client, guards.iter().map(|g| g.key.as_str())).await?;
    guards_hold(guards, &answers)
}
