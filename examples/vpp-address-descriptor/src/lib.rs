//! The `vpp-address` descriptor: addresses `vpp/interface/address/<interface>/<ip>/<len>` derived from interfaces, as files.

use reactor_sdk::export_descriptor;
use southbound_files::{Family, Files, Parts};

/// One address assigned to an interface, value `{}`; derived by `vpp-interface`, whose
/// prefix `vpp/interface/` is shorter, so the registry gives these keys to this descriptor.
pub struct Addresses;

impl Family for Addresses {
    const NAME: &'static str = "vpp-address";
    const PREFIX: &'static str = "vpp/interface/address/";
    const FORM: &'static str = "vpp/interface/address/<interface>/<address>";
    const PARTS: Parts = Parts::AtLeast(2);
    const RETRIEVE_AFTER: &'static [&'static str] = &["vpp-interface"];
}

export_descriptor!(Files<Addresses>);
