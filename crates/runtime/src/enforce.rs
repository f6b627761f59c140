//! The declared permissions in force for one version: every `store` and `nimbus` call is
//! checked against them, and a call outside them is refused with `denied` and counted.

use super::state::HostState;
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
    fn allows(&self, ask: Ask<'_>) -> bool {
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

impl HostState {
    /// `Ok` if the version's declaration (if any) allows `ask` through `import`; else the
    /// `denied` message, the refusal counted in `reactor_component_denied_calls_total`.
    /// Every `store` and `nimbus` call passes here: it is counted in the call's usage.
    pub(crate) fn permit(&mut self, import: &'static str, ask: Ask<'_>) -> Result<(), String> {
        self.usage.host_calls += 1;
        let Some(enforced) = &self.permissions else {
            return Ok(());
        };
        if enforced.allows(ask) {
            return Ok(());
        }
        metrics::counter!(
            reactor_core::metrics::COMPONENT_DENIED_CALLS,
            "component" => self.component.to_string(),
            "import" => import,
        )
        .increment(1);
        let what = match ask {
            Ask::Read(kind) => format!("reading kind {kind} (declare it in reads)"),
            Ask::Write(kind) => format!("writing kind {kind} (declare it in writes)"),
            Ask::Publish => "publishing to agents (declare publishes)".to_owned(),
        };
        let message = format!(
            "{import}: component {} did not declare {what}",
            self.component
        );
        tracing::debug!(component = %self.component, "refused: {message}");
        Err(message)
    }
}
