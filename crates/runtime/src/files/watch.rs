//! Watching the components folder and the config file with `notify`, debounced.
//!
//! A burst of events on a file becomes one load once the file has been quiet for
//! [`DEBOUNCE`], or for [`SETTLE`] once it was closed after writing or renamed into place.

use crate::error::RuntimeError;
use crate::files::{component_name, ignored_reason};
use crate::load::loader::Loader;
use crate::settings::RuntimeSettings;
use crate::world::World;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Quiet time after the last event on a file before it is loaded.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// Quiet time after a file was closed from writing or renamed into the folder: it is
/// complete, so only a moment is left for other files written together with it.
pub const SETTLE: Duration = Duration::from_millis(5);
/// Longest a steady stream of events can delay a load.
const MAX_DELAY: Duration = Duration::from_secs(1);

/// Starts a notify watcher on `dir` whose events arrive on the returned receiver.
fn watch(dir: &Path) -> Result<(RecommendedWatcher, UnboundedReceiver<Touch>), RuntimeError> {
    let (tx, rx) = unbounded_channel();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            // Reading a file (as every load does) is an access event: reacting to those
            // would reload every component forever. Only a close after writing counts.
            Ok(event) if is_read_only(&event.kind) => {}
            Ok(event) => {
                let complete = is_complete(&event.kind);
                for path in event.paths {
                    let _ = tx.send(Touch { path, complete });
                }
            }
            Err(e) => tracing::warn!("watch error: {e}"),
        })
        .map_err(|e| RuntimeError::Watch {
            path: dir.to_owned(),
            message: e.to_string(),
        })?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(|e| RuntimeError::Watch {
            path: dir.to_owned(),
            message: e.to_string(),
        })?;
    Ok((watcher, rx))
}

fn is_read_only(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode};
    matches!(kind, notify::EventKind::Access(access)
        if *access != AccessKind::Close(AccessMode::Write))
}

/// A file an event was about, and whether the event says the file is complete.
struct Touch {
    path: PathBuf,
    complete: bool,
}

/// Closed after writing, or renamed into the folder (what an atomic install does).
fn is_complete(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
    matches!(
        kind,
        notify::EventKind::Access(AccessKind::Close(AccessMode::Write))
            | notify::EventKind::Modify(ModifyKind::Name(RenameMode::To))
    )
}

/// Waits for the next burst of events and returns the paths it touched.
async fn next_burst(rx: &mut UnboundedReceiver<Touch>) -> Option<BTreeSet<PathBuf>> {
    let first = rx.recv().await?;
    let started = Instant::now();
    let mut quiet = if first.complete { SETTLE } else { DEBOUNCE };
    let mut paths = BTreeSet::from([first.path]);
    while started.elapsed() < MAX_DELAY {
        match tokio::time::timeout(quiet, rx.recv()).await {
            Ok(Some(touch)) => {
                quiet = if touch.complete { SETTLE } else { DEBOUNCE };
                paths.insert(touch.path);
            }
            Ok(None) | Err(_) => break,
        }
    }
    Some(paths)
}

/// Loads every component in `dir`, then follows its changes until the runtime drops.
pub(crate) async fn watch_dir(
    loader: &Arc<Loader>,
    dir: &Path,
    world: World,
) -> Result<(), RuntimeError> {
    std::fs::create_dir_all(dir).map_err(|e| RuntimeError::Watch {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    let (watcher, mut rx) = watch(dir)?;
    loader.keep(watcher);
    let entries = std::fs::read_dir(dir).map_err(|e| RuntimeError::Watch {
        path: dir.to_owned(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    for path in files {
        if component_name(&path).is_some() {
            // A failure is recorded in the component's state; the others still load.
            let _ = loader.load_file(&path, world, false).await;
        } else if let Some(reason) = ignored_reason(&path) {
            loader.slots.ignored.add(&path, world, reason);
        }
    }
    loader.prune_versions();
    let weak: Weak<Loader> = Arc::downgrade(loader);
    tokio::spawn(async move {
        while let Some(paths) = next_burst(&mut rx).await {
            let Some(loader) = weak.upgrade() else { return };
            for path in paths {
                sync_path(&loader, &path, world).await;
            }
            loader.prune_versions();
        }
    });
    Ok(())
}

/// Brings the component of `path` in line with the file: load it, or detach it when
/// the file is gone.
async fn sync_path(loader: &Loader, path: &Path, world: World) {
    // A detached signature (`NAME.wasm.minisig`) written or replaced: its component is
    // checked again (a no-op if the version it covers serves already).
    if let Some(wasm) = path
        .to_str()
        .and_then(|p| p.strip_suffix(".minisig"))
        .map(PathBuf::from)
        .filter(|wasm| component_name(wasm).is_some())
    {
        if tokio::fs::try_exists(&wasm).await.unwrap_or(false) {
            let _ = loader.load_file(&wasm, world, false).await;
        }
        return;
    }
    let exists = tokio::fs::try_exists(path).await.unwrap_or(false);
    let Some(name) = component_name(path) else {
        match ignored_reason(path) {
            Some(reason) if exists => loader.slots.ignored.add(path, world, reason),
            _ => loader.slots.ignored.remove(path),
        }
        return;
    };
    if exists {
        let _ = loader.load_file(path, world, false).await;
    } else if loader
        .slots
        .get(&name)
        .is_some_and(|slot| slot.file() == path)
    {
        loader.detach(&name);
    }
}

/// Applies `path` now, then re-applies it whenever it changes until the runtime drops.
pub(crate) async fn watch_config(loader: &Arc<Loader>, path: &Path) -> Result<(), RuntimeError> {
    let settings = RuntimeSettings::read(path)?;
    loader.apply_settings(settings).await;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let (watcher, mut rx) = watch(&dir)?;
    loader.keep(watcher);
    let file_name = path.file_name().map(|f| f.to_owned());
    let path = path.to_owned();
    let weak: Weak<Loader> = Arc::downgrade(loader);
    tokio::spawn(async move {
        while let Some(paths) = next_burst(&mut rx).await {
            if !paths.iter().any(|p| p.file_name() == file_name.as_deref()) {
                continue;
            }
            let Some(loader) = weak.upgrade() else { return };
            match RuntimeSettings::read(&path) {
                Ok(settings) => {
                    loader.set_config_error(None);
                    loader.apply_settings(settings).await;
                }
                Err(e) => {
                    tracing::warn!("config not applied, the previous one stays in force: {e}");
                    loader.set_config_error(Some(e.to_string()));
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};

    #[test]
    fn reads_are_ignored_and_writes_count() {
        assert!(is_read_only(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(is_read_only(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(!is_read_only(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(!is_read_only(&EventKind::Create(CreateKind::File)));
        assert!(!is_read_only(&EventKind::Modify(ModifyKind::Any)));
    }
}
