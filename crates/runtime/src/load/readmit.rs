//! What is loaded, admitted again when the trust in force changes.
//!
//! A config reload that changes the `trust` section, or the content of a key file it names,
//! checks each version loaded against it as a restart would: the version serving, the one kept
//! for a rollback and the one running as a shadow. A version no longer admitted is let go (the
//! one serving stops serving: no call starts on it again), and the component's file loads as a
//! first version, itself checked; a component that served nothing is tried again, so a key
//! trusted now admits what was refused before.

use crate::error::RuntimeError;
use crate::load::cache::sha256_hex;
use crate::load::loader::Loader;
use crate::load::trust_seen::TrustSeen;
use crate::observe::component_event::ComponentEvent;
use crate::serve::rollout_info::version_of;
use crate::serve::slots::Slot;

impl Loader {
    /// Whether the trust in force differs from when this was last asked (or the runtime
    /// started).
    pub(crate) async fn trust_changed(&self) -> bool {
        let trust = self.settings.read().trust.clone();
        let now = tokio::task::spawn_blocking(move || TrustSeen::of(trust.as_ref()))
            .await
            .unwrap_or_else(|_| TrustSeen::unknown());
        let mut seen = self.trust_seen.lock();
        let changed = *seen != now;
        *seen = now;
        changed
    }

    /// Checks what `slot` has loaded against the trust in force, letting go what it no longer
    /// admits; whether the component's file is to be loaded again (nothing serves, or a
    /// version was let go).
    pub(crate) async fn readmit(&self, slot: &Slot) -> bool {
        let _loading = slot.loading.lock().await;
        let name = &slot.name;
        let mut reload = false;
        match slot.current.load_full() {
            None => reload = true,
            Some(current) => {
                let sha256 = &current.loaded.sha256;
                if let Err(e) = self.admitted(slot, sha256).await {
                    let version = version_of(sha256);
                    tracing::warn!(component = %name, %version, "the trust in force changed and no longer admits the version serving ({e}): it stops serving; its file loads as a first version");
                    slot.current.store(None);
                    slot.set_error(Some(e.to_string()));
                    if let Some(versions) = &self.versions {
                        versions.forget_serving(name);
                    }
                    self.announce(ComponentEvent::Unloaded { name: name.clone() });
                    reload = true;
                }
            }
        }
        if let Some(previous) = slot.previous.load_full()
            && let Err(e) = self.admitted(slot, &previous.loaded.sha256).await
        {
            let version = version_of(&previous.loaded.sha256);
            tracing::warn!(component = %name, %version, "the trust in force changed and no longer admits the version kept for a rollback ({e}): no rollback returns to it");
            slot.previous.store(None);
        }
        let shadow =
            (slot.shadow.lock().as_ref()).and_then(|s| s.running_sha256().map(str::to_owned));
        if let Some(sha256) = shadow
            && let Err(e) = self.admitted(slot, &sha256).await
        {
            let version = version_of(&sha256);
            tracing::warn!(component = %name, %version, "the trust in force changed and no longer admits the version running as a shadow ({e}): the shadow stops");
            if let Some(shadow) = slot.shadow.lock().as_mut().filter(|s| s.is(&sha256)) {
                shadow.stop();
            }
            reload = true;
        }
        reload
    }

    /// Whether the trust in force admits version `sha256` of `slot` again: from its kept wasm
    /// and what admitted it, kept beside it; else from the component's file, when that is the
    /// same version (a version kept before the trust section was added has no signature kept:
    /// the file's signature admits it, and is kept from then on).
    async fn admitted(&self, slot: &Slot, sha256: &str) -> Result<(), RuntimeError> {
        let mut refused = None;
        if let Some((path, bytes)) = self.kept(sha256).await? {
            match self.admit(&slot.name, &path, bytes).await {
                Ok(_) => return Ok(()),
                Err(e) => refused = Some(e),
            }
        }
        if slot.file_sha256.lock().as_deref() == Some(sha256) {
            let path = slot.file();
            let read = tokio::fs::read(&path).await.ok();
            if let Some(bytes) = read.filter(|bytes| sha256_hex(bytes) == sha256) {
                match self.admit(&slot.name, &path, bytes).await {
                    Ok((bytes, evidence)) => {
                        if let Some(versions) = self.versions.clone() {
                            let sha256 = sha256.to_owned();
                            let kept = tokio::task::spawn_blocking(move || {
                                versions.keep(&sha256, &bytes, &evidence)
                            });
                            let _ = kept.await;
                        }
                        return Ok(());
                    }
                    Err(e) => refused = Some(e),
                }
            }
        }
        match refused {
            Some(e) => Err(e),
            None if self.settings.read().trust.is_none() => Ok(()),
            None => Err(RuntimeError::Untrusted {
                name: slot.name.clone(),
                reason: "it cannot be checked again: its wasm is not kept here".into(),
            }),
        }
    }
}
