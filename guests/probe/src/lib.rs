//! Test guest `probe`: watches kind `Probe`, behaves as each object's spec says, and appends
//! every callback to the object's `ProbeLog` (a kind nobody watches, so reads see the store);
//! the entry of a callback that fails goes with its other writes.
//!
//! Spec (all optional): `failTimes` (fail with a retryable error until the host's reconcile
//! status shows N failed attempts in a row: a failed call leaves none of its writes, the log
//! included, so the probe counts its failures there),
//! `permanent` (fail permanently), `requeueMs` + `requeueTimes` (ask to run again),
//! `refuse` (validate refuses with this message), `work` (busy iterations per call),
//! `children` (apply that many `ProbeChild` objects `<name>-<i>` in each call), `crash` (trap
//! after every write of the call: the host must keep none of them).
//! While a callback runs, a `ProbeMark` object marks the Probe busy: a callback that finds
//! the mark of its own object records an overlap, which the host must never allow.

use reactor_sdk::{Action, Error, Info, Object, Reactor, export_reactor, store};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Spec {
    fail_times: u64,
    permanent: bool,
    requeue_ms: u64,
    requeue_times: u64,
    refuse: Option<String>,
    work: u64,
    children: u64,
    crash: bool,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct Log {
    calls: u64,
    events: Vec<String>,
    overlaps: u64,
}

fn child(kind: &str, name: &str, spec: String) -> Object {
    Object {
        kind: kind.into(),
        name: name.into(),
        labels: Vec::new(),
        spec,
        status: None,
        meta: None,
    }
}

fn read_log(name: &str) -> Result<Log, Error> {
    Ok(match store::get("ProbeLog", name)? {
        Some(obj) => obj.spec()?,
        None => Log::default(),
    })
}

/// The failed attempts in a row the host recorded for this reactor on `obj`.
fn failed_attempts(obj: &Object) -> u64 {
    let status: Option<serde_json::Value> = obj.status().ok().flatten();
    (status.as_ref())
        .and_then(|s| s["reconcile"]["probe"]["attempts"].as_u64())
        .unwrap_or(0)
}

/// Runs one callback: marks the object busy, logs, behaves as the spec says.
fn call(obj: &Object, event: String) -> Result<Action, Error> {
    let spec: Spec = obj.spec().unwrap_or_default();
    let overlap = store::get("ProbeMark", &obj.name)?.is_some();
    store::apply(&child("ProbeMark", &obj.name, "{}".into()))?;
    let mut sum = 0u64;
    for i in 0..spec.work {
        sum = sum.wrapping_add(std::hint::black_box(i) * 31);
    }
    std::hint::black_box(sum);
    let mut log = read_log(&obj.name)?;
    log.calls += 1;
    log.events.push(event);
    log.overlaps += u64::from(overlap);
    let calls = log.calls;
    let text = serde_json::to_string(&log).map_err(|e| Error::permanent(e.to_string()))?;
    store::apply(&child("ProbeLog", &obj.name, text))?;
    store::delete("ProbeMark", &obj.name)?;
    for i in 0..spec.children {
        let spec = format!(r#"{{"i":{i},"calls":{calls}}}"#);
        store::apply(&child("ProbeChild", &format!("{}-{i}", obj.name), spec))?;
    }
    if spec.crash {
        panic!("probe {} is told to crash after its writes", obj.name);
    }
    if spec.permanent {
        return Err(Error::permanent(format!(
            "probe {} is told to fail",
            obj.name
        )));
    }
    let failed = failed_attempts(obj);
    if failed < spec.fail_times {
        return Err(Error::retry(format!(
            "failing call {} of {}",
            failed + 1,
            spec.fail_times
        )));
    }
    store::set_status(&serde_json::json!({"calls": calls, "generation": obj.generation()}))?;
    if spec.requeue_ms > 0 && calls <= spec.requeue_times {
        return Ok(Action::requeue_after_ms(spec.requeue_ms));
    }
    Ok(Action::Done)
}

struct Probe;

impl Reactor for Probe {
    fn describe() -> Info {
        // A ProbeQuota selects probes by label: a change to one runs the probes it selects.
        Info::new("probe", ["Probe"])
            .handles_delete()
            .selects("ProbeQuota", "spec.selector")
    }

    fn validate(obj: Object) -> Result<(), String> {
        let spec: Spec = obj.spec().map_err(|e| e.to_string())?;
        match spec.refuse {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    fn on_create(obj: Object) -> Result<Action, Error> {
        call(&obj, format!("create:{}", obj.generation()))
    }

    fn on_update(old: Object, new: Object) -> Result<Action, Error> {
        call(
            &new,
            format!("update:{}->{}", old.generation(), new.generation()),
        )
    }

    fn on_delete(obj: Object) -> Result<Action, Error> {
        let mut log = read_log(&obj.name)?;
        log.calls += 1;
        log.events.push("delete".into());
        let text = serde_json::to_string(&log).map_err(|e| Error::permanent(e.to_string()))?;
        store::apply(&child("ProbeLog", &obj.name, text))?;
        Ok(Action::Done)
    }
}

export_reactor!(Probe);
