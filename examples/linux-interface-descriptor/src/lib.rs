//! The `linux-interface` descriptor: host interfaces `linux/interface/host-name/<name>`, owned by the southbound and only retrieved.

use reactor_sdk::export_descriptor;
use southbound_files::{Family, Files, Owner, Parts};

/// Host OS interfaces, created by an administrator or another process as
/// `<southbound>/linux-interface/<name>.json`: `retrieve` reports them (from-southbound, so
/// DISCOVERED and never removed by resync), the agent is notified of them (OBTAINED), and
/// create, update and delete refuse.
pub struct HostInterfaces;

impl Family for HostInterfaces {
    const NAME: &'static str = "linux-interface";
    const PREFIX: &'static str = "linux/interface/host-name/";
    const FORM: &'static str = "linux/interface/host-name/<name>";
    const PARTS: Parts = Parts::Exactly(1);
    const OWNER: Owner = Owner::Southbound;
}

export_descriptor!(Files<HostInterfaces>);
