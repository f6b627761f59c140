//! A running `reactor-host watch` command and the JSON lines it prints.

use crate::lines::LineReader;
use std::process::Child;
use std::time::Duration;

/// A running `watch` command.
pub struct Watcher {
    child: Child,
    lines: LineReader,
}

impl Watcher {
    pub(crate) fn new(child: Child, lines: LineReader) -> Self {
        Watcher { child, lines }
    }

    /// The next line; fails the test if none comes within ten seconds.
    pub fn next_line(&mut self) -> String {
        self.lines
            .next_within(Duration::from_secs(10))
            .expect("a watch line within 10s")
    }

    /// The next line, as JSON; fails the test if none comes within ten seconds.
    pub fn next_json(&mut self) -> serde_json::Value {
        let line = self.next_line();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("watch line {line:?} is not JSON: {e}"))
    }

    /// Asserts nothing more arrives for a short while (to catch duplicates).
    pub fn assert_quiet(&mut self, wait: Duration) {
        if let Some(line) = self.lines.next_within(wait) {
            panic!("unexpected watch line {line}");
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
