//! Which objects this replica may reconcile when several share one store (backend-neutral):
//! objects hash into shards, a backend's campaign gives the replica some of them, and each
//! reconcile holds a permit on its shard so a shard is given away only after its work here ends.

use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{Notify, watch};

/// The shards this replica owns now, and the reconciles running in each.
#[derive(Debug)]
pub struct Shards {
    count: u32,
    state: Mutex<State>,
    /// Bumped when shards are gained: controllers re-enqueue what they skipped.
    gained: watch::Sender<u64>,
    drained: Notify,
}

#[derive(Debug, Default)]
struct State {
    owned: HashSet<u32>,
    running: HashMap<u32, usize>,
}

/// Held while one reconcile runs on an owned shard.
#[derive(Debug)]
pub struct Permit {
    shards: Arc<Shards>,
    shard: u32,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut state = self.shards.state();
        if let Some(n) = state.running.get_mut(&self.shard) {
            *n = n.saturating_sub(1);
        }
        drop(state);
        self.shards.drained.notify_waiters();
    }
}

impl Shards {
    pub fn new(count: u32) -> Arc<Self> {
        Arc::new(Self {
            count: count.max(1),
            state: Mutex::new(State::default()),
            gained: watch::Sender::new(0),
            drained: Notify::new(),
        })
    }

    fn state(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// The shard of an object: FNV-1a of its key, the same in every replica and release.
    pub fn shard_of(&self, key: &ObjectKey) -> u32 {
        let mut hash: u32 = 0x811c_9dc5;
        for byte in key.as_str().bytes() {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
        hash % self.count
    }

    pub fn owns(&self, key: &ObjectKey) -> bool {
        self.state().owned.contains(&self.shard_of(key))
    }

    /// A permit to reconcile `key`, or `None` if this replica does not own its shard.
    pub fn permit(self: &Arc<Self>, key: &ObjectKey) -> Option<Permit> {
        let shard = self.shard_of(key);
        let mut state = self.state();
        if !state.owned.contains(&shard) {
            return None;
        }
        *state.running.entry(shard).or_default() += 1;
        Some(Permit {
            shards: self.clone(),
            shard,
        })
    }

    pub fn owned(&self) -> Vec<u32> {
        let mut owned: Vec<u32> = self.state().owned.iter().copied().collect();
        owned.sort_unstable();
        owned
    }

    pub fn gain(&self, shard: u32) {
        self.gain_all([shard]);
    }

    /// Gains several shards with one notice, so controllers re-enqueue their objects once.
    pub fn gain_all(&self, shards: impl IntoIterator<Item = u32>) {
        let mut state = self.state();
        let mut new = false;
        for shard in shards {
            new |= state.owned.insert(shard);
        }
        drop(state);
        if new {
            self.gained.send_modify(|n| *n += 1);
        }
    }

    pub fn gained(&self) -> watch::Receiver<u64> {
        self.gained.subscribe()
    }

    /// Stops new work on `shard` and waits until the work running on it has finished.
    pub async fn release(&self, shard: u32) {
        self.state().owned.remove(&shard);
        self.drain(|state| state.running.get(&shard).copied().unwrap_or(0) == 0)
            .await;
    }

    /// Stops all new work and waits until every running reconcile has finished.
    pub async fn release_all(&self) {
        self.state().owned.clear();
        self.drain(|state| state.running.values().all(|n| *n == 0))
            .await;
    }

    async fn drain(&self, done: impl Fn(&State) -> bool) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(&self.state()) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn permits_only_on_owned_shards_and_release_waits_for_them() {
        let shards = Shards::new(4);
        let key = ObjectKey::new("Policy", "a");
        let shard = shards.shard_of(&key);
        assert!(shards.permit(&key).is_none(), "nothing owned yet");
        let gained = shards.gained();
        shards.gain(shard);
        assert!(gained.has_changed().expect("open"));
        let permit = shards.permit(&key).expect("owned");
        let releasing = {
            let shards = shards.clone();
            tokio::spawn(async move { shards.release(shard).await })
        };
        tokio::task::yield_now().await;
        assert!(shards.permit(&key).is_none(), "no new work while releasing");
        assert!(!releasing.is_finished(), "release waits for running work");
        drop(permit);
        releasing.await.expect("released once the work finished");
    }

    #[test]
    fn gaining_several_shards_is_one_notice() {
        let shards = Shards::new(4);
        let mut gained = shards.gained();
        shards.gain_all([0, 1, 2]);
        assert_eq!(*gained.borrow_and_update(), 1);
        shards.gain_all([1, 2]);
        assert!(!gained.has_changed().expect("open"), "nothing new gained");
        assert_eq!(shards.owned(), vec![0, 1, 2]);
    }
}
