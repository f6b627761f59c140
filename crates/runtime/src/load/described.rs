//! What a component said of itself in `describe()`, in the host's own types.
//!
//! Converted from the generated WIT types once, at load, so that nothing past the runtime (the
//! engine, the agent, the HTTP API) depends on the WIT's shape.

use crate::bindings::{descriptor_api, reactor_api, v0_1};

pub use reactor_core::component::described::*;

impl From<reactor_api::Info> for ReactorDescription {
    fn from(info: reactor_api::Info) -> Self {
        Self {
            name: info.name,
            kinds: info.kinds,
            resync_period_ms: info.resync_period_ms,
            handles_delete: info.handles_delete,
            watches: info.watches.into_iter().map(Watch::from).collect(),
        }
    }
}

impl From<reactor_api::Watch> for Watch {
    fn from(watch: reactor_api::Watch) -> Self {
        match watch {
            reactor_api::Watch::Owns(kind) => Watch::Owns { kind },
            reactor_api::Watch::References(r) => Watch::References {
                kind: r.kind,
                path: r.path,
            },
            reactor_api::Watch::Selects(s) => Watch::Selects {
                kind: s.kind,
                path: s.path,
            },
        }
    }
}

impl From<v0_1::reactor_api::Info> for ReactorDescription {
    fn from(info: v0_1::reactor_api::Info) -> Self {
        Self {
            name: info.name,
            kinds: info.kinds,
            resync_period_ms: info.resync_period_ms,
            handles_delete: info.handles_delete,
            watches: Vec::new(),
        }
    }
}

impl From<v0_1::descriptor_api::Info> for DescriptorDescription {
    fn from(info: v0_1::descriptor_api::Info) -> Self {
        Self {
            name: info.name,
            key_prefix: info.key_prefix,
            retrieve_dependencies: info.retrieve_dependencies,
        }
    }
}

impl From<descriptor_api::Info> for DescriptorDescription {
    fn from(info: descriptor_api::Info) -> Self {
        Self {
            name: info.name,
            key_prefix: info.key_prefix,
            retrieve_dependencies: info.retrieve_dependencies,
        }
    }
}
