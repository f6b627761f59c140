//! The permission check every `store` and `nimbus` call passes.
//!
//! Each call is checked against the version's declaration ([`crate::host::enforce`]) and
//! counted in the call's usage.

use crate::call::host_state::HostState;
use crate::host::enforce::Ask;

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
