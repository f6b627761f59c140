//! `--expect FILE`: the expected result, read before the run and compared as the same
//! normalised YAML (so layout, comments and key order in the file do not matter).

use serde_json::Value;
use similar::TextDiff;
use std::path::Path;

pub struct Expected {
    /// The file as messages name it.
    pub source: String,
    text: String,
}

impl Expected {
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let source = path.display().to_string();
        let raw = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {source}: {e}"))?;
        let value: Value = serde_yaml_ng::from_str(&raw)
            .map_err(|e| anyhow::anyhow!("{source}: not a YAML result: {e}"))?;
        let text = super::view::to_yaml(&value)?;
        Ok(Self { source, text })
    }

    /// `None` when `actual` is what was expected; else a unified diff (expected → actual).
    pub fn diff(&self, actual: &str) -> Option<String> {
        if self.text == actual {
            return None;
        }
        let diff = TextDiff::from_lines(self.text.as_str(), actual);
        Some(
            diff.unified_diff()
                .header(&format!("expected {}", self.source), "actual")
                .to_string(),
        )
    }
}
