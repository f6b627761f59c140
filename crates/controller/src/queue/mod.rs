//! A work queue of keys, as controller-runtime's: a key is never handed to two workers at
//! once, changes to a key in flight run it again afterwards, repeated adds coalesce, failures
//! back off per key, and an overall rate cap keeps a failing reactor from spinning the CPU.
//! A second, slower lane (a rollout's re-reconciles) is served only when no fresh key waits,
//! at a pace of its own.

pub(crate) mod key_state;

use crate::Backoff;
use parking_lot::Mutex;
use reactor_core::bucket::TokenBucket;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The default pace of the slow lane: 10k keys in about a minute.
pub const DEFAULT_SLOW_RATE: f64 = 200.0;

#[derive(Debug, Clone)]
pub struct QueueOptions {
    /// Names the queue in metrics (`reactor_workqueue_depth{queue=…}`).
    pub name: String,
    pub backoff: Backoff,
    /// The most keys handed out per second, over all workers.
    pub max_rate: f64,
    /// How many keys may be handed out at once before the rate cap applies.
    pub burst: f64,
    /// The most keys of the slow lane handed out per second (see [`WorkQueue::add_slow`]).
    pub slow_rate: f64,
}

impl Default for QueueOptions {
    fn default() -> Self {
        Self {
            name: "default".into(),
            backoff: Backoff::default(),
            max_rate: 10_000.0,
            burst: 1_000.0,
            slow_rate: DEFAULT_SLOW_RATE,
        }
    }
}

/// A snapshot of a queue (see [`WorkQueue::activity`]).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueActivity<K> {
    /// Keys ready, in the slow lane, or being worked on.
    pub busy: usize,
    /// Keys due later: backoffs after failures, requeues, lock retries.
    pub delayed: Vec<Delayed<K>>,
}

/// A key due later.
#[derive(Debug, Clone, PartialEq)]
pub struct Delayed<K> {
    pub key: K,
    /// Its consecutive failures (0 for a requeue or a lock retry).
    pub failures: u32,
    pub due_in: Duration,
}

struct State<K> {
    ready: VecDeque<K>,
    /// Keys waiting to be worked on (in `ready`, or to be re-queued when their run ends), with
    /// since when they wait.
    dirty: HashMap<K, Instant>,
    processing: HashSet<K>,
    /// Keys due later, with the time they are due; the heap may hold stale entries.
    delayed: HashMap<K, Instant>,
    timers: BinaryHeap<Reverse<(Instant, u64, K)>>,
    timer_seq: u64,
    failures: HashMap<K, u32>,
    /// The overall rate cap.
    rate: TokenBucket,
    /// The slow lane: keys waiting behind every fresh one; may hold stale entries (keys
    /// moved to `ready` by a fresh add, or already handed out).
    slow: VecDeque<K>,
    /// The keys of `slow` still waiting there.
    slow_keys: HashSet<K>,
    /// The slow lane's pace.
    slow_rate: TokenBucket,
    shut_down: bool,
}

pub struct WorkQueue<K> {
    state: Mutex<State<K>>,
    wake: Notify,
    options: QueueOptions,
}

impl<K> std::fmt::Debug for WorkQueue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkQueue")
            .field("name", &self.options.name)
            .finish()
    }
}

enum Next<K> {
    Key(K),
    WaitUntil(Option<Instant>),
    ShutDown,
}

