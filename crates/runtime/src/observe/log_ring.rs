//! The newest guest log lines of each component, kept in memory.
//!
//! For `GET /v1/components/{name}/logs` and `reactor-host logs`: a bounded ring per component,
//! process wide as the log rate limit is, numbered so that a reader can ask for what came
//! after.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::LazyLock;

/// Lines kept per component; older ones are dropped first.
pub const LINES_KEPT: usize = 1000;

pub use reactor_core::log_line::LogLine;

#[derive(Default)]
struct Ring {
    next: u64,
    lines: VecDeque<LogLine>,
}

static RINGS: LazyLock<Mutex<HashMap<String, Ring>>> = LazyLock::new(Default::default);

/// Keeps `message` as the newest line of `component`.
pub(crate) fn record(component: &str, level: &str, message: &str) {
    let time = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let mut rings = RINGS.lock();
    let ring = rings.entry(component.to_owned()).or_default();
    ring.next += 1;
    if ring.lines.len() == LINES_KEPT {
        ring.lines.pop_front();
    }
    ring.lines.push_back(LogLine {
        seq: ring.next,
        time,
        level: level.to_owned(),
        message: message.to_owned(),
    });
}

/// Drops the lines of `component`, removed: the rings do not grow with every name ever loaded.
pub(crate) fn forget(component: &str) {
    RINGS.lock().remove(component);
}

/// The kept lines of `component` numbered after `after`, oldest first, at most `limit`
/// (the newest ones); `None` if it never logged.
pub fn lines(component: &str, after: u64, limit: usize) -> Option<Vec<LogLine>> {
    let rings = RINGS.lock();
    let ring = rings.get(component)?;
    let newer: Vec<&LogLine> = ring.lines.iter().filter(|l| l.seq > after).collect();
    let skip = newer.len().saturating_sub(limit);
    Some(newer.into_iter().skip(skip).cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_lines_numbered_for_readers_to_resume() {
        for i in 0..LINES_KEPT + 5 {
            record("ring-test", "info", &format!("line {i}"));
        }
        let kept = lines("ring-test", 0, usize::MAX).expect("lines");
        assert_eq!(kept.len(), LINES_KEPT);
        assert_eq!(kept[0].message, "line 5");
        assert_eq!(kept[0].seq, 6);
        let last = kept.last().expect("a line");
        assert_eq!(last.seq, (LINES_KEPT + 5) as u64);
        let after = lines("ring-test", last.seq - 2, usize::MAX).expect("lines");
        assert_eq!(after.len(), 2);
        let tail = lines("ring-test", 0, 3).expect("lines");
        assert_eq!(tail.len(), 3);
        assert_eq!(tail[2].seq, last.seq);
        assert!(lines("never-logged", 0, 10).is_none());
    }
}
