//! The `vpp-bridge-domain` descriptor: bridge domains `vpp/bd/<name>` as files, deriving one binding per interface.

use reactor_sdk::export_descriptor;
use serde_json::{Value, json};
use southbound_files::{Family, Files, Key, Parts, value};

/// Bridge domains `{interfaces: [<interface>, ...]}`; a bridge domain has no dependencies,
/// its bindings (`vpp-bd-interface`) wait for their interfaces.
pub struct BridgeDomains;

impl Family for BridgeDomains {
    const NAME: &'static str = "vpp-bridge-domain";
    const PREFIX: &'static str = "vpp/bd/";
    const FORM: &'static str = "vpp/bd/<name>";
    const PARTS: Parts = Parts::Exactly(1);

    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        value::name_list(key, value, "interfaces").map(|_| ())
    }

    /// `vpp/bd-interface/<bd>/<interface>` = `{}` for each of `interfaces`.
    fn derived_values(key: &Key, value: &Value) -> Vec<(String, Value)> {
        let bd = key.first();
        value::texts(value, "interfaces")
            .into_iter()
            .map(|member| (format!("vpp/bd-interface/{bd}/{member}"), json!({})))
            .collect()
    }
}

export_descriptor!(Files<BridgeDomains>);
