//! Echo reactor built four times: as `version-1` and `version-2`, which differ only in the
//! package name compiled in, so replacing one file by the other changes behaviour; as
//! `version-trap`, which traps in every `on-create` / `on-update` (a bad new version); and as
//! `version-loop`, which loops in them until the host stops it.

use reactor_sdk::{Action, Error, Info, Object, Reactor, Target, export_reactor, nimbus, store};
use std::sync::atomic::{AtomicU64, Ordering};

/// `version-1` or `version-2`.
const VERSION: &str = env!("CARGO_PKG_NAME");

/// Calls handled by this instance; shows whether the host reused it.
static CALLS: AtomicU64 = AtomicU64::new(0);

struct Versioned;

impl Reactor for Versioned {
    fn describe() -> Info {
        Info::new("versioned", ["Echo"]).resync_every_ms(30_000)
    }

    fn validate(obj: Object) -> Result<(), String> {
        let spec: serde_json::Value = obj.spec().map_err(|e| e.to_string())?;
        if spec.get("reject").and_then(|v| v.as_bool()) == Some(true) {
            return Err(format!("rejected by {VERSION}"));
        }
        Ok(())
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        if VERSION == "version-trap" {
            panic!("{VERSION} traps on {}/{}", obj.kind, obj.name);
        }
        if VERSION == "version-loop" {
            let mut spins: u64 = 0;
            while std::hint::black_box(spins) != u64::MAX {
                spins = spins.wrapping_add(1);
            }
        }
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        let spec: serde_json::Value = obj.spec()?;
        let config: Option<serde_json::Value> = reactor_sdk::config::get()?;
        reactor_sdk::info!("{VERSION} handling {}/{}", obj.kind, obj.name);
        nimbus::publish(&format!("echo/{}", obj.name), &spec, &Target::all())?;
        store::set_status(&serde_json::json!({
            "version": VERSION,
            "echo": spec,
            "config": config,
            "configRevision": reactor_sdk::config::revision(),
            "calls": calls,
        }))?;
        match spec.get("requeueMs").and_then(|v| v.as_u64()) {
            Some(ms) => Ok(Action::requeue_after_ms(ms)),
            None => Ok(Action::Done),
        }
    }

    fn on_delete(obj: Object) -> Result<Action, Error> {
        nimbus::unpublish(&format!("echo/{}", obj.name))?;
        Ok(Action::Done)
    }
}

export_reactor!(Versioned);
