//! One linker per world, with that world's imports and WASI.
//!
//! A component is linked only against its own world's imports plus WASI (whose capabilities
//! each store grants or not).

use crate::bindings::reactor::host::{config, log, nimbus, store, types};
use crate::bindings::v0_1::reactor::host as v0_1;
use crate::call::host_state::HostState;
use crate::{RuntimeError, World};
use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker};

/// Builds the linker for components of `world`.
pub(crate) fn linker(engine: &Engine, world: World) -> Result<Linker<HostState>, RuntimeError> {
    let mut linker = Linker::new(engine);
    let err = |e: wasmtime::Error| RuntimeError::Engine(format!("link the {world} imports: {e}"));
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(err)?;
    types::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    log::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    config::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    if world == World::Controller {
        store::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
        nimbus::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    }
    // Components built against 0.1.0 import the same interfaces under their old names.
    v0_1::types::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    v0_1::log::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    v0_1::config::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    if world == World::Controller {
        v0_1::store::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
        v0_1::nimbus::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s).map_err(err)?;
    }
    Ok(linker)
}
