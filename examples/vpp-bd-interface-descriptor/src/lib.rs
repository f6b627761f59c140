//! The `vpp-bd-interface` descriptor: bindings `vpp/bd-interface/<bd>/<interface>` as files, each waiting for its interface.

use reactor_sdk::{Dependency, export_descriptor};
use serde_json::Value;
use southbound_files::{Family, Files, Key, Parts, on_key};

/// Derived by `vpp-bridge-domain`, value `{}`: creating one puts the interface into the
/// bridge domain, deleting it takes it out. The bridge domain, its parent, is an implicit
/// dependency.
pub struct BdInterfaces;

impl Family for BdInterfaces {
    const NAME: &'static str = "vpp-bd-interface";
    const PREFIX: &'static str = "vpp/bd-interface/";
    const FORM: &'static str = "vpp/bd-interface/<bridge-domain>/<interface>";
    const PARTS: Parts = Parts::Exactly(2);
    const RETRIEVE_AFTER: &'static [&'static str] = &["vpp-bridge-domain"];

    fn dependencies(key: &Key, _value: &Value) -> Vec<Dependency> {
        vec![on_key(
            "bd-interface",
            format!("vpp/interface/{}", key.last()),
        )]
    }
}

export_descriptor!(Files<BdInterfaces>);
