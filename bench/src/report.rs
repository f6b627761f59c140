//! The results file `bench/results/latest.json`: one row per measured figure, each beside
//! its same-run baseline, the ratio between them and the target it is judged by.

use crate::machine::Machine;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The scenarios of issue 8, in report order.
pub const SCENARIOS: &[&str] = &[
    "store",
    "dispatch",
    "reload",
    "rollout",
    "end-to-end",
    "fan-out",
    "distribution",
    "agent-publish",
    "agent-apply",
    "replicas",
    "kvscheduler",
    "restart",
    "languages",
    "memory",
    "hardening",
    "watches",
    "tls",
    "kube",
    "supply",
];

/// A whole run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    pub commit: String,
    pub machine: Machine,
    pub scenarios: Vec<Scenario>,
    /// Figures measured at several sizes of the work, for the plots.
    #[serde(default)]
    pub series: Vec<Series>,
}

/// One figure of one scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Scenario {
    pub name: String,
    /// What is measured, with its unit.
    pub metric: String,
    /// `None` when the capability does not exist yet.
    pub value: Option<f64>,
    /// What the value is compared with, measured in the same run.
    pub baseline: String,
    pub baseline_value: Option<f64>,
    /// `value / baseline_value`.
    pub ratio: Option<f64>,
    pub target: String,
    /// `None` when not measured.
    pub met: Option<bool>,
    /// How it was measured, or why it is not.
    #[serde(default)]
    pub note: String,
    /// The commit the row was measured at (rows of scenarios not re-run are kept).
    #[serde(default)]
    pub commit: String,
}

/// A target: a bound on the ratio or on the value itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    RatioAtLeast(f64),
    RatioAtMost(f64),
    ValueAtLeast(f64),
    ValueAtMost(f64),
    /// Reported only.
    None,
}

impl Target {
    fn met(self, value: f64, ratio: Option<f64>) -> Option<bool> {
        match self {
            Target::RatioAtLeast(t) => ratio.map(|r| r >= t),
            Target::RatioAtMost(t) => ratio.map(|r| r <= t),
            Target::ValueAtLeast(t) => Some(value >= t),
            Target::ValueAtMost(t) => Some(value <= t),
            Target::None => None,
        }
    }
}

impl Scenario {
    /// A measured row; the ratio is `value / baseline_value`.
    pub fn measured(
        name: &str,
        metric: &str,
        value: f64,
        baseline: (&str, Option<f64>),
        target: (Target, &str),
        note: &str,
    ) -> Self {
        let ratio = baseline
            .1
            .filter(|b| *b != 0.0 && b.is_finite())
            .map(|b| value / b);
        Scenario {
            name: name.into(),
            metric: metric.into(),
            value: Some(value),
            baseline: baseline.0.into(),
            baseline_value: baseline.1,
            ratio,
            target: target.1.into(),
            met: target.0.met(value, ratio),
            note: note.into(),
            commit: String::new(),
        }
    }

    /// A scenario whose capability does not exist yet: reported, not faked.
    pub fn unavailable(name: &str, metric: &str, target: &str, why: &str) -> Self {
        Scenario {
            name: name.into(),
            metric: metric.into(),
            baseline: "-".into(),
            target: target.into(),
            note: format!("not yet available: {why}"),
            ..Scenario::default()
        }
    }
}

/// Points (x, y) per line, for one plot.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Series {
    /// File stem of the plot and its key.
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

impl Report {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        Ok(serde_json::from_slice(&std::fs::read(path)?)?)
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self)? + "\n")?;
        Ok(())
    }

    /// This run's rows replace those of the scenarios it ran; the others are kept.
    pub fn merge_into(mut self, previous: Option<Report>, ran: &[String]) -> Report {
        if let Some(previous) = previous {
            let kept = previous
                .scenarios
                .into_iter()
                .filter(|s| !ran.contains(&s.name));
            self.scenarios.extend(kept);
            let ours: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
            self.series.extend(
                previous
                    .series
                    .into_iter()
                    .filter(|s| !ours.contains(&s.name)),
            );
        }
        let order = |name: &str| SCENARIOS.iter().position(|s| *s == name).unwrap_or(99);
        self.scenarios.sort_by_key(|s| order(&s.name));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_target() {
        let s = Scenario::measured(
            "store",
            "writes/s",
            300.0,
            ("etcd", Some(100.0)),
            (Target::RatioAtLeast(3.0), "≥ 3× etcd"),
            "",
        );
        assert_eq!(s.ratio, Some(3.0));
        assert_eq!(s.met, Some(true));
        let s = Scenario::measured(
            "reload",
            "p99 ms",
            120.0,
            ("-", None),
            (Target::ValueAtMost(100.0), "≤ 100 ms"),
            "",
        );
        assert_eq!((s.ratio, s.met), (None, Some(false)));
    }

    #[test]
    fn merge_keeps_rows_not_rerun() {
        let row = |name: &str| Scenario::unavailable(name, "m", "t", "w");
        let old = Report {
            scenarios: vec![row("store"), row("memory")],
            ..Report::default()
        };
        let new = Report {
            scenarios: vec![row("store")],
            ..Report::default()
        };
        let merged = new.merge_into(Some(old), &["store".into()]);
        let names: Vec<&str> = merged.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["store", "memory"]);
    }
}
