//! The `vpp-route` descriptor: routes `vpp/route/<name>` as files, each waiting for its outgoing interface.

use reactor_sdk::{Dependency, export_descriptor};
use serde_json::Value;
use southbound_files::{Family, Files, Key, Parts, on_key, value};

/// Routes `{interface, dst, ...}`; `interface` is required.
pub struct Routes;

impl Family for Routes {
    const NAME: &'static str = "vpp-route";
    const PREFIX: &'static str = "vpp/route/";
    const FORM: &'static str = "vpp/route/<name>";
    const PARTS: Parts = Parts::AtLeast(1);
    const RETRIEVE_AFTER: &'static [&'static str] = &["vpp-interface"];

    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        match value::optional_name(key, value, "interface")? {
            Some(_) => Ok(()),
            None => Err(format!("{}: route has no outgoing interface", key.full)),
        }
    }

    fn dependencies(_key: &Key, value: &Value) -> Vec<Dependency> {
        value::text(value, "interface")
            .map(|name| on_key("outgoing-interface", format!("vpp/interface/{name}")))
            .into_iter()
            .collect()
    }
}

export_descriptor!(Files<Routes>);
