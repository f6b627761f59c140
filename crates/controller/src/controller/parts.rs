//! A controller's parts, as its tasks share them: the reactor, the version serving now, its
//! caches, its work queue and its memory of the objects it handled.

use crate::engine::context::EngineContext;
use crate::engine::options::ControllerOptions;
use crate::queue::key_state::KeyStates;
use crate::reactor::{Reactor, ReactorInfo};
use crate::reports::relay::ReportRelay;
use crate::rollout::shadow_runs::ShadowRuns;
use crate::rollout::state::Rollout;
use crate::watch::own_writes::OwnWrites;
use crate::watch::secondary::Secondaries;
use crate::{Reflector, WorkQueue};
use parking_lot::RwLock;
use reactor_core::object::ObjectKey;
use std::collections::HashMap;
use std::sync::Arc;

pub struct ControllerParts {
    pub info: ReactorInfo,
    /// Swapped by a reload that describes itself the same way; calls in flight keep theirs.
    reactor: RwLock<Arc<dyn Reactor>>,
    pub context: EngineContext,
    /// The reflector of each of the reactor's own kinds.
    pub reflectors: HashMap<String, Arc<Reflector>>,
    /// The other kinds it watches, with their reflectors and indexes.
    pub secondaries: Secondaries,
    pub watched: HashMap<String, Arc<Reflector>>,
    pub queue: WorkQueue<ObjectKey>,
    pub keys: KeyStates,
    /// What its own commits wrote to the kinds it watches, whose events run nothing again.
    pub own_writes: OwnWrites,
    /// Agents' reports on the items this reactor's objects published.
    pub relay: ReportRelay,
    pub options: ControllerOptions,
    /// The rollout of the reactor's last new version.
    pub rollout: Rollout,
    /// The calls of a shadow version running beside this reactor's.
    pub shadows: ShadowRuns,
}

impl ControllerParts {
    pub fn new(
        reactor: Arc<dyn Reactor>,
        context: EngineContext,
        reflectors: HashMap<String, Arc<Reflector>>,
        queue: WorkQueue<ObjectKey>,
        relay: ReportRelay,
        options: ControllerOptions,
    ) -> Self {
        let info = reactor.info();
        let secondaries = Secondaries::new(&info);
        let watched = secondaries
            .kinds()
            .into_iter()
            .filter_map(|kind| Some((kind.clone(), context.reflectors.acquire(&kind)?)))
            .collect();
        Self {
            secondaries,
            watched,
            info,
            reactor: RwLock::new(reactor),
            context,
            reflectors,
            queue,
            keys: KeyStates::default(),
            own_writes: OwnWrites::default(),
            relay,
            options,
            rollout: Rollout::default(),
            shadows: ShadowRuns::default(),
        }
    }

    /// The version serving now.
    pub fn reactor(&self) -> Arc<dyn Reactor> {
        self.reactor.read().clone()
    }

    pub fn replace_reactor(&self, reactor: Arc<dyn Reactor>) {
        *self.reactor.write() = reactor;
    }

    /// The version serving now, as `components` shows it (`None` for native reactors).
    pub fn version(&self) -> Option<String> {
        self.reactor().pin().map(|(_, version)| version)
    }

    /// Runs one of the reactor's objects again although it did not change (something it
    /// depends on did), if it still exists.
    pub fn rerun(&self, key: ObjectKey) {
        let exists = self
            .reflectors
            .get(key.kind())
            .is_some_and(|r| r.uid(key.name()).is_some());
        if exists {
            self.keys.force(&key);
            self.queue.add(key);
        }
    }

    /// Indexes every cached object of `reflector` (one of the reactor's own kinds) for the
    /// secondary watches.
    pub fn index_all(&self, reflector: &Reflector) {
        for object in reflector.list(&reactor_core::object::Selector::default()) {
            self.secondaries
                .primary_changed(&crate::ReflectorEvent::Applied(object));
        }
    }

    /// Queues every cached object of `reflector`; `forced` runs them even if unchanged.
    pub fn enqueue_all(&self, reflector: &Reflector, forced: bool) {
        for name in reflector.names() {
            let key = ObjectKey::new(reflector.kind(), &name);
            if forced {
                self.keys.force(&key);
            }
            self.queue.add(key);
        }
    }
}