impl<K: Clone + Eq + Hash + Ord + Send> WorkQueue<K> {
    pub fn new(options: QueueOptions) -> Self {
        Self {
            state: Mutex::new(State {
                ready: VecDeque::new(),
                dirty: HashMap::new(),
                processing: HashSet::new(),
                delayed: HashMap::new(),
                timers: BinaryHeap::new(),
                timer_seq: 0,
                failures: HashMap::new(),
                rate: TokenBucket::full(options.max_rate, options.burst, Instant::now().into_std()),
                slow: VecDeque::new(),
                slow_keys: HashSet::new(),
                slow_rate: TokenBucket::new(
                    options.slow_rate,
                    slow_burst(options.slow_rate),
                    1.0,
                    Instant::now().into_std(),
                ),
                shut_down: false,
            }),
            wake: Notify::new(),
            options,
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, State<K>> {
        // A panic while holding this lock leaves plain collections behind: still usable.
        self.state.lock()
    }

    /// Queues `key` now; a pending delayed run of it (a backoff) is cancelled.
    pub fn add(&self, key: K) {
        let mut state = self.lock();
        state.delayed.remove(&key);
        self.enqueue(&mut state, key);
    }

    /// Queues `key` now if it is due later (a backoff, a requeue); false if it is not.
    pub fn hurry(&self, key: &K) -> bool {
        let mut state = self.lock();
        if state.delayed.remove(key).is_none() {
            return false;
        }
        self.enqueue(&mut state, key.clone());
        true
    }

    /// Drops the run of `key` due later (a backoff, a requeue): it runs again only when
    /// added again. False if none was due.
    pub fn cancel_delayed(&self, key: &K) -> bool {
        self.lock().delayed.remove(key).is_some()
    }

    /// Queues `key` in the slow lane, unless it is queued already: it is handed out only when
    /// no other key is ready, at most `slow_rate` per second. A fresh [`WorkQueue::add`] of it
    /// meanwhile moves it to the front lane.
    pub fn add_slow(&self, key: K) {
        let mut state = self.lock();
        if state.dirty.contains_key(&key) {
            return;
        }
        // A run due later (a requeue) is replaced by this one.
        state.delayed.remove(&key);
        state.dirty.insert(key.clone(), Instant::now());
        if !state.processing.contains(&key) {
            state.slow_keys.insert(key.clone());
            state.slow.push_back(key);
            drop(state);
            self.wake.notify_one();
        }
    }

    /// Changes the pace of the slow lane.
    pub fn set_slow_rate(&self, rate: f64) {
        self.lock()
            .slow_rate
            .set_rate(rate, slow_burst(rate), Instant::now().into_std());
        self.wake.notify_waiters();
    }

    /// Keys waiting in the slow lane.
    pub fn slow_len(&self) -> usize {
        self.lock().slow_keys.len()
    }

    /// Queues `key` after `delay`, unless it is queued or due sooner already.
    pub fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            return self.add(key);
        }
        let mut state = self.lock();
        if state.dirty.contains_key(&key) {
            return;
        }
        let due = Instant::now() + delay;
        if state.delayed.get(&key).is_some_and(|d| *d <= due) {
            return;
        }
        state.delayed.insert(key.clone(), due);
        state.timer_seq += 1;
        let seq = state.timer_seq;
        state.timers.push(Reverse((due, seq, key)));
        drop(state);
        self.wake.notify_one();
    }

    /// Queues `key` after its backoff delay, which doubles with each consecutive failure.
    /// Returns the delay chosen.
    pub fn add_rate_limited(&self, key: K) -> Duration {
        let failures = {
            let mut state = self.lock();
            let count = state.failures.entry(key.clone()).or_insert(0);
            *count += 1;
            *count
        };
        metrics::counter!(reactor_core::metrics::WORKQUEUE_RETRIES, "queue" => self.options.name.clone())
            .increment(1);
        let delay = self.options.backoff.delay(failures);
        self.add_after(key, delay);
        delay
    }

    /// Forgets the failures of `key`: its next failure backs off from the start.
    pub fn forget(&self, key: &K) {
        self.lock().failures.remove(key);
    }

    /// How many consecutive failures `key` has had.
    pub fn failures(&self, key: &K) -> u32 {
        self.lock().failures.get(key).copied().unwrap_or(0)
    }

    /// Marks the work on `key` finished; if it changed meanwhile, it is queued again.
    pub fn done(&self, key: &K) {
        let mut state = self.lock();
        state.processing.remove(key);
        if state.dirty.contains_key(key) {
            state.ready.push_back(key.clone());
            self.record_depth(&state);
            drop(state);
            self.wake.notify_one();
        }
    }

