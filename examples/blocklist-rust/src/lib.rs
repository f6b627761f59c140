//! The Blocklist reactor: one Nimbus item per address of a list too long for one callback,
//! published a batch per run over requeues, with its progress kept in the object's status.
//!
//! One callback's writes commit in one transaction, and the host caps how many it may make
//! (`serve --max-callback-writes`, 1000 by default): a callback over the cap fails and keeps
//! none of them. So each run publishes at most `batch` items (the component config's `batch`,
//! default 100), records how far it got in `status.published` and asks to run again
//! (`requeue-after`); the next run goes on from there. A changed spec (a new generation)
//! starts over: the items already right cost nothing, the host counts only writes that change
//! something. Items whose address left the list are withdrawn once the list is published.

use reactor_sdk::{
    Action, Error, Info, Object, Reactor, Target, config, export_reactor, nimbus, store,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

const NAME: &str = "blocklist-rust";
/// Items per run unless the component config says otherwise: under the host's cap of writes
/// per callback on either store (1000 embedded; etcd's 128 operations less 2 on etcd).
const DEFAULT_BATCH: usize = 100;
/// The pause between two runs of one list.
const AGAIN_MS: u64 = 10;

#[derive(Debug, Deserialize)]
struct Spec {
    #[serde(default)]
    selector: BTreeMap<String, String>,
    #[serde(default)]
    addresses: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Config {
    /// The most writes one run makes, its status included: keep it at most the host's
    /// `--max-callback-writes`.
    batch: Option<usize>,
}

/// What the reactor keeps in the status: how far publishing the list of `generation` got.
#[derive(Debug, Default, Deserialize, Serialize)]
struct Progress {
    generation: u64,
    /// Addresses published so far, in the spec's order.
    published: usize,
    total: usize,
    /// Every address published and every stale item withdrawn.
    complete: bool,
}

fn prefix(list: &str) -> String {
    format!("blocklist/{list}/")
}

/// Item keys take letters, digits and `-_./:`: IPv4 and IPv6 addresses and prefixes do.
fn valid_address(address: &str) -> bool {
    !address.is_empty()
        && address.len() <= 256
        && (address.chars()).all(|c| c.is_ascii_alphanumeric() || "-_./:".contains(c))
}

/// Publishes the next addresses of the list, then withdraws the stale items, within `batch`
/// writes, and records the progress.
fn sync(obj: &Object) -> Result<Action, Error> {
    let spec: Spec = obj.spec()?;
    let config: Config = config::get()?.unwrap_or_default();
    // One write of the run is its status.
    let mut budget = config.batch.unwrap_or(DEFAULT_BATCH).max(2) - 1;
    let generation = obj.generation();
    let mut progress = match obj.status::<Progress>() {
        Ok(Some(progress)) if progress.generation == generation => progress,
        _ => Progress {
            generation,
            ..Progress::default()
        },
    };
    let prefix = prefix(&obj.name);
    let to = Target::labels(&spec.selector);
    progress.total = spec.addresses.len();
    for address in spec.addresses.iter().skip(progress.published).take(budget) {
        nimbus::publish(&format!("{prefix}{address}"), address, &to)?;
        progress.published += 1;
        budget -= 1;
    }
    let mut stale_left = false;
    if progress.published >= progress.total {
        let wanted: HashSet<String> = (spec.addresses.iter())
            .map(|address| format!("{prefix}{address}"))
            .collect();
        // An unpublish also rewrites the report of each agent that reported on the item.
        let mut reports: HashMap<String, usize> = HashMap::new();
        for status in nimbus::statuses(&prefix)? {
            *reports.entry(status.key).or_default() += 1;
        }
        for key in nimbus::published(&prefix)? {
            if wanted.contains(&key) {
                continue;
            }
            let cost = 1 + reports.get(&key).copied().unwrap_or(0);
            if cost > budget {
                stale_left = true;
                break;
            }
            nimbus::unpublish(&key)?;
            budget -= cost;
        }
    }
    progress.complete = progress.published >= progress.total && !stale_left;
    store::set_status(&progress)?;
    if progress.complete {
        reactor_sdk::info!(
            "blocklist {} published {} addresses",
            obj.name,
            progress.total
        );
        return Ok(Action::Done);
    }
    Ok(Action::requeue_after_ms(AGAIN_MS))
}

struct Blocklist;

impl Reactor for Blocklist {
    fn describe() -> Info {
        Info::new(NAME, ["Blocklist"])
    }

    fn validate(obj: Object) -> Result<(), String> {
        let spec: Spec = obj
            .spec()
            .map_err(|e| format!("invalid blocklist spec: {e}"))?;
        match spec.addresses.iter().find(|a| !valid_address(a)) {
            Some(bad) => Err(format!("address {bad:?} is not an address or prefix")),
            None => Ok(()),
        }
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        sync(&obj)
    }

    fn on_update(_old: Object, new: Object) -> Result<Action, Error> {
        sync(&new)
    }

    /// The host withdraws the items of a deleted list itself.
    fn on_delete(_obj: Object) -> Result<Action, Error> {
        Ok(Action::Done)
    }
}

export_reactor!(Blocklist);
