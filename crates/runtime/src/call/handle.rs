//! Handles to call a component's exports by name.
//!
//! Each call runs on the version in service when it starts, and finishes there even if a new
//! version is swapped in.

use crate::bindings::descriptor_api::{Dependency, Kv, Retrieved};
use crate::bindings::{Action, ItemStatus, Object, ReactorError};
use crate::call::host_state::HostState;
use crate::call::instance::{CallFuture, Exports};
use crate::error::CallError;
use crate::host::ObjectRef;
use crate::host::v0_1::recast;
use crate::load::described::{Described, DescriptorDescription, ReactorDescription};
use crate::load::loader::Loader;
use crate::serve::rollout_info::version_of;
use crate::serve::serving::Serving;
use crate::serve::shadow::ShadowStep;
use crate::world::World;
use reactor_core::component::ShadowOutcome;
use std::sync::Arc;
use wasmtime::Store;

/// What a reactor callback returned: the guest's own success or error.
pub type Reaction = Result<Action, ReactorError>;

/// Resolves the version in service of a component of `world`.
fn serving(loader: &Loader, name: &str, world: World) -> Result<Arc<Serving>, CallError> {
    let serving = loader
        .slots
        .get(name)
        .and_then(|slot| slot.current.load_full())
        .ok_or_else(|| CallError::NotLoaded(name.to_owned()))?;
    if serving.loaded.world != world {
        return Err(CallError::WrongWorld {
            name: name.to_owned(),
            world: serving.loaded.world,
        });
    }
    Ok(serving)
}

fn primary(obj: &Object) -> Option<ObjectRef> {
    Some(ObjectRef {
        kind: obj.kind.clone(),
        name: obj.name.clone(),
    })
}

/// Calls a controller component's `reactor` exports.
#[derive(Clone)]
pub struct ControllerHandle {
    pub(crate) loader: Arc<Loader>,
    pub(crate) name: String,
    /// Set by [`ControllerHandle::pin`]: every call runs on this version.
    pub(crate) pinned: Option<Arc<Serving>>,
    /// Set by [`ControllerHandle::shadow`]: the pinned version runs as a shadow.
    pub(crate) shadow: bool,
}

impl std::fmt::Debug for ControllerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerHandle")
            .field("name", &self.name)
            .finish()
    }
}

macro_rules! reactor_call {
    ($self:ident, $primary:expr, [$($arg:ident),*], |$guest:ident, $store:ident| $body:expr) => {{
        // The call future must own its arguments (it may outlive this frame's borrows).
        $(let $arg = $arg.to_owned();)*
        let serving = $self.resolve()?;
        serving
            .loaded
            .call_as(
                $primary,
                $self.shadow,
                |exports: &Exports, $store: &mut Store<HostState>| -> CallFuture<'_, _> {
                    Box::pin(async move {
                        match exports {
                            Exports::Controller($guest) => $body.await,
                            Exports::ControllerV0_1($guest) => {
                                $(let $arg = recast(&$arg).map_err(wasmtime::Error::msg)?;)*
                                let answer = $body.await?;
                                recast(&answer).map_err(wasmtime::Error::msg)
                            }
                            Exports::Descriptor(_) | Exports::DescriptorV0_1(_) => {
                                Err(wasmtime::format_err!("not a controller instance"))
                            }
                        }
                    })
                },
            )
            .await
    }};
}

impl ControllerHandle {
    /// The component name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pinned version, or else the one in service now.
    fn resolve(&self) -> Result<Arc<Serving>, CallError> {
        match &self.pinned {
            Some(serving) => Ok(serving.clone()),
            None => serving(&self.loader, &self.name, World::Controller),
        }
    }

    /// A handle whose calls all run on the version in service now, with that version as
    /// `components` shows it ([`version_of`]); `None` if none serves.
    pub fn pin(&self) -> Option<(ControllerHandle, String)> {
        let serving = self.resolve().ok()?;
        let version = version_of(&serving.loaded.sha256);
        let handle = ControllerHandle {
            loader: self.loader.clone(),
            name: self.name.clone(),
            pinned: Some(serving),
            shadow: false,
        };
        Some((handle, version))
    }

