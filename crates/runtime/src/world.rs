//! The world a component targets (a type of reactor-core, where the API's clients read it).

pub use reactor_core::component::world::*;
