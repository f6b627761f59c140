//! The `vpp-interface` descriptor: interfaces `vpp/interface/<name>` as files, deriving their addresses and unnumbered binding.

use reactor_sdk::{Dependency, export_descriptor};
use serde_json::{Value, json};
use southbound_files::{Family, Files, Key, Parts, on_key, value};

/// VPP interfaces: `{type, rx_ring, addresses: [ip/len], unnumbered: <interface>,
/// host_if: <host interface>}`, every field optional.
pub struct Interfaces;

impl Family for Interfaces {
    const NAME: &'static str = "vpp-interface";
    const PREFIX: &'static str = "vpp/interface/";
    const FORM: &'static str = "vpp/interface/<name>";
    const PARTS: Parts = Parts::Exactly(1);
    const RETRIEVE_AFTER: &'static [&'static str] = &["linux-interface"];

    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        value::optional_text(key, value, "type")?;
        value::optional_count(key, value, "rx_ring")?;
        value::path_list(key, value, "addresses")?;
        value::optional_name(key, value, "unnumbered")?;
        value::optional_name(key, value, "host_if")?;
        Ok(())
    }

    /// An AF-Packet interface (`host_if`) waits for its host interface, which the agent
    /// does not configure: it is notified (OBTAINED) or retrieved (DISCOVERED).
    fn dependencies(_key: &Key, value: &Value) -> Vec<Dependency> {
        value::text(value, "host_if")
            .map(|host| {
                on_key(
                    "host-interface",
                    format!("linux/interface/host-name/{host}"),
                )
            })
            .into_iter()
            .collect()
    }

    /// `vpp/interface/address/<name>/<ip>` = `{}` for each address, and
    /// `vpp/unnumbered/<name>` = `{"borrow": <interface>}` when unnumbered.
    fn derived_values(key: &Key, value: &Value) -> Vec<(String, Value)> {
        let name = key.first();
        let mut derived: Vec<(String, Value)> = value::texts(value, "addresses")
            .into_iter()
            .map(|ip| (format!("vpp/interface/address/{name}/{ip}"), json!({})))
            .collect();
        if let Some(from) = value::text(value, "unnumbered") {
            derived.push((format!("vpp/unnumbered/{name}"), json!({ "borrow": from })));
        }
        derived
    }

    /// The type and the rx ring size cannot change in place.
    fn update_with_recreate(_key: &Key, old: &Value, new: &Value) -> bool {
        old.get("type") != new.get("type") || old.get("rx_ring") != new.get("rx_ring")
    }
}

export_descriptor!(Files<Interfaces>);