    /// A handle on the version held as a shadow beside the one serving (see
    /// `components.NAME.rollout.shadow`), with its sha256; `None` if none is. Its calls are
    /// marked as a shadow's, so the host keeps their writes apart and never commits them.
    pub fn shadow(&self) -> Option<(ControllerHandle, String)> {
        let slot = self.loader.slots.get(&self.name)?;
        let serving = slot.shadow.lock().as_ref()?.running()?;
        let sha256 = serving.loaded.sha256.clone();
        let handle = ControllerHandle {
            loader: self.loader.clone(),
            name: self.name.clone(),
            pinned: Some(serving),
            shadow: true,
        };
        Some((handle, sha256))
    }

    /// Counts how the shadow version `sha256` did on `object` against the serving version.
    /// Answers what follows: the shadow runs on, was promoted (it serves now), or was
    /// dropped (the rejection to record).
    pub async fn shadow_compared(
        &self,
        sha256: &str,
        object: &str,
        outcome: ShadowOutcome,
    ) -> ShadowStep {
        self.loader
            .shadow_compared(&self.name, sha256, object, outcome)
            .await
    }

    /// What the version in service said of itself when it was loaded (not a call).
    pub fn info(&self) -> Result<ReactorDescription, CallError> {
        match &self.resolve()?.described {
            Described::Controller(info) => Ok(info.clone()),
            Described::Descriptor(_) => Err(CallError::WrongWorld {
                name: self.name.clone(),
                world: World::Descriptor,
            }),
        }
    }

    /// `validate(obj)`: `Ok(Err(message))` is a refusal for the user.
    pub async fn validate(&self, obj: &Object) -> Result<Result<(), String>, CallError> {
        reactor_call!(self, None, [obj], |guest, store| guest
            .call_validate(store, &obj))
    }

    /// `on-create(obj)`, with `obj` as the primary object.
    pub async fn on_create(&self, obj: &Object) -> Result<Reaction, CallError> {
        reactor_call!(self, primary(&obj), [obj], |guest, store| guest
            .call_on_create(store, &obj))
    }

    /// `on-update(old, new)`, with `new` as the primary object.
    pub async fn on_update(&self, old: &Object, new: &Object) -> Result<Reaction, CallError> {
        reactor_call!(self, primary(&new), [old, new], |guest, store| guest
            .call_on_update(store, &old, &new))
    }

    /// `on-delete(obj)`, with `obj` as the primary object.
    pub async fn on_delete(&self, obj: &Object) -> Result<Reaction, CallError> {
        reactor_call!(self, primary(&obj), [obj], |guest, store| guest
            .call_on_delete(store, &obj))
    }

    /// `on-agent-status(owner, status)`, with `owner` as the primary object.
    pub async fn on_agent_status(
        &self,
        owner: &Object,
        status: &ItemStatus,
    ) -> Result<Reaction, CallError> {
        reactor_call!(self, primary(&owner), [owner, status], |guest, store| guest
            .call_on_agent_status(store, &owner, &status))
    }
}

/// Calls a descriptor component's `descriptor` exports.
#[derive(Clone)]
pub struct DescriptorHandle {
    pub(crate) loader: Arc<Loader>,
    pub(crate) name: String,
}

impl std::fmt::Debug for DescriptorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorHandle")
            .field("name", &self.name)
            .finish()
    }
}

macro_rules! descriptor_call {
    ($self:ident, [$($arg:ident),*], |$guest:ident, $store:ident| $body:expr) => {
        descriptor_call!($self, [$($arg),*] recast [], |$guest, $store| $body)
    };
    // `typed`: arguments of WIT types, carried across to an older version's.
    ($self:ident, [$($arg:ident),*] recast [$($typed:ident: $ty:ty),*], |$guest:ident, $store:ident| $body:expr) => {{
        // The call future must own its arguments (it may outlive this frame's borrows).
        $(let $arg = $arg.to_owned();)*
        $(let $typed = $typed.to_owned();)*
        let serving = serving(&$self.loader, &$self.name, World::Descriptor)?;
        serving
            .loaded
            .call(
                None,
                |exports: &Exports, $store: &mut Store<HostState>| -> CallFuture<'_, _> {
                    Box::pin(async move {
                        match exports {
                            Exports::Descriptor($guest) => $body.await,
                            Exports::DescriptorV0_1($guest) => {
                                $(let $typed: $ty = recast(&$typed).map_err(wasmtime::Error::msg)?;)*
                                let answer = $body.await?;
                                recast(&answer).map_err(wasmtime::Error::msg)
                            }
                            Exports::Controller(_) | Exports::ControllerV0_1(_) => {
                                Err(wasmtime::format_err!("not a descriptor instance"))
                            }
                        }
                    })
                },
            )
            .await
    }};
}

