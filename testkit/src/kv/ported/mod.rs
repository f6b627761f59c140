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

/// The scenario called `name`; panics (a test fixture) when there is none.
pub fn named(name: &str) -> Scenario {
    all()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no ported scenario called {name}"))
}
