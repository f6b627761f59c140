//! An owner's agents' reports handed to its reactor's `on-agent-status`, one round per report
//! run as a reconcile is (the owner from the cache, the callback's writes held, a lost race run
//! again at once, the same metrics and the reactor's status entry), whose one commit also
//! carries the owner's propagation roll-up.

use crate::commit::failure_text::FailureText;
use crate::commit::status::{self, CallbackFailure};
use crate::controller::parts::ControllerParts;
use crate::reactor::Failure;
use crate::run::runner::{self, Callback, NotCommitted};
use reactor_core::object::{Object, ObjectKey, Selector};
use reactor_nimbus as nimbus;
use reactor_nimbus::{AGENT_KIND, AgentReport, ITEM_KIND, Item, Sheet};
use reactor_store::update_status;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tracing::Instrument;

/// Works the reactor's queue of owners with reports until it shuts down.
pub async fn work(controller: &ControllerParts) {
    while let Some(owner) = controller.relay.next().await {
        let span = tracing::info_span!("agent-status", component = %controller.info.name, kind = %owner.kind(), name = %owner.name());
        deliver(controller, &owner).instrument(span).await;
        controller.relay.done(&owner);
    }
}

/// How one report's round ended.
enum Round {
    /// Committed, or failed for good (the status entry says so): on to the next report.
    Delivered,
    /// The owner is gone or going: its reports are dropped.
    Gone,
    /// It failed and may succeed later: it and the rest go back, after a backoff.
    Retry(String),
}

/// Hands `owner`'s waiting reports to `on-agent-status`, one round each, under its lock; an
/// owner with none gets its roll-up alone.
async fn deliver(controller: &ControllerParts, owner: &ObjectKey) {
    if !controller.context.locks.owns(owner) {
        controller.relay.drop_owner(owner);
        return;
    }
    let Some(_guard) = controller.context.locks.try_lock(owner) else {
        controller
            .relay
            .again_after(owner, controller.options.lock_retry);
        return;
    };
    let (batch, failed) = controller.relay.take(owner);
    crate::events::hooks::agent_reports(
        &controller.context,
        &controller.info.name,
        owner,
        failed.values(),
    );
    let mut roll_up = RollUp::read(controller, owner).await;
    if batch.is_empty() {
        if let Some(object) = cached_owner(controller, owner).await {
            host_write(controller, owner, &object, None, &mut roll_up).await;
        }
        controller.relay.delivered(owner);
        return;
    }
    let mut reports = batch.into_iter();
    while let Some(report) = reports.next() {
        match round(controller, owner, &report, &mut roll_up).await {
            Round::Delivered => {}
            Round::Gone => break,
            Round::Retry(message) => {
                let text = FailureText::new(&message);
                text.log(&controller.info.name, owner);
                let rest = std::iter::once(report).chain(reports);
                let (delay, attempts) = controller.relay.retry_later(owner, rest);
                tracing::debug!(reactor = %controller.info.name, object = %owner, attempts, ?delay, error = text.line, "on-agent-status will retry");
                let next = std::time::SystemTime::now() + delay;
                let failure = CallbackFailure {
                    attempts,
                    message: text.line.clone(),
                    permanent: false,
                    next_retry: Some(humantime::format_rfc3339_millis(next).to_string()),
                };
                if let Some(object) = cached_owner(controller, owner).await {
                    host_write(controller, owner, &object, Some(&failure), &mut roll_up).await;
                }
                let message = format!("{}: {}", Callback::AgentStatus.name(), text.whole());
                crate::events::hooks::retrying(
                    &controller.context,
                    &controller.info.name,
                    owner,
                    &message,
                );
                return;
            }
        }
    }
    controller.relay.delivered(owner);
}

/// The owner as the cache holds it once it shows this controller's last commit, or the
/// store's if the cache holds none; `None` when it is gone or going.
async fn cached_owner(controller: &ControllerParts, owner: &ObjectKey) -> Option<Arc<Object>> {
    let cached = match controller.reflectors.get(owner.kind()) {
        Some(reflector) => {
            runner::catch_up(controller, owner, reflector).await;
            reflector.get(owner.name())
        }
        None => None,
    };
    let current = match cached {
        Some(object) => Some(object),
        None => match controller
            .context
            .store
            .get(owner.kind(), owner.name())
            .await
        {
            Ok(object) => object.map(Arc::new),
            Err(e) => {
                tracing::debug!(object = %owner, error = %e, "cannot read the owner");
                None
            }
        },
    };
    current.filter(|o| !o.meta.deleting)
}

