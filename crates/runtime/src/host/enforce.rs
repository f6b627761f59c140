//! The declared permissions in force for one version.
//!
//! Every `store` and `nimbus` call is checked against them, and a call outside them is refused
//! with `denied` and counted.

use reactor_core::component::Permissions;
use std::collections::BTreeSet;

/// A version's declaration and the kinds it reconciles (which it may always read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Enforced {
    pub(crate) declared: Permissions,
    /// The kinds of its `describe`: read and status-set without declaring them.
    pub(crate) own: BTreeSet<String>,
}

/// What a guest asks of an import.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ask<'a> {
    Read(&'a str),
    Write(&'a str),
    Publish,
}

impl Enforced {
    pub(crate) fn allows(&self, ask: Ask<'_>) -> bool {
        match ask {
            Ask::Read(kind) => self.own.contains(kind) || self.declared.reads.contains(kind),
            Ask::Write(kind) => self.declared.writes.contains(kind),
            Ask::Publish => self.declared.publishes,
        }
    }

    /// Whether the config may grant the guest folder `guest`.
    pub(crate) fn grants(&self, guest: &str) -> bool {
        self.declared.wasi.contains(guest)
    }
}
