//! A reactor whose `describe()` traps: loading it must fail and leave the old version.

use reactor_sdk::{Info, Reactor, export_reactor};

struct BadDescribe;

impl Reactor for BadDescribe {
    fn describe() -> Info {
        panic!("bad-describe cannot describe itself")
    }
}

export_reactor!(BadDescribe);
