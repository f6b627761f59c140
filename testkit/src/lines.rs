//! The lines a child process prints, read on a thread of their own, waited for with a deadline.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

/// Lines of a stream, as they come.
pub struct LineReader(mpsc::Receiver<String>);

impl LineReader {
    /// The next line, or `None` if none comes within `wait`.
    pub fn next_within(&mut self, wait: Duration) -> Option<String> {
        self.0.recv_timeout(wait).ok()
    }
}

/// Reads `stream` line by line on a thread of its own.
pub(crate) fn spawn_line_reader(stream: impl std::io::Read + Send + 'static) -> LineReader {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    LineReader(rx)
}
