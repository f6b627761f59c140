//! The ported Ligato tests and the project's own scenarios, as one list run on every
//! harness.

mod datachange;
mod notification;
mod resync;
mod seed;

use super::scenario::Scenario;

pub(crate) const D1: &str = "descriptor1";
pub(crate) const D2: &str = "descriptor2";
pub(crate) const D3: &str = "descriptor3";
pub(crate) const PREFIX_A: &str = "/prefixA/";
pub(crate) const PREFIX_B: &str = "/prefixB/";
pub(crate) const PREFIX_C: &str = "/prefixC/";

/// Every scenario: Ligato's in the order of its files and tests, then the project's own.
pub fn all() -> Vec<Scenario> {
    let mut all = datachange::all();
    all.extend(resync::all());
    all.extend(notification::all());
    all.extend(seed::all());
    all
}

/// Calls `$mac!(name, name, ...)` with the name of every scenario of [`all`]: each harness
/// makes one test per scenario from it (their guard tests check none is missing).
#[macro_export]
macro_rules! foreach_ported {
    ($mac:ident) => {
        $mac!(
            data_change_transactions,
            data_change_transaction_with_revert,
            dependency_cycles,
            failed_delete_of_derived_value,
            failed_recreate_of_derived_value,
            empty_resync,
            resync_with_empty_sb,
            resync_with_empty_sb_retrieving_derived,
            resync_with_non_empty_sb,
            resync_with_non_empty_sb_retrieving_derived,
            resync_not_removing_sb_values,
            resync_with_multiple_descriptors,
            resync_with_retry,
            notifications,
            notifications_with_retry,
            dependant_waits_for_its_dependency,
            derived_value_waits_for_another_value,
            recreated_value_takes_its_dependant_down_and_back,
            any_of_dependency_loses_its_last_match,
            revert_of_new_values,
            invalid_and_unimplemented_values,
            obtained_and_managed_keys_are_refused,
            failed_create_retried_with_backoff,
            non_retriable_failure_stays_failed,
            newer_change_supersedes_a_scheduled_retry,
            downstream_resync_heals_drift,
            descriptor_registered_late_then_replaced,
        );
    };
}

/// The scenario called `name`; panics (a test fixture) when there is none.
pub fn named(name: &str) -> Scenario {
    all()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no ported scenario called {name}"))
}
