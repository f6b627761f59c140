//! A running `reactor-host watch` command (or any that keeps printing) and the JSON lines it
//! prints.

use crate::lines::{LineReader, spawn_line_reader};
use std::process::{Child, Command, Stdio};
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

    /// Starts `command` (its stderr the test's) and returns its output lines as they come.
    pub fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
        let lines = spawn_line_reader(child.stdout.take().expect("stdout piped"));
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

    /// Reads lines until one contains `needle`; fails the test if none does within `secs`.
    pub fn wait_for_line(&mut self, needle: &str, secs: u64) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.lines.next_within(left) {
                Some(line) if line.contains(needle) => return line,
                Some(line) => seen.push(line),
                None => break,
            }
        }
        panic!("no line with {needle:?} within {secs}s; got: {seen:#?}")
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