/// Hands `report` to `on-agent-status` on `owner` as the caches show it, and commits what it
/// wrote with the owner's roll-up in one transaction; a lost race runs it again at once on
/// the store's state.
async fn round(
    controller: &ControllerParts,
    owner: &ObjectKey,
    report: &AgentReport,
    roll_up: &mut Option<RollUp>,
) -> Round {
    let current = cached_owner(controller, owner).await;
    let mut attempts = runner::Attempts::new(controller, owner, Callback::AgentStatus, current);
    loop {
        let (current, cached) = match attempts.next().await {
            Ok(next) => next,
            Err(message) => return Round::Retry(message),
        };
        match call(controller, owner, report, roll_up, current, cached).await {
            Ok(round) => return round,
            Err(lost) => attempts.lost(lost),
        }
    }
}

/// One attempt of `report`'s round on `current`; `Err` with why its commit lost a race.
async fn call(
    controller: &ControllerParts,
    owner: &ObjectKey,
    report: &AgentReport,
    roll_up: &mut Option<RollUp>,
    current: Option<Arc<Object>>,
    cached: bool,
) -> Result<Round, String> {
    let name = controller.info.name.as_str();
    let Some(object) = current.filter(|o| !o.meta.deleting) else {
        return Ok(Round::Gone);
    };
    let pending = runner::pending(controller, owner, Some(&object), cached);
    let started = std::time::Instant::now();
    let reaction = {
        let _open = controller
            .context
            .callbacks
            .open(name, owner, pending.clone());
        controller.reactor().on_agent_status(&object, report).await
    };
    // A callback refused a write for its limit fails for good, whatever it returned.
    let reaction = match pending.over_limit() {
        Some(message) => Err(Failure::Permanent(message)),
        None => reaction,
    };
    runner::record_time(
        controller,
        Callback::AgentStatus,
        started.elapsed().as_secs_f64(),
    );
    let result = runner::result_of(&reaction);
    // Only a call that succeeded commits what it wrote: a failed one (an error, a write over
    // its limit, a crash) leaves nothing, and the host writes its own part alone.
    let landed = match reaction {
        Ok(_) => {
            let rolled = rolled(roll_up, &object);
            let host_part = |s: &Value| host_status(s, name, None, rolled.as_ref());
            match update_status(pending.as_ref(), owner.kind(), owner.name(), host_part).await {
                Ok(_) => {
                    match runner::commit(controller, owner, Callback::AgentStatus, &pending).await {
                        Ok(()) => Ok(()),
                        Err(NotCommitted::Conflict(message)) => return Err(message),
                        Err(NotCommitted::TooLarge(message)) => Err(Failure::Permanent(message)),
                        Err(NotCommitted::Failed(message)) => Err(Failure::Retry(message)),
                    }
                }
                Err(e) => Err(Failure::Retry(format!("cannot write the status: {e}"))),
            }
        }
        Err(failure) => Err(failure),
    };
    // A call whose commit lost a race left nothing: the one that runs again counts instead.
    runner::record_result(controller, Callback::AgentStatus, result);
    Ok(match landed {
        Ok(()) => Round::Delivered,
        Err(Failure::Retry(message) | Failure::Crashed(message)) => Round::Retry(message),
        Err(Failure::Permanent(message)) => {
            permanent(controller, owner, &object, report, message, roll_up).await;
            Round::Delivered
        }
    })
}