    /// What the queue holds now: how many keys wait or are worked on, and the keys due later
    /// with their consecutive failures and how long until they are due.
    pub fn activity(&self) -> QueueActivity<K> {
        let state = self.lock();
        let now = Instant::now();
        let mut delayed: Vec<Delayed<K>> = state
            .delayed
            .iter()
            .map(|(key, due)| Delayed {
                key: key.clone(),
                failures: state.failures.get(key).copied().unwrap_or(0),
                due_in: due.saturating_duration_since(now),
            })
            .collect();
        delayed.sort_by(|a, b| a.key.cmp(&b.key));
        QueueActivity {
            busy: state.ready.len()
                + state.dirty.len()
                + state.processing.len()
                + state.slow_keys.len(),
            delayed,
        }
    }

    /// Keys waiting now (not counting delayed ones or those being worked on).
    pub fn len(&self) -> usize {
        self.lock().ready.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops handing out keys; waiting workers get `None`.
    pub fn shut_down(&self) {
        self.lock().shut_down = true;
        self.wake.notify_waiters();
    }

    /// The next key to work on, once one is due and the rate cap allows; `None` after shutdown.
    pub async fn next(&self) -> Option<K> {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.poll_next() {
                Next::Key(key) => return Some(key),
                Next::ShutDown => return None,
                Next::WaitUntil(None) => notified.await,
                Next::WaitUntil(Some(at)) => {
                    tokio::select! {
                        _ = notified => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
            }
        }
    }

    fn poll_next(&self) -> Next<K> {
        let mut state = self.lock();
        if state.shut_down {
            return Next::ShutDown;
        }
        let now = Instant::now();
        self.release_due(&mut state, now);
        let timer = state.timers.peek().map(|Reverse((at, _, _))| *at);
        if state.ready.is_empty() && state.slow_keys.is_empty() {
            return Next::WaitUntil(timer);
        }
        if let Err(wait) = state.rate.ready(now.into_std()) {
            return Next::WaitUntil(Some(later(now, wait)));
        }
        let key = match state.ready.pop_front() {
            Some(key) => key,
            None => match self.pop_slow(&mut state, now) {
                Ok(key) => key,
                Err(at) => return Next::WaitUntil(earliest(timer, at)),
            },
        };
        state.rate.take();
        if let Some(since) = state.dirty.remove(&key) {
            metrics::histogram!(reactor_core::metrics::WORKQUEUE_QUEUE_DURATION, "queue" => self.options.name.clone())
                .record(now.saturating_duration_since(since).as_secs_f64());
        }
        state.processing.insert(key.clone());
        self.record_depth(&state);
        Next::Key(key)
    }

    /// The next key of the slow lane if its pace allows; else when it will.
    fn pop_slow(&self, state: &mut State<K>, now: Instant) -> Result<K, Option<Instant>> {
        if let Err(wait) = state.slow_rate.ready(now.into_std()) {
            return Err(Some(later(now, wait)));
        }
        while let Some(key) = state.slow.pop_front() {
            if state.slow_keys.remove(&key) {
                state.slow_rate.take();
                return Ok(key);
            }
        }
        Err(None)
    }

    fn release_due(&self, state: &mut State<K>, now: Instant) {
        while let Some(Reverse((at, _, _))) = state.timers.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, _, key))) = state.timers.pop() else {
                break;
            };
            // Skip entries superseded by an earlier time or cancelled by `add`.
            if state.delayed.get(&key) == Some(&at) {
                state.delayed.remove(&key);
                self.enqueue(state, key);
            }
        }
    }

    fn enqueue(&self, state: &mut State<K>, key: K) {
        if state.slow_keys.remove(&key) {
            // Waiting in the slow lane: a fresh change runs it in the front lane.
            state.ready.push_back(key);
            self.record_depth(state);
            self.wake.notify_one();
            return;
        }
        if state.dirty.contains_key(&key) {
            return;
        }
        state.dirty.insert(key.clone(), Instant::now());
        if !state.processing.contains(&key) {
            state.ready.push_back(key);
            self.record_depth(state);
            self.wake.notify_one();
        }
    }

    fn record_depth(&self, state: &State<K>) {
        metrics::gauge!(reactor_core::metrics::WORKQUEUE_SLOW_DEPTH, "queue" => self.options.name.clone())
            .set(state.slow_keys.len() as f64);
        metrics::gauge!(reactor_core::metrics::WORKQUEUE_DEPTH, "queue" => self.options.name.clone())
            .set(state.ready.len() as f64);
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The slow lane's burst at `rate`: a twentieth of a second's worth may go at once, so a late
/// worker catches up a little.
fn slow_burst(rate: f64) -> f64 {
    (rate / 20.0).max(1.0)
}

/// `wait` after `now`, or far in the future if that is past what a clock can say.
fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn queue() -> WorkQueue<&'static str> {
        WorkQueue::new(QueueOptions {
            backoff: Backoff {
                base: Duration::from_millis(10),
                cap: Duration::from_secs(1),
                jitter: 0.0,
            },
            ..QueueOptions::default()
        })
    }

    async fn next_now(q: &WorkQueue<&'static str>) -> Option<&'static str> {
        tokio::time::timeout(Duration::from_millis(1), q.next())
            .await
            .ok()
            .flatten()
    }

    #[tokio::test(start_paused = true)]
    async fn repeated_adds_coalesce_and_a_key_is_never_handed_out_twice_at_once() {
        let q = queue();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.len(), 2);
        assert_eq!(next_now(&q).await, Some("a"));
        q.add("a"); // changed while being worked on
        assert_eq!(next_now(&q).await, Some("b"));
        assert_eq!(
            next_now(&q).await,
            None,
            "a is in flight: not handed out again"
        );
        q.done(&"a");
        assert_eq!(
            next_now(&q).await,
            Some("a"),
            "the change made while in flight runs afterwards"
        );
        q.done(&"a");
        q.done(&"b");
        assert_eq!(next_now(&q).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_back_off_doubling_and_success_resets() {
        let q = queue();
        let start = Instant::now();
        let mut waits = Vec::new();
        q.add("k");
        for _ in 0..4 {
            let key = q.next().await.expect("key");
            waits.push((Instant::now() - start).as_millis());
            q.add_rate_limited(key);
            q.done(&key);
        }
        assert_eq!(waits, vec![0, 10, 30, 70], "10, 20, 40 ms apart");
        let key = q.next().await.expect("key");
        q.forget(&key);
        q.done(&key);
        assert_eq!(
            q.add_rate_limited("k"),
            Duration::from_millis(10),
            "backoff starts over"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_newer_change_cancels_a_pending_backoff() {
        let q = queue();
        q.add("k");
        let key = q.next().await.expect("key");
        for _ in 0..5 {
            q.add_rate_limited(key); // 160 ms
        }
        q.done(&key);
        assert_eq!(next_now(&q).await, None);
        q.add("k");
        assert_eq!(
            next_now(&q).await,
            Some("k"),
            "runs now, not after the backoff"
        );
        q.done(&"k");
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(
            next_now(&q).await,
            None,
            "the cancelled backoff does not fire later"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn activity_tells_busy_from_due_later_and_a_due_key_can_run_now_or_never() {
        let q = queue();
        q.add("busy");
        q.add_after("requeued", Duration::from_secs(30));
        q.add("failing");
        assert_eq!(next_now(&q).await, Some("busy"));
        assert_eq!(next_now(&q).await, Some("failing"));
        q.add_rate_limited("failing"); // due in 10 ms
        q.add_rate_limited("failing"); // 20 ms: the earlier time is kept
        q.done(&"failing");
        let activity = q.activity();
        assert_eq!(activity.busy, 1, "busy is in flight");
        assert_eq!(
            activity.delayed,
            vec![
                Delayed {
                    key: "failing",
                    failures: 2,
                    due_in: Duration::from_millis(10)
                },
                Delayed {
                    key: "requeued",
                    failures: 0,
                    due_in: Duration::from_secs(30)
                },
            ]
        );
        q.done(&"busy");
        assert!(q.hurry(&"failing"), "its backoff is skipped");
        assert!(!q.hurry(&"busy"), "not due later");
        assert_eq!(next_now(&q).await, Some("failing"), "at once");
        q.done(&"failing");
        assert!(q.cancel_delayed(&"requeued"));
        let activity = q.activity();
        assert_eq!((activity.busy, activity.delayed), (0, vec![]));
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(next_now(&q).await, None, "the cancelled requeue never runs");
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_keeps_the_earliest_time() {
        let q = queue();
        q.add_after("k", Duration::from_secs(10));
        q.add_after("k", Duration::from_secs(1));
        q.add_after("k", Duration::from_secs(5));
        let start = Instant::now();
        assert_eq!(q.next().await, Some("k"));
        assert_eq!(Instant::now() - start, Duration::from_secs(1));
        q.done(&"k");
        tokio::time::advance(Duration::from_secs(20)).await;
        assert_eq!(next_now(&q).await, None, "stale timers do not fire");
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_cap_spaces_out_work() {
        let q: WorkQueue<u32> = WorkQueue::new(QueueOptions {
            max_rate: 100.0,
            burst: 1.0,
            ..QueueOptions::default()
        });
        for k in 0..5 {
            q.add(k);
        }
        let start = Instant::now();
        for _ in 0..5 {
            let k = q.next().await.expect("key");
            q.done(&k);
        }
        assert_eq!(
            Instant::now() - start,
            Duration::from_millis(40),
            "100/s: 10 ms apart after the first"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_workers_wake_for_new_keys_and_shutdown() {
        let q = Arc::new(queue());
        let worker = {
            let q = q.clone();
            tokio::spawn(async move { q.next().await })
        };
        tokio::task::yield_now().await;
        q.add("late");
        assert_eq!(worker.await.expect("joined"), Some("late"));
        let worker = {
            let q = q.clone();
            tokio::spawn(async move { q.next().await })
        };
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(worker.await.expect("joined"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_slow_lane_is_paced_and_waits_behind_fresh_keys() {
        let q: WorkQueue<u32> = WorkQueue::new(QueueOptions {
            slow_rate: 100.0,
            ..QueueOptions::default()
        });
        for k in 0..5 {
            q.add_slow(k);
        }
        q.add(100);
        q.add(3); // a fresh change of a slow key moves it to the front lane
        let start = Instant::now();
        let mut order = Vec::new();
        let mut times = Vec::new();
        for _ in 0..6 {
            let k = q.next().await.expect("key");
            order.push(k);
            times.push((Instant::now() - start).as_millis());
            q.done(&k);
        }
        assert_eq!(order, vec![100, 3, 0, 1, 2, 4], "fresh keys first");
        assert_eq!(
            times,
            vec![0, 0, 0, 10, 20, 30],
            "slow keys 10 ms apart (100/s)"
        );
        assert_eq!(q.slow_len(), 0);
        q.add_slow(7);
        q.add_slow(7);
        assert_eq!(q.slow_len(), 1, "repeated adds coalesce");
        q.add(7);
        assert_eq!(q.slow_len(), 0);
        assert_eq!(q.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_fresh_key_added_mid_rollout_goes_before_the_waiting_slow_ones() {
        let q: WorkQueue<u32> = WorkQueue::new(QueueOptions {
            slow_rate: 10.0,
            ..QueueOptions::default()
        });
        for k in 0..100 {
            q.add_slow(k);
        }
        let first = q.next().await.expect("key");
        q.done(&first);
        q.add(1000);
        let start = Instant::now();
        assert_eq!(q.next().await, Some(1000));
        assert_eq!(Instant::now(), start, "not held behind the rollout's pace");
    }
}
