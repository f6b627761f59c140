//! What the mock descriptor (Ligato's `mockDescriptor`) does on each call: decided by its
//! [`MockDescArgs`], done on the [`SouthboundState`]. The native mock descriptor and its
//! WASM twin (`guests/mock-descriptor`, which compiles this file by path) both call these.

use super::args::{Dependency, Key, MockDescArgs};
use super::southbound::{MockOpType, SbValue, SouthboundState};
use serde_json::Value;

/// Notes a wrong call: the scenario checks that none was made.
fn check(sb: &mut SouthboundState, key: &str, ok: bool) {
    if !ok {
        sb.invalid.insert(key.to_owned());
    }
}

/// The value in the southbound must be the one the scheduler says it replaces.
fn check_current(sb: &mut SouthboundState, key: &str, value: &Value, metadata: &Option<String>) {
    let ok = sb
        .values
        .get(key)
        .is_some_and(|found| &found.value == value && &found.metadata == metadata);
    check(sb, key, ok);
}

fn check_mine(args: &MockDescArgs, sb: &mut SouthboundState, key: &str) {
    check(sb, key, key.starts_with(&args.prefix));
}

/// Refuses the values the args list as invalid.
pub fn validate(args: &MockDescArgs, key: &str, value: &Value) -> Result<(), String> {
    if args.invalid.get(key) == Some(value) {
        return Err("invalid value".to_owned());
    }
    Ok(())
}

/// Creates a value; a base value of a descriptor `with_metadata` gets the next index.
pub fn create(
    args: &MockDescArgs,
    sb: &mut SouthboundState,
    key: &str,
    value: &Value,
) -> Result<Option<String>, String> {
    check_mine(args, sb, key);
    let exists = sb.values.contains_key(key);
    check(sb, key, !exists);
    let index = *sb.next_index.get(&args.name).unwrap_or(&args.first_index);
    let metadata = (args.with_metadata && !args.is_derived_key(key)).then(|| index.to_string());
    sb.execute(
        (&args.name, args.version),
        MockOpType::Create,
        key,
        Some(value.clone()),
        metadata.clone(),
    )?;
    if metadata.is_some() {
        sb.next_index.insert(args.name.clone(), index + 1);
    }
    Ok(metadata)
}

/// Updates a value in place; the metadata stays.
pub fn update(
    args: &MockDescArgs,
    sb: &mut SouthboundState,
    key: &str,
    old: &Value,
    new: &Value,
    metadata: &Option<String>,
) -> Result<Option<String>, String> {
    check_mine(args, sb, key);
    check_current(sb, key, old, metadata);
    sb.execute(
        (&args.name, args.version),
        MockOpType::Update,
        key,
        Some(new.clone()),
        metadata.clone(),
    )?;
    Ok(metadata.clone())
}

pub fn delete(
    args: &MockDescArgs,
    sb: &mut SouthboundState,
    key: &str,
    value: &Value,
    metadata: &Option<String>,
) -> Result<(), String> {
    check_mine(args, sb, key);
    check_current(sb, key, value, metadata);
    sb.execute(
        (&args.name, args.version),
        MockOpType::Delete,
        key,
        None,
        None,
    )
}

/// The values under the descriptor's prefix, base values only unless `retrieve_derived`
/// (Ligato's contract); `None` when the descriptor cannot retrieve (`without_retrieve`).
pub fn retrieve(
    args: &MockDescArgs,
    sb: &mut SouthboundState,
    correlate: &[Key],
) -> Option<Vec<(Key, SbValue)>> {
    if args.without_retrieve {
        return None;
    }
    let found = sb
        .values
        .iter()
        .filter(|(k, _)| k.starts_with(args.prefix.as_str()))
        .filter(|(k, _)| args.retrieve_derived || !args.is_derived_key(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    sb.log_retrieve((&args.name, args.version), correlate);
    Some(found)
}

pub fn dependencies(args: &MockDescArgs, key: &str) -> Vec<Dependency> {
    args.dependencies.get(key).cloned().unwrap_or_default()
}

pub fn update_with_recreate(args: &MockDescArgs, key: &str) -> bool {
    args.recreate.iter().any(|k| k == key)
}

/// Whether an error is worth a retry: all but those the args list.
pub fn is_retriable(args: &MockDescArgs, error: &str) -> bool {
    !args.non_retriable.iter().any(|e| e == error)
}
