//! Secondary watches: what mapping one change of a referenced object (a Plan) to the
//! reactor's objects (Tenants naming it) costs with the host's index, against listing every
//! Tenant and reading its field (what a map function without an index does), in the same run.
//! 100k Tenants; the Plan changed is named by 10 of them, or by 10k.

use crate::report::{Scenario, Target};
use crate::scenarios::Rows;
use reactor_host::controller::NameIndex;
use reactor_host::object::ObjectKey;
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Instant;

const PRIMARIES: usize = 100_000;
/// Plan changes measured per case (each a different Plan).
const EVENTS: usize = 200;

struct Case {
    /// Tenants naming each Plan.
    mapped: usize,
    index_us: f64,
    listing_us: f64,
}

fn measure(mapped: usize) -> Case {
    let plans = PRIMARIES / mapped;
    let tenants: Vec<(ObjectKey, Value)> = (0..PRIMARIES)
        .map(|i| {
            (
                ObjectKey::new("Tenant", &format!("t{i}")),
                json!({"plan": format!("plan-{}", i % plans)}),
            )
        })
        .collect();
    let mut index = NameIndex::default();
    for (key, spec) in &tenants {
        let plan = spec["plan"].as_str().unwrap_or_default().to_owned();
        index.set(key, vec![plan]);
    }
    let changed: Vec<String> = (0..EVENTS).map(|e| format!("plan-{}", e % plans)).collect();

    let started = Instant::now();
    for plan in &changed {
        let keys: Vec<&ObjectKey> = index.naming(plan).collect();
        assert_eq!(keys.len(), mapped);
        black_box(keys);
    }
    let index_us = started.elapsed().as_secs_f64() * 1e6 / EVENTS as f64;

    let started = Instant::now();
    for plan in &changed {
        let keys: Vec<&ObjectKey> = tenants
            .iter()
            .filter(|(_, spec)| spec["plan"].as_str() == Some(plan))
            .map(|(key, _)| key)
            .collect();
        assert_eq!(keys.len(), mapped);
        black_box(keys);
    }
    let listing_us = started.elapsed().as_secs_f64() * 1e6 / EVENTS as f64;
    Case {
        mapped,
        index_us,
        listing_us,
    }
}

pub async fn rows() -> anyhow::Result<Rows> {
    let cases = [measure(10), measure(10_000)];
    let mut rows = Vec::new();
    for case in &cases {
        rows.push(Scenario::measured(
            "watches",
            &format!(
                "one Plan change mapped to the {} Tenants naming it, of 100k (µs per change)",
                case.mapped
            ),
            case.index_us,
            (
                "listing all 100k Tenants and reading spec.plan, same run",
                Some(case.listing_us),
            ),
            (Target::RatioAtMost(0.1), "ratio ≤ 0.1"),
            "the controller's NameIndex (references watch) against a full scan",
        ));
    }
    let per_mapped = |c: &Case| c.index_us * 1e3 / c.mapped as f64;
    rows.push(Scenario::measured(
        "watches",
        "index cost per mapped Tenant at 10k mapped (ns)",
        per_mapped(&cases[1]),
        (
            "the same at 10 mapped, same run",
            Some(per_mapped(&cases[0])),
        ),
        (
            Target::RatioAtMost(3.0),
            "ratio ≤ 3 (O(mapped), not O(all))",
        ),
        "a cost proportional to the objects mapped, not to the 100k watched",
    ));
    Ok((rows, Vec::new()))
}
