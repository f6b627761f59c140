//! Where the engine's work records events: the outcomes of runs and agents' failed items.

use crate::engine::context::EngineContext;
use crate::events::EventType;
use reactor_core::object::ObjectKey;
use reactor_nimbus::{AgentReport, ReportState};

/// A run failed and will be retried.
pub fn retrying(context: &EngineContext, reactor: &str, key: &ObjectKey, message: &str) {
    context
        .events
        .record(key, EventType::Warning, "ReconcileError", reactor, message);
}

/// A run failed for good: nothing runs again until the object changes.
pub fn permanent(context: &EngineContext, reactor: &str, key: &ObjectKey, message: &str) {
    context.events.record(
        key,
        EventType::Warning,
        "PermanentFailure",
        reactor,
        message,
    );
}

/// A run succeeded; after `failures` failed ones, that is worth an event.
pub fn succeeded(context: &EngineContext, reactor: &str, key: &ObjectKey, failures: u32) {
    if failures == 0 {
        return;
    }
    let s = if failures == 1 { "" } else { "s" };
    context.events.record(
        key,
        EventType::Normal,
        "Reconciled",
        reactor,
        &format!("succeeded after {failures} failed attempt{s}"),
    );
}

/// Agents' reports on `owner`'s items: each failed item is an event of the owner.
pub fn agent_reports<'a>(
    context: &EngineContext,
    reactor: &str,
    owner: &ObjectKey,
    reports: impl IntoIterator<Item = &'a AgentReport>,
) {
    for report in reports {
        if report.state != ReportState::Failed {
            continue;
        }
        let reason = report.message.as_deref().unwrap_or("no reason given");
        context.events.record(
            owner,
            EventType::Warning,
            "AgentFailed",
            reactor,
            &format!(
                "agent {} failed item {}: {reason}",
                report.agent, report.key
            ),
        );
    }
}
