//! The `policy-rule` descriptor (the agent side of the Policy example): each rule item `policy/<policy>/<rule>` is the file `/<policy>/<rule>.json`.

use reactor_sdk::export_descriptor;
use serde_json::Value;
use southbound_files::{Family, Files, Key, Parts, value};

/// The rules the Policy reactors publish, values `{name, action}`.
pub struct PolicyRules;

impl Family for PolicyRules {
    const NAME: &'static str = "policy-rule";
    const PREFIX: &'static str = "policy/";
    const FORM: &'static str = "policy/<policy>/<rule>";
    const PARTS: Parts = Parts::Exactly(2);

    fn validate(key: &Key, value: &Value) -> Result<(), String> {
        match value::optional_text(key, value, "action") {
            Ok(Some(_)) => Ok(()),
            _ => Err(format!("{}: rule has no action (a text)", key.full)),
        }
    }
}

export_descriptor!(Files<PolicyRules>);
