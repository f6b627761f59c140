//! The host a test runs on, wired as `serve` wires it but with no API: the embedded store on
//! redb's in-memory backend, the controller engine, and the runtime holding the one component.

use super::TestArgs;
use crate::controller::{Admitter, Backoff, ControllerOptions, Engine, EngineHost};
use crate::runtime::{ComponentState, Runtime, RuntimeConfig, RuntimeSettings, World};
use crate::store::{EmbeddedStore, EmbeddedStoreOptions, Store};
use anyhow::Context;
use std::sync::Arc;
use std::time::Duration;

/// How often an idle watch learns the store's latest revision: how soon a quiet engine is
/// known to have seen everything.
const BOOKMARKS: Duration = Duration::from_millis(5);

pub struct Host {
    pub store: Arc<dyn Store>,
    pub engine: Arc<Engine>,
    pub admitter: Admitter,
    /// Kept alive: it serves the component and follows nothing else.
    _runtime: Runtime,
    _following: tokio::task::JoinHandle<()>,
    /// The temporary compile cache, removed when the host goes.
    _cache: Option<tempfile::TempDir>,
}

impl Host {
    /// Loads the component and attaches its controller; a component that does not load is
    /// an error naming the file.
    pub async fn start(args: &TestArgs) -> anyhow::Result<Self> {
        let settings = match &args.config {
            Some(path) => RuntimeSettings::read(path)?,
            None => RuntimeSettings::default(),
        };
        let store: Arc<dyn Store> = Arc::new(EmbeddedStore::in_memory(EmbeddedStoreOptions {
            bookmark_interval: BOOKMARKS,
            // Every change stays in the log: the result lists every kind written.
            log_retention: 1 << 40,
            ..EmbeddedStoreOptions::default()
        })?);
        let options = ControllerOptions {
            // Retries run when the engine is otherwise idle (see settle): no jitter, so the
            // same fixtures give the same statuses.
            backoff: Backoff {
                jitter: 0.0,
                ..Backoff::default()
            },
            ..ControllerOptions::default()
        };
        let engine = Engine::new(store.clone(), options);
        let (data, cache) = match &args.cache_dir {
            Some(dir) => (dir.clone(), None),
            None => {
                let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
                (dir.path().to_owned(), Some(dir))
            }
        };
        let mut config = RuntimeConfig::new(data);
        config.settings = settings;
        config.host = Arc::new(EngineHost::new(engine.context().clone()));
        if let super::Clock::Frozen(at) = args.clock {
            config.frozen_clock = Some(at);
        }
        let runtime = Runtime::new(config)?;
        let file = args.component.display();
        if !args.component.is_file() {
            anyhow::bail!("{file}: no such file");
        }
        let info = runtime
            .load_file(&args.component, World::Controller)
            .await
            .with_context(|| format!("{file}"))?;
        if info.state != ComponentState::Ready || !info.serving {
            let error = info.error.as_deref().unwrap_or("it did not load");
            // The runtime's errors mostly name the file already.
            if error.contains(&file.to_string()) {
                anyhow::bail!("{error}");
            }
            anyhow::bail!("{file}: {error}");
        }
        let following = engine.follow(&runtime);
        let admitter = Admitter::new(engine.context(), false);
        Ok(Self {
            store,
            engine,
            admitter,
            _runtime: runtime,
            _following: following,
            _cache: cache,
        })
    }
}