/// `report`'s call failed for good: the owner's entry and an event say so, and the round
/// goes on to the next report.
async fn permanent(
    controller: &ControllerParts,
    owner: &ObjectKey,
    object: &Object,
    report: &AgentReport,
    message: String,
    roll_up: &mut Option<RollUp>,
) {
    let text = FailureText::new(&message);
    text.log(&controller.info.name, owner);
    tracing::warn!(reactor = %controller.info.name, object = %owner, agent = %report.agent, error = %text.line, "on-agent-status failed for good");
    let failure = CallbackFailure {
        attempts: 1,
        message: text.line.clone(),
        permanent: true,
        next_retry: None,
    };
    host_write(controller, owner, object, Some(&failure), roll_up).await;
    let message = format!("{}: {}", Callback::AgentStatus.name(), text.whole());
    crate::events::hooks::permanent(&controller.context, &controller.info.name, owner, &message);
}

/// `status` with the host's part of a round: the reactor's entry after the call (`failure`,
/// or a success) and the roll-up, if there is one.
fn host_status(
    status: &Value,
    reactor: &str,
    failure: Option<&CallbackFailure>,
    rolled: Option<&Value>,
) -> Value {
    let status =
        status::with_callback_outcome(status, reactor, Callback::AgentStatus.name(), failure);
    match rolled {
        Some(rolled) => status::with_propagation(&status, rolled),
        None => status,
    }
}

/// Writes the host's part of a round alone (no call ran, or it failed): the entry shows
/// `failure` and the roll-up is `object`'s, in one write.
async fn host_write(
    controller: &ControllerParts,
    owner: &ObjectKey,
    object: &Object,
    failure: Option<&CallbackFailure>,
    roll_up: &mut Option<RollUp>,
) {
    let rolled = rolled(roll_up, object);
    let name = controller.info.name.as_str();
    let host_part = |s: &Value| match failure {
        Some(failure) => host_status(s, name, Some(failure), rolled.as_ref()),
        // No call ran: the entry stays as it is.
        None => rolled
            .as_ref()
            .map_or(s.clone(), |r| status::with_propagation(s, r)),
    };
    let store = controller.context.store.as_ref();
    match update_status(store, owner.kind(), owner.name(), host_part).await {
        // The next round reads the owner once the cache shows this write.
        Ok(Some(written)) => controller.keys.committed(
            owner,
            std::iter::once((owner.kind(), written.meta.revision)),
        ),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(reactor = %name, object = %owner, error = %e, "cannot write the status of on-agent-status");
        }
    }
}

/// The roll-up of `object`'s propagation as JSON, if the engine keeps the caches for it.
fn rolled(roll_up: &mut Option<RollUp>, object: &Object) -> Option<Value> {
    roll_up.as_mut().map(|r| r.of(object))
}

/// What an owner's propagation is rolled up from, read once per batch of reports: its items
/// (from the cache, once that shows what the owner's last commit published), the agents'
/// report sheets on it, and the agents.
struct RollUp {
    items: Vec<(Arc<Object>, Item)>,
    sheets: BTreeMap<String, Sheet>,
    agents: Vec<Arc<Object>>,
    /// The last roll-up, with the owner's generation it was made for.
    last: Option<(u64, Value)>,
}

impl RollUp {
    /// `None` when the engine keeps no caches of items and agents.
    async fn read(controller: &ControllerParts, owner: &ObjectKey) -> Option<Self> {
        let reflectors = &controller.context.reflectors;
        let (items, agents) = (
            reflectors.acquire(ITEM_KIND)?,
            reflectors.acquire(AGENT_KIND)?,
        );
        runner::catch_up(controller, owner, &items).await;
        let selector = nimbus::owner_selector(owner.kind(), owner.name());
        let items = (items.list(&selector).into_iter())
            .filter_map(|o| Item::from_object(&o).map(|i| (o, i)))
            .collect();
        controller.context.reports.synced().await;
        Some(Self {
            items,
            sheets: controller.context.reports.sheets_of(owner),
            agents: agents.list(&Selector::default()),
            last: None,
        })
    }

    /// The propagation of `owner`, as `status.propagation` holds it.
    fn of(&mut self, owner: &Object) -> Value {
        if let Some((generation, value)) = &self.last
            && *generation == owner.meta.generation
        {
            return value.clone();
        }
        let rolled = nimbus::propagation(owner, &self.items, &self.sheets, &self.agents);
        let value = serde_json::to_value(rolled).unwrap_or_default();
        self.last = Some((owner.meta.generation, value.clone()));
        value
    }
}