impl DescriptorHandle {
    /// The component name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the version in service said of itself when it was loaded (not a call).
    pub fn info(&self) -> Result<DescriptorDescription, CallError> {
        match &serving(&self.loader, &self.name, World::Descriptor)?.described {
            Described::Descriptor(info) => Ok(info.clone()),
            Described::Controller(_) => Err(CallError::WrongWorld {
                name: self.name.clone(),
                world: World::Controller,
            }),
        }
    }

    /// `validate(key, value)`.
    pub async fn validate(&self, key: &str, value: &str) -> Result<Result<(), String>, CallError> {
        descriptor_call!(self, [key, value], |guest, store| guest
            .call_validate(store, &key, &value))
    }

    /// `create(key, value)`: metadata to keep.
    pub async fn create(
        &self,
        key: &str,
        value: &str,
    ) -> Result<Result<Option<String>, String>, CallError> {
        descriptor_call!(self, [key, value], |guest, store| guest
            .call_create(store, &key, &value))
    }

    /// `update(key, old, new, metadata)`.
    pub async fn update(
        &self,
        key: &str,
        old_value: &str,
        new_value: &str,
        metadata: Option<&str>,
    ) -> Result<Result<Option<String>, String>, CallError> {
        let metadata = metadata.map(str::to_owned);
        descriptor_call!(self, [key, old_value, new_value], |guest, store| guest
            .call_update(store, &key, &old_value, &new_value, metadata.as_deref()))
    }

    /// `update-with-recreate(key, old, new, metadata)`.
    pub async fn update_with_recreate(
        &self,
        key: &str,
        old_value: &str,
        new_value: &str,
        metadata: Option<&str>,
    ) -> Result<bool, CallError> {
        let metadata = metadata.map(str::to_owned);
        descriptor_call!(self, [key, old_value, new_value], |guest, store| guest
            .call_update_with_recreate(
                store,
                &key,
                &old_value,
                &new_value,
                metadata.as_deref()
            ))
    }

    /// `delete(key, value, metadata)`.
    pub async fn delete(
        &self,
        key: &str,
        value: &str,
        metadata: Option<&str>,
    ) -> Result<Result<(), String>, CallError> {
        let metadata = metadata.map(str::to_owned);
        descriptor_call!(self, [key, value], |guest, store| guest.call_delete(
            store,
            &key,
            &value,
            metadata.as_deref()
        ))
    }

    /// `retrieve(correlate)`.
    pub async fn retrieve(
        &self,
        correlate: &[Kv],
    ) -> Result<Result<Vec<Retrieved>, String>, CallError> {
        descriptor_call!(self, [] recast [correlate: Vec<_>], |guest, store| guest
            .call_retrieve(store, &correlate))
    }

    /// `dependencies(key, value)`.
    pub async fn dependencies(&self, key: &str, value: &str) -> Result<Vec<Dependency>, CallError> {
        descriptor_call!(self, [key, value], |guest, store| guest
            .call_dependencies(store, &key, &value))
    }

    /// `derived-values(key, value)`.
    pub async fn derived_values(&self, key: &str, value: &str) -> Result<Vec<Kv>, CallError> {
        descriptor_call!(self, [key, value], |guest, store| guest
            .call_derived_values(store, &key, &value))
    }

    /// `is-retriable(error)`.
    pub async fn is_retriable(&self, error: &str) -> Result<bool, CallError> {
        descriptor_call!(self, [error], |guest, store| guest
            .call_is_retriable(store, &error))
    }
}
