//! The engine of `serve`: attaches a controller for every loaded reactor component, keeps it
//! across hot reloads (the queue survives; the next call runs the new version, and a rollout
//! re-reconciles the objects it watches), detaches it when the component goes.

pub(crate) mod context;
pub(crate) mod options;
pub(crate) mod settle;

use crate::Reflector;
use crate::controller::Controller;
use crate::engine::context::EngineContext;
use crate::engine::options::ControllerOptions;
use crate::reactor::wasm::WasmReactor;
use crate::reactor::{Reactor, ReactorInfo, Validators};
use crate::reports::agents_gone::{self, RollUp};
use crate::rollout::runtime_sink::RuntimeSink;
use crate::rollout::state::RolloutPlan;
use crate::run::locks::ObjectLocks;
use parking_lot::Mutex;
use reactor_core::object::ObjectKey;
use reactor_nimbus::{AGENT_KIND, AgentReport, ITEM_KIND, ReportSink};
use reactor_runtime::{ComponentEvent, Runtime, World, version_of};
use reactor_store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// Reconciles in flight per instance a component may run at once.
pub const RECONCILES_PER_INSTANCE: usize = 8;

pub struct Engine {
    context: EngineContext,
    options: ControllerOptions,
    /// Per-reactor overrides of the options (e.g. concurrency from the config file).
    tuning: Mutex<BTreeMap<String, ControllerOptions>>,
    /// The controller of each reactor attached, by name.
    controllers: Mutex<BTreeMap<String, Controller>>,
    /// The version serving of each controller component seen, to tell a new one.
    versions: Mutex<BTreeMap<String, String>>,
    /// The items' and agents' caches, held as long as the engine: roll-ups of agents'
    /// reports read them.
    caches: Vec<Arc<Reflector>>,
}

impl RollUp for Engine {
    fn roll_up(&self, component: &str, owner: ObjectKey) {
        if let Some(controller) = self.controllers().get(component) {
            controller.roll_up_propagation(owner);
        }
    }
}

impl ReportSink for Engine {
    fn offer_report(&self, component: &str, owner: ObjectKey, report: AgentReport) {
        if let Some(controller) = self.controllers().get(component) {
            controller.offer_report(owner, report);
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("attached", &self.attached_names())
            .finish()
    }
}

impl Engine {
    /// A new engine; it follows agents' reports from the start (needs a tokio runtime).
    pub fn new(store: Arc<dyn Store>, options: ControllerOptions) -> Arc<Self> {
        Self::with_locks(store, options, ObjectLocks::default())
    }

    /// An engine whose locks may also require owning a shard (several replicas, one store).
    pub fn with_locks(
        store: Arc<dyn Store>,
        options: ControllerOptions,
        locks: ObjectLocks,
    ) -> Arc<Self> {
        let context = EngineContext::new(store, locks);
        let caches: Vec<Arc<Reflector>> = [ITEM_KIND, AGENT_KIND]
            .iter()
            .filter_map(|kind| context.reflectors.acquire(kind))
            .collect();
        let engine = Arc::new(Self {
            context,
            options,
            tuning: Mutex::new(BTreeMap::new()),
            controllers: Mutex::new(BTreeMap::new()),
            versions: Mutex::new(BTreeMap::new()),
            caches,
        });
        // Agents' reports reach the controllers from the report book.
        let sink: Arc<dyn ReportSink> = engine.clone();
        engine.context.reports.set_sink(Arc::downgrade(&sink));
        // Admission (users' applies and guests' writes) asks the engine who validates a kind.
        let validators: Arc<dyn Validators> = engine.clone();
        engine.context.set_validators(Arc::downgrade(&validators));
        // An agent gone stops counting in the propagation of the owners it was pending for.
        if let [items, agents] = &engine.caches[..] {
            let target: Arc<dyn RollUp> = engine.clone();
            agents_gone::follow(agents, items.clone(), Arc::downgrade(&target));
        }
        engine
    }

    pub fn context(&self) -> &EngineContext {
        &self.context
    }

    fn controllers(&self) -> parking_lot::MutexGuard<'_, BTreeMap<String, Controller>> {
        self.controllers.lock()
    }

    pub fn attached_names(&self) -> Vec<String> {
        self.controllers().keys().cloned().collect()
    }

    /// Sets the options of one reactor's controller (applied at its next attach).
    pub fn tune(&self, reactor: &str, options: ControllerOptions) {
        self.tuning.lock().insert(reactor.to_owned(), options);
    }

    /// Runs `reactor`. A reactor of the same name that describes itself the same way, at the
    /// same concurrency, keeps its controller and queue; otherwise the controller restarts.
    pub fn attach(&self, reactor: Arc<dyn Reactor>) {
        let info = reactor.info();
        let options = self
            .tuning
            .lock()
            .get(&info.name)
            .cloned()
            .unwrap_or_else(|| self.options.clone());
        let mut controllers = self.controllers();
        if let Some(current) = controllers.get(&info.name)
            && current.info() == &info
            && current.concurrency() == options.concurrency
        {
            current.replace_reactor(reactor);
            return;
        }
        // Stop the old controller before its successor takes the same objects.
        controllers.remove(&info.name);
        tracing::info!(reactor = %info.name, kinds = ?info.kinds, "controller attached");
        let controller = Controller::start(reactor, self.context.clone(), options);
        controllers.insert(info.name.clone(), controller);
    }

