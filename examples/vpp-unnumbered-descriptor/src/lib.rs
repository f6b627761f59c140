//! The `vpp-unnumbered` descriptor: `vpp/unnumbered/<interface>` borrows any address of another interface once one exists.

use reactor_sdk::{Dependency, export_descriptor};
use serde_json::Value;
use southbound_files::{Family, Files, Key, Parts, any_of, value};

/// Derived by `vpp-interface` from `unnumbered`, value `{"borrow": <interface>}`.
pub struct Unnumbered;

impl Family for Unnumbered {
    const NAME: &'static str = "vpp-unnumbered";
    const PREFIX: &'static str = "vpp/unnumbered/";
    const FORM: &'static str = "vpp/unnumbered/<interface>";
    const PARTS: Parts = Parts::Exactly(1);
    const RETRIEVE_AFTER: &'static [&'static str] = &["vpp-address"];

    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        match value::optional_name(key, value, "borrow")? {
            Some(_) => Ok(()),
            None => Err(format!("{}: borrow must name an interface", key.full)),
        }
    }

    /// Any address of the lending interface (Ligato's `AnyOf`).
    fn dependencies(_key: &Key, value: &Value) -> Vec<Dependency> {
        value::text(value, "borrow")
            .map(|from| any_of("borrowed-ip", format!("vpp/interface/address/{from}/")))
            .into_iter()
            .collect()
    }
}

export_descriptor!(Files<Unnumbered>);
