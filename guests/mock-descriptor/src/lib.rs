//! The WASM twin of the ported Ligato tests' mock descriptor: the very behaviour of the
//! native one (`testkit/src/kv/behaviour.rs`, compiled here by path), configured by the
//! component config (a `MockDescArgs` as JSON), over the mock southbound kept as
//! `/mock/southbound.json` in a folder the host grants to every mock descriptor.

#[path = "../../../testkit/src/kv/args.rs"]
#[allow(dead_code)]
mod args;
#[path = "../../../testkit/src/kv/behaviour.rs"]
mod behaviour;
#[path = "../../../testkit/src/kv/southbound.rs"]
#[allow(dead_code)]
mod southbound;

use args::{MockDescArgs, Target};
use reactor_sdk::{Dependency, DependencyTarget, Descriptor, Info, Kv, Origin, Retrieved};
use southbound::SouthboundState;

const STATE: &str = "/mock/southbound.json";

/// The args of this copy; a copy without a config has none and refuses every call.
fn config() -> Result<MockDescArgs, String> {
    match reactor_sdk::config::get::<MockDescArgs>() {
        Ok(Some(args)) => Ok(args),
        Ok(None) => Err("the mock descriptor has no config".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// Runs `call` on the southbound state read from its file, then writes the state back.
fn with_state<R>(call: impl FnOnce(&mut SouthboundState) -> R) -> Result<R, String> {
    let text = std::fs::read(STATE).map_err(|e| format!("read {STATE}: {e}"))?;
    let mut state: SouthboundState =
        serde_json::from_slice(&text).map_err(|e| format!("{STATE}: {e}"))?;
    let result = call(&mut state);
    let text = serde_json::to_vec(&state).map_err(|e| format!("{STATE}: {e}"))?;
    let partial = format!("{STATE}.partial");
    std::fs::write(&partial, text).map_err(|e| format!("write {partial}: {e}"))?;
    std::fs::rename(&partial, STATE).map_err(|e| format!("rename {partial}: {e}"))?;
    Ok(result)
}

fn parse(what: &str, text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))
}

struct Mock;

impl Descriptor for Mock {
    fn describe() -> Info {
        match config() {
            Ok(args) => Info {
                name: args.name,
                key_prefix: args.prefix,
                retrieve_dependencies: args.retrieve_dependencies,
            },
            // Not a valid descriptor name: loading a copy without config fails.
            Err(_) => Info::new("", "/"),
        }
    }

    fn validate(key: String, value: String) -> Result<(), String> {
        behaviour::validate(&config()?, &key, &parse("the value", &value)?)
    }

    fn create(key: String, value: String) -> Result<Option<String>, String> {
        let args = config()?;
        let value = parse("the value", &value)?;
        with_state(|sb| behaviour::create(&args, sb, &key, &value))?
    }

    fn update(
        key: String,
        old_value: String,
        new_value: String,
        metadata: Option<String>,
    ) -> Result<Option<String>, String> {
        let args = config()?;
        let old = parse("the old value", &old_value)?;
        let new = parse("the new value", &new_value)?;
        with_state(|sb| behaviour::update(&args, sb, &key, &old, &new, &metadata))?
    }

    fn update_with_recreate(
        key: String,
        _old_value: String,
        _new_value: String,
        _metadata: Option<String>,
    ) -> bool {
        config().is_ok_and(|args| behaviour::update_with_recreate(&args, &key))
    }

    fn delete(key: String, value: String, metadata: Option<String>) -> Result<(), String> {
        let args = config()?;
        let value = parse("the value", &value)?;
        with_state(|sb| behaviour::delete(&args, sb, &key, &value, &metadata))?
    }

    /// A descriptor that cannot retrieve (Ligato's `WithoutRetrieve`) says so with an error:
    /// the scheduler then keeps its belief, as for a native descriptor answering `None`.
    fn retrieve(correlate: Vec<Kv>) -> Result<Vec<Retrieved>, String> {
        let args = config()?;
        let keys: Vec<String> = correlate.into_iter().map(|kv| kv.key).collect();
        let found = with_state(|sb| behaviour::retrieve(&args, sb, &keys))?
            .ok_or_else(|| format!("descriptor {} cannot retrieve", args.name))?;
        Ok(found
            .into_iter()
            .map(|(key, v)| Retrieved {
                key,
                value: v.value.to_string(),
                metadata: v.metadata,
                origin: match v.origin {
                    southbound::Origin::FromNorthbound => Origin::FromNorthbound,
                    southbound::Origin::FromSouthbound => Origin::FromSouthbound,
                },
            })
            .collect())
    }

    fn dependencies(key: String, _value: String) -> Vec<Dependency> {
        let Ok(args) = config() else {
            return Vec::new();
        };
        behaviour::dependencies(&args, &key)
            .into_iter()
            .map(|d| Dependency {
                label: d.label,
                target: match d.target {
                    Target::Key(key) => DependencyTarget::Key(key),
                    Target::AnyOf(prefix) => DependencyTarget::AnyOf(prefix),
                },
            })
            .collect()
    }

    fn derived_values(key: String, value: String) -> Vec<Kv> {
        let (Ok(args), Ok(value)) = (config(), parse("the value", &value)) else {
            return Vec::new();
        };
        args.derived_values(&key, &value)
            .into_iter()
            .map(|(key, value)| Kv {
                key,
                value: value.to_string(),
            })
            .collect()
    }

    fn is_retriable(error: String) -> bool {
        config().is_ok_and(|args| behaviour::is_retriable(&args, &error))
    }
}

reactor_sdk::export_descriptor!(Mock);