    pub fn detach(&self, name: &str) -> bool {
        let removed = self.controllers().remove(name).is_some();
        if removed {
            tracing::info!(reactor = %name, "controller detached");
        }
        removed
    }

    /// Follows the runtime: every controller component loaded is attached, every one
    /// unloaded detached. Returns once the components already loaded are attached.
    pub fn follow(self: &Arc<Self>, runtime: &Runtime) -> tokio::task::JoinHandle<()> {
        let mut events = runtime.subscribe();
        self.sync_with(runtime);
        let engine = Arc::downgrade(self);
        let runtime = runtime.clone();
        tokio::spawn(async move {
            loop {
                let event = events.recv().await;
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                match event {
                    Ok(ComponentEvent::Loaded {
                        name,
                        world: World::Controller,
                        sha256,
                        ..
                    }) => {
                        if let Some(reactor) = WasmReactor::new(runtime.controller(&name)) {
                            engine.attach(Arc::new(reactor));
                        }
                        let version = version_of(&sha256);
                        let previous = engine.versions.lock().insert(name.clone(), version.clone());
                        // A new version, not the first load nor the same code again.
                        if let Some(previous) = previous.filter(|p| *p != version) {
                            engine.roll_out(&runtime, &name, version, previous);
                        }
                    }
                    // A shadow compares on every object now, not only as events come.
                    Ok(ComponentEvent::Shadowing { name, .. }) => {
                        if let Some(controller) = engine.controllers().get(&name) {
                            controller.run_all_again();
                        }
                    }
                    Ok(ComponentEvent::Unloaded { name }) => {
                        engine.versions.lock().remove(&name);
                        engine.detach(&name);
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => engine.sync_with(&runtime),
                    Err(RecvError::Closed) => return,
                }
            }
        })
    }

    /// Re-reconciles every object `name`'s reactor watches with its new `version`, which
    /// replaced `previous`, at the pace and with the canary the config file sets.
    fn roll_out(&self, runtime: &Runtime, name: &str, version: String, previous: String) {
        let settings = runtime.settings().rollout;
        // Back to the previous version after a rollback: no canary for that one.
        let rolled_back = runtime
            .component(name)
            .is_some_and(|c| c.rolled_back.is_some());
        let canary = settings.canary.filter(|_| !rolled_back);
        let rate = settings.rate.unwrap_or(self.options.rollout_rate);
        let plan = RolloutPlan {
            version,
            previous: Some(previous),
            canary,
            sink: Arc::new(RuntimeSink {
                runtime: runtime.clone(),
                name: name.to_owned(),
                store: self.context.store.clone(),
            }),
        };
        if let Some(controller) = self.controllers().get(name) {
            controller.start_rollout(plan, rate);
        }
    }

    fn sync_with(&self, runtime: &Runtime) {
        let components = runtime.components();
        let serving: Vec<String> = components
            .iter()
            .filter(|c| c.world == World::Controller && c.serving)
            .map(|c| c.name.clone())
            .collect();
        let mut versions = self.versions.lock();
        for component in components.iter().filter(|c| c.world == World::Controller) {
            if let Some(sha256) = &component.sha256 {
                versions
                    .entry(component.name.clone())
                    .or_insert_with(|| version_of(sha256));
            }
        }
        drop(versions);
        for name in self.attached_names() {
            if !serving.contains(&name) {
                self.detach(&name);
            }
        }
        for name in serving {
            self.attach_component(runtime, &name);
        }
    }

    /// Attaches a loaded controller component, with [`RECONCILES_PER_INSTANCE`] reconciles
    /// in flight per instance its config allows.
    fn attach_component(&self, runtime: &Runtime, name: &str) {
        let Some(reactor) = WasmReactor::new(runtime.controller(name)) else {
            return;
        };
        // A reconcile holds an instance only while the guest runs, not while its commit
        // waits for the disk: more reconciles than instances keep the store's group commit
        // full.
        let instances = runtime.settings().effective(name).limits.concurrency.max(1);
        let concurrency = instances * RECONCILES_PER_INSTANCE;
        self.tune(
            name,
            ControllerOptions {
                concurrency,
                ..self.options.clone()
            },
        );
        self.attach(Arc::new(reactor));
    }

    /// Calls `f` with each attached controller, under the lock of the attached set.
    pub(crate) fn each_controller(&self, mut f: impl FnMut(&Controller)) {
        for controller in self.controllers().values() {
            f(controller);
        }
    }
}

impl Validators for Engine {
    /// Whether some reactor reconciles `kind` or watches it (owned children, references,
    /// selections): a kind someone expects, so an apply of it is no typo.
    fn expects_kind(&self, kind: &str) -> bool {
        self.controllers().values().any(|controller| {
            let info = controller.info();
            info.kinds.iter().any(|k| k == kind) || info.watches.iter().any(|w| w.kind() == kind)
        })
    }

    fn validators_of(&self, kind: &str) -> Vec<(ReactorInfo, Arc<dyn Reactor>)> {
        self.controllers()
            .values()
            .filter(|controller| controller.info().kinds.iter().any(|k| k == kind))
            .map(|controller| (controller.info().clone(), controller.reactor()))
            .collect()
    }
}
